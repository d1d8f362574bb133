"""B15 on the GPU: gelu_extension.cu builds with torch.utils.cpp_extension, and
thousand::gelu on CUDA tensors (the extension) gives PyTorch's F.gelu(x,
approximate="tanh") forward and backward on awkward sizes, a view that starts off a
16-byte boundary, another stream; gradcheck and opcheck pass on CUDA; torch.compile
(Inductor) takes the op into one graph. The CPU layer (tests/cpu/test_extension.py)
checks the op's CPU path and the build's refusals."""

import numpy as np
import pytest

from tests.helpers import torch_on_gpu

pytestmark = pytest.mark.gpu

GRADCHECK = dict(eps=1e-2, atol=2e-4, rtol=1e-4)  # see tests/cpu/test_extension.py
FLOAT32_WARNING = "ignore:Input #0 requires gradient and is not a double"
SIZES = [1, 3, 1001, 2**20 + 3]


@pytest.fixture(scope="module")
def E():
    torch = torch_on_gpu()
    from thousand.beyond import extension

    extension.load()  # the build: nvcc and ninja; its errors fail every test here
    yield extension
    torch._dynamo.reset()


def _close(got, want, tolerance):
    got = got.detach().double().cpu().numpy()
    want = want.detach().double().cpu().numpy()
    err = np.abs(got - want) / np.maximum(np.abs(want), 1)
    assert err.max(initial=0) <= tolerance, f"off by {err.max():.2e}"


def _inputs(n, seed=0):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(n, device="cuda", generator=g) * 3
    dy = torch.randn(n, device="cuda", generator=g)
    return x, dy


def test_the_build_is_a_module_with_the_three_functions(E):
    ext = E.load()
    assert E.load() is ext  # once per process
    assert {"gelu_forward", "gelu_backward", "launch_empty"} <= set(dir(ext))


@pytest.mark.parametrize("n", SIZES)
def test_forward_and_backward_match_pytorch(E, n):
    import torch
    import torch.nn.functional as F

    from thousand.kernels.gelu import FAMILY as FORWARD
    from thousand.kernels.gelu_backward import FAMILY as BACKWARD
    from thousand.kernels.gelu_backward import gelu_backward_ref

    x, dy = _inputs(n)
    xg = x.clone().requires_grad_()
    y = torch.ops.thousand.gelu(xg)
    want = F.gelu(x, approximate="tanh")
    _close(y, want, 2 * FORWARD.tolerance)  # each within its tolerance of exact
    (dx,) = torch.autograd.grad(y, xg, dy)
    _close(dx, torch.ops.aten.gelu_backward(dy, x, approximate="tanh"), 4e-6)
    exact = gelu_backward_ref(dy.cpu().numpy(), x.cpu().numpy())
    _close(dx, torch.from_numpy(exact), BACKWARD.tolerance)


def test_a_view_off_a_16_byte_boundary_runs_and_is_right(E):
    """x[1:] is contiguous but starts 4 bytes into a float4: the extension picks
    v1 for it (v2's float4 loads there would fault)."""
    import torch
    import torch.nn.functional as F

    x, dy = _inputs(2**20 + 5)
    xs, dys = x[1:-2], dy[3:]  # off by 4 and 12 bytes, the same length
    assert xs.data_ptr() % 16 and dys.data_ptr() % 16
    _close(torch.ops.thousand.gelu(xs), F.gelu(xs, approximate="tanh"), 2e-6)
    got = torch.ops.thousand.gelu_backward(dys, xs)
    want = torch.ops.aten.gelu_backward(dys, xs, approximate="tanh")
    _close(got, want, 4e-6)
    torch.cuda.synchronize()  # a fault would surface here


def test_shapes_and_an_empty_tensor(E):
    import torch
    import torch.nn.functional as F

    x = torch.randn(2, 3, 5, device="cuda")  # (B, T, C)
    y = torch.ops.thousand.gelu(x)
    assert y.shape == x.shape and y.device == x.device
    _close(y, F.gelu(x, approximate="tanh"), 2e-6)
    assert torch.ops.thousand.gelu(torch.empty(0, device="cuda")).shape == (0,)


def test_it_launches_on_pytorch_s_current_stream(E):
    """A CUDA graph records what is launched on the stream it captures (PyTorch
    makes that the current one): a kernel launched on any other stream would be
    refused during capture, or missing from the replay."""
    import torch
    import torch.nn.functional as F

    x, _ = _inputs(2**20 + 3)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = torch.ops.thousand.gelu(x)
    x2, _ = _inputs(2**20 + 3, seed=1)
    x.copy_(x2)
    graph.replay()  # recomputes y from the new x
    torch.cuda.synchronize()
    _close(y, F.gelu(x2, approximate="tanh"), 2e-6)


@pytest.mark.filterwarnings(FLOAT32_WARNING)
def test_gradcheck_on_cuda(E):
    import torch

    x = torch.linspace(-4, 4, 33, device="cuda").requires_grad_()
    assert torch.autograd.gradcheck(torch.ops.thousand.gelu, (x,), **GRADCHECK)


def test_opcheck_on_cuda(E):
    import torch

    x, dy = _inputs(1001)
    torch.library.opcheck(torch.ops.thousand.gelu.default, (x.requires_grad_(),))
    torch.library.opcheck(torch.ops.thousand.gelu_backward.default, (dy, x.detach()))


def test_torch_compile_fullgraph_keeps_the_op_in_one_graph(E):
    import torch

    def f(x):
        return torch.ops.thousand.gelu(2 * x) + 1

    x, _ = _inputs(4099)
    x.requires_grad_()
    explained = torch._dynamo.explain(f)(x)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    compiled = torch.compile(f, fullgraph=True)  # Inductor
    y = compiled(x)
    torch.testing.assert_close(y, f(x), rtol=1e-6, atol=1e-6)
    (dx,) = torch.autograd.grad(y.sum(), x)
    (want,) = torch.autograd.grad(f(x).sum(), x)
    torch.testing.assert_close(dx, want, rtol=1e-6, atol=1e-6)


def test_bad_input_on_cuda_is_refused_by_name(E):
    """The C++ checks (TORCH_CHECK_TYPE, TORCH_CHECK_VALUE) reach Python as
    TypeError and ValueError, through the op as well as called directly."""
    import torch

    x = torch.zeros(8, device="cuda")
    with pytest.raises(TypeError, match="x must be float32"):
        torch.ops.thousand.gelu(x.double())
    with pytest.raises(ValueError, match=r"x must be contiguous, got strides \[2\]"):
        torch.ops.thousand.gelu(x[::2])
    with pytest.raises(ValueError, match=r"dy must have x's shape \[8\], got \[4\]"):
        torch.ops.thousand.gelu_backward(x[:4], x)
    with pytest.raises(ValueError, match="dy must be a CUDA tensor, got one on cpu"):
        torch.ops.thousand.gelu_backward(x.cpu(), x)  # x's device picks the kernel
    with pytest.raises(ValueError, match="x must be a CUDA tensor"):
        E.load().gelu_forward(x.cpu())
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        E.load().launch_empty(x.cpu())


def test_the_empty_launch_runs_both_ways(E):
    import torch

    x = torch.zeros(1, device="cuda")
    E.load().launch_empty(x)
    torch.ops.thousand.launch_empty(x)
    torch.cuda.synchronize()


def test_cpu_tensors_use_the_cpu_backend_and_leave_the_gpu_s_alone(E):
    """On a GPU machine a CPU tensor still goes to the CPU backend; the package's
    own launchers keep running on the GPU afterwards."""
    import torch
    import torch.nn.functional as F

    from thousand.cuda import backend

    before = backend()
    x = torch.randn(1000) * 3
    _close(torch.ops.thousand.gelu(x), F.gelu(x, approximate="tanh"), 2e-6)
    assert backend() == before == "gpu"

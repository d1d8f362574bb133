"""B15's op, thousand::gelu, without a GPU: on CPU tensors it runs gelu.cu on the
CPU backend, so its registration (schema, fake, autograd) and its numbers are
checked here, against PyTorch's F.gelu(approximate="tanh") and the NumPy
references. The extension itself (gelu_extension.cu) builds and runs in
tests/gpu/test_extension.py; here only what can fail without a GPU: the build's
refusals, where it looks for CUDA, where it builds.

torch.compile: traced with backend="aot_eager" (Dynamo with our fake, AOTAutograd
with our autograd, no code generation), a few seconds; Inductor's code generation
runs on the GPU test.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402
from torch.autograd.gradcheck import GradcheckError  # noqa: E402

from thousand.beyond import extension as E  # noqa: E402  (needs torch)
from thousand.cuda import INDEX_LIMIT, NoGpu, NvccMissing  # noqa: E402
from thousand.kernels.gelu import FAMILY as FORWARD  # noqa: E402
from thousand.kernels.gelu import gelu_ref  # noqa: E402
from thousand.kernels.gelu_backward import FAMILY as BACKWARD  # noqa: E402
from thousand.kernels.gelu_backward import gelu_backward_ref  # noqa: E402

# gradcheck in float32 (the kernels' only type): central differences with
# eps = 1e-2 are within 6.2e-5 of gelu' on [-5, 5] (float32 rounding of y over
# 2 eps, plus eps^2 f'''/6); atol 2e-4 leaves three times that. The derivative of
# the erf form of GELU, a plausible wrong backward, is 8.7e-4 off near x = -2:
# test_gradcheck_catches_a_wrong_backward shows these tolerances see it.
GRADCHECK = dict(eps=1e-2, atol=2e-4, rtol=1e-4)
# ...and a float32 input is what gradcheck warns about: that is the point here
FLOAT32_WARNING = "ignore:Input #0 requires gradient and is not a double"


def _close(got, want, tolerance):
    """Relative to max(|want|, 1), as the families' checks measure."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    err = np.abs(got - want) / np.maximum(np.abs(want), 1)
    assert err.max(initial=0) <= tolerance, f"off by {err.max():.2e}"


def _x(shape, seed=0, scale=3.0):
    """x: scale 3, well into both tails (as the families' checks draw it); a
    gradient dy: scale 1 (the backward's error grows with |dy|, its tolerance
    is stated for unit gradients)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g) * scale


SHAPES = [(1,), (3,), (1001,), (4, 1001), (2, 3, 5)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_forward_matches_pytorch_and_the_reference(shape):
    x = _x(shape)
    y = torch.ops.thousand.gelu(x)
    assert y.shape == x.shape and y.dtype == torch.float32
    _close(y, gelu_ref(x.numpy()), FORWARD.tolerance)
    _close(y, F.gelu(x, approximate="tanh"), 2 * FORWARD.tolerance)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_backward_through_autograd_matches_pytorch_and_the_reference(shape):
    x = _x(shape).requires_grad_()
    dy = _x(shape, seed=1, scale=1)
    (dx,) = torch.autograd.grad(torch.ops.thousand.gelu(x), x, dy)
    _close(dx, gelu_backward_ref(dy.numpy(), x.detach().numpy()), BACKWARD.tolerance)
    want = torch.ops.aten.gelu_backward(dy, x.detach(), approximate="tanh")
    _close(dx, want, 2 * BACKWARD.tolerance)


def test_a_broadcast_gradient_is_made_dense_for_the_kernel():
    """y.sum()'s gradient reaches the backward as one value broadcast (stride 0)."""
    x = _x((7, 5)).requires_grad_()
    torch.ops.thousand.gelu(x).sum().backward()
    ones = torch.ones_like(x)
    _close(x.grad, gelu_backward_ref(ones.numpy(), x.detach().numpy()), 2e-6)


def test_the_version_follows_the_alignment_as_in_the_extension(monkeypatch):
    """v2's float4 loads need 16-byte addresses: a view that starts one float in
    (x[1:], contiguous) runs v1, as gelu_extension.cu picks it."""
    used = []

    def spy(x, version):
        used.append(version)
        return gelu_ref(x)

    monkeypatch.setattr(E, "gelu_launcher", spy)
    base = torch.zeros(1024)
    assert base.data_ptr() % 16 == 0
    torch.ops.thousand.gelu(base)
    torch.ops.thousand.gelu(base[1:])
    assert used == [2, 1]


def test_an_unaligned_view_gives_the_right_numbers():
    x = _x((1002,))[1:]
    assert x.is_contiguous() and x.data_ptr() % 16 != 0
    _close(torch.ops.thousand.gelu(x), gelu_ref(x.numpy()), FORWARD.tolerance)
    dy = _x((1003,), seed=2, scale=1)[2:]  # 8 bytes in: unaligned too
    got = torch.ops.thousand.gelu_backward(dy, x)
    _close(got, gelu_backward_ref(dy.numpy(), x.numpy()), BACKWARD.tolerance)


def test_an_empty_tensor_gives_an_empty_tensor():
    assert torch.ops.thousand.gelu(torch.empty(0, 3)).shape == (0, 3)


@pytest.mark.filterwarnings(FLOAT32_WARNING)
def test_gradcheck_passes():
    x = torch.linspace(-4, 4, 33).requires_grad_()  # 0, +-2 and the tails
    assert torch.autograd.gradcheck(torch.ops.thousand.gelu, (x,), **GRADCHECK)


class _ErfBackward(torch.autograd.Function):
    """thousand::gelu forward with the erf form's derivative: wrong by < 1e-3."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.ops.thousand.gelu(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return torch.ops.aten.gelu_backward(dy, x, approximate="none")


@pytest.mark.filterwarnings(FLOAT32_WARNING)
def test_gradcheck_catches_a_wrong_backward():
    x = torch.linspace(-4, 4, 33).requires_grad_()
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(_ErfBackward.apply, (x,), **GRADCHECK)


def test_opcheck():
    """Schema, fake tensors, autograd registration and AOT dispatch, by PyTorch's
    own checks."""
    x = _x((5, 7)).requires_grad_()
    torch.library.opcheck(torch.ops.thousand.gelu.default, (x,))
    dy = _x((5, 7), seed=1, scale=1)
    torch.library.opcheck(torch.ops.thousand.gelu_backward.default, (dy, x.detach()))


def test_torch_compile_traces_the_op_without_a_graph_break():
    def f(x):
        return torch.ops.thousand.gelu(2 * x) + 1

    x = _x((64,)).requires_grad_()
    explained = torch._dynamo.explain(f)(x)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    compiled = torch.compile(f, backend="aot_eager", fullgraph=True)
    y = compiled(x)
    torch.testing.assert_close(y, f(x), rtol=0, atol=0)
    (dx,) = torch.autograd.grad(y.sum(), x)
    (want,) = torch.autograd.grad(f(x).sum(), x)
    torch.testing.assert_close(dx, want, rtol=0, atol=0)


def test_the_ops_are_registered_with_their_schemas():
    assert str(torch.ops.thousand.gelu.default._schema) == (
        "thousand::gelu(Tensor x) -> Tensor"
    )
    assert str(torch.ops.thousand.gelu_backward.default._schema) == (
        "thousand::gelu_backward(Tensor dy, Tensor x) -> Tensor"
    )
    assert str(torch.ops.thousand.launch_empty.default._schema) == (
        "thousand::launch_empty(Tensor on) -> ()"
    )


# -- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "x,error,words",
    [
        (torch.zeros(3, dtype=torch.float64), TypeError, "x must be float32"),
        (torch.zeros(3, dtype=torch.int32), TypeError, "got torch.int32"),
        (torch.zeros(4, 3).t(), ValueError, "x must be contiguous"),
        (torch.zeros(8)[::2], ValueError, r"strides \(2,\)"),
    ],
    ids=["float64", "int32", "transposed", "strided"],
)
def test_bad_input_is_refused_by_name(x, error, words):
    with pytest.raises(error, match=words):
        torch.ops.thousand.gelu(x)


def test_the_backward_refuses_a_gradient_of_another_shape_or_type():
    x = torch.zeros(4)
    with pytest.raises(ValueError, match=r"dy must have x's shape \[4\], got \[3\]"):
        torch.ops.thousand.gelu_backward(torch.zeros(3), x)
    with pytest.raises(TypeError, match="dy must be float32"):
        torch.ops.thousand.gelu_backward(torch.zeros(4, dtype=torch.float16), x)


def test_the_fake_refuses_what_the_kernels_refuse():
    """torch.compile reports bad input while tracing, not at the first run."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        with pytest.raises(TypeError, match="x must be float32"):
            torch.ops.thousand.gelu(torch.empty(3, dtype=torch.float64))
        assert torch.ops.thousand.gelu(torch.empty(3, 4)).shape == (3, 4)


def test_a_tensor_past_the_int32_indices_is_refused():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():  # no memory for 2^31 floats is needed to ask
        big = torch.empty(INDEX_LIMIT + 1)
        with pytest.raises(ValueError, match="int indices reach"):
            torch.ops.thousand.gelu(big)


# -- the build: what can be checked without a GPU -----------------------------------


def test_the_extension_compiles_the_package_s_own_kernel_files():
    """One source of truth: gelu_extension.cu includes gelu.cu and
    gelu_backward.cu (and empty.cu) and defines no kernel itself."""
    source = E.SOURCE.read_text()
    assert '#include "gelu.cu"' in source and '#include "gelu_backward.cu"' in source
    assert "__global__" not in source.split("#include", 1)[1]
    # both kernel files include the formula: it must guard against a second copy
    assert "#pragma once" in (E.KERNEL_DIR / "gelu.cuh").read_text()
    assert set(E.BUILT_FROM) >= {*E.SOURCES, E.EMPTY, E.KERNEL_DIR / "gelu.cuh"}
    # the binding and PyTorch's headers stay with the host compiler
    host = E.SOURCES[0].read_text()
    assert "PYBIND11_MODULE" in host and "PYBIND11_MODULE" not in source
    assert "torch/extension.h" not in source


def test_load_refuses_a_cpu_build_of_pytorch(monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", None)
    with pytest.raises(NoGpu, match="is a CPU build"):
        E.load.__wrapped__()  # not the cached module of an earlier build


def test_load_refuses_a_machine_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(NoGpu, match="sees no CUDA GPU"):
        E.load.__wrapped__()


def test_ninja_missing_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setattr(E.shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(E.NinjaMissing, match="pip install ninja"):
        E._find_ninja()


def test_ninja_in_the_environment_s_own_bin_is_put_on_path(monkeypatch, tmp_path):
    (tmp_path / "ninja").write_text("")
    monkeypatch.setattr(E.shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", "/nowhere")
    E._find_ninja()
    assert os.environ["PATH"].split(os.pathsep)[0] == str(tmp_path)


def _fake_nvcc(folder: Path, top: str) -> Path:
    """An nvcc that only answers a dry run, as the real one does (on stderr)."""
    folder.mkdir(parents=True, exist_ok=True)
    nvcc = folder / "nvcc"
    nvcc.write_text(
        f"#!/bin/sh\necho '#$ _NVVM_BRANCH_=nvvm' >&2\necho '#$ TOP={top}' >&2\n"
    )
    nvcc.chmod(0o755)
    return nvcc


def test_the_toolkit_is_where_nvcc_says_not_beside_a_wrapper(monkeypatch, tmp_path):
    """/usr/local/bin/nvcc may be a script running /usr/local/cuda-13.0/bin/nvcc:
    PyTorch's guess (two folders up from it) would be /usr/local."""
    wrapper = _fake_nvcc(tmp_path / "usr/local/bin", str(tmp_path / "cuda-13.0/bin/.."))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(wrapper.parent))
    assert E.cuda_toolkit() == str((tmp_path / "cuda-13.0").resolve())


def test_cuda_home_wins_when_it_holds_nvcc(monkeypatch, tmp_path):
    _fake_nvcc(tmp_path / "toolkit/bin", "/elsewhere")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    assert E.cuda_toolkit() == str(tmp_path / "toolkit")


def test_no_nvcc_anywhere_says_so(monkeypatch, tmp_path):
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(NvccMissing, match="nvcc"):
        E.cuda_toolkit()


def test_the_build_folder_is_outside_the_repository_and_named_by_the_sources(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "a.cu"
    source.write_text("// one")
    monkeypatch.setattr(E, "BUILT_FROM", (source,))
    first = E.build_dir("9.0", "/usr/local/cuda")
    assert first.is_dir() and first.is_relative_to(tmp_path / "cache")
    assert E.build_dir("9.0", "/usr/local/cuda") == first
    source.write_text("// two")  # an edited kernel is a new build
    assert E.build_dir("9.0", "/usr/local/cuda") != first
    assert E.build_dir("8.0", "/usr/local/cuda") != E.build_dir(
        "9.0", "/usr/local/cuda"
    )

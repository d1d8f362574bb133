"""B16 on the GPU: both models' training steps through torch.compile (default mode,
and reduce-overhead's CUDA graphs) give eager PyTorch's losses and gradients step
after step; Inductor writes Triton for them, with the kernels the snippet shows;
the package's kernels compute the steps the experiment times against PyTorch's.
The CPU layer (tests/cpu/test_compiled.py) runs Inductor's C++ path."""

import numpy as np
import pytest

from tests.helpers import torch_on_gpu

pytestmark = pytest.mark.gpu

STEPS = 3  # reduce-overhead records its graphs on the second call, replays on the third
TOL = 1e-4  # norm-wise, float32 (TF32 off) summed in another order by fused kernels


@pytest.fixture(scope="module")
def C():
    torch = torch_on_gpu()
    from thousand.beyond import compiled, interpreted

    assert not interpreted(), "TRITON_INTERPRET is set on the GPU run"
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # float32, as the kernels compute
    yield compiled
    torch.backends.cuda.matmul.allow_tf32 = before
    torch._dynamo.reset()


def rel(a, b) -> float:
    a, b = (np.asarray(t, np.float64) for t in (a, b))
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def host(t) -> np.ndarray:
    return t.detach().float().cpu().numpy()


def setups(C):
    return {"mlp": C.mlp_torch, "block": C.block_torch}


@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
@pytest.mark.parametrize("name", ["mlp", "block"])
def test_compiled_steps_match_eager(C, name, mode):
    import torch

    torch._dynamo.reset()
    setup = setups(C)[name]
    eager_model, eager_opt, batch = setup("cuda")
    model, opt, _ = setup("cuda")
    eager = C.train_step(eager_model, eager_opt)
    compiled = C.train_step(model, opt, mode)
    for i in range(STEPS):
        want, got = eager(*batch), compiled(*batch)
        assert rel(host(got), host(want)) < TOL, (i, float(got), float(want))
        pairs = zip(model.parameters(), eager_model.parameters(), strict=True)
        for a, b in pairs:
            assert rel(host(a.grad), host(b.grad)) < TOL, (i, a.shape)
    if name == "mlp":  # SGD: the parameters follow the gradients closely
        # (AdamW moves a parameter whose gradient is rounding noise, such as the
        # key's bias, by +-lr either way: the block's are compared through the
        # losses and gradients of the later steps instead)
        for a, b in zip(model.parameters(), eager_model.parameters(), strict=True):
            assert rel(host(a), host(b)) < TOL


@pytest.mark.parametrize(
    "name,word", [("mlp", "softmax"), ("block", "gelu"), ("block", "layer_norm")]
)
def test_inductor_writes_triton(C, name, word):
    model, opt, batch = setups(C)[name]("cuda")
    g = C.generated(C.train_step(model, opt, "default"), *batch)
    assert g.language == "Triton" and len(g.sources) == 2  # forward, backward
    names = [n for module in g.kernels for n in module]
    assert names and all(n.startswith("triton_") for n in names), names
    found, source = g.find(word)  # the snippet shows it: it must be there
    assert "@triton.jit" in source and f"def {found}(" in source
    body = C.kernel_body(source)
    assert body.startswith("@triton.jit")
    calls = [c for module in g.library for c in module]
    assert any(c in ("mm", "addmm") for c in calls), calls  # matmuls: cuBLAS


def test_the_package_steps_compute_what_pytorch_does(C):
    """At the experiment's sizes: the package's steps give eager PyTorch's loss
    and gradients, on the same weights and batch."""
    net, step = C.mlp_kernels()
    rows = step().get()
    model, opt, batch = C.mlp_torch("cuda")
    loss = C.train_step(model, opt)(*batch)
    assert abs(float(rows.mean()) - float(loss)) < TOL * abs(float(loss))
    ours = [g for layer in net.get_grads() for g in layer]
    for a, b in zip(ours, model.parameters(), strict=True):
        b = host(b.grad)
        assert rel(a, b.T if b.ndim == 2 else b) < TOL

    kb = C.KernelBlock()
    kb()
    model, opt, batch = C.block_torch("cuda")
    C.train_step(model, opt)(*batch)
    for a, b in zip(kb.grads(), model.parameters(), strict=True):
        b = host(b.grad)
        assert rel(a.get(), b.T if b.ndim == 2 else b) < TOL, b.shape

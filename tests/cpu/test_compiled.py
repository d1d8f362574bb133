"""B16 on the CPU: torch.compile's C++ path (Inductor writes C++ and g++ builds it)
trains the MLP as eager PyTorch does; explain() finds a deliberate graph break and
none once it is gone; the package's kernels (on the CPU backend) compute the
steps the experiment times against PyTorch's; bad input is refused. The GPU
layer (tests/gpu/test_compiled.py) checks both models compiled to Triton."""

import importlib.util

import numpy as np
import pytest

from tests.helpers import require_tool, unavailable
from thousand.cuda import use_backend


@pytest.fixture(scope="module")
def C():
    if importlib.util.find_spec("torch") is None:
        unavailable("torch is not installed (pip install -e '.[test]')")
    from thousand.beyond import compiled

    return compiled


def rel(a, b) -> float:
    """Norm-wise relative difference of two tensors or arrays."""
    a, b = (np.asarray(t, np.float64) for t in (a, b))
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def grads(model) -> list:
    return [p.grad.detach().numpy().copy() for p in model.parameters()]


def test_compiled_mlp_step_matches_eager(C):
    require_tool("g++")  # Inductor's C++ path builds its kernels with it
    eager_model, eager_opt, batch = C.mlp_torch("cpu")
    model, opt, _ = C.mlp_torch("cpu")
    eager = C.train_step(eager_model, eager_opt)
    compiled = C.train_step(model, opt, "default")
    for i in range(2):  # the second step runs the compiled code without compiling
        want = eager(*batch)
        if i == 0:
            g = C.generated(compiled, *batch)
            got = g.result
        else:
            got = compiled(*batch)
        assert rel(got, want) < 1e-5, (i, float(got), float(want))
        for a, b in zip(grads(model), grads(eager_model), strict=True):
            assert rel(a, b) < 1e-5
    # the forward's module and the backward's, each with C++ kernels and matmuls
    assert g.language == "C++" and len(g.sources) == 2
    names = [name for module in g.kernels for name in module]
    assert names and all(name.startswith("cpp_fused") for name in names)
    assert "relu" in g.find("relu")[0] and "softmax" in g.find("softmax")[0]
    assert "addmm" in g.library[0] and "mm" in g.library[1]
    body = C.kernel_body(g.find("relu")[1], lines=5)
    assert body.startswith('extern "C"') and body.endswith("more lines)")
    for a, b in zip(model.parameters(), eager_model.parameters(), strict=True):
        assert rel(a.detach(), b.detach()) < 1e-5  # the same SGD steps taken


def _with_break(x):
    y = x.sin() * 2
    scale = y.abs().max().item()  # a Python float: Dynamo stops the graph here
    return y.cos() / scale


def _without_break(x):
    y = x.sin() * 2
    return y.cos() / y.abs().max()  # a tensor: one graph


def test_explain_counts_the_break_and_none_after_the_fix(C):
    import torch

    x = torch.randn(16)
    broken = C.explain(_with_break, x)
    assert (broken.graphs, broken.breaks) == (2, 1)
    assert "item()" in broken.reasons[0]
    assert broken.where[0].startswith("test_compiled.py:")
    assert "scale = y.abs().max().item()" in broken.where[0]
    fixed = C.explain(_without_break, x)
    assert (fixed.graphs, fixed.breaks, fixed.reasons) == (1, 0, [])
    torch.testing.assert_close(_with_break(x), _without_break(x))


@pytest.fixture
def cpu_backend():
    before = use_backend("cpu")
    yield
    use_backend(before)


def test_the_package_steps_compute_what_pytorch_does(C, cpu_backend):
    """The experiment's bars compare like with like: the package's MLP step and
    block step give PyTorch eager's loss and gradients on the same weights."""
    net, step = C.mlp_kernels()
    rows = step().get()  # per-row losses
    model, opt, batch = C.mlp_torch("cpu")
    loss = C.train_step(model, opt)(*batch)
    assert abs(rows.mean() - float(loss)) < 1e-5
    ours = [g for layer in net.get_grads() for g in layer]
    for a, b in zip(ours, grads(model), strict=True):
        assert rel(a, b.T if b.ndim == 2 else b) < 1e-5  # nn.Linear: (out, in)

    kb = C.KernelBlock(C.QUICK_BLOCK, C.QUICK_BATCH)
    kb()  # records the launches
    model, opt, batch = C.block_torch("cpu", C.QUICK_BLOCK, C.QUICK_BATCH)
    C.train_step(model, opt)(*batch)
    for a, b in zip((g.get() for g in kb.grads()), grads(model), strict=True):
        assert rel(a, b.T if b.ndim == 2 else b) < 1e-5
    # the second step replays the first's launches: the same as launching anew
    kb()
    again = C.KernelBlock(C.QUICK_BLOCK, C.QUICK_BATCH)
    for _ in range(2):
        again.replay = None  # forget the recording: every launch through its launcher
        again()
    for a, b in zip(kb.params(), again.params(), strict=True):
        assert np.array_equal(a.get(), b.get())
    assert not np.array_equal(
        kb.params()[2].get(),
        C.block_problem(C.QUICK_BLOCK, C.QUICK_BATCH)[0]["h0.qkv.W"],
    )  # it did move


def test_bad_input_is_refused(C):
    import torch

    model, opt, (x, labels) = C.mlp_torch("cpu")
    with pytest.raises(ValueError, match="mode must be None"):
        C.train_step(model, opt, "fast")
    with pytest.raises(TypeError, match="model must be MLP or BlockLoss"):
        C.train_step(torch.nn.Linear(64, 10), opt)
    step = C.train_step(model, opt)
    with pytest.raises(ValueError, match=r"`x` must be torch.float32"):
        step(x.double(), labels)
    with pytest.raises(ValueError, match=r"`x` must have shape \('any', 64\)"):
        step(x[:, :10], labels)
    with pytest.raises(ValueError, match=r"`labels` must have shape \(32,\)"):
        step(x, labels[:5])
    with pytest.raises(TypeError, match="`labels` must be a torch.Tensor"):
        step(x, labels.numpy())
    with pytest.raises(ValueError, match="the batch is on meta"):
        step(x.to("meta"), labels.to("meta"))
    block, opt, (bx, G) = C.block_torch("cpu", C.QUICK_BLOCK, C.QUICK_BATCH)
    with pytest.raises(ValueError, match=r"`G` must have shape \(2, 8, 32\)"):
        C.train_step(block, opt)(bx, G[:1])
    with pytest.raises(TypeError, match="must be callable"):
        C.explain(42, x)
    with pytest.raises(TypeError, match="must be callable"):
        C.generated("step", x)
    assert model.fc1.weight.grad is None  # nothing ran
    assert torch.equal(x, C.mlp_torch("cpu")[2][0])

"""B13's Triton kernels in Triton's interpreter (TRITON_INTERPRET=1), on the CPU:
every rung against the float64 reference and against torch, on ragged sizes; bad
input refused. The GPU layer (tests/gpu/test_triton.py) runs the same kernels
compiled, at larger sizes and in bfloat16, which the interpreter cannot multiply."""

import importlib.util

import numpy as np
import pytest

from tests.helpers import unavailable
from thousand.cuda import use_backend

# (M, N, K): one element, primes, ragged edges on a 128 x 128 x 64 tile, K = 1
SIZES = [(1, 1, 1), (3, 5, 7), (37, 19, 70), (130, 129, 65), (64, 200, 1)]


@pytest.fixture(scope="module")
def tri():
    """The Triton modules, imported on the CPU backend (so: interpreted)."""
    for name in ("torch", "triton"):
        # find_spec, not import: importing triton here would precede the switch
        if importlib.util.find_spec(name) is None:
            unavailable(f"{name} is not installed (pip install -e '.[test]')")
    before = use_backend("cpu")
    try:
        from thousand.beyond import interpreted, triton_matmul, triton_softmax
    except RuntimeError as e:  # triton compiled for a GPU in this process already
        use_backend(before)
        unavailable(f"Triton's interpreter cannot be switched on here: {e}")
    assert interpreted(), "the CPU backend must run Triton in its interpreter"
    yield triton_matmul, triton_softmax
    use_backend(before)


def _operands(M, N, K, dtype, seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randn(M, K, generator=g).to(dtype), torch.randn(K, N, generator=g).to(
        dtype
    )


@pytest.mark.parametrize("size", SIZES, ids=str)
@pytest.mark.parametrize(
    "dtype, precision", [("float16", "tf32"), ("float32", "tf32"), ("float32", "ieee")]
)
@pytest.mark.parametrize("version", [1, 2, 3])
def test_matmul_matches_float64_and_torch(tri, size, dtype, precision, version):
    import torch

    T, _ = tri
    dtype = getattr(torch, dtype)
    a, b = _operands(*size, dtype)
    c = T.matmul(a, b, version=version, precision=precision)
    assert c.dtype == dtype and c.shape == (size[0], size[1])
    ref = T.matmul_ref(a.double().numpy(), b.double().numpy())
    assert T.rel_error(c, ref) <= T.tolerance(dtype, precision)
    expect = (a.double() @ b.double()).to(dtype)  # torch, rounded once
    assert torch.allclose(c.double(), expect.double(), rtol=1e-2, atol=1e-2)


def test_matmul_writes_into_out_and_k_zero_is_zero(tri):
    import torch

    T, _ = tri
    a, b = _operands(5, 6, 7, torch.float32)
    out = torch.full((5, 6), float("nan"))
    assert T.matmul(a, b, out) is out and torch.isfinite(out).all()
    empty = T.matmul(torch.ones(3, 0), torch.ones(0, 4), version=1)
    assert torch.equal(empty, torch.zeros(3, 4))


def test_tolerance_catches_a_wrong_product(tri):
    """The bound is tight enough to fail: one operand's element changed by 1%."""
    import torch

    T, _ = tri
    a, b = _operands(40, 30, 50, torch.float32)
    ref = T.matmul_ref(a.numpy(), b.numpy())
    a[7, 3] *= 1.01
    c = T.matmul(a, b, precision="ieee")
    assert T.rel_error(c, ref) > T.tolerance(torch.float32, "ieee")


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("a", "b"), {}, "torch tensor"),
        ((("zeros", (2, 3)), ("zeros", (4, 5))), {}, "a's columns"),
        ((("zeros", (2, 3)), ("zeros", (3,))), {}, "2-D"),
        ((("int", (2, 3)), ("int", (3, 2))), {}, "must be one of"),
        ((("zeros", (2, 3)), ("half", (3, 2))), {}, "differ in dtype"),
        ((("half", (2, 3)), ("half", (3, 2))), {"precision": "ieee"}, "for float32"),
        ((("zeros", (2, 3)), ("zeros", (3, 2))), {"precision": "tf64"}, "precision"),
        ((("zeros", (2, 3)), ("zeros", (3, 2))), {"version": 4}, "no version"),
        ((("bf16", (2, 3)), ("bf16", (3, 2))), {}, "interpreter cannot multiply"),
    ],
)
def test_matmul_refuses_bad_input(tri, args, kwargs, match):
    import torch

    T, _ = tri
    kinds = {
        "zeros": torch.float32,
        "half": torch.float16,
        "int": torch.int32,
        "bf16": torch.bfloat16,
    }
    made = [a if isinstance(a, str) else torch.zeros(a[1], dtype=kinds[a[0]])
            for a in args]  # fmt: skip
    with pytest.raises((ValueError, TypeError), match=match):
        T.matmul(*made, **kwargs)


def test_matmul_refuses_a_wrong_out(tri):
    import torch

    T, _ = tri
    a, b = _operands(4, 5, 6, torch.float32)
    with pytest.raises(ValueError, match="out must be"):
        T.matmul(a, b, torch.empty(5, 4))


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (33, 1000), (5, 4097)], ids=str)
def test_softmax_matches_the_reference_and_torch(tri, shape):
    import torch

    _, S = tri
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 30).astype(np.float32)  # exp overflows
    y = S.softmax(torch.from_numpy(x))
    np.testing.assert_allclose(y.numpy(), S.softmax_ref(x), rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(y, torch.softmax(torch.from_numpy(x), dim=1))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # -inf - -inf
def test_softmax_masks_and_strided_rows(tri):
    """-inf is a masked position (0); a row view of a wider matrix is read at its
    own stride."""
    import torch

    _, S = tri
    wide = torch.randn(6, 20)
    x = wide[:, :13]  # rows 20 apart
    x[2, 4] = float("-inf")
    y = S.softmax(x)
    assert y[2, 4] == 0
    torch.testing.assert_close(y, torch.softmax(x, dim=1))
    assert torch.isnan(S.softmax(torch.full((1, 4), float("-inf")))).all()


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda t: t.zeros(3, dtype=t.float32), "2-D float32"),
        (lambda t: t.zeros(3, 4, dtype=t.float64), "2-D float32"),
        (lambda t: t.zeros(4, 3).t(), "contiguous"),
        (lambda t: t.zeros(1, 40000), "up to 32,768"),
        (lambda t: [[1.0]], "torch tensor"),
    ],
)
def test_softmax_refuses_bad_input(tri, make, match):
    import torch

    _, S = tri
    with pytest.raises((ValueError, TypeError), match=match):
        S.softmax(make(torch))

"""B13's Triton kernels compiled for the GPU: every rung in every dtype against
the float64 reference and against torch (cuBLAS, torch.softmax), on ragged and
large sizes. The CPU layer runs the same kernels in Triton's interpreter."""

import numpy as np
import pytest

from tests.helpers import torch_on_gpu

pytestmark = pytest.mark.gpu

SIZES = [(1, 1, 1), (3, 5, 7), (130, 129, 65), (513, 1027, 1024), (2048, 256, 4099)]
KINDS = [("float16", "tf32"), ("bfloat16", "tf32"), ("float32", "tf32"),
         ("float32", "ieee")]  # fmt: skip


@pytest.fixture(scope="module")
def tri():
    torch_on_gpu()
    from thousand.beyond import interpreted, triton_matmul, triton_softmax

    assert not interpreted(), "TRITON_INTERPRET is set on the GPU run"
    return triton_matmul, triton_softmax


# v3 autotunes at every new (M, N, K): seven compiles and timings each, so it is
# checked at the two sizes that exercise its edges and its depth
CASES = [(v, size) for v in (1, 2) for size in SIZES] + [
    (3, size) for size in (SIZES[2], SIZES[4])
]


@pytest.mark.parametrize("version, size", CASES, ids=str)
@pytest.mark.parametrize("kind", KINDS, ids="-".join)
def test_matmul(tri, size, kind, version):
    import torch

    T, _ = tri
    dtype, precision = getattr(torch, kind[0]), kind[1]
    M, N, K = size
    g = torch.Generator().manual_seed(M * N + K)
    a = torch.randn(M, K, generator=g).to("cuda", dtype)
    b = torch.randn(K, N, generator=g).to("cuda", dtype)
    out = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)  # poisoned
    c = T.matmul(a, b, out, version=version, precision=precision)
    ref = T.matmul_ref(a.double().cpu().numpy(), b.double().cpu().numpy())
    assert T.rel_error(c, ref) <= T.tolerance(dtype, precision)
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    try:
        lib = T.rel_error(torch.matmul(a, b), ref)  # cuBLAS on the same operands
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    # no worse than the library by more than one rounding of the output
    assert T.rel_error(c, ref) <= 2 * lib + T.tolerance(dtype, precision) / 4


def test_autotuner_keeps_a_config_per_width(tri):
    import torch

    T, _ = tri
    for dtype, width in ((torch.float16, 2), (torch.float32, 4)):
        a = torch.randn(512, 512, device="cuda").to(dtype)
        T.matmul(a, a, version=3)
        cfg = T.best_config(width)
        assert {"BM", "BN", "BK", "stages", "warps"} <= cfg.keys()


@pytest.mark.parametrize("cols", [1, 7, 256, 1000, 4097, 16384, 32768])
def test_softmax(tri, cols):
    import torch

    _, S = tri
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((37, cols)) * 30).astype(np.float32)
    y = S.softmax(torch.from_numpy(x).cuda()).cpu()
    np.testing.assert_allclose(y.numpy(), S.softmax_ref(x), rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(y, torch.softmax(torch.from_numpy(x), dim=1))

"""B14's cuTile kernels on the GPU, against exact results.

Each kernel's output is compared with the float64 product (or convolution) of the
same rounded inputs, as max |y - exact| / max |exact|:

    float16    1e-3   the output is rounded to 11 significant bits: up to 2^-11
                      (4.9e-4) of each value; the float32 sums add far less
    bfloat16   8e-3   8 significant bits: up to 2^-8 (3.9e-3)
    float32    5e-3   TF32: each input keeps 11 bits before its product, as
                      matmul_v8's (B9) tolerance allows

Shapes are ragged on purpose (1, primes, one past a tile, filters as large as the
image): the kernels accept every shape, loading zeros past an edge and storing
only inside. Skipped, with cutile()'s reason, where cuda.tile cannot run (it is
staged separately: ../shared/gpu/stage --cutile).
"""

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

from thousand.beyond import cutile_kernels as T  # noqa: E402
from thousand.experiments.b14_cutile import TILES  # noqa: E402

TOLERANCE = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 5e-3}
DTYPES = list(TOLERANCE)


@pytest.fixture(scope="module", autouse=True)
def cutile_here():
    try:
        T.cutile()
    except T.CuTileUnavailable as e:
        pytest.skip(str(e))


def randn(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to("cuda", getattr(torch, dtype))


def assert_close(y, exact, dtype):
    err = T.relative_error(y, exact)
    assert err < TOLERANCE[dtype], f"{dtype}: max error {err:.1e} of max |exact|"


MM_SHAPES = [  # (M, N, K)
    (1, 1, 1),
    (3, 5, 7),
    (64, 64, 64),
    (129, 257, 65),
    (200, 130, 36),
    (1000, 300, 517),
    (513, 1027, 1024),
    (2048, 2048, 2048),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", MM_SHAPES, ids=str)
def test_matmul(shape, dtype):
    M, N, K = shape
    a, b = randn((M, K), dtype, 1), randn((K, N), dtype, 2)
    assert_close(T.matmul(a, b), a.double() @ b.double(), dtype)


@pytest.mark.parametrize("tile", TILES + [(16, 16, 16), (32, 32, 32)], ids=str)
@pytest.mark.parametrize("shape", [(129, 257, 65), (513, 1027, 1024)], ids=str)
def test_matmul_every_tile_of_the_sweep(shape, tile):
    M, N, K = shape
    a, b = randn((M, K), "float16", 3), randn((K, N), "float16", 4)
    assert_close(T.matmul(a, b, tile=tile), a.double() @ b.double(), "float16")


def test_matmul_writes_out_and_sums_nothing_as_zero():
    a, b = randn((70, 33), "float16", 5), randn((33, 90), "float16", 6)
    out = torch.full((70, 90), float("nan"), dtype=torch.float16, device="cuda")
    assert T.matmul(a, b, out=out) is out
    assert_close(out, a.double() @ b.double(), "float16")
    empty = T.matmul(a[:, :0], b[:0], out=out)  # K = 0: an empty sum
    assert empty is out and not out.any()
    assert T.matmul(a[:0], b).shape == (0, 90)


BMM_SHAPES = [(1, 1, 1, 1), (3, 17, 9, 5), (5, 129, 70, 200), (32, 256, 256, 256)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", BMM_SHAPES, ids=str)
def test_bmm(shape, dtype):
    Z, M, N, K = shape
    a, b = randn((Z, M, K), dtype, 7), randn((Z, K, N), dtype, 8)
    out = torch.empty((Z, M, N), dtype=a.dtype, device="cuda")
    assert T.bmm(a, b, out=out) is out
    assert_close(out, a.double() @ b.double(), dtype)


CONV_SIZES = [  # (N, H, W, C, R, S, K, pad)
    (1, 1, 1, 1, 1, 1, 1, 0),
    (1, 5, 5, 1, 5, 5, 1, 0),  # the filter as large as the image
    (1, 4, 4, 3, 5, 5, 2, 1),  # larger than the image: padding makes room
    (2, 7, 9, 3, 3, 2, 5, 0),
    (3, 11, 6, 2, 4, 1, 7, 2),
    (2, 10, 10, 4, 3, 3, 8, 1),
    (8, 14, 14, 6, 5, 5, 16, 0),  # LeNet-5's C3
    (4, 28, 28, 64, 3, 3, 64, 1),
    (2, 17, 19, 130, 3, 3, 70, 1),  # channels past a tile on both sides
    (2, 16, 16, 32, 1, 1, 48, 0),  # 1 x 1: a plain matrix product
]


def conv_exact(x, w, pad):
    """The float64 convolution of the same inputs: cuDNN on NCHW views, as NHWC."""
    xt = x.double().permute(0, 3, 1, 2)  # (N, C, H, W)
    wt = w.double().permute(3, 2, 0, 1)  # (K, C, R, S)
    return torch.nn.functional.conv2d(xt, wt, padding=pad).permute(0, 2, 3, 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", CONV_SIZES, ids=str)
def test_conv2d(size, dtype):
    N, H, W, C, R, S, K, pad = size
    x, w = randn((N, H, W, C), dtype, 9), randn((R, S, C, K), dtype, 10)
    assert_close(T.conv2d(x, w, pad=pad), conv_exact(x, w, pad), dtype)


@pytest.mark.parametrize("tile", [(16, 16, 16), (64, 64, 32), (128, 128, 64)], ids=str)
def test_conv2d_other_tiles(tile):
    x, w = randn((2, 10, 9, 20), "float16", 11), randn((3, 3, 20, 24), "float16", 12)
    y = T.conv2d(x, w, pad=1, tile=tile)
    assert_close(y, conv_exact(x, w, 1), "float16")


def test_tensors_on_the_host_are_refused():
    a = randn((8, 8), "float16", 13)
    with pytest.raises(ValueError, match="one CUDA device"):
        T.matmul(a, a.cpu())


def test_strided_views_are_refused():
    a = randn((64, 32), "float16", 14)
    with pytest.raises(ValueError, match="contiguous"):
        T.matmul(a.t(), a.t())

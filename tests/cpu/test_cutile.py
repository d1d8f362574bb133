"""B14's cuTile kernels off a GPU: cuTile Python has no CPU emulation, so here the
launchers must refuse bad input with a clear error before anything else, then stop
with CuTileUnavailable naming what is missing; the experiments declare gpu_only.

The kernels' index arithmetic (the convolution's implicit GEMM above all) is checked
by running their Python bodies over a NumPy model of the few cuda.tile operations
they call, written from those operations' documented semantics: loads past an edge
give zeros, stores past it are dropped, gathers outside the array or the mask give
the padding value. tests/gpu/test_cutile.py checks the real compiled kernels.
"""

import itertools
import subprocess
import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from thousand.beyond import cutile_kernels as T  # noqa: E402
from thousand.cuda import use_backend  # noqa: E402
from thousand.experiments import ExperimentError, run  # noqa: E402
from thousand.experiments.b14_cutile import EXPERIMENT as SWEEP  # noqa: E402
from thousand.experiments.b14_cutile_ops import EXPERIMENT as OPS  # noqa: E402
from thousand.kernels.conv2d import conv_flops  # noqa: E402


@pytest.fixture
def cpu_backend():
    before = use_backend("cpu")
    yield
    use_backend(before)


@pytest.fixture
def gpu_claimed(monkeypatch):
    """As on a machine whose backend is the GPU: what cutile() checks next."""
    monkeypatch.setattr(T, "on_cpu", lambda: False)
    monkeypatch.setattr(T, "ct", None)


def f16(*shape):
    return torch.zeros(shape, dtype=torch.float16)


CALLS = {
    "matmul": lambda: T.matmul(f16(3, 5), f16(5, 7)),
    "bmm": lambda: T.bmm(f16(2, 3, 5), f16(2, 5, 7)),
    "conv2d": lambda: T.conv2d(f16(1, 6, 6, 3), f16(3, 3, 3, 4), pad=1),
}


@pytest.mark.parametrize("name", CALLS)
def test_launchers_stop_on_the_cpu_backend(name, cpu_backend):
    with pytest.raises(T.CuTileUnavailable, match="runs only on a GPU") as e:
        CALLS[name]()
    assert "CPU backend" in str(e.value) and "cuda-tile" in str(e.value)


def test_missing_cuda_tile_is_named(gpu_claimed, monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.tile", None)  # import raises
    with pytest.raises(T.CuTileUnavailable, match="cuda.tile is not installed"):
        CALLS["matmul"]()


def _fake_cuda_tile(monkeypatch):
    tile = types.ModuleType("cuda.tile")
    package = types.ModuleType("cuda")
    package.tile = tile
    monkeypatch.setitem(sys.modules, "cuda", package)
    monkeypatch.setitem(sys.modules, "cuda.tile", tile)


def test_no_gpu_for_pytorch_is_named(gpu_claimed, monkeypatch):
    _fake_cuda_tile(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(T.CuTileUnavailable, match="PyTorch sees no CUDA GPU"):
        T.cutile()


def test_an_old_gpu_is_named(gpu_claimed, monkeypatch):
    _fake_cuda_tile(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (7, 5))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Tesla T4")
    with pytest.raises(T.CuTileUnavailable, match=r"Tesla T4.*capability 7\.5"):
        T.cutile()


def test_tensors_off_the_gpu_are_refused(monkeypatch):
    monkeypatch.setattr(T, "cutile", lambda: "cuda.tile")  # as if it could run
    with pytest.raises(ValueError, match="one CUDA device.*cpu"):
        CALLS["conv2d"]()


def f32(*shape):
    return torch.zeros(shape, dtype=torch.float32)


BAD = [
    # (call, error, words the message must hold)
    (lambda: T.matmul(np.zeros((3, 5)), f16(5, 7)), TypeError, "torch.Tensor"),
    (lambda: T.matmul(f16(3, 5).double(), f16(5, 7)), ValueError, "torch.float16"),
    (lambda: T.matmul(f16(3, 5).int(), f16(5, 7)), ValueError, "got torch.int32"),
    (lambda: T.matmul(f16(3), f16(5, 7)), ValueError, r"2-D \(M, K\)"),
    (lambda: T.matmul(f16(5, 3).t(), f16(5, 7)), ValueError, "contiguous"),
    (lambda: T.matmul(f16(3, 5), f16(4, 7)), ValueError, "columns .K."),
    (lambda: T.matmul(f16(3, 5), f32(5, 7)), ValueError, "same dtype"),
    (lambda: T.matmul(f16(3, 5), f16(5, 7), out=f16(7, 3)), ValueError, r"\(3, 7\)"),
    (lambda: T.matmul(f16(3, 5), f16(5, 7), out=f32(3, 7)), ValueError, "float16"),
    (lambda: T.matmul(f16(3, 5), f16(5, 7), tile=(128, 96, 64)), ValueError, "one of"),
    (lambda: T.matmul(f16(3, 5), f16(5, 7), tile=(128, 128)), ValueError, "three"),
    (lambda: T.matmul(f16(3, 5), f16(5, 7), tile=(True, 64, 64)), ValueError, "one of"),
    (lambda: T.bmm(f16(2, 3, 5), f16(3, 5, 7)), ValueError, "the same B"),
    (lambda: T.bmm(f16(2, 3, 5), f16(2, 4, 7)), ValueError, "a's K"),
    (lambda: T.bmm(f16(3, 5), f16(5, 7)), ValueError, r"3-D \(B, M, K\)"),
    (lambda: T.conv2d(f16(1, 6, 6, 3), f16(3, 3, 2, 4)), ValueError, "input channels"),
    (lambda: T.conv2d(f16(1, 6, 6, 0), f16(3, 3, 0, 4)), ValueError, "no channels"),
    (lambda: T.conv2d(f16(1, 2, 6, 3), f16(5, 3, 3, 4), 1), ValueError, "does not fit"),
    (lambda: T.conv2d(f16(1, 6, 6, 3), f16(3, 3, 3, 4), -1), ValueError, "`pad`"),
    (lambda: T.conv2d(f16(1, 6, 6, 3), f16(3, 3, 3, 4), 1.0), ValueError, "`pad`"),
    (lambda: T.conv2d(f16(6, 6, 3), f16(3, 3, 3, 4)), ValueError, r"\(N, H, W, C\)"),
    (
        lambda: T.conv2d(f16(1, 6, 6, 3), f16(3, 3, 3, 4), out=f16(1, 6, 6, 4)),
        ValueError,
        r"\(1, 4, 4, 4\)",  # no padding: 6 - 3 + 1 = 4
    ),
]


@pytest.mark.parametrize("call,error,words", BAD)
def test_bad_input_is_refused_before_anything_runs(call, error, words, cpu_backend):
    with pytest.raises(error, match=words):
        call()


def test_nothing_heavy_is_imported_with_the_modules():
    """all_experiments() imports the experiments on machines without torch or
    cuda.tile: neither may load with them."""
    code = (
        "import sys, thousand.beyond.cutile_kernels, thousand.experiments.b14_cutile,"
        " thousand.experiments.b14_cutile_ops; "
        "print(sorted(m for m in ('torch', 'cuda.tile') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("e", [SWEEP, OPS], ids=lambda e: e.name)
def test_experiments_are_gpu_only(e, cpu_backend):
    assert "tileiras" in e.gpu_only and "beyond/cutile_kernels.py" in e.files
    assert any(p.name == "cutile_kernels.py" for p in e.sources())
    with pytest.raises(ExperimentError, match="runs only on a GPU"):
        run(e, quick=True)


def test_the_sweep_holds_the_sample_default_and_the_tile_that_fits():
    from thousand.experiments.b14_cutile import SAMPLE, TILES

    assert SAMPLE == (128, 256, 64) and SAMPLE in TILES and (128, 128, 64) in TILES
    for tile in TILES:
        assert T.check_tile("sweep", tile) == tile


def test_flops_and_error_measures():
    # the package's own convolution count is the oracle at pad = 0
    for size in [(2, 7, 9, 3, 3, 2, 5), (8, 14, 14, 6, 5, 5, 16)]:
        N, H, W, C, R, S, F = size
        assert T.flops_conv2d((N, H, W, C), (R, S, C, F), 0) == conv_flops(size)
    # padding p is a valid convolution of an image 2p larger
    assert T.flops_conv2d((1, 6, 6, 3), (3, 3, 3, 4), 1) == conv_flops(
        (1, 8, 8, 3, 3, 3, 4)
    )
    assert T.flops_matmul(2, 3, 4, batch=5) == 2 * 2 * 3 * 4 * 5
    ref = torch.tensor([[4.0, -8.0], [2.0, 1.0]])
    assert T.relative_error(ref + torch.tensor([[0.0, 0.5], [0.0, 0.0]]), ref) == 0.0625
    assert T.relative_error(ref.half(), ref) == 0.0


# ----- the kernels' bodies over a NumPy model of the cuda.tile operations they use


class Array:
    """A global array as a kernel sees it: shape and dtype, and its elements."""

    def __init__(self, a):
        self.a, self.shape, self.dtype = a, a.shape, a.dtype


def _window(array, index, shape):
    return tuple(
        slice(i * s, min((i + 1) * s, n))
        for i, s, n in zip(index, shape, array.shape, strict=True)
    )


def _load(array, index, shape, padding_mode=None):
    tile = np.zeros(shape, array.dtype)  # past the edge: zeros (PaddingMode.ZERO)
    part = array.a[_window(array, index, shape)]
    tile[tuple(slice(0, n) for n in part.shape)] = part
    return tile


def _store(array, index, tile):
    where = _window(array, index, tile.shape)  # past the edge: dropped
    array.a[where] = tile[tuple(slice(0, w.stop - w.start) for w in where)]


def _gather(array, indices, mask=None, padding_value=0):
    *indices, mask = np.broadcast_arrays(*indices, mask)
    ok = mask.copy()
    for i, n in zip(indices, array.shape, strict=True):
        ok &= (i >= 0) & (i < n)  # each index within its own axis
    safe = tuple(np.where(ok, i, 0) for i in indices)
    return np.where(ok, array.a[safe], padding_value).astype(array.dtype)


def _model(block):
    f32_ = np.dtype(np.float32)
    return types.SimpleNamespace(
        bid=lambda axis: block[axis],
        cdiv=lambda a, b: -(-a // b),
        num_tiles=lambda array, axis, shape: -(-array.shape[axis] // shape[axis]),
        full=lambda shape, value, dtype: np.full(shape, value, dtype),
        arange=lambda n, dtype: np.arange(n, dtype=dtype),
        load=_load,
        store=_store,
        gather=_gather,
        mma=lambda a, b, acc: (a.astype(np.float64) @ b + acc).astype(acc.dtype),
        float32=f32_,
        tfloat32=f32_,  # the model does not round to TF32: it checks indices
        int32=np.dtype(np.int32),
        PaddingMode=types.SimpleNamespace(ZERO="zero"),
    )


def _run(monkeypatch, kernel, grid, *args):
    """Every block of `grid`, one after another, with `ct` the model."""
    args = [Array(a) if isinstance(a, np.ndarray) else a for a in args]
    for block in itertools.product(*(range(g) for g in grid)):
        monkeypatch.setattr(T, "ct", _model(block))
        kernel.fn(*args)


def _normal(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (3, 5, 7), (129, 257, 65), (40, 9, 33)])
@pytest.mark.parametrize("tile", [(16, 16, 16), (64, 32, 16)])
def test_matmul_kernel_indexes_every_tile(M, N, K, tile, monkeypatch):
    rng = np.random.default_rng(M * N * K)
    a, b = _normal(rng, M, K), _normal(rng, K, N)
    c = np.full((M, N), np.nan, np.float32)  # a tile left unwritten stays NaN
    grid = (T.cdiv(M, tile[0]) * T.cdiv(N, tile[1]),)
    _run(monkeypatch, T.matmul_kernel, grid, a, b, c, *tile, T.GROUP)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("Z,M,N,K", [(1, 1, 1, 1), (3, 17, 9, 5), (2, 70, 40, 33)])
def test_bmm_kernel_indexes_every_product(Z, M, N, K, monkeypatch):
    rng = np.random.default_rng(Z * M * N * K)
    a, b = _normal(rng, Z, M, K), _normal(rng, Z, K, N)
    c = np.full((Z, M, N), np.nan, np.float32)
    tile = (32, 16, 16)
    grid = (T.cdiv(M, tile[0]) * T.cdiv(N, tile[1]), Z)
    _run(monkeypatch, T.bmm_kernel, grid, a, b, c, *tile, T.GROUP)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


CONV_SIZES = [  # (N, H, W, C, R, S, K, pad): 1s, ragged, filters as big as the image
    (1, 1, 1, 1, 1, 1, 1, 0),
    (2, 7, 9, 3, 3, 2, 5, 0),
    (2, 7, 9, 3, 3, 3, 5, 1),
    (3, 11, 6, 2, 4, 1, 7, 2),
    (1, 5, 5, 1, 5, 5, 1, 2),
    (1, 4, 4, 3, 5, 5, 2, 1),
    (2, 8, 8, 16, 1, 1, 24, 0),
]


@pytest.mark.parametrize("size", CONV_SIZES, ids=str)
@pytest.mark.parametrize("tile", [(16, 16, 16), (32, 16, 32)])
def test_conv2d_kernel_gathers_the_right_patches(size, tile, monkeypatch):
    N, H, W, C, R, S, K, pad = size
    rng = np.random.default_rng(sum(size))
    x, w = _normal(rng, N, H, W, C), _normal(rng, R, S, C, K)
    P, Q = H + 2 * pad - R + 1, W + 2 * pad - S + 1
    y = np.full((N * P * Q, K), np.nan, np.float32)
    grid = (T.cdiv(N * P * Q, tile[0]) * T.cdiv(K, tile[1]),)
    f = w.reshape(R * S * C, K)
    _run(monkeypatch, T.conv2d_kernel, grid, x, f, y, R, S, pad, *tile, T.GROUP)
    xt = torch.from_numpy(x).double().permute(0, 3, 1, 2)  # (N, C, H, W)
    wt = torch.from_numpy(w).double().permute(3, 2, 0, 1)  # (K, C, R, S)
    want = torch.nn.functional.conv2d(xt, wt, padding=pad).permute(0, 2, 3, 1)
    np.testing.assert_allclose(y.reshape(N, P, Q, K), want.numpy(), atol=1e-4)


def test_the_model_catches_a_wrong_index(monkeypatch):
    """The model is strict enough to fail: a tile order that visits one tile
    twice and leaves another out is caught."""
    monkeypatch.setattr(T, "grouped", lambda block, rows, cols, group: (0, 0))
    with pytest.raises(AssertionError):
        test_matmul_kernel_indexes_every_tile(40, 9, 33, (16, 16, 16), monkeypatch)

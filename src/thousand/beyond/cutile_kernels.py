"""B14: tile programming in cuTile Python: a matrix product, a batched one and a
convolution, each beside the CUDA C of this package that computes the same thing.

    c = matmul(a, b)                      # a: (M, K), b: (K, N) torch CUDA tensors
    c = matmul(a, b, tile=(128, 128, 64)) # C's tile is 128 x 128, K taken 64 at a time
    c = bmm(a, b)                         # (B, M, K) x (B, K, N) -> (B, M, N)
    y = conv2d(x, w, pad=1)               # x: (N, H, W, C), w: (R, S, C, K), stride 1

In CUDA C a block's threads each hold a piece of C's tile and we wrote which. In
cuTile a kernel body runs once per block and speaks in whole tiles: load a tile of A
and one of B, `ct.mma` them into an accumulator tile, store C's tile. Threads,
shared memory, TMA copies and Hopper's wgmma instructions are the compiler's
(tileiras). What is left to us is which tile each block takes, and the tile's
shape: (tm, tn) of C and the step tk along K. That shape is the lesson: it sets
how many registers the accumulator needs, how much shared memory each pipeline
stage takes and how many blocks fit on an SM at once, and a shape that overflows
them is many times slower than one that fits (b14-cutile measures it).

float16 and bfloat16 multiply on tensor cores and sum in float32, rounded once to
the output; float32 operands are rounded to TF32 first (10-bit mantissas, like the
matmul_v8 rung of B9) and sum in float32. Every shape is accepted: a tile that
reaches past an edge loads zeros there and its store leaves the outside alone.

cuTile Python (the cuda-tile package, imported as cuda.tile) runs only on an NVIDIA
GPU: it compiles through tileiras, which on Hopper (sm_90) needs tileiras, ptxas and
libnvvm of CUDA 13.4. There is no CPU emulation: off a GPU every launcher stops
with CuTileUnavailable, which says what is missing.

python -m thousand.beyond.cutile_kernels
"""

from __future__ import annotations

from thousand.cuda import cdiv, on_cpu
from thousand.cuda.errors import CudaUnavailable
from thousand.optional import require

# cuda.tile, bound by cutile() on first use: it imports only on a machine with the
# CUDA driver, so the kernels below name it as a global that is resolved when they
# compile, not when this module loads.
ct = None

NEEDS = (
    "it needs an NVIDIA GPU of compute capability 8.0 or newer (on Hopper, 9.0: "
    "CUDA 13.4's tileiras, ptxas and libnvvm) and the cuda-tile package "
    "(pip install 'cuda-tile[tileiras]')"
)
INDEX_LIMIT = 2**31  # cuTile indexes arrays with int32 unless told otherwise
TILE_SIZES = (16, 32, 64, 128, 256)  # powers of two: the tensor cores' pieces fit
GROUP = 8  # tile rows per band in the grouped block order (see grouped)


class CuTileUnavailable(CudaUnavailable):
    """cuTile kernels cannot run here; the message says what is missing."""


def _unavailable(why: str) -> CuTileUnavailable:
    return CuTileUnavailable(f"cuTile Python runs only on a GPU: {NEEDS}; here {why}")


def cutile():
    """cuda.tile, once this machine can run its kernels; CuTileUnavailable naming
    what is missing otherwise."""
    global ct
    if ct is not None:
        return ct
    if on_cpu():
        raise _unavailable(
            "the package runs on its CPU backend (THOUSAND_BACKEND=cpu, or no GPU), "
            "and cuTile has no CPU emulation"
        )
    torch = require("torch", "cuTile's launchers")
    try:
        import cuda.tile as tile
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("cuda"):
            raise  # cuda.tile is there but something it imports is not
        raise _unavailable("cuda.tile is not installed") from e
    except OSError as e:  # importing it loads libcuda.so.1
        raise _unavailable(f"cuda.tile cannot load the CUDA driver ({e})") from e
    if not torch.cuda.is_available():
        raise _unavailable("PyTorch sees no CUDA GPU")
    major, minor = torch.cuda.get_device_capability()
    if major < 8:
        name = torch.cuda.get_device_name()
        raise _unavailable(f"the GPU ({name}) is of compute capability {major}.{minor}")
    ct = tile
    return ct


class tile_kernel:  # lower case: it reads as the decorator it stands for
    """@ct.kernel, deferred: the plain function is handed to ct.kernel on its first
    launch, after cutile() has imported cuda.tile."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        self._compiled = None

    def kernel(self):
        if self._compiled is None:
            self._compiled = cutile().kernel(self.fn)
        return self._compiled


# --8<-- [start:grouped]
def grouped(block, rows, cols, group):
    """The tile (i, j) of C that `block` computes, in bands of `group` tile rows
    walked column by column: blocks that run at one time share rows of A and
    columns of B, which L2 then serves instead of device memory."""
    band = block // (group * cols)
    first = band * group
    height = min(rows - first, group)  # the last band may be shorter
    inside = block % (group * cols)
    return first + inside % height, inside // height


# --8<-- [end:grouped]


# --8<-- [start:matmul]
@tile_kernel
def matmul_kernel(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int],
                  tk: ct.Constant[int], group: ct.Constant[int]):  # fmt: skip
    """C (M, N) = A (M, K) B (K, N): one (tm, tn) tile of C per block."""
    rows, cols = ct.cdiv(A.shape[0], tm), ct.cdiv(B.shape[1], tn)
    i, j = grouped(ct.bid(0), rows, cols, group)
    use = ct.tfloat32 if A.dtype == ct.float32 else A.dtype  # tensor-core input
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        # past an edge a tile holds zeros, which add nothing to the sum
        a = ct.load(A, index=(i, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, j), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a.astype(use), b.astype(use), acc)  # acc += a b
    ct.store(C, index=(i, j), tile=acc.astype(C.dtype))  # outside C: left out


# --8<-- [end:matmul]


# --8<-- [start:bmm]
@tile_kernel
def bmm_kernel(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int],
               tk: ct.Constant[int], group: ct.Constant[int]):  # fmt: skip
    """C[z] = A[z] B[z] for each z of the batch: the grid's second axis is z, and
    tiles are 3-D, (1, rows, columns), so one load reaches into one product."""
    z = ct.bid(1)
    rows, cols = ct.cdiv(A.shape[1], tm), ct.cdiv(B.shape[2], tn)
    i, j = grouped(ct.bid(0), rows, cols, group)
    use = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
    acc = ct.full((1, tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=2, shape=(1, tm, tk))):
        a = ct.load(A, index=(z, i, k), shape=(1, tm, tk),
                    padding_mode=ct.PaddingMode.ZERO)  # fmt: skip
        b = ct.load(B, index=(z, k, j), shape=(1, tk, tn),
                    padding_mode=ct.PaddingMode.ZERO)  # fmt: skip
        acc = ct.mma(a.astype(use), b.astype(use), acc)
    ct.store(C, index=(z, i, j), tile=acc.astype(C.dtype))


# --8<-- [end:bmm]


# --8<-- [start:conv2d]
@tile_kernel
def conv2d_kernel(X, F, Y, R: ct.Constant[int], S: ct.Constant[int],
                  pad: ct.Constant[int], tm: ct.Constant[int], tn: ct.Constant[int],
                  tk: ct.Constant[int], group: ct.Constant[int]):  # fmt: skip
    """Implicit GEMM. Y (N*P*Q, K) = patches (N*P*Q, R*S*C) times F (R*S*C, K),
    where row (n, p, q) of the patch matrix is the window of X under output pixel
    (n, p, q) and column (r, s, c) its element X[n, p+r-pad, q+s-pad, c], as in
    conv2d_v2's im2col. Here the patch matrix is never stored: each (tm, tk) tile
    of it is gathered from X (N, H, W, C) when the product needs it."""
    H, W, C = X.shape[1], X.shape[2], X.shape[3]
    P, Q = H + 2 * pad - R + 1, W + 2 * pad - S + 1
    pixels, depth = Y.shape[0], R * S * C
    rows, cols = ct.cdiv(pixels, tm), ct.cdiv(Y.shape[1], tn)
    i, j = grouped(ct.bid(0), rows, cols, group)
    use = ct.tfloat32 if X.dtype == ct.float32 else X.dtype
    m = i * tm + ct.arange(tm, dtype=ct.int32)  # this tile's output pixels
    n = (m // (P * Q))[:, None]  # (tm, 1)
    p = ((m // Q) % P)[:, None]
    q = (m % Q)[:, None]
    real = (m < pixels)[:, None]  # rows past the last pixel read nothing
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.cdiv(depth, tk)):
        e = k * tk + ct.arange(tk, dtype=ct.int32)  # patch columns (r, s, c)
        r = (e // (S * C))[None, :]  # (1, tk)
        s = ((e // C) % S)[None, :]
        c = (e % C)[None, :]
        h, w = p + r - pad, q + s - pad  # (tm, tk): where in X, maybe outside
        inside = (h >= 0) & (h < H) & (w >= 0) & (w < W)  # else padding: 0
        keep = inside & real & (e < depth)[None, :]
        x = ct.gather(X, (n, h, w, c), mask=keep, padding_value=0)  # (tm, tk)
        f = ct.load(F, index=(k, j), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(x.astype(use), f.astype(use), acc)
    ct.store(Y, index=(i, j), tile=acc.astype(Y.dtype))


# --8<-- [end:conv2d]


def _torch():
    return require("torch", "cuTile's launchers")


def dtypes():
    torch = _torch()
    return (torch.float16, torch.bfloat16, torch.float32)


def default_tile(dtype, op: str = "matmul") -> tuple[int, int, int]:
    """A tile that fits the H200 well for 2-byte operands (b14-cutile's sweep);
    float32 takes twice the bytes a stage, so half the K step. conv2d's tile is
    as wide as a typical layer's 64 output channels."""
    two = dtype != _torch().float32
    if op == "conv2d":
        return (128, 64, 64) if two else (128, 64, 32)
    return (128, 128, 64) if two else (128, 128, 32)


def _check_tensor(op, name, x, ndim, layout):
    torch = _torch()
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{op}: `{name}` must be a torch.Tensor, got {type(x).__name__}"
        )
    if x.dtype not in dtypes():
        raise ValueError(
            f"{op}: `{name}` must be torch.float16, torch.bfloat16 or torch.float32, "
            f"got {x.dtype}"
        )
    if x.dim() != ndim:
        raise ValueError(
            f"{op}: `{name}` must be {ndim}-D {layout}, got shape {tuple(x.shape)}"
        )
    if not x.is_contiguous():
        raise ValueError(
            f"{op}: `{name}` must be contiguous (row-major {layout}); "
            "call .contiguous()"
        )
    if x.numel() >= INDEX_LIMIT:
        raise ValueError(
            f"{op}: `{name}` has {x.numel():,} elements; these kernels index with "
            f"int32 and take fewer than 2^31"
        )


def _check_same(op, named):
    (first, x), *rest = named
    for name, y in rest:
        if y.dtype != x.dtype:
            raise ValueError(
                f"{op}: `{first}` is {x.dtype} and `{name}` {y.dtype}; "
                "give both the same dtype"
            )


def check_tile(op, tile) -> tuple[int, int, int]:
    """(tm, tn, tk) as ints, each a power of two from 16 to 256."""
    if not (isinstance(tile, tuple | list) and len(tile) == 3):
        raise ValueError(f"{op}: `tile` must be (tm, tn, tk), three ints; got {tile!r}")
    for t in tile:
        if isinstance(t, bool) or not isinstance(t, int) or t not in TILE_SIZES:
            raise ValueError(
                f"{op}: each of tile (tm, tn, tk) must be one of {TILE_SIZES}, "
                f"got {tile!r}"
            )
    return tuple(tile)


def _check_out(op, out, shape, like, layout):
    if out is None:
        return None
    _check_tensor(op, "out", out, len(shape), layout)
    if tuple(out.shape) != tuple(shape) or out.dtype != like.dtype:
        raise ValueError(
            f"{op}: `out` must be {tuple(shape)} {like.dtype}, "
            f"got {tuple(out.shape)} {out.dtype}"
        )
    return out


def _ready(op, tensors):
    """cuda.tile, once every tensor is on one CUDA device."""
    tile = cutile()
    device = tensors[0].device
    for t in tensors:
        if t.device.type != "cuda" or t.device != device:
            where = ", ".join(str(t.device) for t in tensors)
            raise ValueError(
                f"{op}: cuTile needs every tensor on one CUDA device, got {where} "
                "(move them with .cuda())"
            )
    return tile


def _launch(op, grid, fn, args, device):
    torch = _torch()
    tile = cutile()
    try:
        with torch.cuda.device(device):
            tile.launch(torch.cuda.current_stream(), grid, fn.kernel(), args)
    except FileNotFoundError as e:  # tileiras is found only when a kernel compiles
        raise _unavailable(f"{op} found no tileiras ({e})") from e


# --8<-- [start:launchers]
def matmul(a, b, out=None, tile=None):
    """C = a @ b for (M, K) and (K, N) CUDA tensors of one dtype; out (M, N) or
    a new tensor. tile = (tm, tn, tk), powers of two; default_tile() if None."""
    op = "cutile matmul"
    _check_tensor(op, "a", a, 2, "(M, K)")
    _check_tensor(op, "b", b, 2, "(K, N)")
    _check_same(op, [("a", a), ("b", b)])
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{op}: a is {tuple(a.shape)} and b {tuple(b.shape)}; a's columns (K) "
            "must equal b's rows"
        )
    (M, K), N = a.shape, b.shape[1]
    out = _check_out(op, out, (M, N), a, "(M, N)")
    tm, tn, tk = check_tile(op, tile or default_tile(a.dtype))
    _ready(op, [a, b] + ([out] if out is not None else []))
    c = a.new_empty((M, N)) if out is None else out
    if M and N:
        if K == 0:
            c.zero_()  # an empty sum
        else:
            grid = (cdiv(M, tm) * cdiv(N, tn), 1, 1)
            _launch(op, grid, matmul_kernel, (a, b, c, tm, tn, tk, GROUP), a.device)
    return c


def bmm(a, b, out=None, tile=None):
    """C[z] = a[z] @ b[z] for (B, M, K) and (B, K, N) CUDA tensors of one dtype."""
    op = "cutile bmm"
    _check_tensor(op, "a", a, 3, "(B, M, K)")
    _check_tensor(op, "b", b, 3, "(B, K, N)")
    _check_same(op, [("a", a), ("b", b)])
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(
            f"{op}: a is {tuple(a.shape)} and b {tuple(b.shape)}; they must be "
            "(B, M, K) and (B, K, N): the same B, and a's K equal to b's"
        )
    (Z, M, K), N = a.shape, b.shape[2]
    if Z > 65535:
        raise ValueError(f"{op}: a batch of {Z}; the grid's second axis takes 65,535")
    out = _check_out(op, out, (Z, M, N), a, "(B, M, N)")
    tm, tn, tk = check_tile(op, tile or default_tile(a.dtype))
    _ready(op, [a, b] + ([out] if out is not None else []))
    c = a.new_empty((Z, M, N)) if out is None else out
    if Z and M and N:
        if K == 0:
            c.zero_()
        else:
            grid = (cdiv(M, tm) * cdiv(N, tn), Z, 1)
            _launch(op, grid, bmm_kernel, (a, b, c, tm, tn, tk, GROUP), a.device)
    return c


def conv2d(x, w, pad=0, out=None, tile=None):
    """Y = x * w: x (N, H, W, C) and filters w (R, S, C, K), the layout of this
    package's conv2d; stride 1, `pad` zeros around each image. Y is (N, P, Q, K)
    with P = H + 2 pad - R + 1 and Q = W + 2 pad - S + 1."""
    op = "cutile conv2d"
    _check_tensor(op, "x", x, 4, "(N, H, W, C)")
    _check_tensor(op, "w", w, 4, "(R, S, C, K)")
    _check_same(op, [("x", x), ("w", w)])
    if isinstance(pad, bool) or not isinstance(pad, int) or pad < 0:
        raise ValueError(f"{op}: `pad` must be an int >= 0, got {pad!r}")
    N, H, W, C = x.shape
    R, S, C_w, K = w.shape
    if C_w != C:
        raise ValueError(f"{op}: w has {C_w} input channels and x has {C}")
    if C == 0:
        raise ValueError(f"{op}: x has no channels (C = 0)")
    P, Q = H + 2 * pad - R + 1, W + 2 * pad - S + 1
    if P < 1 or Q < 1 or R < 1 or S < 1:
        raise ValueError(
            f"{op}: a {R} x {S} filter does not fit in a {H} x {W} image with pad={pad}"
        )
    out = _check_out(op, out, (N, P, Q, K), x, "(N, P, Q, K)")
    tm, tn, tk = check_tile(op, tile or default_tile(x.dtype, "conv2d"))
    _ready(op, [x, w] + ([out] if out is not None else []))
    y = x.new_empty((N, P, Q, K)) if out is None else out
    if y.numel():
        # filters as the (R*S*C, K) matrix, Y as (N*P*Q, K): views, no copies
        f, rows = w.view(R * S * C, K), y.view(N * P * Q, K)
        grid = (cdiv(N * P * Q, tm) * cdiv(K, tn), 1, 1)
        args = (x, f, rows, R, S, pad, tm, tn, tk, GROUP)
        _launch(op, grid, conv2d_kernel, args, x.device)
    return y


# --8<-- [end:launchers]


def flops_matmul(M, N, K, batch=1) -> int:
    return 2 * batch * M * N * K


def flops_conv2d(x_shape, w_shape, pad) -> int:
    N, H, W, C = x_shape
    R, S, _, K = w_shape
    return 2 * N * (H + 2 * pad - R + 1) * (W + 2 * pad - S + 1) * K * R * S * C


def relative_error(y, ref) -> float:
    """max |y - ref| / max |ref|, in float64."""
    y, ref = y.double(), ref.double()
    scale = ref.abs().max().item() or 1.0
    return (y - ref).abs().max().item() / scale


def _cases(dtype):
    """(label, ours, PyTorch's) on one set of operands of `dtype`, on the GPU."""
    import torch

    g = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=g).to("cuda", dtype)

    a, b = randn(4096, 4096), randn(4096, 4096)
    za, zb = randn(32, 512, 512), randn(32, 512, 512)
    x, w = randn(32, 56, 56, 64), randn(3, 3, 64, 64)
    xt = x.permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
    wt = w.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
    conv = torch.nn.functional.conv2d
    return [
        ("matmul 4096^3", lambda: matmul(a, b), lambda: a @ b),
        ("bmm 32 x 512^3", lambda: bmm(za, zb), lambda: torch.bmm(za, zb)),
        (
            "conv2d 32x56x56x64, 3x3, pad 1",
            lambda: conv2d(x, w, pad=1),
            lambda: conv(xt, wt, padding=1).permute(0, 2, 3, 1),  # as NHWC
        ),
    ]


def _main():
    """Check each kernel against PyTorch (TF32 on both sides for float32), then
    time both (CUDA events, L2 flushed, medians)."""
    import torch

    from thousand.cuda import median, time_ms

    cutile()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    print(f"{'kernel':<40}{'max rel error':>14}{'cuTile ms':>11}{'PyTorch ms':>12}")
    for dtype in (torch.float16, torch.float32):
        name = str(dtype).removeprefix("torch.")
        for label, ours, theirs in _cases(dtype):
            err = relative_error(ours(), theirs())
            ms = [median(time_ms(f, repeat=10)) for f in (ours, theirs)]
            print(f"{label + ' ' + name:<40}{err:>14.1e}{ms[0]:>11.3f}{ms[1]:>12.3f}")


if __name__ == "__main__":
    _main()

"""B13: the tiled matrix product of B9, written in Triton, rung by rung.

    c = matmul(a, b)              # a: (M, K), b: (K, N) torch tensors, same dtype
    c = matmul(a, b, version=1)   # one rung of the ladder

In CUDA C (B9) a block computes one tile of C, and we chose by hand which thread
holds which element, staged tiles in shared memory, padded it against bank
conflicts and pipelined the loads. In Triton a *program* computes one tile of C and
the compiler does the rest: it lays the tile out over the threads, puts the operands
in shared memory, and issues tensor-core instructions (wgmma on Hopper) for
`tl.dot`. What is left to us is the order in which programs take their tiles and the
tile's shape:

    v1: one (BM x BN) tile per program, programs in row-major order
    v2: grouped order: GROUP_M rows of tiles walked column by column, so the
        programs running at one time share their A rows and B columns in L2
    v3: v2 with the tile shape, warps and pipeline depth chosen by triton.autotune
        from a list made for the operand width (2-byte fp16/bf16 or 4-byte fp32)

float16 and bfloat16 accumulate in float32 and round once; float32 runs on tensor
cores as TF32 (10-bit mantissas, like the B9 v8 rung) unless precision="ieee", which
multiplies in full float32 on the CUDA cores. Without a GPU the kernels run in
Triton's interpreter (thousand.beyond.triton), slowly but bit for bit the same code.

python -m thousand.beyond.triton_matmul
"""

from __future__ import annotations

import numpy as np

from thousand.beyond import triton as _import_triton

triton = _import_triton()
import torch  # noqa: E402  (after Triton's interpreter is chosen)
import triton.language as tl  # noqa: E402

OP = "triton matmul"
DTYPES = (torch.float16, torch.bfloat16, torch.float32)
PRECISIONS = ("tf32", "ieee")  # how a float32 product is multiplied


# --8<-- [start:tile]
@triton.jit
def tile_product(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, tm, tn,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 PRECISION: tl.constexpr):  # fmt: skip
    """C's tile (tm, tn) = A's row of tiles times B's column of tiles."""
    rows = (tm * BM + tl.arange(0, BM)) % M  # past the edge: read row 0 again,
    cols = (tn * BN + tl.arange(0, BN)) % N  # then leave it out of the store
    ks = tl.arange(0, BK)
    a_tile = a + rows[:, None] * sam + ks[None, :] * sak  # (BM, BK) pointers
    b_tile = b + ks[:, None] * sbk + cols[None, :] * sbn  # (BK, BN) pointers
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a_tile, mask=ks[None, :] < K - k0, other=0.0)
        y = tl.load(b_tile, mask=ks[:, None] < K - k0, other=0.0)
        acc = tl.dot(x, y, acc, input_precision=PRECISION)  # tensor cores
        a_tile += BK * sak
        b_tile += BK * sbk
    rows = tm * BM + tl.arange(0, BM)
    cols = tn * BN + tl.arange(0, BN)
    out = c + rows[:, None] * scm + cols[None, :] * scn
    keep = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out, acc.to(c.dtype.element_ty), mask=keep)


# --8<-- [end:tile]


# --8<-- [start:v1]
@triton.jit
def matmul_rows(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                GROUP_M: tl.constexpr, PRECISION: tl.constexpr):  # fmt: skip
    """v1: program p takes tile (p // tiles across, p % tiles across)."""
    p = tl.program_id(0)
    across = tl.cdiv(N, BN)
    tile_product(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                 p // across, p % across, BM, BN, BK, PRECISION)  # fmt: skip


# --8<-- [end:v1]


# --8<-- [start:v2]
@triton.jit
def matmul_grouped(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   GROUP_M: tl.constexpr, PRECISION: tl.constexpr):  # fmt: skip
    """v2: programs walk a band of GROUP_M tile rows column by column, so that
    neighbours in launch order (those resident together) reuse A and B in L2."""
    p = tl.program_id(0)
    down, across = tl.cdiv(M, BM), tl.cdiv(N, BN)
    band = p // (GROUP_M * across)  # which band of GROUP_M tile rows
    first = band * GROUP_M
    height = min(down - first, GROUP_M)  # the last band may be shorter
    inside = p % (GROUP_M * across)
    tile_product(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                 first + inside % height, inside // height,
                 BM, BN, BK, PRECISION)  # fmt: skip


# --8<-- [end:v2]


# --8<-- [start:configs]
def _config(bm, bn, bk, stages, warps):
    return triton.Config(
        {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8},
        num_stages=stages,
        num_warps=warps,
    )


# Tiles for 2-byte operands: a 128 x 256 tile with a 64-deep K step holds
# (128 + 256) x 64 x 2 B = 48 KiB a stage, so three or four stages fit in the
# H200's 227 KiB of shared memory.
CONFIGS_2BYTE = [
    _config(*c)
    for c in [
        (128, 256, 64, 3, 8),
        (256, 128, 64, 3, 8),
        (128, 128, 64, 4, 4),
        (128, 128, 64, 3, 8),
        (128, 64, 64, 4, 4),
        (64, 128, 64, 4, 4),
        (64, 64, 64, 5, 4),
    ]
]
# The same tiles in float32 take twice the bytes: halve the K step so that as many
# stages fit, and keep the shapes that leave each warp enough rows.
CONFIGS_4BYTE = [
    _config(*c)
    for c in [
        (128, 256, 32, 3, 8),
        (256, 128, 32, 3, 8),
        (128, 128, 32, 4, 4),
        (128, 128, 32, 3, 8),
        (128, 64, 32, 4, 4),
        (64, 128, 32, 4, 4),
        (64, 64, 32, 5, 4),
    ]
]
# --8<-- [end:configs]


# What a tuned config is kept for: the sizes, the operands' layouts (B stored
# K-major wants other tiles than row-major B) and the precision (TF32 on tensor
# cores against full float32 on CUDA cores). Triton adds the dtypes itself.
KEY = ["M", "N", "K", "sam", "sak", "sbk", "sbn", "PRECISION"]


def _tuned(configs):
    # the interpreter cannot time a config (no CUDA events): it runs the first
    if _interpreted():
        configs = configs[:1]
    return triton.autotune(configs=configs, key=KEY)(matmul_grouped)


def _interpreted() -> bool:
    from thousand.beyond import interpreted

    return interpreted()


TUNED = {2: _tuned(CONFIGS_2BYTE), 4: _tuned(CONFIGS_4BYTE)}
FIXED = {"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}  # v1 and v2's tile
FIXED_STAGES, FIXED_WARPS = 3, 8


def _check(a, b, out, precision):
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{OP}: {name} must be a torch tensor, got {type(t)}")
        if t.ndim != 2:
            raise ValueError(f"{OP}: {name} must be 2-D, got shape {tuple(t.shape)}")
        if t.dtype not in DTYPES:
            raise ValueError(f"{OP}: {name} must be one of {DTYPES}, got {t.dtype}")
    if a.dtype != b.dtype:
        raise ValueError(f"{OP}: a and b differ in dtype ({a.dtype}, {b.dtype})")
    if a.device != b.device:
        raise ValueError(f"{OP}: a and b are on {a.device} and {b.device}")
    want = "cpu" if _interpreted() else "cuda"
    if a.device.type != want:
        raise ValueError(
            f"{OP}: tensors must be on {want} here (Triton "
            f"{'interpreter' if want == 'cpu' else 'on the GPU'}), got {a.device}"
        )
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{OP}: a is {tuple(a.shape)} and b {tuple(b.shape)}: "
            "a's columns must equal b's rows"
        )
    if _interpreted() and a.dtype == torch.bfloat16:
        # triton/runtime/interpreter.py's create_dot multiplies bfloat16's bits,
        # stored as uint16, as integers: its products would be garbage
        raise ValueError(f"{OP}: Triton's interpreter cannot multiply bfloat16")
    if precision not in PRECISIONS:
        raise ValueError(f"{OP}: precision is one of {PRECISIONS}, got {precision!r}")
    if precision == "ieee" and a.dtype != torch.float32:
        raise ValueError(f"{OP}: precision='ieee' is for float32, not {a.dtype}")
    M, N = a.shape[0], b.shape[1]
    if out is None:
        return torch.empty((M, N), dtype=a.dtype, device=a.device)
    if out.shape != (M, N) or out.dtype != a.dtype or out.device != a.device:
        raise ValueError(
            f"{OP}: out must be {(M, N)} {a.dtype} on {a.device}, got "
            f"{tuple(out.shape)} {out.dtype} on {out.device}"
        )
    if out.stride(1) != 1:
        raise ValueError(f"{OP}: out's rows must be contiguous")
    return out


def _args(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    return (a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride())


def _fixed(kernel, a, b, out, precision):
    c = _check(a, b, out, precision)
    if c.numel() and a.shape[1]:
        grid = (
            triton.cdiv(a.shape[0], FIXED["BM"]) * triton.cdiv(b.shape[1], FIXED["BN"]),
        )
        kernel[grid](
            *_args(a, b, c), **FIXED, PRECISION=precision,
            num_stages=FIXED_STAGES, num_warps=FIXED_WARPS,
        )  # fmt: skip
    elif c.numel():
        c.zero_()  # K = 0: an empty sum
    return c


# --8<-- [start:launchers]
def matmul_v1(a, b, out=None, precision="tf32"):
    """One 128 x 128 tile per program, programs in row-major order."""
    return _fixed(matmul_rows, a, b, out, precision)


def matmul_v2(a, b, out=None, precision="tf32"):
    """v1's tile, programs in grouped order (GROUP_M = 8) for L2 reuse."""
    return _fixed(matmul_grouped, a, b, out, precision)


def matmul_v3(a, b, out=None, precision="tf32", configs=None):
    """v2 autotuned: the first call for each KEY (sizes, layouts, precision) times
    every config of the list for the operands' width and keeps the fastest.
    configs=2 or 4 picks a width's list whatever the dtype (to show what the
    wrong list costs)."""
    c = _check(a, b, out, precision)
    width = configs or a.element_size()
    if width not in TUNED:
        raise ValueError(f"{OP}: configs is 2 or 4 (bytes an operand), got {width}")
    if c.numel() and a.shape[1]:
        M, N = c.shape

        def grid(meta):
            return (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)

        TUNED[width][grid](*_args(a, b, c), PRECISION=precision)
    elif c.numel():
        c.zero_()
    return c


# --8<-- [end:launchers]


VERSIONS = {1: matmul_v1, 2: matmul_v2, 3: matmul_v3}
TEACHES = {
    1: "one 128 x 128 tile per program, row-major order",
    2: "grouped program order: a band of 8 tile rows shares L2",
    3: "autotuned tile, warps and stages per operand width",
}


def matmul(a, b, out=None, version=3, precision="tf32"):
    """C = a @ b through Triton rung `version` (1, 2 or 3)."""
    if version not in VERSIONS:
        raise ValueError(f"{OP}: no version {version!r}; versions are {list(VERSIONS)}")
    return VERSIONS[version](a, b, out=out, precision=precision)


def best_config(width: int) -> dict:
    """The config v3's autotuner kept last for operands of `width` bytes: BM, BN,
    BK, stages, warps (empty before its first call)."""
    cfg = TUNED[width].best_config if hasattr(TUNED[width], "best_config") else None
    if cfg is None:
        return {}
    return {**cfg.kwargs, "stages": cfg.num_stages, "warps": cfg.num_warps}


def tolerance(dtype, precision="tf32") -> float:
    """Largest |c - ref| / max|ref| a correct kernel stays under, for K up to a
    few thousand: one rounding of the output (fp16 2^-11, bf16 2^-8) plus the
    accumulation's; TF32 rounds every operand to 10 mantissa bits."""
    if dtype == torch.float32:
        return 1e-5 if precision == "ieee" else 5e-3
    return {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype]


def matmul_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product in float64 (the operands as given, already rounded to their
    dtype), to compare every rung with."""
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def rel_error(c, ref: np.ndarray) -> float:
    got = c.detach().to("cpu", torch.float64).numpy()
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.abs(got - ref).max(initial=0) / max(np.abs(ref).max(initial=0), 1))


if __name__ == "__main__":
    device = "cpu" if _interpreted() else "cuda"
    g = torch.Generator().manual_seed(0)
    for dtype, precision in [
        (torch.float16, "tf32"),
        *([] if _interpreted() else [(torch.bfloat16, "tf32")]),
        (torch.float32, "tf32"),
        (torch.float32, "ieee"),
    ]:
        a = torch.randn(300, 200, generator=g).to(dtype)
        b = torch.randn(200, 170, generator=g).to(dtype)
        ref = matmul_ref(a.float().numpy(), b.float().numpy())
        for v in VERSIONS:
            c = matmul(a.to(device), b.to(device), version=v, precision=precision)
            err = rel_error(c, ref)
            print(f"{str(dtype):15} {precision:4} v{v}: error {err:.1e}")

"""B13: softmax over the rows of a matrix, in Triton, beside the package's CUDA C
softmax (thousand.kernels.softmax, B12).

    y = softmax(x)     # x: (rows, cols) float32 torch tensor, rows contiguous

One program per row, the whole row held at once: Triton spreads the program's
BLOCK elements over its warps, and the row's max and sum become the reductions
that softmax_v4 (B12) writes by hand with shuffles and shared memory. A row longer
than MAX_COLS is refused rather than spilled.

python -m thousand.beyond.triton_softmax
"""

from __future__ import annotations

import numpy as np

from thousand.beyond import interpreted
from thousand.beyond import triton as _import_triton

triton = _import_triton()
import torch  # noqa: E402  (after Triton's interpreter is chosen)
import triton.language as tl  # noqa: E402

OP = "triton softmax"
MAX_COLS = 32768  # 16 warps x 32 threads x 64 floats: registers, not local memory


# --8<-- [start:kernel]
@triton.jit
def softmax_rows(x, y, cols, sx, sy, BLOCK: tl.constexpr):
    """Row r of y = softmax(row r of x); BLOCK is cols rounded up to a power of 2."""
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    row = tl.load(x + r * sx + c, mask=c < cols, other=-float("inf"))
    e = tl.exp(row - tl.max(row, axis=0))  # exp(-inf) = 0 past the end
    tl.store(y + r * sy + c, e / tl.sum(e, axis=0), mask=c < cols)


# --8<-- [end:kernel]


# --8<-- [start:launcher]
def softmax(x, out=None):
    """The softmax of every row of x. The warps per program grow with the row, so
    that each thread keeps at most 32 of its floats (the compiler's choice of
    layout does the rest)."""
    rows, cols = _check(x, out)
    y = torch.empty_like(x) if out is None else out
    if rows and cols:
        block = triton.next_power_of_2(cols)
        warps = min(16, max(1, block // (32 * 32)))
        softmax_rows[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block,
                              num_warps=warps)  # fmt: skip
    return y


# --8<-- [end:launcher]


def _check(x, out):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{OP}: x must be a torch tensor, got {type(x)}")
    if x.ndim != 2 or x.dtype != torch.float32:
        raise ValueError(
            f"{OP}: x must be a 2-D float32 tensor, got {tuple(x.shape)} {x.dtype}"
        )
    want = "cpu" if interpreted() else "cuda"
    if x.device.type != want:
        raise ValueError(f"{OP}: x must be on {want} here, got {x.device}")
    if x.shape[1] and x.stride(1) != 1:
        raise ValueError(f"{OP}: x's rows must be contiguous (x.stride(1) == 1)")
    if x.shape[1] > MAX_COLS:
        raise ValueError(
            f"{OP}: rows of up to {MAX_COLS:,} columns, got {x.shape[1]:,}"
        )
    if out is not None:
        if (
            not isinstance(out, torch.Tensor)
            or out.shape != x.shape
            or out.dtype != x.dtype
            or out.device != x.device
            or (x.shape[1] and out.stride(1) != 1)
        ):
            raise ValueError(
                f"{OP}: out must be a {tuple(x.shape)} float32 tensor on {x.device} "
                "with contiguous rows"
            )
    return x.shape


def softmax_ref(x: np.ndarray) -> np.ndarray:
    """The package's reference (float64, max subtracted): the same one the CUDA C
    softmax is checked against."""
    from thousand.kernels.softmax import softmax_ref as ref

    return ref(x)


if __name__ == "__main__":
    device = "cpu" if interpreted() else "cuda"
    rng = np.random.default_rng(0)
    for rows, cols in [(1, 1), (3, 7), (33, 1000), (5, 4097)]:
        x = (rng.standard_normal((rows, cols)) * 30).astype(np.float32)
        y = softmax(torch.from_numpy(x).to(device)).cpu().numpy()
        err = np.abs(y - softmax_ref(x)).max()
        print(f"{rows} x {cols}: max error {err:.1e}")

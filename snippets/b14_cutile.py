"""cuTile Python's three kernels (B14) against exact products, one ragged shape each.

GPU only: cuTile compiles for an NVIDIA GPU through tileiras (on Hopper, CUDA
13.4's) and has no CPU emulation; elsewhere this stops with the error that says so.
"""

import torch

from thousand.beyond.cutile_kernels import (
    bmm,
    conv2d,
    cutile,
    default_tile,
    matmul,
    relative_error,
)

ct = cutile()  # without a GPU (or without cuda.tile) it stops here, saying why
print(f"cuTile Python {ct.__version__} on {torch.cuda.get_device_name()}")
g = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float16):
    return torch.randn(*shape, generator=g).to("cuda", dtype)


def report(what, got, exact, tile):
    err = relative_error(got, exact)
    shape = "x".join(map(str, tile))
    print(f"{what:<44} tile {shape:<10} max |y - exact| / max |exact| = {err:.1e}")


# no tile divides these shapes: edge tiles load zeros and store only what is inside
for dtype, name in ((torch.float16, "fp16"), (torch.float32, "fp32 as TF32")):
    a, b = randn(300, 200, dtype=dtype), randn(200, 100, dtype=dtype)
    exact = a.double() @ b.double()
    report(
        f"matmul {name} (300 x 200) (200 x 100)",
        matmul(a, b),
        exact,
        default_tile(dtype),
    )

a, b = randn(4, 96, 80), randn(4, 80, 112)
exact = a.double() @ b.double()
report("bmm fp16 4 x (96 x 80) (80 x 112)", bmm(a, b), exact, default_tile(a.dtype))

x, w = randn(2, 15, 17, 3), randn(3, 3, 3, 8)  # NHWC input, RSCK filters
xt, wt = x.double().permute(0, 3, 1, 2), w.double().permute(3, 2, 0, 1)  # NCHW, KCRS
exact = torch.nn.functional.conv2d(xt, wt, padding=1).permute(0, 2, 3, 1)  # NHWC
report(
    "conv2d fp16 2x15x17x3, 3x3 to 8, pad 1",
    conv2d(x, w, pad=1),
    exact,
    default_tile(x.dtype, "conv2d"),
)
print("fp16 keeps 11 significant bits: rounding an output costs up to 4.9e-04 of it;")
print("TF32 rounds each input to 11 bits, then sums the products in float32.")

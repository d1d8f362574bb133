"""B13: the Triton matmul's three rungs and the Triton softmax, each checked
against PyTorch on awkward sizes; on the GPU compiled, without one in Triton's
interpreter (bfloat16 is GPU-only: the interpreter cannot multiply it)."""

import torch

from thousand.beyond import interpreted
from thousand.beyond import triton_matmul as T
from thousand.beyond.triton_softmax import softmax

device = "cpu" if interpreted() else "cuda"
print("Triton", "interpreter on the CPU" if interpreted() else "compiled for the GPU")

# --8<-- [start:check]
g = torch.Generator().manual_seed(0)
M, N, K = 300, 200, 1000  # no multiple of a tile
a32 = torch.randn(M, K, generator=g).to(device)
b32 = torch.randn(K, N, generator=g).to(device)
dtypes = [torch.float16, torch.float32] + ([] if interpreted() else [torch.bfloat16])
for dtype in dtypes:
    a, b = a32.to(dtype), b32.to(dtype)
    exact = (a.double() @ b.double()).cpu()  # the rounded operands' true product
    for v in (1, 2, 3):
        c = T.matmul(a, b, version=v)
        err = ((c.double().cpu() - exact).abs().max() / exact.abs().max()).item()
        bound = T.tolerance(dtype)
        print(f"{str(dtype):14} v{v}: error {err:.0e} <= {bound:.0e}: {err <= bound}")

x = torch.randn(1000, 3000, generator=g).to(device) * 30  # exp would overflow
y = softmax(x)
print("softmax equal to torch.softmax:", torch.allclose(y, torch.softmax(x, dim=1)))
# --8<-- [end:check]

"""This package's gelu.cu as a PyTorch op, thousand::gelu (B15): called like any
op, differentiated by autograd, checked against F.gelu(x, approximate="tanh")."""

import torch
import torch.nn.functional as F

from thousand.beyond import extension  # registers the thousand:: ops
from thousand.cuda import on_cpu

if on_cpu():
    device = "cpu"
    print("no build: on CPU tensors the op runs gelu.cu on the CPU backend")
else:
    device = "cuda"
    ext = extension.load()  # nvcc and ninja, once; later processes reuse the build
    print(f"built {ext.__name__} from {extension.SOURCE.name} and gelu.cu")
print(torch.ops.thousand.gelu.default._schema)
print(torch.ops.thousand.gelu_backward.default._schema)

torch.manual_seed(0)
x = torch.randn(8, 1000, device=device, requires_grad=True)  # (B, C)
y = torch.ops.thousand.gelu(x)
want = F.gelu(x, approximate="tanh")
print(f"forward:  max |y - F.gelu(x)|   = {(y - want).abs().max().item():.1e}")

dy = torch.randn_like(y)  # the gradient of some loss with respect to y
(dx,) = torch.autograd.grad(y, x, dy)  # autograd calls thousand::gelu_backward
(dx_want,) = torch.autograd.grad(want, x, dy)
print(f"backward: max |dx - F.gelu's dx| = {(dx - dx_want).abs().max().item():.1e}")

try:
    torch.ops.thousand.gelu(x.double())
except TypeError as err:
    print("float64:", err)

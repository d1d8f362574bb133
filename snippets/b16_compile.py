"""B16: what torch.compile makes of a function and of two training steps.
(1) Dynamo's graphs: a .item() breaks one in two, and one graph once it is gone.
(2) A4's MLP and (3) a Transformer block at A16's "large" width: each training
step compiled, and the kernels Inductor wrote for its forward and backward
(Triton for a CUDA device, C++ for the CPU), the library calls it left to cuBLAS
or PyTorch, and one fused kernel's source."""

from collections import Counter

import torch

from thousand.beyond import compiled as C

where = C.device()
print(f"device: {where}")


# --8<-- [start:break]
def normalised(x, w):
    z = x @ w
    top = z.abs().max().item()  # a Python float: Dynamo has to leave the graph
    return z / top


def normalised_fixed(x, w):
    z = x @ w
    return z / z.abs().max()  # a tensor: the division stays in the graph


x, w = torch.randn(8, 64), torch.randn(64, 10)
for fn in (normalised, normalised_fixed):
    e = C.explain(fn, x, w)
    print(f"{fn.__name__}: {e.graphs} graph(s), {e.breaks} break(s)")
    for reason, line in zip(e.reasons, e.where, strict=True):
        print(f"  at {line}\n  {reason}")
# --8<-- [end:break]


# --8<-- [start:show]
def show(title, setup, word):
    """Compile a model's training step; print what Inductor wrote for it."""
    model, opt, batch = setup(where)
    g = C.generated(C.train_step(model, opt, "default"), *batch)
    print(f"\n== {title}: Inductor wrote {g.language}")
    for i, (kernels, calls) in enumerate(zip(g.kernels, g.library, strict=True)):
        part = ("forward", "backward")[i] if i < 2 else f"graph {i + 1}"
        print(f"{part}: {len(kernels)} kernels")
        for name in kernels:
            print(f"  {name}")
        lib = ", ".join(f"{op} x{n}" for op, n in Counter(calls).items())
        print(f"  library calls: {lib or 'none'}")
    name, source = g.find(word)
    print(f"one fused kernel, {name}:")
    print(C.kernel_body(source, lines=36))


show("the MLP's training step (A4)", C.mlp_torch, "softmax")
show("a Transformer block's training step (A16 large)", C.block_torch, "gelu")
# --8<-- [end:show]

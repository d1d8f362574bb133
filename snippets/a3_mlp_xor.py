"""Two layers do what one unit cannot: an MLP learns XOR on the GPU (A3)."""

import numpy as np

from thousand.models.data import XOR_X, XOR_Y
from thousand.models.mlp import XOR_HIDDEN, XOR_SIZES, xor

net = xor(seed=0, steps=500, lr=0.5)  # full-batch gradient descent, 500 steps
logits = net.logits(XOR_X)
p = np.exp(logits - logits.max(axis=1, keepdims=True))
p /= p.sum(axis=1, keepdims=True)
print(f"layers {XOR_SIZES}, hidden {XOR_HIDDEN}")
for x, target, prob in zip(XOR_X, XOR_Y, p[:, 1], strict=True):
    print(f"{x.astype(int)} -> P(1) = {prob:.3f}  (target {target})")
print("solved:", bool(np.all(logits.argmax(axis=1) == XOR_Y)))

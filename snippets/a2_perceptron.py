"""Rosenblatt's rule on the GPU: separable points learned, XOR never (A2)."""

import numpy as np

from thousand.models.data import XOR_X, XOR_Y, separable_points
from thousand.models.perceptron import train

X, y, line = separable_points(seed=0, n=100)
w, mistakes, converged = train(X, y, max_epochs=100)
a, b, c = line
print(f"100 points, each side of the line {a}x {b:+d}y {c:+d} = 0")
print(f"mistakes after each epoch: {mistakes}")
print(f"converged: {converged}, w = {w[:2]}, b = {w[2]}")

y_xor = np.where(XOR_Y == 1, 1, -1).astype(np.float32)
w, mistakes, converged = train(XOR_X, y_xor, max_epochs=100)
print(f"XOR: converged {converged} after 100 epochs; fewest mistakes {min(mistakes)}")

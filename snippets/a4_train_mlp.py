"""Backpropagation on the GPU: an MLP learns the digits, timed against NumPy (A4)."""

from thousand.cuda import on_cpu
from thousand.models.train import report, train

# On the CPU backend every thread is emulated: 2 epochs there, the full 30 on a GPU.
report(train("mlp", seed=0, epochs=2 if on_cpu() else None))

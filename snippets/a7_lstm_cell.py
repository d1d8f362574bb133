"""One LSTM layer on the package's kernels: its forward pass against a NumPy loop
over the same steps, then how far back the gradient of the last output reaches
(A7)."""

import numpy as np

from thousand.cuda import to_device
from thousand.kernels.lstm_cell import lstm_cell_all_ref
from thousand.models import rnn

T, B, n_in, H = 30, 4, 5, 16
cfg = rnn.Config(kind="lstm", n_in=n_in, hidden=H, n_out=1)
p = rnn.init_params(cfg, seed=0)
layer = rnn.Recurrent("lstm", p["W_ih"], p["W_hh"], p["b"])
X = np.random.default_rng(0).standard_normal((T, B, n_in), dtype=np.float32)
Hs = layer.forward(to_device(X)).get()  # (T + 1, B, H): h_0 = 0, then h_1 .. h_T

h, c = np.zeros((B, H)), np.zeros((B, H))  # the same steps in float64 NumPy
worst = 0.0
for t in range(T):
    h, c, _ = lstm_cell_all_ref(X[t] @ p["W_ih"] + p["b"], h @ p["W_hh"], c)
    worst = max(worst, float(np.abs(Hs[t + 1] - h).max()))
print(f"{T} steps, batch {B}, hidden {H}: h_t within 1e-5 of NumPy: {worst < 1e-5}")

dHs = np.zeros((T, B, H), np.float32)
dHs[-1] = 1.0  # L = sum of the last step's outputs
layer.backward(to_device(dHs))
norms = np.linalg.norm(layer.dh.get().reshape(T, -1), axis=1)  # ||dL/dh_t||
for k in (0, 1, 5, 10, 20, 29):
    print(f"{k:2d} steps before the loss: ||dL/dh_t|| = {norms[T - 1 - k]:.3g}")

"""One layer of neurons on the GPU, y = sigmoid(W x + b), against NumPy (B1)."""

import numpy as np

from thousand.kernels.neuron_layer import neuron_layer, neuron_layer_ref
from thousand.kernels.sigmoid import sigmoid, sigmoid_ref

rng = np.random.default_rng(0)
z = np.array([-100, -5, -1, 0, 1, 5, 100], dtype=np.float32)
print("sigmoid(z), kernel:   ", np.round(sigmoid(z), 4))
print(f"max error vs float64:   {np.abs(sigmoid(z) - sigmoid_ref(z)).max():.1e}")

n_out, n_in = 512, 784  # e.g. a 28 x 28 image into 512 neurons
W = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
x = rng.random(n_in, dtype=np.float32)
b = np.zeros(n_out, dtype=np.float32)
expected = neuron_layer_ref(W, x, b)
for version in (1, 2):
    y = neuron_layer(W, x, b, version=version)  # (n_out,)
    print(
        f"neuron_layer v{version}: y[:4] = {np.round(y[:4], 4)}, "
        f"max error vs float64 = {np.abs(y - expected).max():.1e}"
    )

"""An RBM learns the digits by contrastive divergence on the GPU; what its hidden
units look for, drawn in characters (A5)."""

import numpy as np

from thousand.cuda import on_cpu
from thousand.models.rbm import RBM, SETTINGS, binary_digits, init, train

X_train, X_test = binary_digits()  # 8 x 8 pixels, each 0 or 1
s = SETTINGS
epochs = 3 if on_cpu() else s["epochs"]  # every thread emulated on the CPU backend
rbm = RBM(*init(64, s["n_hidden"], seed=0))
train(
    rbm,
    X_train,
    epochs=epochs,
    batch=s["batch"],
    lr=s["lr"],
    seed=0,
    X_test=X_test,
    log=lambda e, err: print(f"epoch {e:2d}: held-out reconstruction error {err:.4f}"),
)

# Each hidden unit's 64 weights as an 8 x 8 picture: '#' strongly positive (the unit
# wants ink there), '.' strongly negative, blank near 0, for the first 8 units.
W = rbm.get_params()[0]  # (64 visible, n_hidden)
shades = np.array(list(".-  +#"))
for rows in range(8):
    line = []
    for j in range(8):
        w = W[:, j].reshape(8, 8)[rows] / np.abs(W[:, j]).max()
        line.append("".join(shades[np.digitize(w, [-0.6, -0.2, 0, 0.2, 0.6])]))
    print("  ".join(line))

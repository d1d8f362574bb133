"""A11: a plain network and a ResNet of the same depth, trained on the same digits
with the same batches; the training error after each epoch (evaluation mode)."""

from thousand.cuda import on_cpu
from thousand.models import deep_cnns as D

# On the CPU backend every thread is emulated: depth 8, 2 channels, 8 x 8 images.
size, blocks, width, epochs, n = (8, 1, 2, 2, 64) if on_cpu() else (16, 3, 16, 5, None)
X_train, X_test, y_train, y_test = D.digit_images(size)
X_train, y_train = X_train[:n], y_train[:n]

for residual in (False, True):
    spec = D.resnet(seed=0, blocks=blocks, width=width, residual=residual)
    net = D.network(spec, batch=16 if on_cpu() else 64)
    r = D.curves(
        net,
        X_train,
        y_train,
        X_test,
        y_test,
        epochs,
        batch=16 if on_cpu() else 64,
        lr=0.1,
        seed=0,
    )
    name = ("ResNet" if residual else "plain") + f"-{6 * blocks + 2}"
    errors = "  ".join(f"{100 * (1 - a):5.1f}%" for a in r["train_acc"])
    print(
        f"{name:10s} {D.count_params(spec):>8,} parameters; training error by epoch: "
        f"{errors}"
    )

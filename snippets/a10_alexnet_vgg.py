"""A10: a small AlexNet-style and a small VGG-style network (ReLU, max pooling,
dropout) trained on the digits with the same batches; held-out accuracy by epoch."""

from thousand.cuda import on_cpu
from thousand.models import deep_cnns as D

# On the CPU backend every thread is emulated: 2 channels, 16 x 16, 64 images.
image, width, hidden, epochs, n = (
    (16, 2, 16, 2, 64) if on_cpu() else (32, 32, 256, 5, None)
)
X_train, X_test, y_train, y_test = D.digit_images(image)
X_train, y_train = X_train[:n], y_train[:n]

for name, spec in (
    ("AlexNet-style", D.alexnet(seed=0, width=width, image=image, hidden=hidden)),
    ("VGG-style", D.vgg(seed=0, width=width, image=image, hidden=hidden)),
):
    net = D.network(spec, batch=16 if on_cpu() else 64)
    r = D.curves(
        net,
        X_train,
        y_train,
        X_test,
        y_test,
        epochs,
        batch=16 if on_cpu() else 64,
        lr=0.05,
        seed=0,
    )
    held_out = "  ".join(f"{100 * a:5.1f}%" for a in r["test_acc"])
    print(
        f"{name:14s} {D.count_params(spec):>9,} parameters "
        f"({D.conv_layers(spec)} weight layers); held-out by epoch: {held_out}"
    )

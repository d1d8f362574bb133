"""LeNet-5 on the GPU: convolutions by im2col + GEMM, trained on the digits (A6)."""

from thousand.cuda import on_cpu
from thousand.models.train import report, train

# On the CPU backend every thread is emulated: 2 epochs on 256 images there.
if on_cpu():
    report(train("lenet", seed=0, epochs=2, train_limit=256))
else:
    report(train("lenet", seed=0))

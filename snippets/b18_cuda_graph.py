"""A4's MLP on the digits at batch 32, its training epoch recorded once as a CUDA
graph (B18): the same kernels as A4's loop, one driver call an epoch instead of
about eighteen launches and two copies a step. Times per epoch against NumPy."""

from thousand.cuda import on_cpu
from thousand.models import graphed, mlp
from thousand.models.data import digits

X, X_test, y, y_test = digits()
epochs = 2 if on_cpu() else 10  # the CPU backend emulates: fewer, slower epochs
settings = dict(epochs=epochs, batch=32, lr=0.1, seed=0)
sizes, hidden = mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN

twin = mlp.network_twin(sizes, hidden, seed=0)  # NumPy, same weights and batches
numpy_s, _, _ = graphed.fit(twin, X, y, way=None, twin=True, **settings)
print(f"NumPy           {1e3 * numpy_s:8.2f} ms an epoch")
for way in ("upload", "graph"):
    net = mlp.network(sizes, hidden, seed=0)
    seconds, nodes, first = graphed.fit(net, X, y, way=way, **settings)
    print(f"kernels, {way:<6} {1e3 * seconds:8.2f} ms an epoch", end="")
    if way == "graph":
        print(f"  ({nodes} kernels in the graph; recording took {1e3 * first:.0f} ms)")
    else:
        print()
    print(f"  held-out accuracy {mlp.accuracy(net, X_test, y_test):.2%}")
print(f"  NumPy's held-out accuracy {mlp.accuracy(twin, X_test, y_test):.2%}")

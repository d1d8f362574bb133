"""B18: A4's MLP trained with less host time per step. Same network, same batches,
four ways to issue the same kernels:

    upload    A4's loop: each step copies its batch to the device, then launches
    resident  the epoch's batches copied once; each step launches on views of them
    replay    resident, and each step's launches replayed from a record (Replay):
              no launcher checks in Python, one driver call per kernel still
    graph     resident, and the whole epoch recorded once as a CUDA graph: one
              driver call an epoch

The last, smaller batch of an epoch is left out (as drop_last does in PyTorch), so
that every step has one shape and one set of buffers a graph can name.
"""

from __future__ import annotations

import time

import numpy as np

from thousand.cuda import Graph, Replay, empty, synchronize
from thousand.kernels.sgd import sgd
from thousand.models.data import one_hot

WAYS = ("upload", "resident", "replay", "graph")


# --8<-- [start:device-step]
def device_step(net, X, T) -> None:
    """One SGD step of a layers.Network on device batches X, T: forward, loss,
    backward, update, all launches and no copies (net.lr is read on the device)."""
    Z = net.forward(X)
    _, G = net.loss(Z, T)
    for i, layer in reversed(list(enumerate(net.layers))):
        G = layer.backward(G, need_dX=i > 0)
    for layer in net.layers:
        for p, g in zip(layer.params(), layer.grads, strict=True):
            sgd(p, g, net.lr, out=p)


# --8<-- [end:device-step]


class Epochs:
    """Runs training epochs of `net` one way (WAYS) over batches of `batch` rows of
    n_in features and `classes` one-hot targets; `steps` full batches an epoch."""

    def __init__(self, net, way: str, steps: int, batch: int, n_in: int, classes: int):
        if way not in WAYS:
            raise ValueError(f"way must be one of {WAYS}, got {way!r}")
        self.net, self.way, self.steps, self.batch = net, way, steps, batch
        rows = steps * batch
        self.X, self.T = empty((rows, n_in), np.float32), empty((rows, classes))
        self.batches = [
            (self.X[i * batch : (i + 1) * batch], self.T[i * batch : (i + 1) * batch])
            for i in range(steps)
        ]
        self.recorded = None  # a Replay of one step, or a Graph of an epoch
        self.nodes = 0  # kernels in the graph

    # --8<-- [start:epoch]
    def epoch(self, X: np.ndarray, T: np.ndarray, lr: float) -> None:
        """One epoch over the rows of X, T (host arrays, in this epoch's order)."""
        net, rows = self.net, self.steps * self.batch
        net.lr.set(np.array([lr], np.float32))
        if self.way == "upload":  # A4's loop: a copy of each batch, then its step
            for i in range(0, rows, self.batch):
                net.train_step(X[i : i + self.batch], T[i : i + self.batch], lr)
            return
        self.X.set(np.ascontiguousarray(X[:rows]))  # one copy for the whole epoch
        self.T.set(np.ascontiguousarray(T[:rows]))
        if self.way == "resident":
            for Xb, Tb in self.batches:
                device_step(net, Xb, Tb)
        elif self.way == "replay":
            self._replay()
        else:
            self._graph(lr)

    # --8<-- [end:epoch]

    def _replay(self) -> None:
        # The first epoch records each step as it runs, one record a batch (its
        # launches name that batch's views); later epochs replay the records.
        if self.recorded is None:
            self.recorded = []
            for Xb, Tb in self.batches:
                with Replay() as r:
                    device_step(self.net, Xb, Tb)
                self.recorded.append(r)
            return
        for r in self.recorded:
            r()

    # --8<-- [start:graph]
    def _graph(self, lr: float) -> None:
        if self.recorded is None:
            # One eager step at learning rate 0 (the weights stay as they are)
            # makes every buffer a step uses, so the graph names arrays that stay.
            self.net.lr.set(np.zeros(1, np.float32))
            device_step(self.net, *self.batches[0])
            self.net.lr.set(np.array([lr], np.float32))
            with Graph() as g:  # recorded, not run
                for Xb, Tb in self.batches:
                    device_step(self.net, Xb, Tb)
            self.recorded, self.nodes = g, g.nodes
        self.recorded()  # every step of the epoch: one driver call

    # --8<-- [end:graph]


def fit(net, X, labels, *, way, epochs, batch, lr, seed, twin=False):
    """`epochs` epochs of SGD in the order drawn from `seed` (as mlp.fit draws it),
    full batches only. Returns (seconds per epoch after the first, kernels in the
    graph). The first epoch, which records or warms up, is timed apart: it is
    returned third. `twin`: net is the NumPy twin (way is ignored)."""
    rng = np.random.default_rng(seed)
    classes = int(labels.max()) + 1
    T = one_hot(labels, classes)
    steps = len(X) // batch
    runner = None if twin else Epochs(net, way, steps, batch, X.shape[1], classes)
    times = []
    for _ in range(epochs):
        order = rng.permutation(len(X))
        start = time.perf_counter()
        if twin:
            for i in range(steps):
                rows = order[i * batch : (i + 1) * batch]
                net.train_step(X[rows], T[rows], lr)
        else:
            runner.epoch(X[order], T[order], lr)
            synchronize()
        times.append(time.perf_counter() - start)
    later = times[1:] or times
    return float(np.median(later)), (runner.nodes if runner else 0), times[0]

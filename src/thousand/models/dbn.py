"""A8: a deep belief network. RBMs stacked greedily, one layer at a time, each
trained by CD-1 on the hidden probabilities of the one below (Hinton, Osindero &
Teh 2006; Bengio et al. 2007); then the stack unrolled into a sigmoid network with
a softmax layer on top and fine-tuned by backpropagation on the labels.

Nothing here is a new kernel: the layers are A5's RBM (models/rbm.py), the
fine-tuning is A4's network and training loop (models/layers.py, mlp.fit). With
`numpy=True` the same steps run on the NumPy twins of both, from the same numbers.

python -m thousand.models.dbn
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from thousand.cuda import synchronize
from thousand.kernels.bernoulli import bernoulli
from thousand.models import layers, mlp, twin
from thousand.models import rbm as R
from thousand.models.data import digits

# --8<-- [start:settings]
SIZES = [64, 256, 256, 10]  # 8 x 8 pixels, two hidden layers, ten digits
PRETRAIN = {"epochs": 10, "batch": 20, "lr": 0.1}  # CD-1, per layer (A5's rbm)
FINETUNE = {"steps": 500, "batch": 128, "lr": 0.3}  # SGD, whatever the labels
FRACTIONS = (0.01, 0.1, 1.0)  # the share of the training labels the net may use
SEEDS = 5  # stacks, label subsets, starting weights and batch orders
# Three ways to start the same network, then the same fine-tuning:
ARMS = {
    "pre-trained": "sigmoid",  # the DBN: hidden layers from the RBM stack
    "random": "sigmoid",  # U(-1/sqrt(n_in), 1/sqrt(n_in)), Glorot & Bengio's "standard"
    "relu": "relu",  # ReLU with He et al.'s N(0, 2/n_in), no pre-training
}
# --8<-- [end:settings]


def _count(name: str, value, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number, not {value!r}")
    if value < least:
        raise ValueError(f"{name} must be at least {least}, not {value}")
    return int(value)


def _rate(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number above 0, not {value}")
    return float(value)


def _images(name: str, X, width: int | None = None) -> np.ndarray:
    if not isinstance(X, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array, not {type(X).__name__}")
    if X.ndim != 2 or len(X) == 0 or (width is not None and X.shape[1] != width):
        want = f"(N, {width})" if width is not None else "(N, features)"
        raise ValueError(f"{name} must have shape {want} with N >= 1, not {X.shape}")
    if X.dtype != np.float32 or not np.all((X >= 0) & (X <= 1)):
        raise ValueError(f"{name} must be float32 values in [0, 1], got {X.dtype}")
    return X


def _sizes(sizes) -> list[int]:
    if not isinstance(sizes, (list, tuple)) or len(sizes) < 3:
        raise ValueError(f"sizes must list at least 3 layer widths, not {sizes!r}")
    return [_count("every size", n) for n in sizes]


def _seed(seed) -> int:
    return _count("seed", seed, least=0)


def _flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def _stack(stack) -> list:
    """A list of RBMs (kernels or twins), each one's hidden layer the next one's
    visible layer."""
    if not (
        isinstance(stack, list)
        and stack
        and all(isinstance(r, (R.RBM, R.RBMTwin)) for r in stack)
    ):
        raise ValueError(
            f"stack must be a non-empty list of rbm.RBM or RBMTwin, got {stack!r}"
        )
    shapes = [tuple(r.W.shape) for r in stack]
    if any(a[1] != b[0] for a, b in zip(shapes[:-1], shapes[1:], strict=True)):
        raise ValueError(f"each RBM must feed the next: got weight shapes {shapes}")
    return stack


def _shape(a) -> str:
    return f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__


def _params(params) -> list:
    """Float32 (W, b) pairs, W (n_in, n_out) and b (n_out,), layer to layer."""

    def pair(p):
        return (
            isinstance(p, tuple)
            and len(p) == 2
            and all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in p)
            and p[0].ndim == 2
            and p[1].shape == (p[0].shape[1],)
        )

    if not (isinstance(params, list) and params and all(map(pair, params))):
        got = (
            [
                tuple(_shape(a) for a in p)
                if isinstance(p, tuple)
                else type(p).__name__
                for p in params
            ]
            if isinstance(params, list)
            else params
        )
        raise ValueError(f"params must be a list of float32 (W, b) pairs, got {got!r}")
    shapes = [W.shape for W, _ in params]
    if any(a[1] != b[0] for a, b in zip(shapes[:-1], shapes[1:], strict=True)):
        raise ValueError(f"each layer must feed the next: got weight shapes {shapes}")
    return params


def _settings(name: str, settings, keys: tuple[str, ...]) -> dict:
    """{"epochs" or "steps": whole number, "batch": whole number, "lr": rate}."""
    if not isinstance(settings, dict) or sorted(settings) != sorted(keys):
        raise ValueError(f"{name} must be a dict with keys {keys}, got {settings!r}")
    return {
        k: _rate(f"{name}['lr']", v) if k == "lr" else _count(f"{name}[{k!r}]", v)
        for k, v in settings.items()
    }


# --8<-- [start:up]
def up(model, X: np.ndarray) -> np.ndarray:
    """p(h = 1 | v) for every row of X: what the next RBM of the stack sees. On
    the kernels it is the RBM's own matmul + bias_sigmoid."""
    X = _images("X", X, _stack([model])[0].W.shape[0])
    if isinstance(model, R.RBMTwin):
        return R._sigmoid(X @ model.W + model.b).astype(np.float32)
    v = model.buf("v_up", X.shape)
    v.set(np.ascontiguousarray(X, dtype=np.float32))
    return model.hidden(v, "ph_up").get()


# --8<-- [end:up]


# --8<-- [start:pretrain]
def pretrain(X, sizes, *, epochs, batch, lr, seed, numpy=False, X_test=None, log=None):
    """Greedy layer-wise training: RBM k learns the hidden probabilities of RBM
    k - 1 on the training images (no labels), then is frozen. One RBM per pair
    of hidden widths, the last (softmax) layer excluded. log(layer, epoch,
    held-out reconstruction error) after each epoch when X_test is given."""
    sizes = _sizes(sizes)
    X = _images("X", X, sizes[0])
    if X_test is not None:
        X_test = _images("X_test", X_test, sizes[0])
    epochs, batch = _count("epochs", epochs), _count("batch", batch)
    lr, seed = _rate("lr", lr), _seed(seed)
    if log is not None and not callable(log):
        raise TypeError(f"log must be a function or None, not {log!r}")
    make = R.RBMTwin if _flag("numpy", numpy) else R.RBM
    stack = []
    for k, (n_in, n_out) in enumerate(zip(sizes[:-2], sizes[1:-1], strict=True)):
        rbm = make(*R.init(n_in, n_out, seed=[seed, k]))
        report = None if log is None else (lambda e, err, k=k: log(k + 1, e, err))
        R.train(
            rbm,
            X,
            epochs=epochs,
            batch=batch,
            lr=lr,
            seed=[seed, k],
            X_test=X_test,
            log=report,
        )
        stack.append(rbm)
        X = up(rbm, X)  # the codes of this layer are the data of the next
        if X_test is not None:
            X_test = up(rbm, X_test)
    return stack


# --8<-- [end:pretrain]


# --8<-- [start:unroll]
def initial_params(arm: str, sizes, seed, stack=None) -> list[tuple]:
    """The starting weights of one arm. Every arm draws its softmax layer the same
    way from the same seed, so the arms differ only in their hidden layers."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {sorted(ARMS)}, not {arm!r}")
    sizes, seed = _sizes(sizes), _seed(seed)
    if (arm == "pre-trained") != (stack is not None):
        raise ValueError(
            "stack (the pre-trained RBMs) goes with arm 'pre-trained' only"
        )
    if stack is not None and [tuple(r.W.shape) for r in _stack(stack)] != list(
        zip(sizes[:-2], sizes[1:-1], strict=True)
    ):
        raise ValueError(f"the stack's weight shapes do not match sizes {sizes}")
    rng = np.random.default_rng([seed, 99])
    params = mlp.init(sizes, seed, gain=2.0 if arm == "relu" else 1.0)
    if arm == "random":
        params[:-1] = [
            (rng.uniform(-1, 1, W.shape) / np.sqrt(W.shape[0]), b)
            for W, b in params[:-1]
        ]
    if arm == "pre-trained":  # W and the hidden biases b; the visible a is dropped
        params[:-1] = [(W, b) for W, _a, b in (r.get_params() for r in stack)]
    return [(W.astype(np.float32), b.astype(np.float32)) for W, b in params]


def network(params, hidden: str, numpy: bool = False):
    """The fine-tuned net: `hidden` units in every layer but the last (logits)."""
    if hidden not in ("sigmoid", "relu", "tanh"):
        raise ValueError(f"hidden must be 'sigmoid', 'relu' or 'tanh', not {hidden!r}")
    acts = mlp.activations([p[0].shape[0] for p in _params(params)] + [1], hidden)
    if _flag("numpy", numpy):
        return twin.Network(twin.dense_layers(params, acts))
    return layers.Network(layers.dense_layers(params, acts))


# --8<-- [end:unroll]


# --8<-- [start:labels]
def labelled(y: np.ndarray, fraction: float, seed) -> np.ndarray:
    """The indices of the training images whose labels the net may use: a share
    `fraction` of them, the same share of every class (at least one image of
    each), drawn from `seed`. The rest of the images are seen by pre-training
    only, without their labels."""
    if not isinstance(y, np.ndarray) or y.ndim != 1 or len(y) == 0:
        raise ValueError(f"y must be a non-empty 1-D array of labels, got {y!r}")
    fraction, seed = _rate("fraction", fraction), _seed(seed)
    if fraction > 1:
        raise ValueError(f"fraction must be at most 1, not {fraction}")
    n = max(len(np.unique(y)), round(fraction * len(y)))
    if n >= len(y):
        return np.arange(len(y))
    from sklearn.model_selection import train_test_split

    rows, _ = train_test_split(
        np.arange(len(y)), train_size=n, stratify=y, random_state=seed
    )
    return np.sort(rows)


# --8<-- [end:labels]


def binary_digits():
    """A5's binarised digits (a pixel is on when darker than 8/16) with their
    labels: X_train, X_test, y_train, y_test, on the fixed split of data.digits."""
    X_train, X_test, y_train, y_test = digits()
    on = (X_train > 0.5).astype(np.float32), (X_test > 0.5).astype(np.float32)
    return on[0], on[1], y_train, y_test


# --8<-- [start:finetune]
def finetune(net, X, y, *, steps, batch, lr, seed) -> float:
    """Backpropagation on the labelled images: plain SGD on softmax cross-entropy
    through mlp.fit, for whole epochs until at least `steps` steps have run,
    whatever the number of images. An epoch's batches hold at most `batch`
    images and are as equal as the count allows (135 images: 68 and 67, not 128
    and a noisy 7). Returns the seconds of training."""
    if not callable(getattr(net, "train_step", None)):
        raise TypeError(f"net must have a train_step method, got {net!r}")
    X = _images("X", X)
    if not isinstance(y, np.ndarray) or y.shape != (len(X),):
        raise ValueError(f"y must be one label per row of X ({len(X)}), got {y!r}")
    steps, batch = _count("steps", steps), _count("batch", batch)
    lr, seed = _rate("lr", lr), _seed(seed)
    per_epoch = math.ceil(len(X) / batch)
    batch = math.ceil(len(X) / per_epoch)  # no short last batch
    epochs = math.ceil(steps / per_epoch)
    return mlp.fit(net, X, y, epochs=epochs, batch=batch, lr=lr, seed=seed)


# --8<-- [end:finetune]


# --8<-- [start:sample]
def sample(stack, *, chains, steps, seed) -> np.ndarray:
    """Let the DBN dream: `chains` Gibbs chains in the top RBM, each started from
    random binary units and run `steps` alternating steps, h ~ p(h | v) and
    v ~ p(v | h); then each chain's last p(v | h) carried down to the pixels by
    the lower RBMs' p(v | h), as probabilities. Returns (chains, pixels)."""
    stack = _stack(stack)
    chains, steps = _count("chains", chains), _count("steps", steps)
    rng = np.random.default_rng([_seed(seed), 5])
    top = stack[-1]
    n_v, n_h = top.W.shape
    V = (rng.random((chains, n_v)) < 0.5).astype(np.float32)
    draw = [
        (rng.random((chains, n_h), np.float32), rng.random((chains, n_v), np.float32))
        for _ in range(steps)
    ]
    if isinstance(top, R.RBMTwin):
        for Uh, Uv in draw:
            h = (Uh < R._sigmoid(V @ top.W + top.b)).astype(np.float32)
            pv = R._sigmoid(h @ top.W.T + top.a)
            V = (Uv < pv).astype(np.float32)
        for rbm in reversed(stack[:-1]):
            pv = R._sigmoid(pv @ rbm.W.T + rbm.a)
        return pv.astype(np.float32)
    buf = layers.Buffers()
    v = buf("v", V.shape)
    v.set(V)
    for Uh, Uv in draw:
        uh, uv = buf("uh", Uh.shape), buf("uv", Uv.shape)
        uh.set(Uh)
        uv.set(Uv)
        ph = top.hidden(v, "ph_dream")
        h = bernoulli(ph, uh, out=buf("h", ph.shape))
        pv = top.visible(h)
        bernoulli(pv, uv, out=v)  # the next step starts from this sample
    for rbm in reversed(stack[:-1]):
        pv = rbm.visible(pv)  # down to the pixels, one layer at a time
    synchronize()
    return pv.get()


# --8<-- [end:sample]


# --8<-- [start:compare]
def compare(
    seeds,
    fractions=FRACTIONS,
    *,
    sizes=SIZES,
    pretraining=PRETRAIN,
    tuning=FINETUNE,
    numpy=False,
    data=None,
):
    """For every seed: pre-train one stack on all the training images, then for
    every share of labels fine-tune the three arms on the same labelled images
    in the same batch order. Returns {arm: {fraction: [held-out accuracy per
    seed]}}. `data` replaces binary_digits() (a smaller set, for a quick run)."""
    if not isinstance(seeds, (list, tuple, range)) or not seeds:
        raise ValueError(f"seeds must be a non-empty list of seeds, got {seeds!r}")
    seeds = [_seed(s) for s in seeds]
    if not isinstance(fractions, (list, tuple)) or not fractions:
        raise ValueError(f"fractions must be a non-empty list, got {fractions!r}")
    for f in fractions:
        if _rate("every fraction", f) > 1:
            raise ValueError(f"every fraction must be at most 1, not {f}")
    sizes, numpy = _sizes(sizes), _flag("numpy", numpy)
    pretraining = _settings("pretraining", pretraining, ("epochs", "batch", "lr"))
    tuning = _settings("tuning", tuning, ("steps", "batch", "lr"))
    if data is not None and not (
        isinstance(data, tuple)
        and len(data) == 4
        and all(isinstance(a, np.ndarray) for a in data)
    ):
        raise ValueError(
            f"data must be (X_train, X_test, y_train, y_test), got {data!r}"
        )
    X_train, X_test, y_train, y_test = binary_digits() if data is None else data
    acc = {arm: {f: [] for f in fractions} for arm in ARMS}
    for seed in seeds:
        stack = pretrain(X_train, sizes, seed=seed, numpy=numpy, **pretraining)
        for f in fractions:
            rows = labelled(y_train, f, seed)
            for arm, hidden in ARMS.items():
                start = initial_params(
                    arm, sizes, seed, stack if arm == "pre-trained" else None
                )
                net = network(start, hidden, numpy)
                finetune(net, X_train[rows], y_train[rows], seed=seed, **tuning)
                acc[arm][f].append(mlp.accuracy(net, X_test, y_test))
    return acc


# --8<-- [end:compare]


if __name__ == "__main__":
    acc = compare([0])
    for arm, by_fraction in acc.items():
        line = ", ".join(f"{f:.0%} labels {a[0]:.3f}" for f, a in by_fraction.items())
        print(f"{arm:12s} {line}")

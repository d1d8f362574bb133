"""Track A's models on the CPU backend: each agrees with its NumPy twin, every
backward kernel matches finite differences, and the models do what the posts claim
(AND/OR/NOT but no XOR from one unit; the perceptron converges on separable data and
not on XOR; an MLP solves XOR and learns the digits).

The kernels compute in float32; the finite differences are taken in float64 on the
NumPy twin (central, eps = 1e-6: truncation error ~eps^2, rounding ~1e-16/eps, both
far below float32's 6e-8 relative rounding). The tolerances below are what float32
allows for a few dozen operations per value: the errors seen are near 2e-7, the
bounds ten times that; a wrong formula is off by order 1.
"""

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.perceptron import perceptron
from thousand.kernels.softmax_xent import (
    softmax_xent,
    softmax_xent_loss_ref,
    softmax_xent_ref,
)
from thousand.kernels.threshold import threshold
from thousand.models import layers, mlp, mp_neuron, twin
from thousand.models import perceptron as P
from thousand.models.data import (
    XOR_X,
    XOR_Y,
    digits,
    one_hot,
    separable_points,
)

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")

GRAD_TOL = 2e-6  # float32 gradient vs float64 finite differences, relative


def rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1.0))


# ---- A1: the McCulloch–Pitts unit ------------------------------------------------


@pytest.mark.parametrize(
    "gate,fn",
    [
        ("AND", lambda x: x[0] & x[1]),
        ("OR", lambda x: x[0] | x[1]),
        ("NOT", lambda x: 1 - x[0]),
    ],
)
def test_gates_from_one_threshold_unit(gate, fn):
    table = mp_neuron.truth_table(gate)
    assert len(table) == 2 ** len(mp_neuron.GATES[gate][0])
    for x, out in table:
        assert out == fn(x), f"{gate}{x} gave {out}"


def test_no_unit_computes_xor_but_the_search_finds_and():
    tried, found = mp_neuron.xor_search()
    assert tried == 7 * 7 * 14 and found == []
    # the same search is not blind: it finds the units that compute AND and OR
    assert (1, 1, 2) in mp_neuron.search(lambda a, b: a & b)[1]
    assert (1, 1, 1) in mp_neuron.search(lambda a, b: a | b)[1]


# ---- A2: the perceptron ----------------------------------------------------------


def test_perceptron_converges_on_separable_points_as_its_twin_does():
    X, y, _ = separable_points(seed=3, n=200)
    w, mistakes, converged = P.train(X, y, max_epochs=100)
    w_np, mistakes_np, converged_np = P.train_numpy(X, y, max_epochs=100)
    assert converged and converged_np and mistakes[-1] == 0
    # integers throughout: the kernel's epochs are the twin's, step for step
    assert mistakes == mistakes_np
    np.testing.assert_array_equal(w, w_np)
    margins = y * (X @ w[:-1] + w[-1])
    assert margins.min() > 0  # every point on its own side


def test_perceptron_never_converges_on_xor():
    y = np.where(XOR_Y == 1, 1, -1).astype(np.float32)
    w, mistakes, converged = P.train(XOR_X, y, max_epochs=50)
    assert not converged and len(mistakes) == 50 and min(mistakes) >= 1
    assert mistakes == P.train_numpy(XOR_X, y, max_epochs=50)[1]


def test_signed_inputs_count_the_rules_mistakes():
    rng = np.random.default_rng(1)
    X = rng.integers(-3, 4, (40, 3)).astype(np.float32)
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0).astype(np.float32)
    w = rng.integers(-2, 3, 4).astype(np.float32)
    fired = threshold(P.signed_inputs(X, y), w, np.zeros(1, np.float32))
    mistakes = y * (X @ w[:-1] + w[-1]) <= 0  # includes points on the boundary
    np.testing.assert_array_equal(fired == 1, mistakes)


# ---- the layer kernels against finite differences ---------------------------------


# --8<-- [start:fd-grad]
def fd_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar f() with respect to every entry of x
    (float64, changed in place and put back)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + eps
        up = f()
        x[idx] = old - eps
        down = f()
        x[idx] = old
        g[idx] = (up - down) / (2 * eps)
    return g


# --8<-- [end:fd-grad]


def dense_inputs(rng, activation):
    """X (5, 4), W (4, 3), b (3,), R (5, 3) in float32; for ReLU, no
    pre-activation within 1e-3 of the kink, where differences would straddle it."""
    while True:
        X = rng.standard_normal((5, 4)).astype(np.float32)
        W = rng.standard_normal((4, 3)).astype(np.float32)
        b = rng.standard_normal(3).astype(np.float32)
        R = rng.standard_normal((5, 3)).astype(np.float32)
        Z = X.astype(np.float64) @ W + b
        if activation != "relu" or np.abs(Z).min() > 1e-3:
            return X, W, b, R


# --8<-- [start:dense-fd]
@pytest.mark.parametrize("activation", ["linear", "relu", "sigmoid", "tanh"])
def test_dense_backward_matches_finite_differences(activation):
    """L = sum(R * f(X W + b)): dL/dY = R, so backward(R) gives dL/dX, dL/dW, dL/db
    through matmul, transpose, the activation's backward kernel and col_sum."""
    X, W, b, R = dense_inputs(np.random.default_rng(7), activation)
    layer = layers.Dense(W, b, activation)
    Y = layer.forward(to_device(X))
    dX = layer.backward(to_device(R)).get()
    dW, db = (g.get() for g in layer.grads)

    X64, W64, b64 = (a.astype(np.float64) for a in (X, W, b))

    def loss():
        return float((R * twin.FORWARD[activation](X64 @ W64 + b64)).sum())

    assert rel(Y.get(), twin.FORWARD[activation](X64 @ W64 + b64)) < 1e-6
    assert rel(dX, fd_grad(loss, X64)) < GRAD_TOL
    assert rel(dW, fd_grad(loss, W64)) < GRAD_TOL
    assert rel(db, fd_grad(loss, b64)) < GRAD_TOL


# --8<-- [end:dense-fd]


def test_softmax_xent_matches_finite_differences_and_its_loss():
    rng = np.random.default_rng(11)
    Z = (rng.standard_normal((6, 5)) * 3).astype(np.float32)
    T = one_hot(rng.integers(0, 5, 6), 5)
    loss = np.full(6, np.nan, np.float32)
    dZ = softmax_xent(Z, T, loss=loss)
    np.testing.assert_allclose(loss, softmax_xent_loss_ref(Z, T), rtol=1e-6)
    Z64 = Z.astype(np.float64)
    fd = fd_grad(lambda: float(softmax_xent_loss_ref(Z64, T).mean()), Z64)
    assert rel(dZ, fd) < GRAD_TOL
    assert rel(dZ, softmax_xent_ref(Z, T)) < 1e-6


def test_softmax_xent_survives_huge_logits():
    """Without the max subtracted, exp(1000) is inf and the loss NaN."""
    Z = np.array([[1000.0, 0.0, -1000.0], [-1000.0, 1000.0, 999.0]], np.float32)
    T = one_hot(np.array([0, 2]), 3)
    loss = np.empty(2, np.float32)
    dZ = softmax_xent(Z, T, loss=loss)
    assert np.all(np.isfinite(dZ)) and np.all(np.isfinite(loss))
    np.testing.assert_allclose(loss, softmax_xent_loss_ref(Z, T), rtol=1e-6)


# --8<-- [start:network-fd]
def test_network_gradients_match_finite_differences():
    """The whole chain, two hidden layers deep, through the mean cross-entropy."""
    rng = np.random.default_rng(5)
    sizes, hidden = [4, 6, 5, 3], "tanh"
    params = mlp.init(sizes, seed=5, gain=1.0)
    params = [(W, rng.standard_normal(b.shape).astype(np.float32)) for W, b in params]
    X = rng.standard_normal((7, 4)).astype(np.float32)
    T = one_hot(rng.integers(0, 3, 7), 3)
    acts = mlp.activations(sizes, hidden)
    net = layers.Network(layers.dense_layers(params, acts))
    net.backward(X, T)
    ref = twin.Network(twin.dense_layers(params, acts, np.float64), np.float64)
    for layer, (dW, db) in zip(ref.layers, net.get_grads(), strict=True):

        def loss():
            return ref.mean_loss(X, T)

        assert rel(dW, fd_grad(loss, layer.W)) < GRAD_TOL
        assert rel(db, fd_grad(loss, layer.b)) < GRAD_TOL


# --8<-- [end:network-fd]


# ---- A3/A4: the MLP agrees with its twin and learns ------------------------------

AGREE_TOL = 1e-6  # float32 kernels: the same sums in other orders, over 5 steps


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_steps_agree_with_the_numpy_twin(dtype):
    X_train, _, y_train, _ = digits()
    X, y = X_train[:160], y_train[:160]
    sizes = [64, 32, 10]
    net = mlp.network(sizes, "relu", seed=2)
    ref = mlp.network_twin(sizes, "relu", seed=2, dtype=dtype)
    for n in (net, ref):
        mlp.fit(n, X, y, epochs=1, batch=32, lr=0.1, seed=2)  # 5 steps
    moved = 0.0
    for (W, b), (W_ref, b_ref), (W0, _) in zip(
        net.get_params(), ref.get_params(), mlp.init(sizes, seed=2), strict=True
    ):
        assert rel(W, W_ref) < AGREE_TOL and rel(b, b_ref) < AGREE_TOL
        moved = max(moved, rel(W, W0))
    assert moved > 100 * AGREE_TOL  # the steps did change the weights


def test_mlp_solves_xor_on_the_kernels():
    net = mlp.xor(seed=0)
    np.testing.assert_array_equal(net.logits(XOR_X).argmax(axis=1), XOR_Y)
    ref = mlp.xor(seed=0, numpy=True)
    np.testing.assert_array_equal(ref.logits(XOR_X).argmax(axis=1), XOR_Y)


def test_a_short_digits_run_learns_far_above_chance():
    """Correctness, not the benchmark: two epochs on the kernels and on the twin
    reach well above chance (10%) and nearly the same predictions."""
    X_train, X_test, y_train, y_test = digits()
    runs = {}
    for name, make in (("kernels", mlp.network), ("numpy", mlp.network_twin)):
        net = make(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, seed=0)
        mlp.fit(net, X_train, y_train, epochs=2, batch=32, lr=0.1, seed=0)
        runs[name] = net.logits(X_test).argmax(axis=1)
    for pred in runs.values():
        assert np.mean(pred == y_test) > 0.8
    assert np.mean(runs["kernels"] == runs["numpy"]) > 0.99


# ---- bad input ---------------------------------------------------------------------

f32 = np.ones((4, 3), np.float32)


@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda: threshold(f32, np.ones(3, np.float32), np.ones(2, np.float32)),
            "`theta` must have shape (1,)",
        ),
        (
            lambda: perceptron(f32, np.ones(4, np.float32), np.ones(3, np.float32)),
            "`w0` must have shape (4,)",
        ),
        (
            lambda: perceptron(
                f32, np.ones(4, np.float32), np.ones(4, np.float32), block=96
            ),
            "block must be a power of two",
        ),
        (
            lambda: softmax_xent(f32, np.ones((4, 2), np.float32)),
            "`T` must have shape (4, 3)",
        ),
        (
            lambda: layers.Dense(f32, np.ones(3, np.float32), "softplus"),
            "activation must be one of",
        ),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)


def test_training_script_says_what_it_ran_and_that_times_are_emulated(capsys):
    from thousand.models import train

    assert train.main(["mlp", "--quick", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seed 3" in out and "split seed 0" in out
    assert "epoch   2  training loss" in out and "epoch   3" not in out
    assert "time ratio CPU emulation / NumPy" in out
    assert "each time above is a CPU emulation" in out and "GPU" not in out


def test_training_lenet_runs_the_kernels_and_the_twin_alike():
    from thousand.models import train

    lines = []
    r = train.train(
        "lenet", seed=0, epochs=1, train_limit=64, test_limit=40, log=lines.append
    )
    assert "LeNet-5" in lines[0] and "x 0.95^(epoch-1)" in lines[0]
    assert lines[1].startswith("digits: 64 training, 40 held out")
    assert r["curve"]["epoch"] == [1] and r["kernel_seconds"] > 0
    assert r["accuracy"] == r["numpy_accuracy"]  # two steps: the same predictions

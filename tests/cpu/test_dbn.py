"""A8 on the CPU backend: the greedy stack of RBMs on the kernels agrees with the
same stack of NumPy twins, and each RBM learned the codes of the one below; the
fine-tuned net agrees with its PyTorch twin step by step (losses, gradients,
weights); the dreams of the top RBM agree with the twin's; the labelled subsets
keep every class; bad arguments are refused before any work."""

import re

import numpy as np
import pytest

from thousand.models import dbn as D
from thousand.models import mlp
from thousand.models import rbm as R
from thousand.models.data import one_hot

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")

SIZES = [64, 24, 16, 10]  # small: every thread of every kernel is emulated
PRE = {"epochs": 1, "batch": 20, "lr": 0.1}
NET = D.network(D.initial_params("relu", SIZES, 0), "relu", numpy=True)


@pytest.fixture(scope="module")
def data():
    return D.binary_digits()


@pytest.fixture(scope="module")
def stacks(cpu_backend_checked, data):
    """The same greedy pre-training on the kernels and on the NumPy twins."""
    X = data[0][:100]  # 5 CD-1 steps a layer
    return D.pretrain(X, SIZES, seed=3, **PRE), D.pretrain(
        X, SIZES, seed=3, numpy=True, **PRE
    )


def test_the_stack_on_the_kernels_agrees_with_the_numpy_twins(stacks):
    kernels, twins = stacks
    assert len(kernels) == len(twins) == len(SIZES) - 2
    for k, (ours, theirs) in enumerate(zip(kernels, twins, strict=True)):
        start = R.init(SIZES[k], SIZES[k + 1], seed=[3, k])
        for got, want, before in zip(
            ours.get_params(), theirs.get_params(), start, strict=True
        ):
            assert got.shape == want.shape
            assert np.abs(got - want).max() < 1e-6
            assert np.abs(got - before).max() > 1e-3  # the steps did move them


def test_each_rbm_learned_the_codes_of_the_one_below(data, stacks):
    """Greedy means: RBM 2 is an ordinary RBM trained on RBM 1's p(h | v)."""
    X = data[0][:100]
    _, twins = stacks
    codes = D.up(twins[0], X)
    assert codes.shape == (100, SIZES[1]) and 0 < codes.min() and codes.max() < 1
    alone = R.RBMTwin(*R.init(SIZES[1], SIZES[2], seed=[3, 1]))
    R.train(alone, codes, seed=[3, 1], **PRE)
    for got, want in zip(twins[1].get_params(), alone.get_params(), strict=True):
        np.testing.assert_array_equal(got, want)
    # and up() on the kernels is the twin's up(), as the stacks agree
    kernels, _ = stacks
    assert np.abs(D.up(kernels[0], X) - codes).max() < 1e-6


def test_the_arms_differ_only_in_their_hidden_layers(stacks):
    kernels, _ = stacks
    pre = D.initial_params("pre-trained", SIZES, 5, kernels)
    rand = D.initial_params("random", SIZES, 5)
    relu = D.initial_params("relu", SIZES, 5)
    for p in (pre, rand, relu):
        assert [W.shape for W, _ in p] == [(64, 24), (24, 16), (16, 10)]
        assert all(W.dtype == np.float32 and b.dtype == np.float32 for W, b in p)
    for a, b in zip(pre[-1], rand[-1], strict=True):  # the same softmax layer
        np.testing.assert_array_equal(a, b)
    for (W, b), rbm in zip(pre[:-1], kernels, strict=True):
        W_rbm, _, b_rbm = rbm.get_params()
        np.testing.assert_array_equal(W, W_rbm)
        np.testing.assert_array_equal(b, b_rbm)
    for W, _ in rand[:-1]:
        bound = 1 / np.sqrt(W.shape[0])
        assert np.abs(W).max() <= bound and np.abs(W).max() > 0.9 * bound
    W = relu[0][0]  # He: variance 2 / n_in
    assert abs(W.var() * W.shape[0] / 2 - 1) < 0.15


@pytest.mark.parametrize("hidden", ["sigmoid", "relu"])
def test_the_finetuned_net_agrees_with_its_pytorch_twin_step_by_step(
    data, stacks, hidden
):
    from thousand.models.dbn_twin import Twin

    X, _, y, _ = data
    arm = "pre-trained" if hidden == "sigmoid" else "relu"
    stack = stacks[0] if arm == "pre-trained" else None
    start = D.initial_params(arm, SIZES, 1, stack)
    ours, theirs = D.network(start, hidden), Twin(start, hidden)
    rng = np.random.default_rng(0)
    T = one_hot(y, 10)
    for step in range(4):
        rows = rng.choice(len(X), 16, replace=False)
        if step == 0:  # the first gradients, before any step
            ours.backward(X[rows], T[rows])
            theirs.backward(X[rows], T[rows])
            for g_ours, g_theirs in zip(
                ours.get_grads(), theirs.get_grads(), strict=True
            ):
                for a, b in zip(g_ours, g_theirs, strict=True):
                    assert np.abs(a - b).max() < 1e-6 * max(1.0, np.abs(b).max())
        loss_ours = ours.train_step(X[rows], T[rows], 0.5).get()
        loss_theirs = theirs.train_step(X[rows], T[rows], 0.5).numpy()
        assert np.abs(loss_ours - loss_theirs).max() < 1e-5
        for p_ours, p_theirs in zip(
            ours.get_params(), theirs.get_params(), strict=True
        ):
            for a, b in zip(p_ours, p_theirs, strict=True):
                assert np.abs(a - b).max() < 1e-5
    moved = ours.get_params()[0][0] - start[0][0]
    assert np.abs(moved).max() > 1e-4  # four steps did change the first layer


def test_finetune_runs_mlp_fit_over_whole_epochs(data):
    """The same start and batches through mlp.fit give the same net."""
    X, _, y, _ = data
    rows = D.labelled(y, 0.01, 0)  # 13 images: one batch a step
    start = D.initial_params("random", SIZES, 0)
    a, b = D.network(start, "sigmoid", numpy=True), D.network(start, "sigmoid", True)
    D.finetune(a, X[rows], y[rows], steps=3, batch=32, lr=0.5, seed=2)
    mlp.fit(b, X[rows], y[rows], epochs=3, batch=len(rows), lr=0.5, seed=2)
    for p, q in zip(a.get_params(), b.get_params(), strict=True):
        np.testing.assert_array_equal(p[0], q[0])


def test_finetune_splits_an_epoch_into_equal_batches(data):
    """135 labelled images at batch 128: two batches of 68 and 67, for 250 epochs
    (500 steps), not 128 and a noisy 7."""
    X, _, y, _ = data
    rows = D.labelled(y, 0.1, 0)
    sizes = []

    class Recorder:
        def train_step(self, X, T, lr):
            sizes.append(len(X))

    D.finetune(Recorder(), X[rows], y[rows], steps=500, batch=128, lr=0.3, seed=0)
    assert len(rows) == 135 and len(sizes) == 500
    assert sorted(set(sizes)) == [67, 68] and sizes.count(67) == 250


def test_the_dreams_on_the_kernels_agree_with_the_twins(stacks):
    kernels, _ = stacks
    twins = [R.RBMTwin(*rbm.get_params()) for rbm in kernels]  # the very weights
    ours = D.sample(kernels, chains=6, steps=3, seed=1)
    theirs = D.sample(twins, chains=6, steps=3, seed=1)
    assert ours.shape == (6, 64) and 0 < ours.min() and ours.max() < 1
    assert np.abs(ours - theirs).max() < 1e-5
    other = D.sample(twins, chains=6, steps=3, seed=2)
    assert np.abs(other - theirs).max() > 1e-3  # the seed matters


def test_the_labelled_images_keep_every_class(data):
    y = data[2]
    few = D.labelled(y, 0.01, 0)
    assert len(few) == round(0.01 * len(y)) and len(set(few)) == len(few)
    assert set(y[few]) == set(range(10))  # at least one image of each digit
    tenth = D.labelled(y, 0.1, 0)
    counts = np.bincount(y[tenth], minlength=10)
    assert counts.min() >= 12 and counts.max() <= 15  # about 13.5 of each
    np.testing.assert_array_equal(D.labelled(y, 1.0, 4), np.arange(len(y)))
    np.testing.assert_array_equal(few, D.labelled(y, 0.01, 0))  # deterministic
    assert not np.array_equal(few, D.labelled(y, 0.01, 1))


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda X, y: D.pretrain(X, [32, 8, 10], seed=0, **PRE), ValueError, "(N, 32)"),
        (lambda X, y: D.pretrain(X, [64, 10], seed=0, **PRE), ValueError, "at least 3"),
        (lambda X, y: D.pretrain(X * 16, SIZES, seed=0, **PRE), ValueError, "[0, 1]"),
        (
            lambda X, y: D.pretrain(X, SIZES, seed=0, epochs=0, batch=20, lr=0.1),
            ValueError,
            "epochs must be at least 1, not 0",
        ),
        (
            lambda X, y: D.pretrain(X, SIZES, seed=-1, **PRE),
            ValueError,
            "seed must be at least 0",
        ),
        (
            lambda X, y: D.pretrain(X, SIZES, seed=0, epochs=1, batch=2.5, lr=0.1),
            TypeError,
            "batch must be a whole number",
        ),
        (lambda X, y: D.labelled(y, 0.0, 0), ValueError, "fraction must be a finite"),
        (lambda X, y: D.labelled(y, 1.5, 0), ValueError, "at most 1, not 1.5"),
        (lambda X, y: D.initial_params("deep", SIZES, 0), ValueError, "arm must be"),
        (lambda X, y: D.initial_params("pre-trained", SIZES, 0), ValueError, "stack"),
        (
            lambda X, y: D.finetune(NET, X, y[:5], steps=1, batch=4, lr=0.1, seed=0),
            ValueError,
            "one label per row",
        ),
        (lambda X, y: D.sample([], chains=2, steps=1, seed=0), ValueError, "stack"),
        (lambda X, y: D.compare([], data=None), ValueError, "seeds must be"),
        (lambda X, y: D.compare([0], [0.5, 2.0]), ValueError, "at most 1, not 2.0"),
        (
            lambda X, y: D.compare([0], tuning={"steps": 5, "lr": 0.1}),
            ValueError,
            "tuning must be a dict with keys",
        ),
        (
            lambda X, y: D.compare([0], pretraining={**PRE, "lr": -1}),
            ValueError,
            "pretraining['lr'] must be a finite number above 0",
        ),
        (lambda X, y: D.compare([0], numpy=1), TypeError, "numpy must be True or"),
        (lambda X, y: D.up("rbm", X), ValueError, "stack must be a non-empty list"),
        (
            lambda X, y: D.network([(np.ones((3, 2)), np.ones(2))], "relu"),
            ValueError,
            "float32 (W, b) pairs, got [('float64 (3, 2)', 'float64 (2,)')]",
        ),
        (
            lambda X, y: D.network(D.initial_params("relu", SIZES, 0), "gelu"),
            ValueError,
            "hidden must be",
        ),
        (
            lambda X, y: D.finetune("net", X, y, steps=1, batch=4, lr=0.1, seed=0),
            TypeError,
            "net must have a train_step",
        ),
        (
            lambda X, y: D.pretrain(X, SIZES, seed=0, log="print", **PRE),
            TypeError,
            "log must be a function",
        ),
    ],
)
def test_bad_arguments_are_refused_before_any_work(data, call, error, message):
    X, _, y, _ = data
    with pytest.raises(error, match=re.escape(message)):
        call(X[:40], y[:40])

"""A5 on the CPU backend: the Hopfield network recalls what it stored with its
energy never rising, exactly as its NumPy twin does; past its capacity it recalls
nothing exactly; the RBM's CD-1 steps agree with the twin and lower the
reconstruction error on the digits."""

import numpy as np
import pytest

from thousand.kernels.hopfield import hopfield
from thousand.models import hopfield as H
from thousand.models import rbm as R

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")


def test_hopfield_recalls_corrupted_patterns_with_the_energy_falling():
    P = H.random_patterns(seed=0, p=5, n=100)  # 0.05 n: well within capacity
    probes = H.corrupt(P, flips=15, seed=1)
    final, energies = H.recall(P, probes)
    np.testing.assert_array_equal(final, P)
    E = np.array(energies)  # (sweeps + 1, probes)
    assert np.all(np.diff(E, axis=0) <= 0)  # one neuron at a time: never up
    assert np.all(E[-1] < E[0])  # and it did fall
    # integer weights and fields: the kernel's sweeps are the twin's, exactly
    final_np, energies_np = H.recall_numpy(P, probes)
    np.testing.assert_array_equal(final, final_np)
    np.testing.assert_array_equal(E, np.array(energies_np))


def test_stored_patterns_are_fixed_points():
    P = H.random_patterns(seed=2, p=4, n=64)
    final, energies = H.recall(P, P)
    np.testing.assert_array_equal(final, P)
    assert len(energies) == 2  # one sweep, nothing changed


def test_past_capacity_the_network_recalls_nothing_exactly():
    """30 random patterns in 100 neurons, over twice the ~0.14 n it can hold."""
    P = H.random_patterns(seed=0, p=30, n=100)
    final, energies = H.recall(P, H.corrupt(P, flips=15, seed=1))
    assert not np.any(np.all(final == P, axis=1))
    assert np.all(np.diff(np.array(energies), axis=0) <= 0)  # still never up


def test_rbm_steps_agree_with_the_numpy_twin():
    X_train, _ = R.binary_digits()
    params = R.init(64, 16, seed=3)
    kernels, twin = R.RBM(*params), R.RBMTwin(*params)
    for model in (kernels, twin):
        R.train(model, X_train[:100], epochs=1, batch=20, lr=0.1, seed=3)  # 5 steps
    for got, want, start in zip(
        kernels.get_params(), twin.get_params(), params, strict=True
    ):
        assert np.abs(got - want).max() < 1e-6
        assert np.abs(got - start).max() > 1e-3  # the steps did move them


def test_rbm_training_lowers_the_reconstruction_error():
    X_train, X_test = R.binary_digits()
    model = R.RBMTwin(*R.init(64, 32, seed=0))
    before = R.reconstruction_error(model, X_test)
    errors = []
    R.train(
        model,
        X_train,
        epochs=3,
        batch=20,
        lr=0.1,
        seed=0,
        X_test=X_test,
        log=lambda e, err: errors.append(err),
    )
    assert errors[-1] < 0.8 * before and errors[-1] < errors[0]


@pytest.mark.parametrize(
    "block,n,message",
    [(96, 8, "block must be a power of two"), (64, 12300, "bytes of shared memory")],
)
def test_hopfield_refuses_what_it_cannot_run(block, n, message):
    W = np.zeros((n, n), np.float32)
    S = np.ones((1, n), np.float32)
    with pytest.raises(ValueError, match=message):
        hopfield(W, S, block=block)

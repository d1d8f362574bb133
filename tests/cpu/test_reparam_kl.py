"""A9's latent layer and VAE: the references against independent oracles (the
Gaussian's moments, PyTorch's autograd, finite differences), the kernels against
the references and against PyTorch on the CPU backend, the model against its
PyTorch twin step by step, the importance-weighted estimate against a quadrature,
and bad input rejected before any launch. The generic tests also run both kernel
families at their awkward sizes (tests/cpu/test_emulated_kernels.py)."""

import math

import numpy as np
import pytest

from thousand.kernels.reparam_kl import normal_ref, reparam_kl, reparam_kl_ref
from thousand.kernels.reparam_kl_backward import (
    reparam_kl_backward,
    reparam_kl_backward_ref,
)

rng = np.random.default_rng(9)
M, N, SEED = 33, 5, 2**40 + 7


def inputs():
    mu = rng.standard_normal((M, N)).astype(np.float32)
    logvar = rng.uniform(-3, 1.5, (M, N)).astype(np.float32)
    dz = rng.standard_normal((M, N)).astype(np.float32)
    return mu, logvar, dz


def test_normal_ref_is_standard_normal_and_counter_based():
    eps = normal_ref(200_000, SEED, 12345)
    assert abs(eps.mean()) < 0.01 and abs(eps.var() - 1) < 0.015
    assert abs((eps**4).mean() - 3) < 0.06  # a Gaussian's fourth moment
    assert abs(np.mean(eps < -1.959964) - 0.025) < 0.002  # its lower 2.5% tail
    # a pure function of (seed, counter): any slice is the same numbers
    np.testing.assert_array_equal(normal_ref(10, SEED, 12350), eps[5:15])
    assert not np.allclose(normal_ref(10, SEED + 1, 12350), eps[5:15])


def test_normal_ref_differs_from_dropout_stream():
    """Counter word 2 is 1 here, 0 in dropout: the same seed gives other numbers."""
    from thousand.kernels.dropout import dropout_uniforms

    u = dropout_uniforms(4000, SEED)
    eps = normal_ref(1000, SEED)
    n_from_dropout = np.sqrt(-2 * np.log(u[0::4] + 2**-24)) * np.cos(
        2 * np.pi * u[1::4]
    )
    assert not np.allclose(eps, n_from_dropout, atol=1e-3)


def test_kernels_match_the_references_on_the_cpu_backend():
    mu, logvar, dz = inputs()
    out = reparam_kl(mu, logvar, SEED, 2**32 - 9)  # the counter's high word moves
    np.testing.assert_allclose(
        out, reparam_kl_ref(mu, logvar, SEED, 2**32 - 9), rtol=1e-5, atol=1e-5
    )
    g = reparam_kl_backward(dz, mu, logvar, 0.25, SEED, 2**32 - 9)
    ref = reparam_kl_backward_ref(dz, mu, logvar, 0.25, SEED, 2**32 - 9)
    np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-5)


def test_forward_and_backward_match_pytorch():
    """PyTorch computes z and the KL from the same eps, and autograd differentiates
    L = sum(dz * z) + w * sum(KL): its gradients are the backward's outputs."""
    torch = pytest.importorskip("torch")
    mu, logvar, dz = inputs()
    w, offset = 0.3, 77
    eps = torch.tensor(normal_ref(M * N, SEED, offset).reshape(M, N))
    m = torch.tensor(mu, dtype=torch.float64, requires_grad=True)
    lv = torch.tensor(logvar, dtype=torch.float64, requires_grad=True)
    z = m + torch.exp(0.5 * lv) * eps
    kl = 0.5 * (m**2 + lv.exp() - 1 - lv)
    (torch.tensor(dz, dtype=torch.float64) * z).sum().add(w * kl.sum()).backward()
    out = reparam_kl(mu, logvar, SEED, offset)
    np.testing.assert_allclose(out[0], z.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[1], kl.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = reparam_kl_backward(dz, mu, logvar, w, SEED, offset)
    np.testing.assert_allclose(g[0], m.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g[1], lv.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_backward_ref_matches_finite_differences():
    """Central differences of L(mu, logvar) = sum(dz * z) + w * sum(KL), in float64,
    with eps held fixed by the same seed and offset."""
    mu, logvar, dz = (a.astype(np.float64) for a in inputs())
    w, h = 0.7, 1e-6

    def loss(m, lv):
        z, kl = reparam_kl_ref(m, lv, SEED, 3)
        return float((dz * z).sum() + w * kl.sum())

    g = reparam_kl_backward_ref(dz, mu, logvar, np.float32(w), SEED, 3)
    w = float(np.float32(w))  # the reference rounds w as the kernel gets it
    for k, (i, j) in enumerate([(0, 0), (5, 2), (32, 4), (17, 1)]):
        for which in (0, 1):
            a, b = mu.copy(), logvar.copy()
            (a if which == 0 else b)[i, j] += h
            up = loss(a, b)
            (a if which == 0 else b)[i, j] -= 2 * h
            fd = (up - loss(a, b)) / (2 * h)
            assert abs(fd - g[which, i, j]) < 1e-6 * max(1, abs(fd)), (k, which)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda a: reparam_kl(a.astype(np.float64), a, 1), "`mu` must be float32"),
        (
            lambda a: reparam_kl(a, np.ones((4, 2), np.float32), 1),
            "`logvar` must have shape",
        ),
        (lambda a: reparam_kl(a, a, -1), "`seed` (the generator's key) must be"),
        (lambda a: reparam_kl(a, a, 1, 2**64 - 2), "runs past 2^64"),
        (lambda a: reparam_kl(a, a, 1, out=np.empty_like(a)), "`out` must be 3-D"),
        (lambda a: reparam_kl(a, a, 1, version=2), "no version 2"),
        (lambda a: reparam_kl_backward(a, a, a, -1.0, 1), "`w` (the KL term's weight)"),
        (lambda a: reparam_kl_backward(a, a, a, "1", 1), "must be a number, got '1'"),
        (lambda a: reparam_kl_backward(a, a, a[1:], 1.0, 1), "`logvar` must have"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError) as info:
        call(np.ones((4, 3), np.float32))
    assert message in str(info.value)


# The model: tiny and short, so the whole file stays within a few seconds.
@pytest.fixture(scope="module")
def digits():
    from thousand.models.rbm import binary_digits

    X_train, X_test = binary_digits()
    return X_train[:96], X_test[:24]


def check_against_twin(X, rtol=1e-4, atol=2e-5):
    """Three Adam steps of the kernel VAE and of its PyTorch twin from the same
    weights on the same batches (41, 39 and 16 rows: 41 * 3 latent numbers takes
    the aligned copy of the log-variance gradient), every parameter compared after
    each step."""
    pytest.importorskip("torch")
    from thousand.models import vae as V
    from thousand.models.vae_twin import TorchVAE

    cfg = V.Config(hidden=16, latent=3, beta=2.0)
    p = V.init(cfg, seed=4)
    ours, twin = V.VAE(cfg, p, seed=11, lr=1e-2), TorchVAE(cfg, p, seed=11, lr=1e-2)
    order = np.random.default_rng(0).permutation(len(X))
    for step, rows in enumerate(np.array_split(order, [41, 80])):
        ours.step(X[rows])
        twin.step(X[rows])
        a, b = ours.host_params(), twin.host_params()
        for name in V.LAYERS:
            for k in range(2):
                np.testing.assert_allclose(
                    a[name][k],
                    b[name][k],
                    rtol=rtol,
                    atol=atol,
                    err_msg=f"step {step}, {name}[{k}]",
                )
    assert ours.drawn == twin.drawn == len(X) * cfg.latent


def test_vae_steps_agree_with_the_pytorch_twin(digits):
    check_against_twin(digits[0])


def test_iwae_estimate_matches_a_quadrature_and_bounds_the_elbo(digits):
    """With one latent number, log p(x) = log of the integral of p(x | z) N(z; 0, 1)
    over z, which a fine grid computes to many digits from the decoder alone."""
    from thousand.models import vae as V

    X_train, X_test = digits
    cfg = V.Config(hidden=16, latent=1)
    model = V.VAE(cfg, V.init(cfg, seed=1), seed=5, lr=1e-2)
    V.train(model, X_train, epochs=10, batch=32, seed=0)  # q near the posterior
    X = X_test[:4]
    zs = np.linspace(-9, 9, 3601)[:, None]
    Lg = model.decode(zs.astype(np.float32), logits=True).astype(np.float64)
    logp_x_z = X @ Lg.T - np.logaddexp(0, Lg).sum(axis=1)  # (4, grid)
    log_w = logp_x_z - 0.5 * (zs[:, 0] ** 2 + math.log(2 * math.pi))
    top = log_w.max(axis=1, keepdims=True)
    exact = top[:, 0] + np.log(np.exp(log_w - top).sum(axis=1) * (zs[1, 0] - zs[0, 0]))
    iw = V.log_likelihood(model, X, k=5000, chunk=4)
    np.testing.assert_allclose(iw, exact, atol=0.05)
    # k = 1 is one draw of the ELBO: its mean over draws sits below log p(x)
    elbo = V.log_likelihood(model, np.repeat(X, 400, axis=0), k=1, chunk=400)
    gap = exact - elbo.reshape(4, 400).mean(axis=1)
    assert np.all(gap > 0.02), gap
    assert V.active_units(model, X_test) in (0, 1)


def test_model_arguments_are_checked():
    from thousand.models import vae as V

    with pytest.raises(ValueError, match="`latent` must be an int >= 1, got 0"):
        V.Config(latent=0)
    with pytest.raises(ValueError, match="`beta` must be a number >= 0"):
        V.Config(beta=-1)
    cfg = V.Config(hidden=4, latent=2)
    model = V.VAE(cfg, V.init(cfg, 0))
    with pytest.raises(ValueError, match="`k` must be an int >= 1, got 0"):
        V.log_likelihood(model, np.zeros((2, 64), np.float32), k=0)
    with pytest.raises(ValueError, match="`batch` must be an int >= 1"):
        V.train(model, np.zeros((2, 64), np.float32), epochs=1, batch=0, seed=0)
    with pytest.raises(TypeError, match="`cfg` must be a Config, got dict"):
        V.VAE({}, {})

"""A13's GANs on the CPU backend: the kernels' two games against their PyTorch
twin step by step (same weights, batches and noise; both losses), the transposed
convolution's gradients against finite differences, the ring's mode count against
hand-placed points, and arguments refused before any work."""

import numpy as np
import pytest

from thousand.models import gan

RING = gan.Config("ring", z=16, batch=16, lr=1e-3)
DIGITS = gan.Config("digits", z=32, batch=8, lr=2e-3)


def _real(cfg, rng):
    if cfg.game == "ring":
        return gan.ring(rng, cfg.batch)
    return rng.uniform(-1, 1, (cfg.batch, 64)).astype(np.float32)


def _worst(a: dict, b: dict) -> float:
    return max(
        float(np.abs(x - y).max() / max(1.0, np.abs(y).max()))
        for n in "GD"
        for pa, pb in zip(a[n], b[n], strict=True)
        for x, y in zip(pa, pb, strict=True)
    )


def check_against_twin(cfg, loss, steps=3, device="cpu", tol=2e-4):
    """Each step's losses and every parameter after it, kernels against PyTorch.
    tol: Adam divides by sqrt(v) + 1e-8, so where a gradient is tiny a float32
    rounding of it moves the first update by a part in 1e4 of lr."""
    gan_twin = pytest.importorskip("thousand.models.gan_twin")
    p = gan.init(cfg, 0)
    ours, twin = gan.GAN(cfg, p, loss), gan_twin.GAN(cfg, p, loss, device=device)
    assert _worst(twin.params(), p) == 0  # the twin loads exactly these weights
    rng = np.random.default_rng(1)
    for step in range(steps):
        real, z1 = _real(cfg, rng), gan.noise(rng, cfg.batch, cfg.z)
        z2 = gan.noise(rng, cfg.batch, cfg.z)
        d_ours, d_twin = ours.d_step(real, z1).get().mean(), twin.d_step(real, z1)
        g_ours, g_twin = ours.g_step(z2).get().mean(), twin.g_step(z2)
        assert d_ours == pytest.approx(float(d_twin), rel=1e-4), step
        assert g_ours == pytest.approx(float(g_twin), rel=1e-4), step
        assert _worst(ours.params(), twin.params()) < tol, (cfg.game, loss, step)
    z = gan.noise(rng, cfg.batch + 3, cfg.z)  # sample pads the last batch
    assert np.allclose(ours.sample(z), twin.sample(z), atol=1e-4)


@pytest.mark.parametrize("loss", gan.LOSSES)
@pytest.mark.parametrize("cfg", [RING, DIGITS], ids=["ring", "digits"])
def test_steps_agree_with_the_pytorch_twin(cfg, loss):
    check_against_twin(cfg, loss)


def test_transposed_conv_gradients_match_finite_differences():
    """L = sum(W * f(conv_t(X, K) + b)): dX, dK and db from backward against
    central differences in float64 (the kernels run float32: rel 2e-2)."""
    from thousand.cuda import to_device
    from thousand.kernels.conv_backward_data import conv_backward_data_ref

    rng = np.random.default_rng(0)
    X = rng.standard_normal((2, 2, 2, 3)).astype(np.float32)
    K = rng.standard_normal((4, 4, 2, 3)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    Wt = rng.standard_normal((2, 4, 4, 2))

    def loss(X, K, b):
        Z = conv_backward_data_ref(X, K, (4, 4), gan.UP) + b
        return float((Wt * np.tanh(Z)).sum())

    layer = gan.TransposedConv(K, b, (4, 4), gan.UP, "tanh")
    layer.forward(to_device(X))
    dX = layer.backward(to_device(Wt.astype(np.float32))).get()
    dK, db = (g.get() for g in layer.grads)
    for name, arr, got in (("X", X, dX), ("K", K, dK), ("b", b, db)):
        a, num = arr.astype(np.float64), np.zeros(arr.shape)
        for i in np.ndindex(arr.shape):
            for sign in (1, -1):
                moved = a.copy()
                moved[i] += sign * 1e-4
                args = {"X": X, "K": K, "b": b, name: moved}
                num[i] += sign * loss(args["X"], args["K"], args["b"]) / 2e-4
        assert np.allclose(got, num, rtol=2e-2, atol=2e-3), name


def test_modes_covered_counts_hand_placed_points():
    centres = gan.ring_centres()
    pts = np.concatenate([np.repeat(centres[:3], 25, axis=0), [[0.0, 0.0]] * 25])
    covered, good = gan.modes_covered(pts)
    assert covered == 3 and good == pytest.approx(0.75)
    assert gan.ring(np.random.default_rng(0), 10).shape == (10, 2)


def test_bad_arguments_are_refused_first():
    with pytest.raises(TypeError, match="gan.Config"):
        gan.GAN("ring", gan.init(RING, 0))
    with pytest.raises(ValueError, match="losses are"):
        gan.GAN(RING, gan.init(RING, 0), loss="wasserstein")
    with pytest.raises(ValueError, match="games are"):
        gan.init(gan.Config("faces", z=4, batch=2, lr=1e-3), 0)


def test_shapes_and_helpers_are_checked():
    with pytest.raises(ValueError, match="gan.init's layout"):
        gan.GAN(RING, gan.init(DIGITS, 0))
    model = gan.GAN(RING, gan.init(RING, 0))
    with pytest.raises(ValueError, match="16 rows of 2"):
        model.d_step(np.zeros((3, 2), np.float32), np.zeros((16, 16), np.float32))
    with pytest.raises(ValueError, match=r"\(n, 16\)"):
        model.sample(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="int >= 1"):
        gan.noise(np.random.default_rng(0), 0, 4)
    with pytest.raises(TypeError, match="Generator"):
        gan.ring(0, 5)
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        gan.modes_covered(np.zeros((4, 3)))

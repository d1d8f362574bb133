"""The adamw family: the reference against closed forms (the first step from zero
moments is lr * g / (|g| + eps); a constant gradient keeps mhat = g and vhat = g^2
at every step; no gradient leaves the decay alone), against torch.optim.AdamW where
PyTorch is installed, each output against its own scale through every version
(bias corrections at t = 1 and 2 with beta2 = 0.999, where 1 - beta^t cancels),
steps in place (three arrays, or the rows of one), several steps in a row, the
float4 version on misaligned arrays, and the hyper-parameters refused. The generic
tests run every version on the family's sizes (tests/cpu/test_emulated_kernels.py).
"""

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.adamw import FAMILY, adamw, adamw_ref, hyper_parameters
from thousand.kernels.family import rel_error

rng = np.random.default_rng(5)
VERSIONS = [v.number for v in FAMILY.versions]
with_kernels = pytest.mark.usefixtures("cpu_backend_checked")


def state(n, zero=False):
    p, g = rng.standard_normal((2, n), dtype=np.float32)
    m = np.zeros(n, np.float32) if zero else 0.1 * rng.standard_normal(n, np.float32)
    v = np.zeros(n, np.float32) if zero else rng.random(n, np.float32) * 0.01
    return p, g, m, v


# ---- the reference ----


def test_ref_first_step_closed_form():
    """From m = v = 0 at t = 1: mhat = g and vhat = g^2, so the step is
    lr * g / (|g| + eps) after the decay (about lr * sign(g))."""
    p, g, m, v = state(1000, zero=True)
    g[:10] = 0.0
    hyper = hyper_parameters(lr=0.01, weight_decay=0.1, t=1)
    lr, eps = float(hyper[0]), float(hyper[3])
    p64, g64 = p.astype(np.float64), g.astype(np.float64)
    decayed = p64 * (1 - lr * float(hyper[4]))
    expected_p = decayed - lr * g64 / (np.abs(g64) + eps)
    got = adamw_ref(p, g, m, v, hyper)
    np.testing.assert_allclose(got[0], expected_p, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got[1], (1 - float(hyper[1])) * g64, rtol=1e-7)
    np.testing.assert_allclose(got[2], (1 - float(hyper[2])) * g64**2, rtol=1e-7)
    assert np.array_equal(got[0, :10], decayed[:10].astype(np.float32))  # g = 0


def test_ref_constant_gradient_keeps_the_step_at_lr():
    """With the same g at every step from zero moments, m = (1 - beta1^t) g and
    v = (1 - beta2^t) g^2 exactly, so the bias corrections give mhat = g and
    vhat = g^2 at every t: without decay each step moves p by lr * g / (|g| + eps).
    (p and the moments carried between steps are float32-rounded, as training
    keeps them: hence the tolerance, which depends on the drawn p, since the
    module's generator is shared and the draws depend on which tests ran first.)"""
    p, g, m, v = state(50, zero=True)
    g = np.abs(g) + np.float32(0.5)  # |g| >> eps: each step is lr to 7 digits
    start = p.copy()
    for t in range(1, 31):
        hyper = hyper_parameters(lr=1e-3, weight_decay=0.0, t=t)
        p, m, v = adamw_ref(p, g, m, v, hyper)
    lr = float(np.float32(1e-3))
    # each of the 30 steps rounds p to float32: up to an ulp of the largest |p| each
    ulps = 30 * np.spacing(np.float32(np.abs(start).max() + 0.1))
    np.testing.assert_allclose(p, start - 30 * lr * g / (g + 1e-8), rtol=0, atol=ulps)


def test_ref_without_a_gradient_only_decays():
    p = rng.standard_normal(100, np.float32)
    zeros = np.zeros(100, np.float32)
    hyper = hyper_parameters(lr=0.1, weight_decay=0.5, t=7)
    got = adamw_ref(p, zeros, zeros, zeros, hyper)
    decay = 1 - float(hyper[0]) * float(hyper[4])
    np.testing.assert_allclose(got[0], p.astype(np.float64) * decay, rtol=1e-7)
    assert not got[1:].any()


def test_ref_against_pytorch_on_the_cpu():
    """torch.optim.AdamW's step in float64, from moments m, v at step t - 1."""
    torch = pytest.importorskip("torch")
    p, g, m, v = state(300)
    hyper = hyper_parameters(lr=0.05, beta2=0.99, weight_decay=0.1, t=3)
    lr, beta1, beta2, eps, wd, t = (float(h) for h in hyper)
    param = torch.nn.Parameter(torch.tensor(p, dtype=torch.float64))
    opt = torch.optim.AdamW(
        [param], lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=wd
    )
    param.grad = torch.tensor(g, dtype=torch.float64)
    opt.state[param] = {
        "step": torch.tensor(t - 1),
        "exp_avg": torch.tensor(m, dtype=torch.float64),
        "exp_avg_sq": torch.tensor(v, dtype=torch.float64),
    }
    opt.step()
    s = opt.state[param]
    want = np.stack([param.detach().numpy(), s["exp_avg"], s["exp_avg_sq"]])
    np.testing.assert_allclose(adamw_ref(p, g, m, v, hyper), want, rtol=1e-6)


# ---- every version ----


def own_scale_errors(got, expected):
    """p, m and v each against its own largest value (the family's check divides
    all three by the largest of any, p's)."""
    return [rel_error(got[k], expected[k]) for k in range(3)]


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("t", [1, 2, 10, 10**6])
def test_every_output_on_its_own_scale(version, t):
    """beta2 = 0.999 and t = 1, 2: 1 - beta2^t is 1e-3 or 2e-3, where 1 -
    powf(beta2, t) would keep only 4 digits of it."""
    p, g, m, v = state(4099)
    v[:100] = 0.0
    hyper = hyper_parameters(lr=0.01, weight_decay=0.1, t=t)
    expected = adamw_ref(p, g, m, v, hyper)
    got = adamw(p, g, m, v, hyper, version=version)
    for k, err in enumerate(own_scale_errors(np.stack(got), expected)):
        assert err <= FAMILY.tolerance, ("p, m, v"[3 * k], err)


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("t", [2, 3])
def test_early_steps_keep_the_bias_correction_exact(version, t):
    """From p = 0 with lr = 1 the new p is the update itself, to a few ulp. With
    beta2 = 0.999 at t = 2, 1 - beta2^t = 2e-3, and float32's 1 - powf(beta2, t)
    would be off by 1.5e-5 of it (powf's result rounded near 1): the kernels'
    -expm1(t * log1p(beta2 - 1)) keeps it to an ulp or two."""
    _, g, m, v = state(1031)
    p = np.zeros_like(g)
    hyper = hyper_parameters(lr=1.0, weight_decay=0.0, t=t)
    expected = adamw_ref(p, g, m, v, hyper)
    got = adamw(p, g, m, v, hyper, version=version)[0]
    assert rel_error(got, expected[0]) <= FAMILY.tolerance


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
def test_in_place_as_training_steps(version):
    """out=(p, m, v): ten steps in place on the device, against ten of the
    reference, each from the float32 state the last left."""
    p, g, m, v = state(1001)
    d = [to_device(a) for a in (p, g, m, v)]
    for t in range(1, 11):
        hyper = hyper_parameters(lr=0.01, beta2=0.95, weight_decay=0.1, t=t)
        got = adamw(*d, to_device(hyper), out=(d[0], d[2], d[3]), version=version)
        assert got[0] is d[0] and got[2] is d[3]
        p, m, v = adamw_ref(p, g, m, v, hyper)
        for k, (a, b) in enumerate(zip((d[0], d[2], d[3]), (p, m, v), strict=True)):
            assert rel_error(a.get(), b) <= FAMILY.tolerance, (t, k)


@with_kernels
@pytest.mark.parametrize("version", VERSIONS)
def test_in_place_over_the_rows_of_one_state_array(version):
    """p, m, v kept as the rows of one (3, n) array: out=state steps it in place,
    on the host and on the device."""
    p, g, m, v = state(4096)
    hyper = hyper_parameters(lr=0.003, t=5)
    expected = adamw_ref(p, g, m, v, hyper)
    host = np.stack([p, m, v])
    adamw(host[0], g, host[1], host[2], hyper, out=host, version=version)
    assert rel_error(host, expected) <= FAMILY.tolerance
    dev = to_device(np.stack([p, m, v]))
    flat = dev.reshape(3 * 4096)
    rows = [flat[k * 4096 : (k + 1) * 4096] for k in range(3)]
    adamw(
        rows[0],
        to_device(g),
        rows[1],
        rows[2],
        to_device(hyper),
        out=dev,
        version=version,
    )
    assert rel_error(dev.get(), expected) <= FAMILY.tolerance


@with_kernels
def test_float4_version_on_misaligned_arrays():
    """p 4 bytes into its buffer: v2 cannot load float4s from it and takes its
    scalar loop for everything, with the same result."""
    p, g, m, v = state(4096)
    hyper = hyper_parameters(t=3)
    buffer = to_device(np.zeros(4097, np.float32))
    d_p = buffer[1:]
    d_p.set(p)
    d = [d_p, *(to_device(a) for a in (g, m, v))]
    got = np.stack([a.get() for a in adamw(*d, to_device(hyper), version=2)])
    assert rel_error(got, adamw_ref(p, g, m, v, hyper)) <= FAMILY.tolerance


# ---- bad input ----


@pytest.mark.parametrize(
    "field, value",
    [
        ("lr", -1e-3),
        ("lr", float("nan")),
        ("beta1", 1.0),
        ("beta2", -0.5),
        ("eps", -1e-8),
        ("weight_decay", float("inf")),
        ("t", 0),
        ("t", 2.5),
        ("t", 2**25),
    ],
)
def test_bad_hyper_parameters_are_refused(field, value):
    with pytest.raises(ValueError, match=rf"bad hyper-parameters: {field} = "):
        hyper_parameters(**{field: value})
    p, g, m, v = state(8)
    hyper = hyper_parameters()
    hyper[["lr", "beta1", "beta2", "eps", "weight_decay", "t"].index(field)] = value
    with pytest.raises(ValueError, match=rf"bad hyper-parameters: {field} = "):
        adamw(p, g, m, v, hyper)


def test_hyper_must_hold_six_values():
    p, g, m, v = state(8)
    with pytest.raises(ValueError, match=r"`hyper` must have shape \(6,\)"):
        adamw(p, g, m, v, np.zeros(5, np.float32))


@with_kernels
def test_outputs_may_be_inputs_but_not_hyper_nor_each_other():
    p, g, m, v = state(6)
    d = [to_device(a) for a in (p, g, m, v)]
    d_hyper = to_device(hyper_parameters())
    with pytest.raises(ValueError, match="`out\\[0\\]` overlaps `hyper`"):
        adamw(*d, d_hyper, out=(d_hyper, d[2], d[3]))
    with pytest.raises(ValueError, match="`out\\[1\\]` overlaps `out\\[0\\]`"):
        adamw(*d, d_hyper, out=(d[0], d[0], d[3]))
    # g's memory for p_new: each element is read before it is written
    got = adamw(*d, d_hyper, out=(d[1], d[2], d[3]))
    expected = adamw_ref(p, g, m, v, hyper_parameters())
    assert rel_error(got[0].get(), expected[0]) <= FAMILY.tolerance


def test_out_must_be_three_rows_of_the_inputs_kind():
    p, g, m, v = state(8)
    hyper = hyper_parameters()
    with pytest.raises(ValueError, match="a tuple of three"):
        adamw(p, g, m, v, hyper, out=(p, m))
    with pytest.raises(ValueError, match=r"`out` must have shape \(3, 8\)"):
        adamw(p, g, m, v, hyper, out=np.zeros((2, 8), np.float32))
    with pytest.raises(ValueError, match="same kind of array as the inputs"):
        adamw(p, g, m, v, hyper, out=to_device(np.zeros((3, 8), np.float32)))


@with_kernels
def test_no_parameters():
    z, hyper = np.zeros(0, np.float32), hyper_parameters()
    assert [a.shape for a in adamw(z, z, z, z, hyper)] == [(0,)] * 3
    d = to_device(z)
    assert [a.shape for a in adamw(d, d, d, d, to_device(hyper))] == [(0,)] * 3

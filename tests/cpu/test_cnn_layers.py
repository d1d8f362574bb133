"""The layers of the deep CNNs besides convolution (A10, A11): max pooling and its
argmax, dropout's Philox mask, batch norm's statistics and gradients, global
average pooling, relu(A + B); each on the CPU backend against its reference on
awkward shapes, with the extra outputs the family checks do not compare, and bad
input refused by name. The generic tests (test_emulated_kernels.py,
test_bad_input.py) run the families' own check sizes."""

import math

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.add_relu import add_relu
from thousand.kernels.batch_norm import batch_norm, batch_norm_ref, batch_norm_stats_ref
from thousand.kernels.batch_norm_backward import (
    batch_norm_backward,
    batch_norm_backward_parts,
)
from thousand.kernels.batch_norm_inference import (
    batch_norm_inference,
    batch_norm_inference_ref,
)
from thousand.kernels.dropout import (
    dropout,
    dropout_backward,
    dropout_ref,
    dropout_uniforms,
    philox4x32_10,
)
from thousand.kernels.global_avg_pool import global_avg_pool
from thousand.kernels.global_avg_pool_backward import global_avg_pool_backward
from thousand.kernels.max_pool import PoolGeometry, max_pool, max_pool_parts
from thousand.kernels.max_pool_backward import max_pool_backward, max_pool_backward_ref
from thousand.kernels.relu_backward import relu_backward

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
rng = np.random.default_rng(20)


def f32(*shape, low=None):
    if low is not None:  # whole numbers: ties
        return rng.integers(low, -low + 1, shape).astype(np.float32)
    return rng.standard_normal(shape, dtype=np.float32)


# ---- max pooling ----

# (N, H, W, C, window, stride, pad): odd sides, overlap, padding, window 1, the
# window the whole padded image, stride larger than the window
POOLS = [
    (1, 1, 1, 1, 1, 1, 0),
    (2, 5, 7, 3, 2, 2, 0),
    (1, 7, 9, 5, 3, 2, 0),
    (2, 6, 5, 4, 3, 2, 1),
    (1, 4, 6, 2, 5, 1, 2),
    (1, 3, 3, 2, 3, 3, 1),
    (1, 8, 7, 3, 2, 3, 0),
]


def loop_max_pool(X, geom):
    """Plain loops: each window's cells in row-major order, the first of equal
    maxima kept."""
    N, H, W, C = X.shape
    P, Q = geom.output_hw(H, W)
    Y, A = np.zeros((N, P, Q, C)), np.zeros((N, P, Q, C), np.int32)
    for n, p, q, c in np.ndindex(N, P, Q, C):
        best, where = -math.inf, -1
        for h in range(
            p * geom.stride - geom.pad, p * geom.stride - geom.pad + geom.window
        ):
            for w in range(
                q * geom.stride - geom.pad, q * geom.stride - geom.pad + geom.window
            ):
                if 0 <= h < H and 0 <= w < W and (where < 0 or X[n, h, w, c] > best):
                    best, where = X[n, h, w, c], h * W + w
        Y[n, p, q, c], A[n, p, q, c] = best, where
    return Y, A


@pytest.mark.parametrize("size", POOLS, ids=str)
def test_max_pool_and_its_argmax_against_loops(size):
    N, H, W, C, *g = size
    geom = PoolGeometry(*g)
    X = f32(N, H, W, C, low=-2)  # few values: many ties
    Y_loop, A_loop = loop_max_pool(X, geom)
    Y_ref, A_ref = max_pool_parts(X.astype(np.float64), geom)
    assert np.array_equal(Y_ref, Y_loop) and np.array_equal(A_ref, A_loop)
    argmax = np.full(Y_loop.shape, -7, np.int32)
    Y = max_pool(X, geom, argmax=argmax)
    assert np.array_equal(Y, Y_loop) and np.array_equal(argmax, A_loop)
    # on the device, the argmax feeding the backward pass directly
    d_arg = to_device(argmax * 0)
    max_pool(to_device(X), geom, argmax=d_arg)
    dY = f32(*Y.shape)
    dX = max_pool_backward(to_device(dY), d_arg, (H, W), geom).get()
    want = max_pool_backward_ref(dY, A_loop, (H, W), geom)
    np.testing.assert_allclose(dX, want, rtol=1e-6, atol=1e-6)


def test_max_pool_backward_is_the_adjoint():
    """<dY, pool(X + e) - pool(X)> / e: with no ties, dX is the exact gradient."""
    geom = PoolGeometry(3, 2, 1)
    X = rng.permutation(2 * 7 * 6 * 3).reshape(2, 7, 6, 3).astype(np.float32)
    argmax = np.empty((2, 4, 3, 3), np.int32)
    Y = max_pool(X, geom, argmax=argmax)
    dY = f32(*Y.shape)
    dX = max_pool_backward(dY, argmax, (7, 6), geom)
    V = np.clip(f32(*X.shape), -4, 4)
    e = 0.1  # |e V| < 0.5 where distinct integers differ by 1: the same winners
    change = (max_pool(X + e * V, geom).astype(np.float64) - Y) / e
    assert abs(np.sum(dY * change) - np.sum(dX * V)) < 1e-2


def test_pool_geometry_refuses_bad_values():
    for kw, what in (
        ({"window": 0}, "`window` must be an int >= 1"),
        ({"stride": True}, "`stride` must be an int >= 1"),
        ({"pad": -1}, "`pad` must be an int >= 0"),
        ({"window": 2.0}, "`window` must be an int"),
        ({"window": 3, "pad": 2}, "`pad` must be at most window // 2 = 1"),
    ):
        with pytest.raises(ValueError, match=what):
            PoolGeometry(**kw)


def test_max_pool_refuses_bad_input():
    X = f32(1, 4, 4, 2)
    with pytest.raises(ValueError, match="does not fit in a 4 x 4 image padded by 1"):
        max_pool(X, PoolGeometry(7, 1, 1))
    with pytest.raises(ValueError, match="`geom` must be a PoolGeometry"):
        max_pool(X, (2, 2, 0))
    with pytest.raises(ValueError, match="`X` must be float32"):
        max_pool(X.astype(np.float64))
    with pytest.raises(ValueError, match="`argmax` must be int32"):
        max_pool(X, argmax=np.zeros((1, 2, 2, 2), np.int64))
    with pytest.raises(ValueError, match=r"`argmax` must have shape \(1, 2, 2, 2\)"):
        max_pool(X, argmax=np.zeros((1, 2, 2, 1), np.int32))
    dY, argmax = f32(1, 2, 2, 2), np.zeros((1, 2, 2, 2), np.int32)
    with pytest.raises(
        ValueError, match=r"`hw` = \(5, 7\) pooled by .* but `dY` is 2 x 2"
    ):
        max_pool_backward(dY, argmax, (5, 7))
    with pytest.raises(ValueError, match="`hw` must be the input's"):
        max_pool_backward(dY, argmax, (4,))
    with pytest.raises(ValueError, match="`argmax` must have shape"):
        max_pool_backward(dY, argmax[:, :1], (4, 4))


# ---- dropout ----


def test_philox_known_answers():
    """Random123's kat_vectors, philox4x32 10 (counter, key -> four words)."""
    m = 0xFFFFFFFF
    cases = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((m, m, m, m), (m, m), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ]
    for counter, key, words in cases:
        assert [int(w) for w in philox4x32_10(counter, key)] == list(words)


@pytest.mark.parametrize(
    "shape, p, seed, offset",
    [
        ((1, 1), 0.0, 0, 0),
        ((7, 13), 0.5, 1, 3),
        ((2, 5, 7, 11), 0.9, 2**64 - 1, 2**32 - 5),  # the counter's high word
        ((3, 129), 0.25, 12345, 2**40 + 1),
    ],
)
def test_dropout_against_reference(shape, p, seed, offset):
    X = f32(*shape)
    want = dropout_ref(X, p, seed, offset)
    for host in (True, False):
        x = X if host else to_device(X)
        Y = dropout(x, p, seed, offset)
        Y = Y if host else Y.get()
        np.testing.assert_allclose(Y, want, rtol=1e-6, atol=0)
    # the backward: the same mask, on dY
    dY = f32(*shape)
    np.testing.assert_allclose(
        dropout_backward(dY, p, seed, offset),
        dropout_ref(dY, p, seed, offset),
        rtol=1e-6,
    )


def test_dropout_masks_are_fresh_per_offset_and_repeat_per_seed():
    X = np.ones((64, 64), np.float32)
    a, b = dropout(X, 0.5, 7, 0), dropout(X, 0.5, 7, X.size)
    assert np.array_equal(a, dropout(X, 0.5, 7, 0))  # reproducible
    assert not np.array_equal(a == 0, b == 0)  # a new mask for the next step
    assert not np.array_equal(a == 0, dropout(X, 0.5, 8, 0) == 0)  # another seed
    # element i of a call at offset k is element k + i of one at offset 0
    assert np.array_equal(dropout(X, 0.5, 7, 5).ravel()[:-5], a.ravel()[5:])
    u = dropout_uniforms(1 << 16, 3)
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    assert abs((a == 0).mean() - 0.5) < 0.03
    assert np.array_equal(a[a != 0], np.full((a != 0).sum(), 2, np.float32))


def test_dropout_p_zero_is_the_identity_and_works_in_place():
    X = f32(3, 5, 7, 2)
    assert np.array_equal(dropout(X, 0, 99), X)
    d = to_device(X)
    dropout(d, 0.3, 5, out=d)
    np.testing.assert_allclose(d.get(), dropout_ref(X, 0.3, 5), rtol=1e-6)


def test_dropout_refuses_bad_input():
    X = f32(4, 4)
    for p in (1, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"`p` .* must be in \[0, 1\)"):
            dropout(X, p, 0)
    with pytest.raises(ValueError, match="`p` must be a number"):
        dropout(X, "0.5", 0)
    with pytest.raises(ValueError, match="`seed`"):
        dropout(X, 0.5, -1)
    with pytest.raises(ValueError, match="`offset`"):
        dropout(X, 0.5, 0, 2**64)
    with pytest.raises(ValueError, match="`X` must be 2-D"):
        dropout(X.ravel(), 0.5, 0)
    with pytest.raises(ValueError, match="`X` must be float32"):
        dropout_backward(X.astype(np.float16), 0.5, 0)


# ---- batch norm ----


@pytest.mark.parametrize(
    "shape", [(1, 1), (2, 3), (5, 1, 1, 33), (2, 7, 5, 64), (3001, 3)]
)
def test_batch_norm_statistics_and_output(shape):
    C = shape[-1]
    X = (rng.uniform(-5, 5, C) + f32(*shape)).astype(np.float32)
    gamma, beta = f32(C), f32(C)
    mean, invstd = np.full(C, np.nan, np.float32), np.full(C, np.nan, np.float32)
    Y = batch_norm(X, gamma, beta, mean=mean, invstd=invstd, block=64)
    want_mean, want_invstd = batch_norm_stats_ref(X)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd, want_invstd, rtol=1e-5)
    np.testing.assert_allclose(Y, batch_norm_ref(X, gamma, beta), rtol=1e-5, atol=1e-5)


def test_batch_norm_variance_survives_a_large_mean():
    """1e4 + N(0, 1): a float32 E[x^2] - E[x]^2 loses the variance; Welford and
    Chan's merge keep it."""
    X = (1e4 + f32(4096, 2)).astype(np.float32)
    rows = X.astype(np.float32)
    naive = (rows * rows).mean(0) - rows.mean(0) ** 2
    true_var = X.astype(np.float64).var(0)
    mean, invstd = np.empty(2, np.float32), np.empty(2, np.float32)
    batch_norm(
        X, np.ones(2, np.float32), np.zeros(2, np.float32), mean=mean, invstd=invstd
    )
    var = 1 / invstd.astype(np.float64) ** 2 - np.float32(1e-5)
    assert np.all(np.abs(var / true_var - 1) < 1e-3)
    assert np.any(np.abs(naive / true_var - 1) > 0.1)  # the naive way is wrong


def test_batch_norm_inference():
    X, gamma, beta = f32(2, 3, 5, 7), f32(7), f32(7)
    rm, rv = f32(7), rng.uniform(0.5, 2, 7).astype(np.float32)
    want = batch_norm_inference_ref(X, gamma, beta, rm, rv, eps=1e-3)
    got = batch_norm_inference(X, gamma, beta, rm, rv, eps=1e-3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_batch_norm_backward_ref_against_finite_differences():
    """The reference's dX, dgamma, dbeta are the gradients of <dY, batch_norm>."""
    X, gamma, beta, dY = (rng.standard_normal(s) for s in ((5, 3), 3, 3, (5, 3)))
    mean, invstd = batch_norm_stats_ref(X)
    dX, dgamma, dbeta = batch_norm_backward_parts(dY, X, gamma, mean, invstd)
    loss = lambda X, g, b: np.sum(dY * batch_norm_ref(X, g, b))  # noqa: E731
    h = 1e-6
    for arr, grad in ((X, dX), (gamma, dgamma), (beta, dbeta)):
        for i in np.ndindex(arr.shape):
            old = arr[i]
            arr[i] = old + h
            up = loss(X, gamma, beta)
            arr[i] = old - h
            down = loss(X, gamma, beta)
            arr[i] = old
            assert abs((up - down) / (2 * h) - grad[i]) < 1e-5


@pytest.mark.parametrize("shape", [(1, 1), (4, 3), (3, 5, 7, 33), (2999, 2)])
def test_batch_norm_backward_and_its_parameter_gradients(shape):
    C = shape[-1]
    X, gamma, dY = f32(*shape), f32(C), f32(*shape)
    mean, invstd = (a.astype(np.float32) for a in batch_norm_stats_ref(X))
    dgamma, dbeta = np.full(C, np.nan, np.float32), np.full(C, np.nan, np.float32)
    dX = batch_norm_backward(dY, X, gamma, mean, invstd, dgamma=dgamma, dbeta=dbeta)
    want = batch_norm_backward_parts(dY, X, gamma, mean, invstd)
    for got, ref in zip((dX, dgamma, dbeta), want, strict=True):
        scale = max(np.abs(ref).max(), 1)
        assert np.abs(got - ref).max() / scale < 1e-5
    # on the device, outputs given: the same numbers
    d = [to_device(a) for a in (dY, X, gamma, mean, invstd)]
    d_dg = to_device(dgamma * 0)
    d_dX = batch_norm_backward(*d, dgamma=d_dg, dbeta=to_device(dbeta * 0))
    assert np.array_equal(d_dX.get(), dX) and np.array_equal(d_dg.get(), dgamma)


def test_batch_norm_refuses_bad_input():
    X, v = f32(4, 3), f32(3)
    with pytest.raises(ValueError, match=r"`gamma` must have shape \(3,\)"):
        batch_norm(X, f32(4), v)
    with pytest.raises(ValueError, match=r"`mean` must have shape \(3,\)"):
        batch_norm(X, v, v, mean=np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="`eps` must be > 0"):
        batch_norm(X, v, v, eps=0.0)
    with pytest.raises(ValueError, match="no rows"):
        batch_norm(f32(0, 3), v, v)
    with pytest.raises(ValueError, match="`block` must be 32 times a power of 2"):
        batch_norm(X, v, v, block=96)
    with pytest.raises(ValueError, match=r"`dY` must have shape \(4, 3\)"):
        batch_norm_backward(f32(3, 3), X, v, v, v)
    with pytest.raises(ValueError, match="`running_var` must be float32"):
        batch_norm_inference(X, v, v, v, v.astype(np.float64))
    with pytest.raises(ValueError, match="`invstd` overlaps `mean`"):
        d = to_device(np.zeros(6, np.float32))
        batch_norm(to_device(X), to_device(v), to_device(v), mean=d[:3], invstd=d[1:4])


# ---- global average pooling, relu(A + B), relu_backward on NHWC ----


def test_global_avg_pool_and_backward():
    X = f32(3, 7, 5, 33)
    np.testing.assert_allclose(
        global_avg_pool(X, block=1024), X.mean((1, 2)), rtol=1e-5, atol=1e-6
    )
    dY = f32(3, 33)
    dX = global_avg_pool_backward(dY, (7, 5))
    np.testing.assert_allclose(
        dX, np.broadcast_to(dY[:, None, None] / 35, X.shape), rtol=1e-6
    )
    with pytest.raises(ValueError, match="`hw` must be the input's"):
        global_avg_pool_backward(dY, (7, 0))
    with pytest.raises(ValueError, match=r"`out` must have shape \(3, 7, 5, 33\)"):
        global_avg_pool_backward(dY, (7, 5), out=np.empty((3, 5, 7, 33), np.float32))
    with pytest.raises(ValueError, match="`X` must be 4-D"):
        global_avg_pool(dY)


def test_add_relu_in_place_either_way():
    A, B = f32(2, 5, 3, 7), f32(2, 5, 3, 7)
    want = np.maximum(A + B, 0)
    for which in (0, 1):
        a, b = to_device(A), to_device(B)
        out = (a, b)[which]
        assert add_relu(a, b, out=out) is out
        assert np.array_equal(out.get(), want)
    a = A.copy()
    add_relu(a, B, out=a)
    assert np.array_equal(a, want)
    with pytest.raises(ValueError, match="`B` must have shape"):
        add_relu(A, B[:1])
    with pytest.raises(ValueError, match="`out` overlaps `A`"):
        d = to_device(np.zeros(A.size + 4, np.float32))
        add_relu(d[:-4].reshape(A.shape), to_device(B), out=d[4:].reshape(A.shape))


def test_relu_backward_takes_nhwc_maps():
    G, Y = f32(2, 5, 3, 7), np.maximum(f32(2, 5, 3, 7), 0)
    assert np.array_equal(relu_backward(G, Y), G * (Y > 0))

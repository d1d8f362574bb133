"""The embedding and embedding_backward families: the references against loops
(a row gathered and added, gradients scattered row by row), the backward as the
transpose of the forward (<forward(w), dout> = <w, backward(dout)>, a linear map),
token ids out of range refused on the host and NaN on the device, v2's sums bit
for bit the same on every run, heavy duplicates, and bad input. The generic tests
run every version on the family's sizes (tests/cpu/test_emulated_kernels.py)."""

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.embedding import FAMILY, embedding, embedding_ref
from thousand.kernels.embedding_backward import FAMILY as BACKWARD
from thousand.kernels.embedding_backward import (
    embedding_backward,
    embedding_backward_ref,
)
from thousand.kernels.family import rel_error

rng = np.random.default_rng(3)
with_kernels = pytest.mark.usefixtures("cpu_backend_checked")


# ---- the references ----


def test_ref_against_a_loop():
    idx, wte, wpe = FAMILY.make_inputs(rng, (3, 5, 7, 11, 9))
    out = np.empty((3, 5, 7), np.float32)
    for b in range(3):
        for t in range(5):
            out[b, t] = wte[idx[b, t]].astype(np.float64) + wpe[t]
    np.testing.assert_array_equal(embedding_ref(idx, wte, wpe), out)


def test_backward_ref_against_a_loop():
    dout, idx, wte, wpe = BACKWARD.make_inputs(rng, (4, 6, 5, 9, 8))
    dwte, dwpe = np.zeros((9, 5)), np.zeros((8, 5))
    for b in range(4):
        for t in range(6):
            dwte[idx[b, t]] += dout[b, t]
            dwpe[t] += dout[b, t]
    got = embedding_backward_ref(dout, idx, wte, wpe)
    np.testing.assert_allclose(got, np.concatenate([dwte, dwpe]), rtol=1e-7)
    assert not got[9 + 6 :].any()  # positions T .. maxT-1: zero
    assert not got[4:8].any()  # ids from the first half of V, and V - 1


def test_backward_ref_is_the_transpose_of_the_forward():
    """out = E(w) is linear in w = (wte, wpe), so <E(w), dout> = <w, E^T(dout)>."""
    B, T, C, V, maxT = 3, 7, 4, 6, 10
    idx = rng.integers(0, V, (B, T), dtype=np.int32)
    wte, wpe = rng.standard_normal((V, C)), rng.standard_normal((maxT, C))
    dout = rng.standard_normal((B, T, C)).astype(np.float32)
    forward = wte[idx] + wpe[:T]  # float64
    grads = embedding_backward_ref(dout, idx, wte, wpe).astype(np.float64)
    lhs = float((forward * dout).sum())
    rhs = float((wte * grads[:V]).sum() + (wpe * grads[V:]).sum())
    assert abs(lhs - rhs) < 1e-5 * max(1.0, abs(lhs))


def test_backward_ref_with_every_id_the_same():
    dout, idx, wte, wpe = BACKWARD.make_inputs(rng, (8, 16, 3, 1, 20))
    assert not idx.any()  # V = 1
    got = embedding_backward_ref(dout, idx, wte, wpe)
    np.testing.assert_allclose(
        got[0], dout.astype(np.float64).sum(axis=(0, 1)), rtol=1e-6
    )


# ---- the kernels ----


@with_kernels
@pytest.mark.parametrize("version", [v.number for v in FAMILY.versions])
def test_ids_out_of_range_are_refused_on_the_host(version):
    idx, wte, wpe = FAMILY.make_inputs(rng, (2, 4, 8, 5, 4))
    for bad in (5, -1, 2**31 - 1):
        ids = idx.copy()
        ids[1, 2] = bad
        message = rf"token ids must lie in \[0, 5\).*got {bad} at idx\[1, 2\]"
        with pytest.raises(ValueError, match=message):
            embedding(ids, wte, wpe, version=version)
        with pytest.raises(ValueError, match=message):
            embedding_backward(
                np.ones((2, 4, 8), np.float32), ids, wte, wpe, version=version
            )
        # the front door copies a device idx to the host to check it
        with pytest.raises(ValueError, match=message):
            embedding(to_device(ids), to_device(wte), to_device(wpe), version=version)


@with_kernels
@pytest.mark.parametrize("version", [v.number for v in FAMILY.versions])
def test_unchecked_device_ids_give_nan_rows_not_stray_reads(version):
    idx, wte, wpe = FAMILY.make_inputs(rng, (2, 4, 8, 5, 4))
    idx[0, 3] = 7
    d = [to_device(a) for a in (idx, wte, wpe)]
    out = embedding(*d, version=version, check_ids=False).get()
    assert np.isnan(out[0, 3]).all()
    out[0, 3] = 0
    want = embedding_ref(np.where(idx < 5, idx, 0), wte, wpe)
    want[0, 3] = 0
    np.testing.assert_array_equal(out, want)
    dout = np.ones((2, 4, 8), np.float32)
    dd = [to_device(a) for a in (dout, idx, wte, wpe)]
    dwte, dwpe = embedding_backward(*dd, version=version, check_ids=False)
    assert np.isnan(dwpe.get()[3]).all() and not np.isnan(dwte.get()).any()


@with_kernels
def test_v2_sums_the_same_bits_every_time():
    dout, idx, wte, wpe = BACKWARD.make_inputs(rng, (4, 33, 20, 3, 40))
    d = [to_device(a) for a in (dout, idx, wte, wpe)]
    first = [g.get() for g in embedding_backward(*d, version=2, block=64)]
    for _ in range(3):
        again = [g.get() for g in embedding_backward(*d, version=2, block=64)]
        assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))


@with_kernels
@pytest.mark.parametrize("version", [v.number for v in BACKWARD.versions])
def test_front_door_views_and_heavy_duplicates(version):
    size = (2, 300, 5, 4, 301)  # every id 0 but the last (V - 1)
    dout, idx, wte, wpe = BACKWARD.make_inputs(rng, size)
    idx[:] = 0
    dwte, dwpe = embedding_backward(dout, idx, wte, wpe, version=version)
    assert dwte.shape == (4, 5) and dwpe.shape == (301, 5)
    want = embedding_backward_ref(dout, idx, wte, wpe)
    assert rel_error(np.concatenate([dwte, dwpe]), want) <= BACKWARD.tolerance
    assert not dwte[1:].any() and not dwpe[300:].any()


@with_kernels
def test_bad_input_is_refused():
    idx, wte, wpe = FAMILY.make_inputs(rng, (2, 4, 8, 5, 6))
    with pytest.raises(ValueError, match="`idx` must be int32, got int64"):
        embedding(idx.astype(np.int64), wte, wpe)
    with pytest.raises(ValueError, match="T = 4 positions but `wpe` holds 3"):
        embedding(idx, wte, wpe[:3])
    with pytest.raises(ValueError, match="`wpe` must have C = 8 columns"):
        embedding(idx, wte, wpe[:, :4].copy())
    with pytest.raises(ValueError, match="needs whole warps"):
        embedding(idx, wte, wpe, block=48)
    dout = np.ones((2, 4, 8), np.float32)
    with pytest.raises(ValueError, match=r"`idx` must have shape \(2, 4\)"):
        embedding_backward(dout, idx[:1].copy(), wte, wpe)
    with pytest.raises(ValueError, match="`wte` must have C = 8 columns"):
        embedding_backward(dout, idx, wte[:, :4].copy(), wpe[:, :4].copy())
    with pytest.raises(ValueError, match=r"`out` must have shape \(11, 8\)"):
        embedding_backward(dout, idx, wte, wpe, out=np.empty((5, 8), np.float32))

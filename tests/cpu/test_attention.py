"""The attention and attention_backward families: the references against
PyTorch on the CPU in float64 (scaled_dot_product_attention and its autograd) and
against central differences; the causal mask against the unmasked reference on a
prefix; the mask kernel of v1 on its own; T = 1; the unfused and the fused
forward against each other on the CPU backend, with lse; the backward from the
kernels' own forward; the checks' handling of the `causal` flag (an input that is
no array); bad input and v1's memory error. The generic tests run every version
on the families' sizes (tests/cpu/test_emulated_kernels.py)."""

import math

import numpy as np
import pytest

from thousand.bench.checks import bench_inputs, check_version, on_device
from thousand.cuda import launch, to_device
from thousand.kernels import attention as A
from thousand.kernels.attention import (
    FAMILY,
    attention,
    attention_parts,
    attention_ref,
    make_inputs,
)
from thousand.kernels.attention_backward import FAMILY as BACKWARD
from thousand.kernels.attention_backward import (
    attention_backward,
    attention_backward_parts,
    attention_backward_ref,
)
from thousand.kernels.family import rel_error

torch = pytest.importorskip("torch")
rng = np.random.default_rng(7)
with_kernels = pytest.mark.usefixtures("cpu_backend_checked")


def torch64(*arrays):
    return [torch.from_numpy(np.asarray(a, np.float64)) for a in arrays]


# ---- the references ----


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 1, 16), (1, 2, 37, 16), (2, 1, 70, 64)])
def test_forward_ref_against_torch_sdpa_in_float64(size, causal):
    q, k, v, _ = make_inputs(rng, (*size, 0))
    o, lse = attention_parts(q, k, v, causal)
    tq, tk, tv = torch64(q, k, v)
    want = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, is_causal=causal
    )
    np.testing.assert_allclose(o, want.numpy(), rtol=1e-12, atol=1e-12)
    s = tq @ tk.transpose(-1, -2) / math.sqrt(size[3])
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=bool).triu(1), -math.inf)
    np.testing.assert_allclose(lse, torch.logsumexp(s, -1).numpy(), rtol=1e-12)


def test_causal_row_sees_only_its_prefix():
    """Row i of causal attention is ordinary attention over keys 0..i."""
    q, k, v, _ = make_inputs(rng, (1, 2, 9, 8, 1))
    o = attention_parts(q, k, v, True)[0]
    for i in range(9):
        prefix = attention_parts(
            q[:, :, i : i + 1], k[:, :, : i + 1], v[:, :, : i + 1], False
        )
        np.testing.assert_allclose(o[:, :, i : i + 1], prefix[0], rtol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_backward_ref_against_torch_autograd_in_float64(causal):
    q, k, v, _ = make_inputs(rng, (2, 2, 23, 16, 0))
    do = rng.standard_normal(q.shape)
    o, lse = attention_parts(q, k, v, causal)
    leaves = [t.requires_grad_() for t in torch64(q, k, v)]
    out = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=causal)
    want = torch.autograd.grad(out, leaves, torch.from_numpy(do))
    got = attention_backward_parts(q, k, v, o, do, lse, causal)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_backward_ref_against_central_differences(causal):
    """d/dx of L = sum(o * do), for every element of q, k and v, h = 1e-6."""
    q, k, v = (a.astype(np.float64) for a in make_inputs(rng, (1, 2, 5, 4, 0))[:3])
    do = rng.standard_normal(q.shape)
    o, lse = attention_parts(q, k, v, causal)
    grads = attention_backward_parts(q, k, v, o, do, lse, causal)
    h = 1e-6
    for which, g in enumerate(grads):
        numeric = np.zeros_like(g)
        for idx in np.ndindex(g.shape):
            args = [q.copy(), k.copy(), v.copy()]
            args[which][idx] += h
            up = (attention_parts(*args, causal)[0] * do).sum()
            args[which][idx] -= 2 * h
            down = (attention_parts(*args, causal)[0] * do).sum()
            numeric[idx] = (up - down) / (2 * h)
        np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-8)


def test_refs_round_once_to_float32():
    ins = BACKWARD.make_inputs(rng, (1, 2, 9, 16, 1))
    want = np.stack(attention_backward_parts(*ins)).astype(np.float32)
    assert np.array_equal(attention_backward_ref(*ins), want)
    assert attention_ref(*ins[:3], True).dtype == np.float32


# ---- the kernels, on the CPU backend ----


@with_kernels
@pytest.mark.parametrize("version", [1, 2])
def test_one_query_returns_its_value_row(version):
    """T = 1: softmax of one score is 1, so o = v whatever q and k are."""
    q, k, v, _ = make_inputs(rng, (2, 3, 1, 16, 0))
    for causal in (False, True):
        np.testing.assert_allclose(attention(q, k, v, causal, version=version), v)


@with_kernels
def test_mask_kernel_scales_and_masks_every_head():
    """attention_v1's kernel alone, on 3 heads of 5 x 5 scores spaced 28 floats
    apart (T * T = 25 rounded up to 4): the gaps stay as they were."""
    T, heads, stride = 5, 3, 28
    s = rng.standard_normal(heads * stride).astype(np.float32)
    for causal in (0, 1):
        d_s = to_device(s)
        args = (np.int32(heads), np.int32(T), np.int64(stride), np.float32(0.5))
        launch("attention", "attention_v1", (1, 2), (32,), d_s, *args, np.int32(causal))
        got = d_s.get()
        for h in range(heads):
            head = s[h * stride : h * stride + T * T].reshape(T, T) * np.float32(0.5)
            if causal:
                head[np.triu_indices(T, 1)] = -np.inf
            assert np.array_equal(got[h * stride : h * stride + T * T], head.ravel())
            gap = slice(h * stride + T * T, (h + 1) * stride)
            assert np.array_equal(got[gap], s[gap])


@with_kernels
@pytest.mark.parametrize(
    "size", [(1, 1, 70, 16, 1), (2, 2, 37, 48, 0), (1, 1, 129, 128, 1)]
)
def test_unfused_and_fused_agree_and_lse_is_right(size):
    q, k, v, causal = make_inputs(rng, size)
    lse = np.empty(size[:3], np.float32)
    fused = attention(q, k, v, causal, version=2, lse=lse)
    unfused = attention(q, k, v, causal, version=1)
    assert rel_error(fused, unfused) <= 2 * FAMILY.tolerance
    o, want = attention_parts(q, k, v, causal)
    assert rel_error(fused, o) <= FAMILY.tolerance
    assert rel_error(lse, want) <= 1e-6


@with_kernels
@pytest.mark.parametrize("causal", [False, True])
def test_backward_from_the_kernels_forward_matches_autograd(causal):
    q, k, v, _ = make_inputs(rng, (1, 2, 100, 64, 0))
    do = rng.standard_normal(q.shape, dtype=np.float32)
    lse = np.empty(q.shape[:3], np.float32)
    o = attention(q, k, v, causal, lse=lse)
    dq, dk, dv = attention_backward(q, k, v, o, do, lse, causal)
    leaves = [t.requires_grad_() for t in torch64(q, k, v)]
    out = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=causal)
    want = torch.autograd.grad(out, leaves, torch.from_numpy(do.astype(np.float64)))
    got = np.stack([dq, dk, dv])
    assert rel_error(got, np.stack([w.numpy() for w in want])) <= BACKWARD.tolerance


@with_kernels
def test_backward_is_the_same_bit_for_bit_every_run():
    ins = BACKWARD.make_inputs(rng, (1, 2, 131, 16, 1))
    first = BACKWARD.versions[0].run(*ins)
    assert np.array_equal(first, BACKWARD.versions[0].run(*ins))


@with_kernels
def test_device_arrays_in_and_out():
    q, k, v, causal = make_inputs(rng, (1, 2, 37, 16, 1))
    d_q, d_k, d_v = (to_device(a) for a in (q, k, v))
    d_out, d_lse = (
        to_device(np.zeros_like(q)),
        to_device(np.zeros((1, 2, 37), np.float32)),
    )
    assert attention(d_q, d_k, d_v, causal, out=d_out, lse=d_lse) is d_out
    o, lse = attention_parts(q, k, v, causal)
    assert rel_error(d_out.get(), o) <= FAMILY.tolerance
    assert rel_error(d_lse.get(), lse) <= 1e-6


# ---- a flag among the inputs ----


@with_kernels
def test_the_causal_flag_passes_through_the_checks_unchanged():
    """check_version and bench_inputs copy arrays to the device and hand the bool
    on as it is (to_device(True) would make a 0-d array, which is not a bool)."""
    assert on_device(True) is True and on_device(False) is False
    staged = bench_inputs(FAMILY, (1, 1, 3, 16, 1))
    assert staged[3] is True and staged[0].shape == (1, 1, 3, 16)
    for family, size in ((FAMILY, (1, 2, 5, 16, 1)), (BACKWARD, (1, 1, 5, 16, 0))):
        for v in family.versions:
            err, tol = check_version(family, v, size, v.default_block)
            assert err <= tol, (v.kernel, err)


# ---- bad input ----


@with_kernels
def test_bad_input_is_refused_with_the_reason():
    q, k, v, _ = make_inputs(rng, (1, 2, 5, 16, 0))
    with pytest.raises(ValueError, match=r"`causal` must be a bool .* got 1 \(int\)"):
        attention(q, k, v, 1)
    with pytest.raises(ValueError, match="`causal` must be a bool"):
        attention_backward(q, k, v, q, q, np.zeros((1, 2, 5), np.float32), "yes")
    for d in (6, 132):
        x = np.zeros((1, 1, 3, d), np.float32)
        for version in (1, 2):
            with pytest.raises(
                ValueError, match=f"multiple of 4 from 4 to 128, got {d}"
            ):
                attention(x, x, x, version=version)
    with pytest.raises(ValueError, match="`k` must have shape"):
        attention(q, np.ascontiguousarray(k[:, :, :4]), v)
    with pytest.raises(ValueError, match="attention_v1 .* keeps no log-sum-exp"):
        attention(q, k, v, lse=np.empty((1, 2, 5), np.float32), version=1)
    with pytest.raises(ValueError, match="`lse` must have shape"):
        attention(q, k, v, lse=np.empty((1, 2, 4), np.float32))
    with pytest.raises(ValueError, match="blocks of 128 threads, got 256"):
        attention(q, k, v, block=256)
    lse = np.zeros((1, 2, 5), np.float32)
    with pytest.raises(ValueError, match="blocks of 256 threads, got 128"):
        attention_backward(q, k, v, q, q, lse, False, block=128)
    with pytest.raises(ValueError, match=r"`out` must have shape \(3, 1, 2, 5, 16\)"):
        attention_backward(
            q, k, v, q, q, lse, False, out=np.empty((3, 1, 2, 5, 8), np.float32)
        )
    with pytest.raises(ValueError, match="`lse` must be 3-D"):
        attention_backward(q, k, v, q, q, lse[0], False)
    lse_in_out = np.zeros(2 * 5 * 16, np.float32)
    with pytest.raises(ValueError, match="`lse` overlaps `out`"):
        attention(
            q,
            k,
            v,
            out=lse_in_out.reshape(q.shape),
            lse=lse_in_out[:10].reshape(1, 2, 5),
        )


@with_kernels
def test_v1_says_how_many_bytes_its_scores_need(monkeypatch):
    """The scores of every head at once: past free memory, a MemoryError with the
    numbers, raised before any allocation, and the process goes on."""
    monkeypatch.setattr(A, "free_device_bytes", lambda: 10_000)
    A._SCORES.clear()
    q, k, v, _ = make_inputs(rng, (2, 3, 100, 16, 0))
    with pytest.raises(MemoryError) as info:
        attention(q, k, v, version=1)
    message = str(info.value)
    assert "all 6 heads, 100 x 100 floats each" in message
    assert "240,000 bytes (0.0 GiB), and 10,000 bytes are free" in message
    assert "attention_v2 never forms them" in message
    monkeypatch.undo()
    assert (
        rel_error(attention(q, k, v, version=1), attention_ref(q, k, v, False)) <= 2e-6
    )

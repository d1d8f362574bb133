"""Generation with a key-value cache: the kv_append and attention_decode families.
Their references against loops, against attention's reference (decoding is the
last row of causal attention) and against PyTorch in float64; the kernels on the
CPU backend at sizes past the generic layer's; the in-place append touching only
the new rows (every access traced); the decoding loop, token by token, against
one causal attention call; v2's split into chunks and its counters; bad input. The
generic tests run both families too (test_emulated_kernels.py, test_bad_input.py,
test_references.py)."""

import math

import numpy as np
import pytest

import thousand.kernels.kv_append as KA
from thousand import cpu
from thousand.bench.checks import check_version
from thousand.cuda import to_device
from thousand.kernels.attention import attention, attention_ref
from thousand.kernels.attention_decode import FAMILY as DECODE
from thousand.kernels.attention_decode import (
    attention_decode,
    attention_decode_ref,
    plan_v2,
)
from thousand.kernels.family import rel_error
from thousand.kernels.kv_append import FAMILY as APPEND
from thousand.kernels.kv_append import kv_append, kv_append_ref

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
rng = np.random.default_rng(23)


def normal(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def caches(k, v, Tmax):
    """k and v (B, H, T, d) as the first T rows of NaN-filled (B, H, Tmax, d)."""
    B, H, T, d = k.shape
    kc, vc = (np.full((B, H, Tmax, d), np.nan, np.float32) for _ in range(2))
    kc[:, :, :T], vc[:, :, :T] = k, v
    return kc, vc


# ---- the references ----


def test_append_ref_against_a_loop():
    cache, new = normal(2, 3, 9, 5), normal(2, 3, 4, 5)
    want = cache.copy()
    for b in range(2):
        for h in range(3):
            for j in range(4):
                want[b, h, 3 + j] = new[b, h, j]
    got = kv_append_ref(cache, new, 3)
    assert np.array_equal(got, want) and not np.shares_memory(got, cache)


def test_decode_ref_against_a_loop_in_float64():
    q, k, v = normal(2, 2, 1, 8), normal(2, 2, 11, 8), normal(2, 2, 11, 8)
    kc, vc = caches(k[:, :, :7], v[:, :, :7], 11)
    got = attention_decode_ref(q, kc, vc, 7)
    for b in range(2):
        for h in range(2):
            s = [
                sum(float(q[b, h, 0, e]) * float(k[b, h, j, e]) for e in range(8))
                / math.sqrt(8)
                for j in range(7)
            ]
            w = [math.exp(x - max(s)) for x in s]
            o = [sum(w[j] * float(v[b, h, j, e]) for j in range(7)) for e in range(8)]
            np.testing.assert_allclose(got[b, h, 0], np.array(o) / sum(w), rtol=1e-6)


def test_decode_ref_is_the_last_row_of_causal_attention():
    """The new token at position length - 1 attends to keys 0 .. length - 1: the
    last row of causal attention over the first `length` tokens, and ordinary
    (unmasked) attention of its query over them."""
    q, k, v = normal(2, 3, 23, 16), normal(2, 3, 23, 16), normal(2, 3, 23, 16)
    kc, vc = caches(k, v, 30)
    for n in (1, 2, 9, 23):
        got = attention_decode_ref(q[:, :, n - 1 : n], kc, vc, n)
        causal = attention_ref(q[:, :, :n], k[:, :, :n], v[:, :, :n], True)
        np.testing.assert_allclose(got, causal[:, :, -1:], rtol=1e-6, atol=1e-7)
        plain = attention_ref(q[:, :, n - 1 : n], k[:, :, :n], v[:, :, :n], False)
        np.testing.assert_allclose(got, plain, rtol=1e-6, atol=1e-7)


def test_decode_ref_against_torch_sdpa_in_float64():
    torch = pytest.importorskip("torch")
    q, k, v, n = DECODE.make_inputs(rng, (2, 3, 40, 32, 29))
    t = [torch.from_numpy(np.asarray(a, np.float64)) for a in (q, k, v)]
    want = torch.nn.functional.scaled_dot_product_attention(
        t[0], t[1][:, :, :n], t[2][:, :, :n]
    )
    np.testing.assert_allclose(
        attention_decode_ref(q, k, v, n), want.numpy(), rtol=1e-6, atol=1e-7
    )


def test_inputs_leave_the_unused_rows_nan():
    q, k, v, n = DECODE.make_inputs(rng, (2, 1, 10, 8, 6))
    assert n == 6 and isinstance(n, np.int32)
    assert np.isnan(k[:, :, 6:]).all() and np.isnan(v[:, :, 6:]).all()
    assert (
        np.isfinite(k[:, :, :6]).all()
        and np.isfinite(attention_decode_ref(q, k, v, n)).all()
    )


# ---- the kernels against the references, past the generic layer's sizes ----


@pytest.mark.parametrize(
    "size",
    [
        (2, 3, 300, 64, 1),
        (1, 2, 300, 64, 300),
        (2, 5, 517, 64, 333),
        (1, 3, 260, 128, 257),
    ],
)
@pytest.mark.parametrize("version", [1, 2])
def test_decode_kernels_at_larger_sizes(version, size):
    v = DECODE.version(version)
    for seed in range(2):
        err, tol = check_version(DECODE, v, size, v.default_block, seed=seed)
        assert err <= tol, (size, seed, err)


@pytest.mark.parametrize(
    "size", [(2, 12, 300, 64, 1, 200), (3, 2, 70, 6, 70, 0), (1, 4, 129, 20, 3, 126)]
)
def test_append_kernel_at_larger_sizes(size):
    err, _ = check_version(APPEND, APPEND.versions[0], size, 256, seed=1)
    assert err == 0.0, size


# ---- kv_append: in place, out of place ----


def pattern(shape) -> np.ndarray:
    """Every element different (its index), so any misplaced float shows."""
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


@pytest.mark.parametrize("d", [64, 6])  # float4 moves and scalar ones
def test_in_place_append_writes_the_rows_and_leaves_the_rest(d):
    cache = pattern((3, 2, 11, d))
    new = -1 - pattern((3, 2, 2, d))
    d_cache = to_device(cache)
    assert kv_append(d_cache, to_device(new), 7, out=d_cache) is d_cache
    got = d_cache.get()
    assert np.array_equal(got[:, :, 7:9], new)
    rest = np.ones(11, bool)
    rest[7:9] = False
    assert np.array_equal(got[:, :, rest], cache[:, :, rest])  # bit-identical


def test_in_place_append_touches_only_the_new_rows(monkeypatch):
    """Every global access of the in-place launch, traced on the CPU backend:
    reads of `new` and writes of the cache, only rows pos .. pos + n - 1 of each
    (b, h) (no copy of the rest, not even of a row onto itself). Out of place,
    every row of `out` is written."""
    B, H, T, d, n, pos = 2, 3, 13, 8, 2, 5
    traces = []

    def traced(family, name, grid, block, *args, shared=0):
        t = cpu.Trace(blocks=int(np.prod(grid)), capacity=1 << 16)
        cpu.engine.launch(family, name, grid, block, *args, shared=shared, trace=t)
        traces.append(t)

    monkeypatch.setattr(KA, "launch", traced)
    d_cache, d_new = to_device(pattern((B, H, T, d))), to_device(normal(B, H, n, d))
    kv_append(d_cache, d_new, pos, out=d_cache)
    (t,) = traces
    r = t.records[t.records["shared"] == 0]
    names = [t.buffer_names[i] for i in r["buffer"]]
    rows = r["offset"] // 4 // d % T
    to_cache = np.isin(names, ["cache", "out"])
    assert set(names) <= {"cache", "out", "x"}
    assert not r["write"][~to_cache].any()  # `new` is only read
    assert not (r["write"][to_cache] == 0).any()  # the cache is never read
    assert ((rows[to_cache] >= pos) & (rows[to_cache] < pos + n)).all()
    written = r["offset"][to_cache] // 4
    assert len(set(written.tolist())) == B * H * n * d // 4  # each float4 once
    d_out = to_device(np.zeros((B, H, T, d), np.float32))
    kv_append(d_cache, d_new, pos, out=d_out)
    r = traces[1].records
    out = r[(r["write"] == 1) & (r["shared"] == 0)]
    assert len(set((out["offset"] // 16).tolist())) == B * H * T * d // 4


def test_out_of_place_append_leaves_the_cache():
    cache, new = pattern((2, 2, 6, 4)), normal(2, 2, 3, 4)
    for out in (None, np.full(cache.shape, np.nan, np.float32)):
        got = kv_append(cache, new, 3, out=out)
        assert got is out or out is None
        assert np.array_equal(got, kv_append_ref(cache, new, 3))
    assert np.array_equal(cache, pattern((2, 2, 6, 4)))
    d_cache = to_device(cache)
    got = kv_append(d_cache, to_device(new), 0)
    assert got is not d_cache and np.array_equal(d_cache.get(), cache)
    assert np.array_equal(got.get(), kv_append_ref(cache, new, 0))


def test_in_place_append_on_host_arrays():
    cache, new = pattern((1, 3, 5, 8)), normal(1, 3, 1, 8)
    want = kv_append_ref(cache, new, 4)
    assert kv_append(cache, new, np.int64(4), out=cache) is cache
    assert np.array_equal(cache, want)


def test_append_of_views_off_16_bytes_moves_floats():
    """A device view 4 bytes into its buffer cannot take float4 stores: the
    launcher falls back to one float per thread, and the result is the same."""
    cache, new = pattern((1, 2, 5, 8)), normal(1, 2, 2, 8)
    buffer = to_device(np.zeros(cache.size + 1, np.float32))
    d_cache = buffer[1:].reshape(cache.shape)
    d_cache.set(cache)
    kv_append(d_cache, to_device(new), 1, out=d_cache)
    assert np.array_equal(d_cache.get(), kv_append_ref(cache, new, 1))
    assert buffer.get()[0] == 0


def test_an_empty_append_changes_nothing():
    cache = pattern((2, 1, 4, 4))
    d_cache = to_device(cache)
    kv_append(d_cache, to_device(np.zeros((2, 1, 0, 4), np.float32)), 4, out=d_cache)
    assert np.array_equal(d_cache.get(), cache)


# ---- attention_decode ----


@pytest.mark.parametrize("version", [1, 2])
def test_one_key_returns_its_value_row(version):
    q, k, v, _ = DECODE.make_inputs(rng, (3, 2, 9, 16, 1))
    got = attention_decode(q, k, v, 1, version=version)
    assert np.array_equal(got, v[:, :, :1])


@pytest.mark.parametrize("version", [1, 2])
def test_scores_that_rise_key_after_key_and_sharp_ones(version):
    """The online softmax's hardest case: each key scores higher than the last, so
    the running max grows at every key and every state is rescaled; and scores
    of several hundred (q 30 times larger), where a few keys take nearly all the
    weight and a softmax without its max subtracted overflows. There a float32
    score near 500 (720 in base 2) is within half an ulp, 3e-5, of its value,
    which moves its weight by 2e-5 relative: float32 NumPy is as far off (5e-6
    measured for both, several seeds), so the bound is that, not the family's."""
    B, H, T, d = 1, 2, 300, 32
    q = normal(B, H, 1, d)
    k = np.broadcast_to(q, (B, H, T, d)) * np.linspace(-3, 3, T)[:, None]
    k = (k + normal(B, H, T, d, scale=0.01)).astype(np.float32)
    v = normal(B, H, T, d)
    for qq, bound in ((q, DECODE.tolerance), (30 * q, 2e-5)):
        got = attention_decode(qq, k, v, T, version=version)
        assert rel_error(got, attention_decode_ref(qq, k, v, T)) <= bound


def test_v2_splits_a_few_heads_into_many_chunks():
    """One sequence of 12 heads over 1,024 keys: 16 chunks of 64 per head, 192
    blocks; 32 sequences: 3 chunks; 1,056 heads or more, or 64 keys: one chunk."""
    assert plan_v2(12, 1024, 64) == (16, 64)
    assert plan_v2(384, 1024, 64) == (3, 352)
    assert plan_v2(1056, 1024, 64)[0] == plan_v2(12, 64, 64)[0] == 1
    for heads, n, d in [(1, 1, 4), (5, 777, 48), (7, 4095, 128), (2, 65, 12)]:
        chunks, chunk = plan_v2(heads, n, d)
        assert (chunks - 1) * chunk < n <= chunks * chunk  # none empty


def test_v2_is_the_same_bit_for_bit_every_call_and_resets_its_counters():
    """The last block of a head merges the chunks in chunk order, whichever block
    finishes last, and leaves its head's counter at 0 for the next launch: calls
    of other sizes in between change nothing."""
    q, k, v, n = DECODE.make_inputs(rng, (2, 3, 500, 64, 411))
    first = attention_decode(q, k, v, n, version=2)
    assert plan_v2(6, 411, 64)[0] > 1
    for size in [(1, 1, 200, 8, 190), (4, 5, 100, 16, 100)]:
        other = DECODE.make_inputs(rng, size)
        attention_decode(*other, version=2)
    assert np.array_equal(attention_decode(q, k, v, n, version=2), first)
    from thousand.cuda import backend
    from thousand.kernels import attention_decode as AD

    assert not AD._COUNTS[backend()].get().any()


def test_the_versions_agree():
    q, k, v, n = DECODE.make_inputs(rng, (3, 4, 257, 64, 200))
    one, two = (attention_decode(q, k, v, n, version=x) for x in (1, 2))
    assert rel_error(one, two) <= 2 * DECODE.tolerance


# ---- the decoding loop: what generation relies on ----


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize(
    "B, H, T, d, prompt", [(2, 3, 70, 16, 1), (1, 2, 150, 64, 37), (1, 1, 40, 128, 8)]
)
def test_decoding_token_by_token_is_causal_attention(version, B, H, T, d, prompt):
    """The prompt's keys and values appended at once, then one token at a time;
    attention_decode at each step gives the row of one causal attention call
    over the whole sequence that belongs to that token."""
    q, k, v = normal(B, H, T, d), normal(B, H, T, d), normal(B, H, T, d)
    Tmax = T + 5
    d_k, d_v = (to_device(np.full((B, H, Tmax, d), np.nan, np.float32)) for _ in "kv")
    rows = []
    for t in range(prompt - 1, T):
        first = 0 if t == prompt - 1 else t
        for cache, new in ((d_k, k), (d_v, v)):
            part = np.ascontiguousarray(new[:, :, first : t + 1])
            kv_append(cache, to_device(part), first, out=cache)
        q_t = to_device(np.ascontiguousarray(q[:, :, t : t + 1]))
        rows.append(attention_decode(q_t, d_k, d_v, t + 1, version=version).get())
    got = np.concatenate(rows, axis=2)
    want = attention_ref(q, k, v, True)[:, :, prompt - 1 :]
    assert rel_error(got, want) <= DECODE.tolerance
    fused = attention(q, k, v, causal=True)[:, :, prompt - 1 :]
    assert rel_error(got, fused) <= 2 * DECODE.tolerance


# ---- bad input ----


def test_append_refuses_a_bad_pos():
    cache, new = normal(1, 2, 8, 4), normal(1, 2, 3, 4)
    for pos in (-1, 6, 100):
        with pytest.raises(ValueError, match=rf"kv_append: `pos` .*got pos = {pos}"):
            kv_append(cache, new, pos)
    for pos in (True, 2.0, np.float32(2), None, "2"):
        with pytest.raises(ValueError, match=r"kv_append: `pos` must be an int"):
            kv_append(cache, new, pos)
    assert np.array_equal(kv_append(cache, new, 5), kv_append_ref(cache, new, 5))


def test_append_refuses_bad_arrays():
    cache, new = normal(1, 2, 8, 4), normal(1, 2, 3, 4)
    cases = [
        ((cache, normal(1, 3, 3, 4)), r"`new` must have shape \(1, 2, 3, 4\)"),
        ((cache, normal(1, 2, 3, 8)), r"`new` must have shape \(1, 2, 3, 4\)"),
        ((cache.astype(np.float64), new), "`cache` must be float32"),
        ((cache[0], new), "`cache` must be 4-D"),
        ((cache, new[..., ::2]), "`new` must be C-contiguous"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            kv_append(*args, 0)
    with pytest.raises(ValueError, match=r"`out` must have shape \(1, 2, 8, 4\)"):
        kv_append(cache, new, 0, out=np.empty((1, 2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="`out` must be the same kind"):
        kv_append(to_device(cache), to_device(new), 0, out=cache)


def test_append_refuses_an_out_that_overlaps():
    cache = normal(1, 1, 8, 4)
    with pytest.raises(ValueError, match="`out` overlaps `new`"):
        kv_append(cache, cache[:, :, 2:3], 5, out=cache)  # new: a row of the cache
    buffer = to_device(np.zeros(36, np.float32))
    d_cache = buffer[:32].reshape(1, 1, 8, 4)
    with pytest.raises(ValueError, match="`out` overlaps `cache`"):
        kv_append(
            d_cache,
            to_device(normal(1, 1, 1, 4)),
            0,
            out=buffer[4:].reshape(1, 1, 8, 4),
        )


def test_decode_refuses_bad_input():
    q, k, v, _ = DECODE.make_inputs(rng, (1, 2, 10, 8, 10))
    for n in (0, 11, -1):
        with pytest.raises(
            ValueError, match=rf"`length` must be from 1 to .*Tmax = 10.*got {n}"
        ):
            attention_decode(q, k, v, n)
    for n in (True, 3.0, None):
        with pytest.raises(
            ValueError, match=r"attention_decode: `length` must be an int"
        ):
            attention_decode(q, k, v, n)
    for d in (6, 132):
        x, c = np.zeros((1, 1, 1, d), np.float32), np.zeros((1, 1, 4, d), np.float32)
        for version in (1, 2):
            with pytest.raises(
                ValueError, match=f"multiple of 4 from 4 to 128 .*got {d}"
            ):
                attention_decode(x, c, c, 2, version=version)
    with pytest.raises(ValueError, match=r"`q` must have shape \(1, 2, 1, 8\)"):
        attention_decode(np.zeros((1, 2, 2, 8), np.float32), k, v, 3)
    with pytest.raises(ValueError, match=r"`v_cache` must have shape \(1, 2, 10, 8\)"):
        attention_decode(q, k, np.ascontiguousarray(v[:, :, :9]), 3)
    for version in (1, 2):
        with pytest.raises(ValueError, match="multiple of 32, got 100"):
            attention_decode(q, k, v, 3, version=version, block=100)
    with pytest.raises(ValueError, match=r"`out` must have shape \(1, 2, 1, 8\)"):
        attention_decode(
            q, k, v, 3, out=np.empty((1, 2, 8), np.float32).reshape(1, 2, 8, 1)
        )
    d_q = to_device(q)
    with pytest.raises(ValueError, match="`out` overlaps `q`"):
        attention_decode(d_q, to_device(k), to_device(v), 3, out=d_q)
    buffer = to_device(np.zeros(q.size + 1, np.float32))
    with pytest.raises(ValueError, match="`q` starts at a device address not aligned"):
        attention_decode(buffer[1:].reshape(q.shape), to_device(k), to_device(v), 3)

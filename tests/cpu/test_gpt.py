"""The GPT of A15/A16 (gpt.py) on the CPU backend: the tied head against the
PyTorch twin (loss, logits, every gradient, AdamW steps), generation with the KV
cache against generation without it, the sampling rules, the learning-rate
schedule, the language-model batches and the classification task. The
tolerances are test_transformer.py's, for the same reasons (both sides float32,
different orders of additions). tests/gpu/test_models.py repeats the twin check
on the GPU at a larger size."""

import numpy as np
import pytest

from thousand.models import gpt
from thousand.models.transformer import Config

torch = pytest.importorskip("torch")
from tests.cpu.test_transformer import forward_backward  # noqa: E402
from thousand.models import gpt_twin  # noqa: E402  (needs torch)

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")

TINY = Config(vocab=50, block_size=16, n_layer=2, n_head=2, n_embd=32)
LR = 1e-2


def rel(a, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.abs(a - ref).max() / max(np.abs(ref).max(), 1.0))


def random_batch(rng, cfg, B=3):
    rows = rng.integers(0, cfg.vocab, (B, cfg.block_size + 1)).astype(np.int32)
    return rows[:, :-1].copy(), rows[:, 1:].copy(), np.ones((B, cfg.block_size))


def check_against_twin(cfg, seed=0, device="cpu", tol=1e-5):
    """One forward and backward of ours and the twin's on the same weights."""
    p = gpt.init(cfg, seed)
    ours, ref = gpt.Trainer(cfg, p), gpt_twin.Trainer(cfg, p, device=device)
    idx, targets, weights = random_batch(np.random.default_rng(seed + 1), cfg)
    loss, logits, grads = forward_backward(ours, (idx, targets, weights))
    ref_loss, ref_logits = ref.loss((idx, targets, weights))
    assert rel(loss, float(ref_loss)) <= tol
    assert rel(logits, ref_logits.cpu().numpy().reshape(logits.shape)) <= tol
    ref_grads = ref.grads()
    assert list(grads) == list(ref_grads)  # no head: wte is the output layer
    for name, g in grads.items():
        r = ref_grads[name].astype(np.float64)
        err = np.abs(g - r).max() / np.abs(r).max()
        assert err <= tol, f"{name}: gradient error {err:.2e} of its largest"
    return grads


def test_the_tied_head_matches_the_twin_in_every_gradient():
    grads = check_against_twin(TINY)
    assert "head.W" not in grads and "wte" in grads


def test_wte_gets_the_heads_gradient_as_well_as_the_embeddings():
    """Rows of wte for tokens that never occur in the batch get gradient only
    through the head (the softmax pushes every logit): they must not be 0."""
    p = gpt.init(TINY, 0)
    ours = gpt.Trainer(TINY, p)
    idx, targets, weights = random_batch(np.random.default_rng(2), TINY, B=1)
    unseen = sorted(set(range(TINY.vocab)) - set(idx.ravel()))
    m = ours.model
    w = (weights / weights.sum()).astype(np.float32)
    m.forward(m.upload("i", idx), m.upload("t", targets), m.upload("w", w))
    m.backward()
    dwte = m.grads()[0].get()
    assert unseen and np.abs(dwte[unseen]).max() > 0


def test_adamw_steps_agree_with_the_twin(steps=3, seed=0):
    p = gpt.init(TINY, seed)
    ours = gpt.Trainer(TINY, p, weight_decay=1.0)
    ref = gpt_twin.Trainer(TINY, p, device="cpu", weight_decay=1.0)
    rng = np.random.default_rng(seed + 3)
    for step in range(1, steps + 1):
        batch = random_batch(rng, TINY)
        loss, ref_loss = ours.read(ours.step(batch, LR)), ref.read(ref.step(batch, LR))
        assert rel(loss, ref_loss) <= 1e-5
        theirs = ref.params()
        err = np.concatenate(
            [np.abs(a - theirs[n]).ravel() for n, a in ours.host_params().items()]
        ) / (LR * step)
        assert err.max() <= 0.25 and np.quantile(err, 0.99) <= 1e-3


def test_param_count_matches_the_arrays():
    for cfg in [TINY, *gpt.SIZES.values()]:
        p = gpt.init(cfg, 0)
        total = sum(a.size for a in p.values())
        assert gpt.n_params(cfg, embeddings=True) == total
        embeddings = p["wte"].size + p["wpe"].size
        assert gpt.n_params(cfg) == total - embeddings


def test_generation_with_the_cache_equals_generation_without_it():
    """Greedy decoding two ways: the KV cache (one token a step through
    kv_append and attention_decode), and the whole sequence run again at every
    step (the causal attention kernel). Same tokens, logits within float32."""
    cfg = TINY
    ours = gpt.Trainer(cfg, gpt.init(cfg, 4))
    prompt = np.random.default_rng(5).integers(0, cfg.vocab, (2, 5)).tolist()
    got = gpt.generate(ours.model, prompt, 8, temperature=0)
    seqs = [list(r) for r in prompt]
    for _ in range(8):
        idx = np.array(seqs, np.int32)
        logits = ours.model.run(ours.model.upload("x", idx)).get()
        nxt = logits.reshape(2, idx.shape[1], -1)[:, -1].argmax(axis=1)
        for s, t in zip(seqs, nxt, strict=True):
            s.append(int(t))
    assert got == [s[5:] for s in seqs]


def test_cache_step_logits_match_a_full_run():
    cfg = TINY
    m = gpt.Trainer(cfg, gpt.init(cfg, 6)).model
    seq = np.random.default_rng(7).integers(0, cfg.vocab, (3, 9)).astype(np.int32)
    m.run(m.upload("p", seq[:, :6]))
    cache = gpt.KVCache(m, 3)
    cache.fill(m)
    for t in range(6, 9):
        step = cache.step(m, seq[:, t])
        full = m.run(m.upload("f", seq[:, : t + 1])).get().reshape(3, t + 1, -1)
        assert rel(step, full[:, -1]) <= 1e-5


def test_generation_stops_at_the_stop_token_and_at_the_context():
    m = gpt.Trainer(TINY, gpt.init(TINY, 0)).model
    with pytest.raises(ValueError, match="must fit"):
        gpt.generate(m, [[1] * 10], TINY.block_size)
    with pytest.raises(ValueError, match="must fit"):
        gpt.generate(m, [[]], 3)
    first = gpt.generate(m, [[1, 2, 3]], 1, temperature=0)[0][0]
    out = gpt.generate(m, [[1, 2, 3]], 5, temperature=0, stop=first)
    assert out == [[first]]


def test_sampling_rules():
    rng = np.random.default_rng(0)
    logits = np.log(np.array([[0.5, 0.3, 0.15, 0.05]] * 20000))
    draws = gpt.sample(logits, rng)
    freq = np.bincount(draws, minlength=4) / len(draws)
    assert np.abs(freq - [0.5, 0.3, 0.15, 0.05]).max() < 0.015
    assert set(gpt.sample(logits, rng, top_k=2)) == {0, 1}
    # the nucleus of 0.7: 0.5 alone falls short, 0.5 + 0.3 reaches it
    assert set(gpt.sample(logits, rng, top_p=0.7)) == {0, 1}
    assert set(gpt.sample(logits, rng, top_p=0.5)) == {0}
    assert set(gpt.sample(logits, rng, top_p=0.81)) == {0, 1, 2}
    assert (gpt.sample(logits, rng, temperature=0) == 0).all()
    cold = np.bincount(gpt.sample(logits, rng, temperature=0.5), minlength=4)
    assert cold[0] / cold.sum() > 0.6  # 0.5^2 / (0.25 + 0.09 + ...) = 0.66


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    lrs = [gpt.lr_at(i, 100, 1.0, 10) for i in range(1, 101)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(lrs[9:], lrs[10:], strict=False))
    assert lrs[-1] == pytest.approx(0.1)


def test_language_model_batches_are_shifted_windows():
    stream = np.arange(1000, dtype=np.int32)
    idx, targets, w = gpt.lm_batch(stream, np.random.default_rng(0), 4, 16)
    assert idx.shape == targets.shape == w.shape == (4, 16)
    assert (targets == idx + 1).all() and (np.diff(idx, axis=1) == 1).all()
    batches = gpt.val_batches(stream, 4, 16)
    assert len(batches) == 15  # 62 windows of 17 tokens, 4 a batch
    firsts = np.concatenate([b[0][:, 0] for b in batches])
    assert (np.diff(firsts) == 16).all()  # back to back, no overlap of inputs


def test_replayed_steps_give_the_checked_launchers_bits():
    """gpt.Trainer records a step's launches and replays them on the next steps:
    every parameter must come out bit for bit as when every step goes through
    the checked launchers; a batch of another shape (and an evaluation between
    steps) must not disturb it; the profiler sees replayed launches."""
    from thousand.cuda import KernelTimes

    p = gpt.init(TINY, 0)
    replayed, checked = gpt.Trainer(TINY, p), gpt.Trainer(TINY, p)
    checked.replay = False
    rng = np.random.default_rng(8)
    for B in (3, 3, 2, 3, 3):  # B = 2 records anew, then B = 3 again
        batch = random_batch(rng, TINY, B)
        losses = [t.read(t.step(batch, LR)) for t in (replayed, checked)]
        assert losses[0] == losses[1]
        replayed.loss(batch), checked.loss(batch)  # evaluation in between
    with KernelTimes() as kt:
        replayed.step(batch, LR)
    checked.step(batch, LR)
    ours, theirs = replayed.host_params(), checked.host_params()
    assert all(np.array_equal(ours[n], theirs[n]) for n in ours)
    assert kt.by_family()["adamw"][0] == len(replayed.model.params())
    assert len(kt.launches) == len(replayed._recorded[1].calls)

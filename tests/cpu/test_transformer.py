"""The Transformer of A14 against its PyTorch twin (same weights, same batches):
the loss, the logits and every parameter's gradient, then AdamW steps one by
one; the weighted loss against its definition; the reversal data; the training
script. tests/gpu/test_models.py runs the twin checks again on the GPU at a larger
size.

Tolerances (both sides float32; they differ only in the order of additions,
PyTorch's oneDNN or cuBLAS matmuls and fused attention against ours):
- loss, logits: relative to max(|ref|, 1); measured 1e-7 on the CPU backend.
- gradients: each parameter's error relative to its own largest gradient (layer
  norm gains get gradients 100 x smaller than the head's); measured at most 5e-7.
  1e-5 on the CPU leaves 20 x, for other seeds and sizes.
- parameters after AdamW steps, in units of lr per step. Adam divides by
  sqrt(v) + eps, so an element whose gradient is within a few hundred eps (1e-8)
  of 0 takes a step that a rounding of 1e-9 in its gradient changes by a
  noticeable fraction of lr: the largest error measured 0.001 lr a step (0.03 lr
  on a 128-wide model, wpe's rows at rarely-varied positions). All elements stay
  within 0.25 lr a step (a wrong moment or bias correction is a whole lr or
  more), and 99% within 1e-3 lr a step (measured 2e-6, and 9e-5 at the GPU
  layer's 128-wide model).
"""

import numpy as np
import pytest

from thousand.models.data import SEP, reversal, reversal_split
from thousand.models.transformer import (
    Config,
    Trainer,
    attention_maps,
    exact_match,
    init,
)

torch = pytest.importorskip("torch")
from thousand.models import transformer_twin as twin  # noqa: E402  (needs torch)

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")

TINY = Config(vocab=11, block_size=16, n_layer=2, n_head=2, n_embd=32)  # d = 16
DIGITS = 6  # sequences of 2 * 6 = 12 tokens
LR = 1e-2


def rel(a, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.abs(a - ref).max() / max(np.abs(ref).max(), 1.0))


def forward_backward(trainer, batch):
    """Our loss, logits (B * T, V) and gradients by name, for one batch."""
    m, (idx, targets, weights) = trainer.model, batch
    w = (weights / weights.sum()).astype(np.float32)
    loss = m.forward(m.upload("i", idx), m.upload("t", targets), m.upload("w", w))
    logits = m.logits.get()
    m.backward()
    grads = {n: g.get() for n, g in zip(m.names, m.grads(), strict=True)}
    return float(loss.get()[0, 0]), logits, grads


def test_forward_and_every_gradient_match_the_twin(
    cfg=TINY, batch=4, device="cpu", tol=1e-5, seed=0
):
    p = init(cfg, seed)
    ours, ref = Trainer(cfg, p), twin.Trainer(cfg, p, device=device)
    data = reversal(np.random.default_rng(seed + 1), batch, cfg.block_size // 2)
    loss, logits, grads = forward_backward(ours, data)
    ref_loss, ref_logits = ref.loss(data)
    assert rel(loss, float(ref_loss)) <= tol
    assert rel(logits, ref_logits.cpu().numpy().reshape(logits.shape)) <= tol
    ref_grads = ref.grads()
    assert list(grads) == list(ref_grads)  # every parameter, in init's order
    for name, g in grads.items():
        r = ref_grads[name].astype(np.float64)
        err = np.abs(g - r).max() / np.abs(r).max()
        assert err <= tol, f"{name}: gradient error {err:.2e} of its largest"


def test_adamw_steps_agree_with_the_twin(
    cfg=TINY, batch=4, steps=3, device="cpu", seed=0, share=1e-3
):
    """Weight decay 1 (not 0.1) so that decay moves each matrix element by about
    0.02 lr a step, far above the bound on most elements: decay on the wrong
    group, or none, shows; so does a wrong moment or bias correction (about lr)."""
    p = init(cfg, seed)
    ours = Trainer(cfg, p, weight_decay=1.0)
    ref = twin.Trainer(cfg, p, device=device, weight_decay=1.0)
    rng = np.random.default_rng(seed + 2)
    for step in range(1, steps + 1):
        data = reversal(rng, batch, cfg.block_size // 2)
        loss, ref_loss = ours.read(ours.step(data, LR)), ref.read(ref.step(data, LR))
        assert rel(loss, ref_loss) <= 1e-5, f"step {step}: loss {loss} vs {ref_loss}"
        ref_params = ref.params()
        err = np.concatenate(
            [
                np.abs(a.get() - ref_params[name]).ravel()
                for name, a in zip(ours.model.names, ours.model.params(), strict=True)
            ]
        ) / (LR * step)
        assert err.max() <= 0.25, f"step {step}: an element {err.max():.3f} lr apart"
        q99 = np.quantile(err, 0.99)
        assert q99 <= share, f"step {step}: 1% of elements {q99:.2e} lr apart"
    assert ours.opt.t == steps


def test_the_loss_is_the_weighted_mean_over_the_answer():
    """From the logits alone, in float64: -log softmax at the target, averaged over
    the positions whose weight is 1."""
    p = init(TINY, 3)
    ours = Trainer(TINY, p)
    idx, targets, weights = reversal(np.random.default_rng(4), 3, DIGITS)
    loss, logits, _ = forward_backward(ours, (idx, targets, weights))
    z = logits.astype(np.float64)
    log_p = z - z.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    nll = -log_p[np.arange(len(z)), targets.reshape(-1)]
    scored = weights.reshape(-1) > 0
    assert abs(loss - nll[scored].mean()) <= 1e-6 * max(1.0, loss)
    assert not np.isclose(loss, nll.mean())  # the prompt's positions do not count


def test_a_fixed_batch_is_learned():
    """Ten steps on one batch with one block: the loss falls to half of chance's
    (log 11 at the start, every token equally likely)."""
    cfg = Config(vocab=11, block_size=16, n_layer=1, n_head=2, n_embd=32)
    ours = Trainer(cfg, init(cfg, 0))
    data = reversal(np.random.default_rng(5), 4, DIGITS)
    losses = [ours.read(ours.step(data, LR)) for _ in range(10)]
    assert losses[0] > 2.0 and losses[-1] < 0.5 * losses[0], losses


def test_exact_match_counts_a_sequence_only_when_its_whole_answer_is_right():
    class Oracle:  # predicts the targets, but for the rows it is told to spoil
        def __init__(self, targets, spoil):
            self.targets, self.spoil = targets, spoil

        def predict(self, idx):
            out = self.targets.copy()
            for row, col in self.spoil:
                out[row, col] = (out[row, col] + 1) % 10
            return out

    idx, targets, weights = reversal(np.random.default_rng(6), 4, DIGITS)
    assert exact_match(Oracle(targets, []), (idx, targets, weights)) == 1.0
    spoilt = [(0, DIGITS), (1, 2 * DIGITS - 1), (2, 0)]  # the last is on the prompt
    assert exact_match(Oracle(targets, spoilt), (idx, targets, weights)) == 0.5


def test_reversal_sequences_and_the_held_out_split():
    idx, targets, weights = reversal(np.random.default_rng(7), 50, DIGITS)
    seq = np.concatenate([idx, targets[:, -1:]], axis=1)  # (50, 2L + 1)
    assert np.array_equal(seq[:, 1:], targets)
    assert (seq[:, DIGITS] == SEP).all()
    assert np.array_equal(seq[:, DIGITS + 1 :], seq[:, :DIGITS][:, ::-1])
    assert (weights.sum(axis=1) == DIGITS).all() and (weights[:, DIGITS:] == 1).all()
    # two digits: 100 prompts, 90 held out, so most draws hit one and are redrawn
    test, batch = reversal_split(2, held_out=90)
    held = {tuple(r) for r in test[0][:, :2]}
    i, t, _ = batch(np.random.default_rng(8), 500)
    assert not any(tuple(r) in held for r in i[:, :2])
    seq = np.concatenate([i, t[:, -1:]], axis=1)
    assert np.array_equal(seq[:, 3:], seq[:, :2][:, ::-1])


def test_token_ids_out_of_range_are_refused_before_any_kernel():
    ours = Trainer(TINY, init(TINY, 0))
    idx, targets, weights = reversal(np.random.default_rng(9), 2, DIGITS)
    idx[1, 3] = TINY.vocab
    with pytest.raises(ValueError, match="transformer"):
        ours.step((idx, targets, weights), LR)


def test_init_has_gpt2s_scales_and_the_twins_names():
    cfg = Config(vocab=11, block_size=16, n_layer=4, n_head=2, n_embd=64)
    p = init(cfg, 0)
    assert abs(p["h0.fc.W"].std() - 0.02) < 0.002
    assert abs(p["h0.mlp_proj.W"].std() - 0.02 / np.sqrt(8)) < 0.001
    assert (p["h3.ln2.g"] == 1).all() and (p["head.b"] == 0).all()
    names = list(twin.named(twin.GPT(cfg)))
    assert names == list(p)


def test_attention_maps_are_causal_distributions_from_the_kernels_lse():
    """Rows rebuilt from q, k and the fused kernel's lse sum to 1 only if the lse
    is the log-sum-exp of those very scores; keys after the query get 0."""
    ours = Trainer(TINY, init(TINY, 0))
    idx, _, _ = reversal(np.random.default_rng(10), 2, DIGITS)
    maps = attention_maps(ours, idx)  # (n_layer, B, H, T, T)
    T = idx.shape[1]
    assert maps.shape == (TINY.n_layer, 2, TINY.n_head, T, T)
    assert np.abs(maps.sum(axis=-1) - 1).max() < 1e-5
    assert (maps[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0).all()
    assert maps[..., 0, 0].min() == pytest.approx(1.0)  # the first query sees itself


def test_training_script_runs_the_kernels_and_the_twin_alike(capsys):
    from thousand.models import train

    assert train.main(["transformer", "--quick", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "reversal of 4 digits" in out and "seed 2" in out
    assert "step    6  training loss" in out and "step    9" not in out
    assert "time per step ratio CPU emulation / PyTorch (CPU)" in out
    assert "each time above is a CPU emulation" in out


@pytest.mark.parametrize(
    "argv", [["transformer", "--epochs", "3"], ["mlp", "--steps", "3"]]
)
def test_steps_and_epochs_belong_to_their_models(argv, capsys):
    from thousand.models import train

    with pytest.raises(SystemExit):
        train.main(argv)
    assert "trains for --" in capsys.readouterr().err

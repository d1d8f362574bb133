"""The largest GPT of A16, pre-trained on this site's posts, writes: one prompt per
language under four ways of picking the next token; then zero- and few-shot
prompts ask it which track, A or B, a held-out paragraph comes from."""

import numpy as np

from thousand.cuda import on_cpu
from thousand.models import bpe, corpus, gpt

tok = bpe.Tokenizer.load()
run = gpt.pretrained("large", quick=on_cpu())  # on the CPU backend: a tiny model
model = gpt.Trainer(run["cfg"], run["params"]).model
T, eot = run["cfg"].block_size, tok.id_of("<|endoftext|>")
print(f"validation loss {run['curve']['val'][-1]:.3f} nats/token")

# --8<-- [start:sample]
STRATEGIES = {
    "greedy": {"temperature": 0},
    "temperature 1": {"temperature": 1.0},
    "temperature 0.8, top-k 40": {"temperature": 0.8, "top_k": 40},
    "top-p 0.9": {"top_p": 0.9},
}
for prompt in ["共享内存里的矩阵乘法", "The attention kernel"]:
    ids = tok.encode(prompt)
    for name, how in STRATEGIES.items():
        new = gpt.generate(model, [ids], min(48, T - len(ids)), stop=eot, **how)[0]
        print(f"[{name}] {prompt}|{tok.decode(new)}".replace("\n", " / "))
# --8<-- [end:sample]


# --8<-- [start:few-shot]
LETTER = {t: tok.encode(f" {t}")[0] for t in "AB"}  # " A", " B": one token each


def head(text, n):  # a paragraph's first n tokens
    return tok.decode(tok.encode(text)[:n])


def track_guess(shots, query, n=20):
    """Which of " A" and " B" the model finds likelier after the prompt: each shot
    a paragraph's opening with its track, then the query's opening."""
    lines = [f"{head(p, n)}\ntrack: {t}\n" for p, t in shots]
    ids = tok.encode("".join(lines) + f"{head(query, n)}\ntrack:")[-T:]
    logits = model.run(model.upload("prompt", np.array([ids], np.int32))).get()
    a, b = logits[len(ids) - 1, [LETTER["A"], LETTER["B"]]]
    return "A" if a > b else "B"


rows = corpus.load()["paragraphs"]
train = [rows[i] for i in corpus.split("train")]
rng = np.random.default_rng(0)
held_out = [rows[i] for i in corpus.split("val")]  # all 291 (8 on the CPU backend)
held_out = [
    held_out[i] for i in rng.permutation(len(held_out))[: 8 if on_cpu() else None]
]
pools = [[r for r in train if r["track"] == t] for t in "AB"]
for k in (0, 2, 4):
    right = 0
    for row in held_out:  # k shots drawn afresh for each question, half A half B
        shots = [pools[i % 2][rng.integers(len(pools[i % 2]))] for i in range(k)]
        rng.shuffle(shots)
        guess = track_guess([(s["text"], s["track"]) for s in shots], row["text"])
        right += guess == row["track"]
    share = 100 * right / len(held_out)
    print(f"{k}-shot: {right} of {len(held_out)} right ({share:.0f}%)")
share_b = np.mean([r["track"] == "B" for r in held_out])
print(f"always B: {100 * share_b:.0f}%")
# --8<-- [end:few-shot]

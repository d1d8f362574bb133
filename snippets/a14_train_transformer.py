"""A two-block GPT on the package's kernels learns to reverse digits (A14)."""

from thousand.cuda import on_cpu
from thousand.models.train import report_transformer, train_transformer
from thousand.models.transformer import attention_maps

# On the CPU backend every thread is emulated: a few steps of a tiny model there.
r = train_transformer(seed=0, quick=on_cpu(), log=lambda *_: None)
report_transformer(r)

# Which key each answer position weighs most, in every head of the last block.
# Position i (from the separator on) must output the prompt digit at key 2L-1-i.
idx = r["test"][0][:1]  # the first held-out sequence, (1, 2L)
maps = attention_maps(r["trainer"], idx)[-1, 0]  # last block: (H, T, T)
H, T, _ = maps.shape
L = T // 2
print(f"sequence: {' '.join(map(str, idx[0]))}  (10 is the separator)")
for i in range(L, T):
    looks = "  ".join(f"{int(m[i].argmax()):2d} ({m[i].max():.2f})" for m in maps)
    print(f"position {i:2d}, digit at key {2 * L - 1 - i:2d}: heads look at {looks}")

"""Data-parallel training of A15's GPT (B19): every rank holds the whole model, runs
forward and backward on its own share of the global batch with the package's
kernels, and the ranks add their gradients with torch.distributed's all_reduce
(NCCL between GPUs; gloo between CPU processes) before each applies the same AdamW
step. All ranks then hold the same weights after every step.

Each position's loss is weighted by 1 / (positions in the GLOBAL batch) (the total
is all-reduced first), so the summed gradients are exactly the global batch's mean
gradient, whether or not the ranks' shares are the same size. The gradients travel
as one flat buffer (one all_reduce a step, as PyTorch's DDP fills buckets), in
float32. Without an initialised process group it is one rank training alone.
"""

from __future__ import annotations

import numpy as np

from thousand.models import gpt, transformer


def _world():
    """torch.distributed, or None when no process group is initialised."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def all_reduce_sum(values: np.ndarray) -> np.ndarray:
    """The element-wise sum of `values` over every rank (itself alone without a
    process group), as float32 on the host."""
    dist = _world()
    flat = np.ascontiguousarray(values, dtype=np.float32)
    if dist is None:
        return flat
    import torch

    t = torch.from_numpy(flat.copy())
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.numpy()


# --8<-- [start:step]
class DataParallelTrainer(transformer.Trainer):
    """transformer.Trainer for the tied GPT, with the gradients summed over the
    ranks between backward and the optimiser step."""

    Model = gpt.GPT

    def step(self, batch, lr: float):
        """One step on this rank's share (idx, targets, weights) of the global
        batch. Returns this rank's part of the global mean loss (a device array;
        the ranks' parts add up to it)."""
        m, (idx, targets, weights) = self.model, batch
        total = all_reduce_sum(np.array([weights.sum(dtype=np.float64)]))[0]
        loss = m.forward(
            m.upload("idx", idx),
            m.upload("targets", targets),
            m.upload("weights", (weights / total).astype(np.float32)),
        )
        m.backward()
        grads = m.grads()
        flat = all_reduce_sum(np.concatenate([g.get().ravel() for g in grads]))
        start = 0
        for g in grads:  # back into each gradient's device array
            g.set(flat[start : start + g.size].reshape(g.shape))
            start += g.size
        self.opt.step(lr)
        return loss


# --8<-- [end:step]


def shard(batch, rank: int, world: int):
    """Rank `rank`'s rows of a global batch (idx, targets, weights): contiguous
    rows, as equal as the batch allows."""
    rows = len(batch[0])
    lo, hi = rows * rank // world, rows * (rank + 1) // world
    return tuple(np.ascontiguousarray(a[lo:hi]) for a in batch)

"""Data-parallel training of the GPT (A15's model at A16's sizes; B19): every rank
holds the whole model, runs forward and backward on its own share of the global
batch with the package's kernels, and the ranks add their gradients with
torch.distributed's all_reduce (NCCL between GPUs; gloo between CPU processes, or
between processes sharing one GPU) before each applies the same AdamW step. All
ranks then hold the same weights after every step.

Each position's loss is weighted by 1 / (positions in the GLOBAL batch) (the total
is all-reduced first), so the summed gradients are exactly the global batch's mean
gradient, whether or not the ranks' shares are the same size.

The gradients travel in buckets, as PyTorch's DDP sends them: one flat device
buffer per layer whose gradients backward has finished (the final layer norm, then
the blocks from last to first, then the embedding, whose gradient the tied head
adds to last). With `overlap`, a bucket's all_reduce starts the moment its layer's
backward returns and runs while the earlier layers' backward still computes;
without it, all of them start after backward. The buffers never leave the device:
torch.distributed works on them in place (thousand.cuda.torch_view). Without an
initialised process group it is one rank training alone, and nothing is sent.
"""

from __future__ import annotations

import os

import numpy as np

from thousand.cuda import empty, fill, torch_view
from thousand.distributed.ring import ALIGN  # each gradient on 16 bytes, as chunks
from thousand.kernels.adamw import adamw
from thousand.kernels.copy import copy
from thousand.models import gpt, transformer


def _world():
    """torch.distributed, or None when no process group is initialised."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def join(
    rank: int,
    world: int,
    init_method: str,
    backend: str | None = None,
    gpu: bool | None = None,
) -> str:
    """Start this process's part of a `world`-rank group, before the package first
    touches the GPU. With `gpu` (default: torch sees a GPU and THOUSAND_BACKEND is
    not cpu), rank r computes on GPU r, or on GPU 0 when there are fewer GPUs than
    ranks: the package's context is made there and torch's current device set to
    match. `backend` defaults to NCCL when every rank has a GPU of its own, else
    gloo (which also lets ranks share one GPU, or run on the CPU backend). Returns
    the backend chosen."""
    import torch
    import torch.distributed as dist

    from thousand.cuda.device import use_device

    if gpu is None:
        gpu = os.environ.get("THOUSAND_BACKEND", "").lower() != "cpu"
        gpu = gpu and torch.cuda.is_available()
    gpus = torch.cuda.device_count() if gpu else 0
    backend = backend or ("nccl" if gpus >= world else "gloo")
    if backend == "nccl" and gpus < world:
        raise ValueError(
            f"join: NCCL needs a GPU per rank: {world} ranks, {gpus} GPUs here "
            f"(gloo lets ranks share one)"
        )
    if gpus:
        device = rank if gpus >= world else 0
        use_device(device)
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend, init_method=init_method, rank=rank, world_size=world
    )
    return backend


def all_reduce_sum(values: np.ndarray) -> np.ndarray:
    """The element-wise sum of host `values` over every rank (itself alone without
    a process group), as float32. For small host figures: the loss weights' total."""
    dist = _world()
    flat = np.ascontiguousarray(values, dtype=np.float32)
    if dist is None:
        return flat
    import torch

    t = torch.from_numpy(flat.copy())
    if dist.get_backend() == "nccl":  # NCCL reduces device memory only
        t = t.cuda()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.cpu().numpy()


# --8<-- [start:bucket]
def bucket_bounds(sizes: list[int]) -> list[tuple[int, int]]:
    """Where each gradient lies in a bucket: one after the other, each starting on
    a multiple of ALIGN floats."""
    bounds, at = [], 0
    for n in sizes:
        bounds.append((at, at + n))
        at += -(-n // ALIGN) * ALIGN
    return bounds


class Bucket:
    """One layer's gradients, summed over the ranks through one flat device
    buffer: `start` copies them in and starts the all_reduce without waiting;
    `finish` waits for it and copies the sums back. (A layer makes its gradient
    arrays in its first backward: the bucket reads them when it starts.)"""

    def __init__(self, layer):
        self.layer, self.grads, self.flat, self.work = layer, [], None, None

    def start(self, dist) -> None:
        self.grads = list(self.layer.grads)
        self.bounds = bucket_bounds([g.size for g in self.grads])
        size = self.bounds[-1][1] if self.bounds else 0
        if self.flat is None or self.flat.size < size:
            self.flat = empty((max(size, 1),), np.float32)
        for g, (lo, hi) in zip(self.grads, self.bounds, strict=True):
            copy(g.reshape(g.size), out=self.flat[lo:hi])
        self.work = dist.all_reduce(
            torch_view(self.flat), op=dist.ReduceOp.SUM, async_op=True
        )

    def finish(self) -> None:
        self.work.wait()  # the kernels launched after it queue behind it
        self.work = None
        for g, (lo, hi) in zip(self.grads, self.bounds, strict=True):
            copy(self.flat[lo:hi], out=g.reshape(g.size))


# --8<-- [end:bucket]


# --8<-- [start:step]
class DataParallelTrainer(transformer.Trainer):
    """transformer.Trainer for the tied GPT, with the gradients summed over the
    ranks, bucket by bucket, between backward and the optimiser step."""

    Model = gpt.GPT

    def __init__(self, cfg, p, overlap: bool = True, **adamw_settings):
        super().__init__(cfg, p, **adamw_settings)
        m = self.model
        # in the order backward finishes them; the tied head has no gradient of
        # its own (it adds into the embedding's, which is why that goes last)
        finished = [m.ln_f, *reversed(m.blocks), m.emb]
        self.buckets = [Bucket(layer) for layer in finished]
        self.overlap = overlap
        if overlap:  # the embedding's bucket starts after GPT.backward
            for layer, bucket in zip(finished[:-1], self.buckets, strict=False):
                layer.backward = self._then_send(layer.backward, bucket)

    def _then_send(self, backward, bucket: Bucket):
        def backward_then_send(*args, **kwargs):
            out = backward(*args, **kwargs)
            dist = _world()
            if dist is not None:
                bucket.start(dist)
            return out

        return backward_then_send

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
        m.backward()  # with overlap, every bucket but the embedding's is on its way
        dist = _world()
        if dist is not None:
            for bucket in self.buckets:
                if bucket.work is None:
                    bucket.start(dist)
            sent = sorted(id(g) for b in self.buckets for g in b.grads)
            if sent != sorted(id(g) for g in m.grads()):
                raise RuntimeError("DataParallelTrainer: a gradient has no bucket")
            for bucket in self.buckets:
                bucket.finish()
        self.opt.step(lr)
        return loss


# --8<-- [end:step]


# --8<-- [start:zero]
class ZeroTrainer(DataParallelTrainer):
    """ZeRO stage 1 (Rajbhandari et al. 2020): the same steps as
    DataParallelTrainer, but each rank keeps AdamW's moments for one n-th of the
    parameters only. After backward the gradients go, flat, through a
    reduce-scatter (rank r receives the sum of its shard only), rank r updates its
    shard with the package's adamw kernel, and an all-gather gives every rank every
    updated shard. Per rank it holds 2P/n floats of moments instead of 2P, plus one
    flat buffer of P (the buckets' size) and the summed shard of P/n."""

    def __init__(self, cfg, p, **adamw_settings):
        super().__init__(cfg, p, overlap=False, **adamw_settings)
        dist = _world()
        self.rank = dist.get_rank() if dist else 0
        self.n = dist.get_world_size() if dist else 1
        params = self.model.params()
        self.bounds = bucket_bounds([q.size for q in params])
        per = -(-self.bounds[-1][1] // (self.n * ALIGN)) * ALIGN  # shard, aligned
        self.lo, self.hi = self.rank * per, (self.rank + 1) * per
        self.flat = empty((per * self.n,), np.float32)
        self.summed = empty((per,), np.float32)
        self.opt.m = self.opt.v = None  # the whole moments are what ZeRO drops
        self.m = empty((per,), np.float32)
        self.v = empty((per,), np.float32)
        for a in (self.flat, self.m, self.v):
            fill(a, 0.0)
        self.buckets = []

    def _segments(self):
        """(parameter index, lo, hi): the parts of each parameter in this shard."""
        for i, (lo, hi) in enumerate(self.bounds):
            a, b = max(lo, self.lo), min(hi, self.hi)
            if a < b:
                yield i, a, b

    def step(self, batch, lr: float):
        m, (idx, targets, weights) = self.model, batch
        total = all_reduce_sum(np.array([weights.sum(dtype=np.float64)]))[0]
        loss = m.forward(
            m.upload("idx", idx),
            m.upload("targets", targets),
            m.upload("weights", (weights / total).astype(np.float32)),
        )
        m.backward()
        params, grads, flat = m.params(), m.grads(), self.flat
        for g, (lo, hi) in zip(grads, self.bounds, strict=True):
            copy(g.reshape(g.size), out=flat[lo:hi])
        _reduce_scatter(flat, self.summed, self.rank, self.n)
        for i, lo, hi in self._segments():  # our shard of the parameters, flat
            at = lo - self.bounds[i][0]
            copy(params[i].reshape(params[i].size)[at : at + hi - lo], out=flat[lo:hi])
        self.opt.next_hyper(lr)
        for i, lo, hi in self._segments():
            mine = flat[lo:hi]
            s = slice(lo - self.lo, hi - self.lo)
            hyper = self.opt.hyper[len(params[i].shape) == 2]
            state = (mine, self.m[s], self.v[s])
            adamw(mine, self.summed[s], self.m[s], self.v[s], hyper, out=state)
        _all_gather(flat, self.rank, self.n)
        for q, (lo, hi) in zip(params, self.bounds, strict=True):
            copy(flat[lo:hi], out=q.reshape(q.size))
        return loss


def _reduce_scatter(flat, summed, rank: int, n: int) -> None:
    """summed = the sum over ranks of this rank's n-th of flat."""
    dist = _world()
    per = summed.size
    if dist is None:
        copy(flat[:per], out=summed)
    elif dist.get_backend() == "nccl":
        dist.reduce_scatter_tensor(torch_view(summed), torch_view(flat))
    else:  # gloo has no reduce-scatter of one tensor: the same sums, more bytes
        dist.all_reduce(torch_view(flat))
        copy(flat[rank * per : (rank + 1) * per], out=summed)


def _all_gather(flat, rank: int, n: int) -> None:
    """Every rank's n-th of flat, from that rank, into everyone's flat (in place)."""
    dist = _world()
    if dist is None:
        return
    per = flat.size // n
    whole = torch_view(flat)
    if dist.get_backend() == "nccl":
        dist.all_gather_into_tensor(whole, whole[rank * per : (rank + 1) * per])
    else:
        parts = list(whole.split(per))
        dist.all_gather(parts, parts[rank].clone())


# --8<-- [end:zero]


def shard(batch, rank: int, world: int):
    """Rank `rank`'s rows of a global batch (idx, targets, weights): contiguous
    rows, as equal as the batch allows."""
    rows = len(batch[0])
    lo, hi = rows * rank // world, rows * (rank + 1) // world
    return tuple(np.ascontiguousarray(a[lo:hi]) for a in batch)

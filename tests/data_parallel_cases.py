"""Shared by the CPU and GPU layers: B19's data-parallel GPT trained by `world`
processes (torch.distributed, spawned) against one process on the whole global
batch, on a tiny model and a few steps."""

import numpy as np

from thousand.distributed.data_parallel import DataParallelTrainer, join, shard
from thousand.models import gpt
from thousand.models.transformer import Config

TINY = Config(vocab=50, block_size=8, n_layer=2, n_head=2, n_embd=16)
STEPS, ROWS, LR = 3, 6, 1e-2


def global_batch(step: int):
    rng = np.random.default_rng(100 + step)
    rows = rng.integers(0, TINY.vocab, (ROWS, TINY.block_size + 1)).astype(np.int32)
    weights = np.ones((ROWS, TINY.block_size))
    weights[0, :3] = 0  # unequal shares of scored positions between the ranks
    return rows[:, :-1].copy(), rows[:, 1:].copy(), weights


def train(rank: int = 0, world: int = 1, overlap: bool = True):
    """(each step's loss of this rank, the weights after the last step)."""
    trainer = DataParallelTrainer(TINY, gpt.init(TINY, seed=0), overlap=overlap)
    losses = [
        trainer.read(trainer.step(shard(global_batch(s), rank, world), LR))
        for s in range(STEPS)
    ]
    return np.array(losses), [p.get() for p in trainer.model.params()]


def rank_main(rank: int, world: int, folder: str, package: str, backend: str):
    """One spawned rank: the package on backend `package` ("cpu" or "gpu"), the
    group on `backend`; trains with and without overlap, saves what it got."""
    import torch.distributed as dist

    from thousand.cuda import use_backend

    join(rank, world, f"file://{folder}/rendezvous", backend, gpu=package == "gpu")
    use_backend(package)
    try:
        for overlap in (True, False):
            losses, params = train(rank, world, overlap)
            np.savez(f"{folder}/rank{rank}-{overlap}.npz", losses, *params)
    finally:
        dist.destroy_process_group()


def check_ranks_train_as_one(folder, world: int, package: str, backend: str, tol):
    """Spawn `world` ranks, then hold their losses and weights to one process."""
    import torch.multiprocessing as mp

    mp.spawn(rank_main, args=(world, str(folder), package, backend), nprocs=world)
    alone_losses, alone_params = train()
    for overlap in (True, False):
        ranks = [np.load(f"{folder}/rank{r}-{overlap}.npz") for r in range(world)]
        # each rank returns its part of the global mean loss: together, the whole
        together = sum(r["arr_0"] for r in ranks)
        np.testing.assert_allclose(together, alone_losses, rtol=tol)
        for i, p in enumerate(alone_params):
            mine = [r[f"arr_{i + 1}"] for r in ranks]
            for other in mine[1:]:
                assert np.array_equal(mine[0], other), f"parameter {i} differs"
            scale = max(float(np.abs(p).max()), 1.0)
            err = float(np.abs(mine[0] - p).max()) / scale
            assert err < tol, f"parameter {i} (overlap={overlap}): {err:.2e}"


def zero_rank_main(rank: int, world: int, folder: str, package: str, backend: str):
    """One spawned rank training with ZeRO-1 (sharded AdamW moments)."""
    import torch.distributed as dist

    from thousand.cuda import use_backend
    from thousand.distributed.data_parallel import ZeroTrainer

    join(rank, world, f"file://{folder}/rendezvous", backend, gpu=package == "gpu")
    use_backend(package)
    try:
        trainer = ZeroTrainer(TINY, gpt.init(TINY, seed=0))
        losses = [
            trainer.read(trainer.step(shard(global_batch(s), rank, world), LR))
            for s in range(STEPS)
        ]
        params = [p.get() for p in trainer.model.params()]
        np.savez(f"{folder}/zero{rank}.npz", np.array(losses), *params)
    finally:
        dist.destroy_process_group()


def check_zero_trains_as_one(folder, world: int, package: str, backend: str, tol):
    """ZeRO-1 on `world` ranks: the same losses and weights as one process."""
    import torch.multiprocessing as mp

    mp.spawn(zero_rank_main, args=(world, str(folder), package, backend), nprocs=world)
    alone_losses, alone_params = train()
    ranks = [np.load(f"{folder}/zero{r}.npz") for r in range(world)]
    np.testing.assert_allclose(sum(r["arr_0"] for r in ranks), alone_losses, rtol=tol)
    for i, p in enumerate(alone_params):
        mine = [r[f"arr_{i + 1}"] for r in ranks]
        for other in mine[1:]:
            assert np.array_equal(mine[0], other), f"parameter {i} differs"
        scale = max(float(np.abs(p).max()), 1.0)
        assert float(np.abs(mine[0] - p).max()) / scale < tol, f"parameter {i}"

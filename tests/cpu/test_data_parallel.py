"""B19's data-parallel GPT (thousand.distributed.data_parallel) as two CPU processes
talking through torch.distributed's gloo backend, the kernels on the CPU backend:
step for step the same losses and weights as one process training on the whole
global batch, and the same weights on both ranks."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from thousand.distributed.data_parallel import DataParallelTrainer, shard  # noqa: E402
from thousand.models import gpt  # noqa: E402
from thousand.models.transformer import Config  # noqa: E402

TINY = Config(vocab=50, block_size=8, n_layer=1, n_head=2, n_embd=16)
STEPS, ROWS, LR = 3, 6, 1e-2


def global_batch(step: int):
    rng = np.random.default_rng(100 + step)
    rows = rng.integers(0, TINY.vocab, (ROWS, TINY.block_size + 1)).astype(np.int32)
    weights = np.ones((ROWS, TINY.block_size))
    weights[0, :3] = 0  # unequal shares of scored positions between the ranks
    return rows[:, :-1].copy(), rows[:, 1:].copy(), weights


def train(rank: int = 0, world: int = 1):
    trainer = DataParallelTrainer(TINY, gpt.init(TINY, seed=0))
    losses = [
        trainer.read(trainer.step(shard(global_batch(s), rank, world), LR))
        for s in range(STEPS)
    ]
    return np.array(losses), [p.get() for p in trainer.model.params()]


def _rank(rank: int, world: int, folder: str):
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=world
    )
    try:
        losses, params = train(rank, world)
        np.savez(f"{folder}/rank{rank}.npz", losses, *params)
    finally:
        dist.destroy_process_group()


@pytest.mark.usefixtures("cpu_backend_checked")
def test_two_processes_train_as_one(tmp_path):
    import torch.multiprocessing as mp

    mp.spawn(_rank, args=(2, str(tmp_path)), nprocs=2, join=True)
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    alone_losses, alone_params = train()
    # each rank returns its part of the global mean loss: together, the whole
    together = ranks[0]["arr_0"] + ranks[1]["arr_0"]
    np.testing.assert_allclose(together, alone_losses, rtol=1e-5)
    for i, p in enumerate(alone_params):
        a, b = ranks[0][f"arr_{i + 1}"], ranks[1][f"arr_{i + 1}"]
        assert np.array_equal(a, b), f"parameter {i} differs between the ranks"
        scale = max(float(np.abs(p).max()), 1.0)
        assert float(np.abs(a - p).max()) / scale < 1e-5, f"parameter {i}"

"""B19's data-parallel GPT (thousand.distributed.data_parallel) as two CPU processes
talking through torch.distributed's gloo backend, the kernels on the CPU backend:
step for step the same losses and weights as one process training on the whole
global batch, and the same weights on both ranks, with and without overlapping
the all-reduce with backward."""

import pytest

torch = pytest.importorskip("torch")

from tests import data_parallel_cases as DP  # noqa: E402
from thousand.distributed import data_parallel  # noqa: E402


@pytest.mark.usefixtures("cpu_backend_checked")
def test_two_processes_train_as_one(tmp_path):
    DP.check_ranks_train_as_one(tmp_path, 2, "cpu", "gloo", tol=1e-5)


@pytest.mark.usefixtures("cpu_backend_checked")
@pytest.mark.parametrize("overlap", [True, False])
def test_buckets_leave_as_their_layers_finish_backward(tmp_path, overlap):
    """With overlap a layer's bucket starts as soon as its backward returns: the
    final norm's, the blocks' from the last, and the embedding's after GPT's
    backward; without it, all of them after backward."""
    import torch.distributed as dist

    trainer = data_parallel.DataParallelTrainer(
        DP.TINY, DP.gpt.init(DP.TINY, seed=0), overlap=overlap
    )
    m, log = trainer.model, []
    for i, bucket in enumerate(trainer.buckets):
        start = bucket.start
        bucket.start = lambda d, i=i, start=start: (log.append(i), start(d))
    backward = m.backward
    m.backward = lambda: (backward(), log.append("backward done"))
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path}/rendezvous", rank=0, world_size=1
    )
    try:
        trainer.step(DP.shard(DP.global_batch(0), 0, 1), DP.LR)
    finally:
        dist.destroy_process_group()
    n = len(trainer.buckets)
    assert n == DP.TINY.n_layer + 2
    if overlap:
        assert log == [*range(n - 1), "backward done", n - 1]
    else:
        assert log == ["backward done", *range(n)]


def test_bucket_offsets_keep_each_gradient_on_16_bytes():
    bounds = data_parallel.bucket_bounds([15, 7, 16, 1])
    assert bounds == [(0, 15), (16, 23), (24, 40), (40, 41)]


@pytest.mark.usefixtures("cpu_backend_checked")
def test_zero1_trains_as_one_process(tmp_path):
    """ZeRO-1: each rank updates only its shard of the parameters (its own shard of
    AdamW's moments), then gathers the rest: the same losses and weights as one
    process on the whole batch, the same weights on every rank. Three ranks put
    shard edges inside parameters."""
    DP.check_zero_trains_as_one(tmp_path, 3, "cpu", "gloo", tol=1e-5)

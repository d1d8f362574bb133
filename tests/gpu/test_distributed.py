"""B19 on one GPU: what of the several-GPU code a single device can check. Ranks
are processes (spawned) sharing GPU 0 through torch.distributed's gloo backend:

- ProcessRing: each rank's copy kernel writes into the next rank's inbox through
  CUDA IPC; every rank ends with NumPy's sum and gloo's all_reduce of the same
  buffers, bit for bit the same on every rank.
- The data-parallel GPT with its gradient buckets on the device (handed to
  torch.distributed in place): two ranks train as one process does on the global
  batch, with and without overlap; and with NCCL (one rank: the one GPU), the
  same losses as without a process group.

Between GPUs, the same code runs with NCCL and each rank on its own device."""

import numpy as np
import pytest

from tests import data_parallel_cases as DP
from thousand.distributed.ring import chunk_bounds

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

SIZES = [1, 1031, 2**20 + 3]


def _ring_rank(rank: int, world: int, folder: str):
    import torch.distributed as dist

    from thousand.cuda import to_device, torch_view
    from thousand.distributed.ring import ProcessRing

    dist.init_process_group(
        "gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=world
    )
    try:
        out = {}
        for size in SIZES:
            host = np.random.default_rng(rank * 7919 + size).standard_normal(size)
            ring = ProcessRing(size)
            mine = to_device(host.astype(np.float32))
            log = []
            ring.all_reduce(mine, log)
            theirs = torch.from_numpy(host.astype(np.float32)).cuda()
            dist.all_reduce(theirs)  # gloo's, of the same buffers
            out[f"ring{size}"] = mine.get()
            out[f"gloo{size}"] = theirs.cpu().numpy()
            out[f"sent{size}"] = sum(e for *_, e in log)
            view = torch_view(mine)  # the same memory, seen by torch
            view.zero_()
            out[f"zeroed{size}"] = float(np.abs(mine.get()).max())
            ring.close()
        np.savez(f"{folder}/rank{rank}.npz", **out)
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("world", [2, 3])
def test_process_ring_sums_like_numpy_and_gloo(tmp_path, world):
    import torch.multiprocessing as mp

    mp.spawn(_ring_rank, args=(world, str(tmp_path)), nprocs=world)
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(world)]
    for size in SIZES:
        host = [
            np.random.default_rng(r * 7919 + size)
            .standard_normal(size)
            .astype(np.float32)
            for r in range(world)
        ]
        want = np.sum(np.array(host, np.float64), axis=0)
        got = ranks[0][f"ring{size}"]
        scale = max(float(np.abs(want).max()), 1.0)
        assert float(np.abs(got - want).max()) / scale < 1e-6, size
        assert float(np.abs(got - ranks[0][f"gloo{size}"]).max()) / scale < 1e-6
        for r in ranks[1:]:
            assert np.array_equal(r[f"ring{size}"], got), "ranks differ"
        chunk = max(hi - lo for lo, hi in chunk_bounds(size, world))
        assert all(int(r[f"sent{size}"]) <= 2 * (world - 1) * chunk for r in ranks)
        assert all(float(r[f"zeroed{size}"]) == 0.0 for r in ranks)


def test_two_ranks_on_one_gpu_train_as_one(tmp_path):
    DP.check_ranks_train_as_one(tmp_path, 2, "gpu", "gloo", tol=1e-5)


def test_nccl_with_one_rank_trains_as_no_group(tmp_path):
    DP.check_ranks_train_as_one(tmp_path, 1, "gpu", "nccl", tol=1e-6)


def _device_ring_rank(rank: int, world: int, folder: str):
    import torch.distributed as dist

    from thousand.cuda import to_device
    from thousand.distributed.data_parallel import join
    from thousand.distributed.ring import DeviceRing

    join(rank, world, f"file://{folder}/rendezvous")  # NCCL: a GPU per rank
    ring = DeviceRing(blocks=4)  # few blocks: many slots per block at these sizes
    try:
        out = {}
        for size in DEVICE_RING_SIZES:
            host = np.random.default_rng(rank * 7919 + size).standard_normal(size)
            mine = to_device(host.astype(np.float32))
            for _ in range(3):  # the counters carry over from call to call
                ring.all_reduce(mine)
            out[f"ring{size}"] = mine.get()
        np.savez(f"{folder}/device{rank}.npz", **out)
    finally:
        ring.close()
        dist.destroy_process_group()


# 1, a ragged end, several 64 KiB slots a block, and more than a FIFO's worth
DEVICE_RING_SIZES = [1, 1031, 2**20 + 3, 3 * 2**22 + 5]


@pytest.mark.parametrize("world", [2, 3, 4])
def test_device_ring_sums_like_numpy(tmp_path, world):
    """DeviceRing (one kernel, device-side flags) on a GPU per rank: three calls
    in a row give every rank the sum of the sum of the sum, bit for bit alike."""
    import torch.multiprocessing as mp

    if torch.cuda.device_count() < world:
        pytest.skip(f"needs {world} GPUs, this machine has {torch.cuda.device_count()}")
    mp.spawn(_device_ring_rank, args=(world, str(tmp_path)), nprocs=world)
    ranks = [np.load(tmp_path / f"device{r}.npz") for r in range(world)]
    for size in DEVICE_RING_SIZES:
        host = [
            np.random.default_rng(r * 7919 + size).standard_normal(size)
            for r in range(world)
        ]
        want = np.sum(host, axis=0) * world**2  # three sums: x n, x n
        got = ranks[0][f"ring{size}"]
        scale = max(float(np.abs(want).max()), 1.0)
        assert float(np.abs(got - want).max()) / scale < 1e-5, size
        for r in ranks[1:]:
            assert np.array_equal(r[f"ring{size}"], got), "ranks differ"

"""A ring all-reduce (B19) written with the package's kernels: after it, every rank's
buffer holds the sum of all ranks' buffers.

The n ranks stand in a ring; rank r sends only to rank r + 1. The buffer is cut into
n chunks, and the work goes in two phases of n - 1 steps, every rank sending one
chunk in each step, all at once:

  reduce-scatter: in step s, rank r sends chunk (r - s) mod n to r + 1, which adds it
                  into its own copy (vector_add). After n - 1 steps rank r holds the
                  whole sum of chunk (r + 1) mod n.
  all-gather:     in step s, rank r sends chunk (r + 1 - s) mod n, now complete, to
                  r + 1, which keeps it as it is.

Each rank sends 2 (n - 1) chunks of size/n: 2 (n - 1) / n of the buffer, whatever n,
which is why the ring is what NCCL uses for large messages ("bus bandwidth" in
nccl-tests divides by exactly this factor).

ring_all_reduce runs the algorithm on buffers of one device (one GPU, or the CPU
backend), a "send" being a copy kernel: checked where one device is all there is.
Across GPUs, one process a rank, it comes in two versions: ProcessRing (v1) copies
each chunk into the next rank's memory through CUDA IPC and meets the other ranks at
a host barrier every step; DeviceRing (v2, ring.cu) is one kernel a call, its blocks
waiting for each other on counters in GPU memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from thousand.cuda import (
    device_address,
    driver,
    empty,
    is_device_array,
    launch,
    on_cpu,
    synchronize,
)
from thousand.kernels.copy import copy
from thousand.kernels.vector_add import vector_add

ALIGN = 4  # floats: chunks start on 16-byte boundaries, as float4 kernels need
RING_CU = Path(__file__).with_name("ring.cu")


def chunk_bounds(size: int, n: int) -> list[tuple[int, int]]:
    """n contiguous chunks of a buffer of `size` elements, each starting at a
    multiple of ALIGN elements, as equal as that allows (some are empty when the
    buffer is small)."""
    edges = [size * i // n // ALIGN * ALIGN for i in range(n)] + [size]
    return list(zip(edges[:-1], edges[1:], strict=True))


def ring_all_reduce(buffers: list, log: list | None = None) -> list:
    """Sum the ranks' float32 buffers (1-D device arrays of one size) into every one
    of them, in place. `log`, when given, receives (phase, step, sender, chunk,
    elements) for every send, in order: what went over the ring."""
    n = len(buffers)
    if n < 1:
        raise ValueError("ring_all_reduce: needs at least one rank's buffer")
    for r, b in enumerate(buffers):
        if not is_device_array(b):
            raise ValueError(
                f"ring_all_reduce: buffer {r} must be a device array (to_device), "
                f"got {type(b).__name__}"
            )
        if b.dtype != np.float32 or b.ndim != 1:
            raise ValueError(
                f"ring_all_reduce: buffer {r} must be 1-D float32, "
                f"got {b.ndim}-D {b.dtype}"
            )
        if b.size != buffers[0].size:
            raise ValueError(
                f"ring_all_reduce: buffer {r} has {b.size} elements, "
                f"buffer 0 has {buffers[0].size}"
            )
    bounds = chunk_bounds(buffers[0].size, n)
    largest = max(hi - lo for lo, hi in bounds)
    inbox = [empty((max(largest, 1),), np.float32) for _ in range(n)]  # per receiver

    def part(r: int, c: int):
        lo, hi = bounds[c % n]
        return buffers[r][lo:hi]

    for step in range(n - 1):  # reduce-scatter
        sends = [(r, (r - step) % n) for r in range(n)]
        for r, c in sends:  # every rank sends at once: all copies, then all adds
            chunk = part(r, c)
            if chunk.size:
                copy(chunk, out=inbox[(r + 1) % n][: chunk.size])
            if log is not None:
                log.append(("reduce-scatter", step, r, c, chunk.size))
        for r, c in sends:
            mine = part((r + 1) % n, c)
            if mine.size:
                vector_add(mine, inbox[(r + 1) % n][: mine.size], out=mine)
    for step in range(n - 1):  # all-gather
        for r in range(n):
            c = (r + 1 - step) % n
            chunk = part(r, c)
            if chunk.size:
                copy(chunk, out=part((r + 1) % n, c))
            if log is not None:
                log.append(("all-gather", step, r, c, chunk.size))
    return buffers


# --8<-- [start:process_ring]
class ProcessRing:
    """The same ring with one process per rank, each buffer on its rank's GPU: a
    rank's copy kernel writes its chunk straight into the next rank's inbox, whose
    memory that rank exported (CUDA IPC) and this one mapped (with peer access, so
    over NVLink where the GPUs have it). A step is: write, wait for the device, meet
    every rank at a barrier (on the host, through `group`), then add (or keep) what
    arrived. Two inboxes a rank, used in turn, so that writing step s + 1 cannot
    overwrite what step s has not added yet: one barrier a step suffices.

    `group` is a torch.distributed process group able to meet on the host (gloo);
    every rank constructs its ProcessRing with the same `size` (float32 elements).
    Ranks may also share one GPU (IPC then maps memory of the same device)."""

    def __init__(self, size: int, group=None):
        import torch.distributed as dist

        if on_cpu():
            raise RuntimeError(
                "ProcessRing: needs the GPU backend (ranks share memory through CUDA "
                "IPC); on the CPU backend use ring_all_reduce on one process's buffers"
            )
        drv = driver()
        from pycuda import gpuarray

        self.dist, self.group = dist, group
        self.rank, self.n = dist.get_rank(group), dist.get_world_size(group)
        self.bounds = chunk_bounds(size, self.n)
        self.size = size
        largest = max(max(hi - lo for lo, hi in self.bounds), 1)
        self.inbox = [empty((largest,), np.float32) for _ in range(2)]
        handles = [drv.mem_get_ipc_handle(box.gpudata) for box in self.inbox]
        everyone: list = [None] * self.n
        dist.all_gather_object(everyone, handles, group=group)
        flags = drv.ipc_mem_flags.LAZY_ENABLE_PEER_ACCESS
        nxt = (self.rank + 1) % self.n
        # the next rank's inboxes, mapped into this process (kept open while we are)
        self._opened = [drv.IPCMemoryHandle(h, flags) for h in everyone[nxt]]
        self.outbox = [
            gpuarray.GPUArray((largest,), np.float32, gpudata=h) for h in self._opened
        ]

    def _meet(self) -> None:
        synchronize()  # this rank's writes have landed in the next rank's inbox
        self.dist.barrier(group=self.group)

    def all_reduce(self, buffer, log: list | None = None):
        """Sum every rank's `buffer` (1-D float32 device array of `size`) into each,
        in place; `log` as ring_all_reduce's, for this rank's sends."""
        if not is_device_array(buffer) or buffer.dtype != np.float32:
            raise ValueError("ProcessRing.all_reduce: buffer must be float32 on device")
        if buffer.ndim != 1 or buffer.size != self.size:
            raise ValueError(
                f"ProcessRing.all_reduce: buffer must be 1-D of {self.size} "
                f"elements (this ring's size), got shape {buffer.shape}"
            )
        n, r, turn = self.n, self.rank, 0

        def part(c: int):
            lo, hi = self.bounds[c % n]
            return buffer[lo:hi]

        for phase in ("reduce-scatter", "all-gather"):
            for step in range(n - 1):
                # reduce-scatter sends chunk r - step, all-gather chunk r + 1 - step
                send = (r - step + (phase == "all-gather")) % n
                chunk = part(send)
                if chunk.size:
                    copy(chunk, out=self.outbox[turn % 2][: chunk.size])
                if log is not None:
                    log.append((phase, step, r, send, chunk.size))
                self._meet()
                got = part(send - 1)  # what the previous rank sent this step
                arrived = self.inbox[turn % 2][: got.size]
                if got.size and phase == "reduce-scatter":
                    vector_add(got, arrived, out=got)
                elif got.size:
                    copy(arrived, out=got)
                turn += 1
        return buffer

    def close(self) -> None:
        for h in self._opened:
            h.close()
        self._opened, self.outbox = [], []


# --8<-- [end:process_ring]


def _open_neighbours(handles: list, rank: int, n: int, drv) -> dict:
    """The previous and next ranks' exported memory, mapped into this process once
    each (with two ranks they are the same rank)."""
    flags = drv.ipc_mem_flags.LAZY_ENABLE_PEER_ACCESS
    return {
        peer: drv.IPCMemoryHandle(handles[peer], flags)
        for peer in sorted({(rank - 1) % n, (rank + 1) % n})
    }


# --8<-- [start:device_ring]
class DeviceRing:
    """The ring in one kernel a call (ring.cu, ring_all_reduce_v2): the ranks' blocks
    wait for each other on counters in GPU memory, not on the host, and each chunk
    moves in 64 KiB slots that are received, added and sent on in one pass, while
    the next slot is already on its way.

    Each rank allocates one region (two counters a block and the block's FIFO of
    slots), exports it through CUDA IPC and maps its neighbours'. Every rank must
    build its DeviceRing with the same `blocks` and then call all_reduce on buffers
    of the same size in the same order, as with any collective. `group` is a
    torch.distributed process group, used once to swap the IPC handles."""

    SLOT, SLOTS, THREADS = 16384, 8, 512  # as RING_SLOT, RING_SLOTS, RING_THREADS

    def __init__(self, group=None, blocks: int = 32):
        import torch.distributed as dist

        if (
            not isinstance(blocks, int)
            or isinstance(blocks, bool)
            or not (1 <= blocks <= 1024)
        ):
            raise ValueError(
                f"DeviceRing: blocks must be an int in 1..1024, got {blocks!r}"
            )
        if on_cpu():
            raise RuntimeError(
                "DeviceRing: needs the GPU backend (ranks share memory through CUDA "
                "IPC and wait on each other inside one kernel); on the CPU backend "
                "use ring_all_reduce on one process's buffers"
            )
        drv = driver()
        self.rank, self.n = dist.get_rank(group), dist.get_world_size(group)
        self.blocks = blocks
        inbox_at = -(-2 * blocks * 8 // 256) * 256  # as ring.cu computes it
        nbytes = inbox_at + blocks * self.SLOTS * self.SLOT * 4
        self.region = drv.mem_alloc(nbytes)
        self.state = drv.mem_alloc(16 * blocks)
        drv.memset_d8(self.region, 0, nbytes)
        drv.memset_d8(self.state, 0, 16 * blocks)
        synchronize()  # zeroed before any neighbour can write into it
        everyone: list = [None] * self.n
        dist.all_gather_object(everyone, drv.mem_get_ipc_handle(self.region), group)
        self._opened = _open_neighbours(everyone, self.rank, self.n, drv)
        self.next = np.uintp(int(self._opened[(self.rank + 1) % self.n]))
        self.prev = np.uintp(int(self._opened[(self.rank - 1) % self.n]))

    def all_reduce(self, buffer):
        """Sum every rank's `buffer` (1-D float32 device array, 16-byte aligned, the
        same size on every rank) into each, in place."""
        if not is_device_array(buffer) or buffer.dtype != np.float32:
            raise ValueError(
                "DeviceRing.all_reduce: buffer must be a float32 device array, got "
                f"{type(buffer).__name__} of {getattr(buffer, 'dtype', None)}"
            )
        if buffer.ndim != 1:
            raise ValueError(
                f"DeviceRing.all_reduce: buffer must be 1-D, got {buffer.shape}"
            )
        address = device_address(buffer)
        if address % 16:
            raise ValueError(
                f"DeviceRing.all_reduce: buffer must start on 16 bytes (float4 loads), "
                f"it starts at {address:#x}"
            )
        if self.n == 1 or buffer.size == 0:
            return buffer
        launch(
            RING_CU,
            "ring_all_reduce_v2",
            (self.blocks,),
            (self.THREADS,),
            np.uintp(address),
            np.int64(buffer.size),
            np.int32(self.rank),
            np.int32(self.n),
            self.region,
            self.next,
            self.prev,
            self.state,
        )
        return buffer

    def close(self) -> None:
        for h in self._opened.values():
            h.close()
        self._opened = {}


# --8<-- [end:device_ring]

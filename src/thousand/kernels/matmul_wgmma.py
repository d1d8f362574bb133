"""C = A B^T on Hopper's warpgroup tensor cores (wgmma, TMA, mbarriers): bfloat16
operands, float32 accumulate, bf16 out. The rungs of B9 beyond mma.sync.

    bf16 = ml_dtypes.bfloat16
    c = matmul_wgmma(a, bt)     # a: M x K, bt: N x K (B stored K-major), bf16

B comes as B^T, N x K row-major: like nn.Linear's weight, each of its rows runs along
k, the layout TF32 wgmma requires and bf16 wgmma reads without a transpose. cuBLAS
is timed on the same operands (torch.matmul(a, bt.T)).

sm_90a only (H100, H200): on another GPU the launcher refuses with the reason, and
the CPU backend has no tensor cores to run them.

python -m thousand.kernels.matmul_wgmma      (needs an H100 or H200)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from thousand.cuda import (
    Staging,
    check_array,
    check_block,
    check_index_range,
    check_shape,
    device_info,
    launch,
    on_cpu,
    shared_memory_optin,
)
from thousand.cuda.backend import device_address
from thousand.cuda.tma import device_maps
from thousand.kernels.family import Family, Version

OP = "matmul_wgmma"
BF16 = np.dtype(ml_dtypes.bfloat16)

# The rungs' shapes, as wgmma_gemm.cuh fixes them: block tile, threads, stages.
# A stage holds a BM x 128-byte tile of A and a BN x 128-byte tile of B^T.
RUNGS = {
    1: {"bm": 128, "bn": 128, "threads": 128, "stages": 2},
    2: {"bm": 128, "bn": 256, "threads": 384, "stages": 4},
}
GPU_ONLY = "wgmma, TMA and setmaxnreg are sm_90a (Hopper) instructions"


def shared_bytes(rung: dict) -> int:
    """Dynamic shared memory: the stages, plus 1 KiB to align them to 1,024 bytes
    (the 128-byte swizzle repeats every 8 rows of 128 bytes)."""
    return rung["stages"] * (rung["bm"] + rung["bn"]) * 128 + 1024


# --8<-- [start:ref]
def matmul_wgmma_ref(a, bt) -> np.ndarray:
    """float64 A B^T on the operands as given (rounded to bf16 or not), rounded
    once to the output type."""
    wide = np.asarray(a).astype(np.float64) @ np.asarray(bt).astype(np.float64).T
    return wide.astype(a.dtype)


# --8<-- [end:ref]


def run_wgmma(op, name, rung, dtype, a, bt, out, block):
    """Check, build the two tensor maps, launch `name` on the rung's tiles."""
    check_array(op, "a", a, ndim=2, dtype=dtype)  # M x K
    check_array(op, "bt", bt, ndim=2, dtype=dtype)  # N x K
    (M, K), N = a.shape, bt.shape[0]
    if bt.shape[1] != K:
        raise ValueError(
            f"{op}: a is {a.shape} and bt is {bt.shape}: both must be ... x K "
            "(bt holds B transposed, N x K)"
        )
    per_row = 16 // dtype.itemsize
    if K % per_row:
        raise ValueError(
            f"{op}: K = {K} must be a multiple of {per_row}: TMA reads rows whose "
            "length is a multiple of 16 bytes"
        )
    check_index_range(op, "the output", M, N)
    if out is not None:
        check_array(op, "out", out, ndim=2, dtype=dtype)
        check_shape(op, "out", out, (M, N))
    (block,) = check_block(op, block, ndim=1)
    if block != rung["threads"]:
        raise ValueError(
            f"{op}: {name} is written for {rung['threads']} threads, got {block}"
        )
    if on_cpu():
        raise ValueError(f"{op}: {name} runs on a GPU only: {GPU_ONLY}")
    cc = device_info()["compute_capability"]
    if str(cc) != "9.0":
        raise ValueError(
            f"{op}: {name} needs an sm_90a GPU (H100 or H200, compute capability "
            f"9.0); this one is {cc}: {GPU_ONLY}"
        )
    shared = shared_bytes(rung)
    if shared_memory_optin() < shared:
        raise ValueError(f"{op}: {name} needs {shared // 1024} KiB of shared memory")
    stage = Staging(op, a, bt, names=("a", "bt"))
    da, dbt = stage.inputs()
    d_out = stage.output(out, (M, N), dtype)
    if M and N:
        if K == 0:  # an empty sum: nothing for TMA to read
            d_out.fill(0)
        else:
            box = 128 // dtype.itemsize  # k values in one 128-byte row
            maps = device_maps(
                (device_address(da), M, K, dtype.name, rung["bm"], box),
                (device_address(dbt), N, K, dtype.name, rung["bn"], box),
            )
            tiles = -(-M // rung["bm"]) * -(-N // rung["bn"])
            ints = (np.int32(M), np.int32(N), np.int32(K))
            launch(op, name, (tiles,), (block,), maps, d_out, *ints, shared=shared)
    return stage.result(d_out, out)


# --8<-- [start:launchers]
def matmul_wgmma_v1(a, bt, out=None, block=128):
    return run_wgmma(OP, "matmul_wgmma_v1", RUNGS[1], BF16, a, bt, out, block)


def matmul_wgmma_v2(a, bt, out=None, block=384):
    return run_wgmma(OP, "matmul_wgmma_v2", RUNGS[2], BF16, a, bt, out, block)


# --8<-- [end:launchers]


def matmul_wgmma(a, bt, out=None, version=2):
    """a @ bt.T in bf16 on Hopper's tensor cores."""
    v = FAMILY.version(version)
    return v.run(a, bt, out=out, block=v.default_block)


def make_inputs(rng, size, dtype=BF16):
    M, N, K = size
    return (
        rng.standard_normal((M, K), dtype=np.float32).astype(dtype),
        rng.standard_normal((N, K), dtype=np.float32).astype(dtype),
    )


def versions(prefix, v1, v2, teaches_extra=""):
    """The two rungs as Versions (the TF32 family has the same two)."""
    return (
        Version(
            1,
            f"{prefix}_v1",
            "wgmma + TMA: one warpgroup, 128 x 128 tiles, 2 stages" + teaches_extra,
            v1,
            blocks=(128,),
            default_block=128,
            gpu_only=GPU_ONLY,
        ),
        Version(
            2,
            f"{prefix}_v2",
            "producer and 2 consumer warpgroups, 4 stages, 128 x 256" + teaches_extra,
            v2,
            blocks=(384,),
            default_block=384,
            gpu_only=GPU_ONLY,
        ),
    )


# sizes (M, N, K): 1, ragged edges on every tile, K a multiple of 8 (16-byte rows)
CHECK_SIZES = (
    (1, 1, 8),
    (3, 5, 16),
    (17, 31, 40),
    (128, 256, 64),
    (129, 257, 72),
    (200, 130, 520),
    (1000, 300, 512),
    (513, 1027, 1024),
)

FAMILY = Family(
    name=OP,
    versions=versions(OP, matmul_wgmma_v1, matmul_wgmma_v2),
    ref=matmul_wgmma_ref,
    make_inputs=make_inputs,
    check_sizes=CHECK_SIZES,
    bench_size=(8192, 8192, 8192),
    flops=lambda size: 2 * size[0] * size[1] * size[2],
    # bf16 output: one rounding, 2^-9 relative, on top of float32 sums of K products
    tolerance=1e-2,
    out_dtype=BF16,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)

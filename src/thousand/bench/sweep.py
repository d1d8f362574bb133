"""Every version of a family against PyTorch across the shapes people use, not one
benchmark shape: `python -m thousand.bench.sweep [--family NAME ...] [--out FILE]`.

A performance claim is a claim about a sweep, stated by its minimum. For each family
below and each shape of its sweep, the family's inputs are made at that shape, every
version the GPU can run is timed, and so is PyTorch's equivalent (the same baseline
the GPU run records, from thousand.bench.baselines), in one process, back to back,
with CUDA events and L2 flushed. Each row gives the fastest version's ratio to
PyTorch; each family's summary its minimum over the sweep and the shape where it
falls. A shape a version refuses (its launcher says why) is recorded as refused.

The shapes: the rows and widths of GPT-class models (768 to 8,192 wide, 1,024 to
65,536 rows, vocabularies of 32,000, 50,257 and 128,256), ResNet-50's 1x1 and 3x3
convolutions at batch 32 (56 down to 7 pixels, 64 to 2,048 channels), GEMMs square,
tall, wide, of thin K, and the A16 GPT's own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROWS = (1024, 8192, 65536)
WIDTHS = (768, 1024, 1600, 4096, 8192)
VOCABS = (32000, 50257, 128256)
# every pair up to 2^28 elements a matrix (1 GiB): 65,536 x 8,192 would be 2 GiB
ROW_SHAPES = tuple((r, c) for r in ROWS for c in WIDTHS if r * c <= 2**28)
XENT_SHAPES = tuple((r, v) for r in (1024, 8192) for v in VOCABS)
FLAT = ((2**20,), (8192 * 1536,), (2**24,), (2**27,))
# ResNet-50's stages at batch 32, NHWC: (N, H, W, C, R, S, F, stride, pad, dil, groups)
RESNET50 = tuple(
    (32, hw, hw, c, k, k, f, 1, k // 2, 1, 1)
    for hw, c, k, f in (
        (56, 64, 1, 64),
        (56, 64, 3, 64),
        (56, 64, 1, 256),
        (56, 256, 1, 64),
        (28, 128, 3, 128),
        (28, 128, 1, 512),
        (28, 512, 1, 128),
        (14, 256, 3, 256),
        (14, 256, 1, 1024),
        (14, 1024, 1, 256),
        (7, 512, 3, 512),
        (7, 512, 1, 2048),
        (7, 2048, 1, 512),
    )
)
GEMMS = (
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (16384, 1024, 1024),  # tall
    (1024, 16384, 1024),  # wide
    (8192, 8192, 256),  # thin K
    (8192, 1152, 384),  # A16 large: qkv
    (8192, 1536, 384),  # A16 large: MLP up
    (8192, 384, 1536),  # A16 large: MLP down
)
# (B, T, C, vocab, positions), as the embedding family takes them
EMBEDDINGS = (
    (64, 128, 384, 8192, 128),
    (8, 1024, 768, 50257, 1024),
    (8, 1024, 1600, 50257, 1024),
    (4, 2048, 4096, 128256, 2048),
)
SWEEPS = {
    "softmax": ROW_SHAPES,
    "softmax_backward": ROW_SHAPES,
    "layer_norm": ROW_SHAPES,
    "layer_norm_backward": ROW_SHAPES,
    "gelu": FLAT,
    "gelu_backward": FLAT,
    "cross_entropy": XENT_SHAPES,
    "cross_entropy_backward": XENT_SHAPES,
    "embedding": EMBEDDINGS,
    "embedding_backward": EMBEDDINGS,
    "adamw": ((2**20,), (12_300_000,), (124_475_904,)),  # A16 large, GPT-2 small
    "conv": RESNET50,
    "conv_backward_filter": RESNET50,
    "conv_backward_data": RESNET50,
    "sgemm": GEMMS,
    "matmul_wgmma": GEMMS,
    "matmul_wgmma_tf32": GEMMS,
}


# A family timed against another family's PyTorch op (the same inputs).
BASELINE_OF = {"sgemm": "matmul"}


def _time(run) -> float:
    from thousand.cuda import median, time_ms

    return median(time_ms(run, warmup=2, repeat=10))


def sweep_family(name: str, shapes) -> list[dict]:
    """One row a shape: each version's ms (or why it refused), PyTorch's ms."""
    import torch

    from thousand.bench.baselines import as_torch, torch_ops
    from thousand.bench.checks import bench_inputs, prepared_run
    from thousand.bench.quick import runnable
    from thousand.kernels.family import all_families

    family = {f.name: f for f in all_families()}[name]
    ops = torch_ops()
    rows = []
    for shape in shapes:
        row = {"family": name, "shape": list(shape), "versions": {}}
        try:
            host = family.timed_inputs(np.random.default_rng(0), shape)
            d_in = bench_inputs(family, shape)
        except (ValueError, MemoryError) as e:
            row["refused"] = str(e)[:200]
            rows.append(row)
            continue
        for v in runnable(family):
            try:
                row["versions"][v.kernel] = _time(prepared_run(v, d_in))
            except (ValueError, RuntimeError) as e:
                row["versions"][v.kernel] = f"refused: {str(e)[:160]}"
        op = ops.get(BASELINE_OF.get(name, name))
        if op is not None:
            t_in = [as_torch(a) for a in host]
            try:
                row["torch_ms"] = _time(op(*t_in))
            except (RuntimeError, ValueError) as e:
                row["torch_refused"] = str(e)[:200]
            del t_in
        timed = {k: ms for k, ms in row["versions"].items() if isinstance(ms, float)}
        if timed and "torch_ms" in row:
            best = min(timed, key=timed.get)
            row["best"], row["ratio"] = best, row["torch_ms"] / timed[best]
        rows.append(row)
        del d_in, host
        torch.cuda.empty_cache()
        print(json.dumps(row), flush=True)
    return rows


def summary(rows: list[dict]) -> dict:
    """A family's minimum ratio over the sweep and the shape it falls at."""
    rated = [r for r in rows if "ratio" in r]
    if not rated:
        return {"shapes": len(rows), "rated": 0}
    low = min(rated, key=lambda r: r["ratio"])
    high = max(rated, key=lambda r: r["ratio"])
    return {
        "shapes": len(rows),
        "rated": len(rated),
        "min_ratio": low["ratio"],
        "min_at": low["shape"],
        "max_ratio": high["ratio"],
        "max_at": high["shape"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m thousand.bench.sweep")
    ap.add_argument("--family", action="append", choices=sorted(SWEEPS))
    ap.add_argument("--out", type=Path, help="write every row and summary as JSON")
    a = ap.parse_args(argv)
    if a.out is not None and not a.out.resolve().parent.is_dir():
        ap.error(f"--out {a.out}: its folder does not exist")
    from thousand.cuda import device_info, gpu_status

    ok, why = gpu_status()
    if not ok:
        print(f"python -m thousand.bench.sweep times GPUs: {why}", file=sys.stderr)
        return 2
    out = {"device": device_info()["name"], "families": {}}
    for name in a.family or SWEEPS:
        rows = sweep_family(name, SWEEPS[name])
        out["families"][name] = {"rows": rows, "summary": summary(rows)}
        if a.out:  # after every family: a run cut short keeps what it measured
            a.out.write_text(json.dumps(out, indent=1))
        s = out["families"][name]["summary"]
        if s.get("rated"):
            print(
                f"== {name}: min {s['min_ratio']:.2f}x PyTorch at {s['min_at']}, "
                f"max {s['max_ratio']:.2f}x at {s['max_at']}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One AdamW step (Loshchilov & Hutter 2019) over a flat array of parameters, as
torch.optim.AdamW computes it: decoupled weight decay, then the two moments, then
the bias-corrected update.

    hyper = hyper_parameters(lr=6e-4, weight_decay=0.1, t=step)   # (6,) float32
    p_new, m_new, v_new = adamw(p, g, m, v, hyper)   # each (n,) float32
    adamw(p, g, m, v, hyper, out=(p, m, v))          # in place, as training does

Why the hyper-parameters are an array. The checks and benchmarks pass every input
through `to_device`, and a training loop changes lr (a schedule) and t (the step)
every step. So they travel as one (6,) float32 array, [lr, beta1, beta2, eps,
weight_decay, t], that each thread reads from device memory (as sgd.py's lr): a new
step writes 24 bytes, never a device-to-host read in the timed path, and the
launch is the same for every step. t as a float32 is exact up to 2^24 steps.
Values are checked for host arrays (finite, 0 <= beta < 1, lr, eps and
weight_decay >= 0, t a whole number in [1, 2^24]); a device array is not copied
back to be checked.

Why the output is (3, n). In training the step overwrites p, m and v. The checks
compare one output array per family, so the launchers write [p_new, m_new, v_new]
as the rows of one (3, n) array, or into `out=(p_out, m_out, v_out)`, three (n,)
arrays. Each output may be the memory of any of p, g, m, v (every element is read
before it is written, by one thread), never of `hyper`, nor of another output. So
`out=(p, m, v)` updates in place; so does `out=state` when p, m and v are the rows
of one (3, n) array `state`.

python -m thousand.kernels.adamw
"""

from __future__ import annotations

import math

import numpy as np

from thousand.cuda import (
    Staging,
    cdiv,
    check_array,
    check_block,
    check_no_overlap,
    check_shape,
    empty,
    grid_stride_blocks,
    is_device_array,
    launch,
    to_device,
)
from thousand.kernels.family import Family, Version, pick

OP = "adamw"
HYPER = ("lr", "beta1", "beta2", "eps", "weight_decay", "t")  # hyper's six values
GPT2_PARAMETERS = 124_475_904  # GPT-2 small as llm.c counts it (vocab padded)


# --8<-- [start:ref]
def adamw_ref(p, g, m, v, hyper) -> np.ndarray:
    """[p_new, m_new, v_new] as a (3, n) array: float64 from the float32 inputs and
    hyper-parameters (the values the kernels read), rounded once to float32."""
    lr, beta1, beta2, eps, wd, t = (float(h) for h in hyper)
    p, g, m, v = (a.astype(np.float64) for a in (p, g, m, v))
    p = p - lr * wd * p  # decoupled: the decay never passes through m and v
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    mhat, vhat = m / (1 - beta1**t), v / (1 - beta2**t)
    p = p - lr * mhat / (np.sqrt(vhat) + eps)
    return np.stack([p, m, v]).astype(np.float32)


# --8<-- [end:ref]


def hyper_parameters(
    lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-2, t=1
) -> np.ndarray:
    """The (6,) float32 array the kernels read; torch.optim.AdamW's defaults. `t`
    is the step being taken, 1 for the first."""
    hyper = np.array([lr, beta1, beta2, eps, weight_decay, t], np.float32)
    check_hyper(hyper)
    return hyper


def check_hyper(hyper) -> None:
    """Refuse host hyper-parameters no AdamW step takes; device ones are not read."""
    if is_device_array(hyper):
        return
    values = dict(zip(HYPER, (float(h) for h in hyper), strict=True))
    bad = [k for k, x in values.items() if not math.isfinite(x)]
    bad += [k for k in ("beta1", "beta2") if not 0 <= values[k] < 1]
    bad += [k for k in ("lr", "eps", "weight_decay") if values[k] < 0]
    t = values["t"]
    if not (1 <= t <= 2**24 and t == int(t)):
        bad.append("t")
    if bad:
        got = ", ".join(f"{k} = {values[k]!r}" for k in dict.fromkeys(bad))
        raise ValueError(
            f"{OP}: bad hyper-parameters: {got}; want finite values, 0 <= beta1, "
            "beta2 < 1, lr, eps, weight_decay >= 0, t a whole number in [1, 2^24]"
        )


def _out_rows(out, n: int) -> list:
    """The three output rows of `out`, a (3, n) array or a tuple of three (n,)."""
    if isinstance(out, tuple | list):
        if len(out) != 3:
            raise ValueError(
                f"{OP}: `out` must be a (3, n) array or a tuple of three (n,) arrays "
                f"(p, m, v), got a {type(out).__name__} of {len(out)}"
            )
        for k, a in enumerate(out):
            check_array(OP, f"out[{k}]", a, ndim=1)
            check_shape(OP, f"out[{k}]", a, (n,))
        return list(out)
    check_array(OP, "out", out, ndim=2)
    check_shape(OP, "out", out, (3, n))
    if isinstance(out, np.ndarray):
        return [out[0], out[1], out[2]]
    if not n:  # nothing to view (the CPU backend's reshape refuses empty views)
        return [empty((0,), np.float32) for _ in range(3)]
    flat = out.reshape(3 * n)  # device arrays: rows as slices of the flat array
    return [flat[k * n : (k + 1) * n] for k in range(3)]


def _run(name, p, g, m, v, hyper, out, block, items):
    names = ("p", "g", "m", "v")
    check_array(OP, "p", p, ndim=1)  # (n,)
    (n,) = p.shape
    for arg, a in zip(names[1:], (g, m, v), strict=True):
        check_array(OP, arg, a, ndim=1)
        check_shape(OP, arg, a, (n,))
    check_array(OP, "hyper", hyper, ndim=1)
    check_shape(OP, "hyper", hyper, (len(HYPER),))
    rows = None if out is None else _out_rows(out, n)
    (block,) = check_block(OP, block, ndim=1)
    check_hyper(hyper)
    stage = Staging(OP, p, g, m, v, hyper, names=(*names, "hyper"))
    d_in = stage.inputs()
    if out is None:
        d_out = stage.output(None, (3, n))
        d_rows = _out_rows(d_out, n)
    else:
        pieces = list(out) if isinstance(out, tuple | list) else [out]
        if any(stage.on_host != isinstance(a, np.ndarray) for a in pieces):
            raise ValueError(
                f"{OP}: `out` must be the same kind of array as the inputs"
            )
        label = "out" if len(pieces) == 1 else "out[{}]"
        inputs = dict(zip(names, (p, g, m, v), strict=True))
        for k, row in enumerate(rows):
            what = label.format(k)
            # a row may be one of p, g, m, v exactly; hyper is read by every thread
            check_no_overlap(OP, row, inputs, in_place_ok=True, name=what)
            check_no_overlap(OP, row, {"hyper": hyper}, name=what)
            earlier = {label.format(j): rows[j] for j in range(k)}
            check_no_overlap(OP, row, earlier, name=what)
        d_pieces = [to_device(a) for a in pieces] if stage.on_host else pieces
        d_out = d_pieces[0]
        d_rows = _out_rows(d_out, n) if len(d_pieces) == 1 else d_pieces
    if n:
        grid = (grid_stride_blocks(block, items(n)),)
        launch(OP, name, grid, (block,), *d_in, *d_rows, np.int32(n))
    if out is None:
        return stage.result(d_out)
    if stage.on_host:
        for d, a in zip(d_pieces, pieces, strict=True):
            d.get(ary=a)
    return out if stage.on_host else (d_out if len(d_pieces) == 1 else tuple(rows))


# --8<-- [start:launchers]
def adamw_v1(p, g, m, v, hyper, out=None, block=256):
    """Returns [p_new, m_new, v_new] as a (3, n) array (or the `out` given)."""
    return _run("adamw_v1", p, g, m, v, hyper, out, block, lambda n: n)


def adamw_v2(p, g, m, v, hyper, out=None, block=256):
    """v1 over float4 where all seven arrays are 16-byte aligned."""
    return _run("adamw_v2", p, g, m, v, hyper, out, block, lambda n: cdiv(n, 4))


# --8<-- [end:launchers]


# --8<-- [start:front-door]
def adamw(p, g, m, v, hyper, out=None, version=2, block=256):
    """One AdamW step for parameters `p`, gradients `g` and moments `m`, `v` (all
    (n,) float32), with `hyper` = hyper_parameters(...). Returns p_new, m_new,
    v_new: views of one (3, n) array, or the three arrays of `out=(p_out, m_out,
    v_out)`; `out=(p, m, v)` steps in place."""
    got = pick(FAMILY, version)(p, g, m, v, hyper, out=out, block=block)
    if isinstance(got, tuple | list):
        return tuple(got)
    return tuple(_out_rows(got, got.shape[1]))


# --8<-- [end:front-door]


def make_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """Parameters and gradients of N(0, 1), with the awkward cases mixed in: 10%
    of the moments never touched (m = v = 0, as at the first step, where eps alone
    keeps the division finite), 5% of gradients exactly 0, 5% of v so small that
    sqrt(vhat) is near eps; steps from the first (the largest bias correction) to
    the millionth, and lr, betas and weight decay of several sizes."""
    (n,) = size
    p = rng.standard_normal(n)
    g = np.where(rng.random(n) < 0.05, 0.0, rng.standard_normal(n))
    m = 0.1 * rng.standard_normal(n)
    v = 0.01 * rng.standard_normal(n) ** 2
    v = np.where(rng.random(n) < 0.05, 1e-17, v)
    fresh = rng.random(n) < 0.1
    m[fresh], v[fresh] = 0.0, 0.0
    hyper = hyper_parameters(
        lr=10 ** rng.uniform(-4, -1),
        beta1=rng.choice([0.9, 0.8]),
        beta2=rng.choice([0.999, 0.95]),
        weight_decay=rng.choice([0.0, 0.01, 0.1]),
        t=rng.choice([1, 2, 10, 1000, 10**6]),
    )
    return (*(a.astype(np.float32) for a in (p, g, m, v)), hyper)


def typical_inputs(rng: np.random.Generator, size: tuple) -> tuple:
    """What the benchmark times: GPT-2's training recipe mid-run (lr 6e-4, weight
    decay 0.1, betas 0.9 and 0.95, step 1,000), weights of N(0, 0.02^2) and
    gradients of 1e-3, no zeros."""
    (n,) = size
    p = 0.02 * rng.standard_normal(n, dtype=np.float32)
    g = 1e-3 * rng.standard_normal(n, dtype=np.float32)
    m = 1e-3 * rng.standard_normal(n, dtype=np.float32)
    v = (1e-3 * rng.standard_normal(n, dtype=np.float32)) ** 2
    hyper = hyper_parameters(lr=6e-4, beta2=0.95, weight_decay=0.1, t=1000)
    return p, g, m, v, hyper


FAMILY = Family(
    name=OP,
    versions=(
        Version(
            1,
            "adamw_v1",
            "grid-stride, one parameter at a time; bias corrections once a thread",
            adamw_v1,
            blocks=(64, 256, 1024),
        ),
        Version(
            2,
            "adamw_v2",
            "float4 loads and stores of all seven arrays when they are aligned",
            adamw_v2,
            blocks=(64, 256, 1024),
        ),
    ),
    ref=adamw_ref,
    make_inputs=make_inputs,
    typical_inputs=typical_inputs,
    # (n,): one parameter, primes (v2's scalar rest; the (3, n) output's rows off
    # 16 bytes, so v2 falls back to scalars), multiples of 4 (float4), more than
    # the CPU's grid covers at once (grid-stride), and a million on the GPU
    check_sizes=(
        (1,),
        (3,),
        (7,),
        (31,),
        (1000,),
        (4099,),
        (65536,),
        (65537,),
        (1_000_003,),
        (4096,),
    ),
    bench_size=(GPT2_PARAMETERS,),
    # read p, g, m, v; write p, m, v (the 24 bytes of hyper are left out)
    bytes_moved=lambda size: 7 * 4 * size[0],
    # relative to the largest output, a parameter (|p| up to ~4; m and v are
    # smaller): a dozen float32 operations per element, the bias corrections from
    # expm1f and log1pf (a few ulp each), a square root and a division: at most
    # 1.5e-7 measured on the CPU backend (every size and block, six seeds), m and
    # v also within 1e-6 of their own scale (tests/cpu/test_adamw.py). The GPU's
    # rsqrtf is within 2 ulp and it fuses multiply-adds: 1e-6 leaves the margin.
    tolerance=1e-6,
)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)

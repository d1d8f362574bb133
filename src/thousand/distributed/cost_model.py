"""B19's alpha-beta model of a ring all-reduce, fitted to the recorded runs and used
to predict machines that were not measured. A model, not a measurement: the page
says so wherever it shows a prediction.

A ring all-reduce of S bytes on n ranks takes 2 (n - 1) steps, each a message of
S / n bytes, so

    T(S) = 2 (n - 1) alpha + 2 (n - 1) / n * S / B

alpha: the fixed cost of a step (latency: launch, flags, the link's first byte);
B: the bandwidth one rank's link gives (bytes a second). Both are fitted by least
squares on the relative error, so that 4 KiB and 1 GiB weigh alike.

Across nodes the model is hierarchical, as NCCL's tree and ring over nodes are:
inside each node of g GPUs a reduce-scatter over NVLink leaves each GPU a 1/g share;
the nodes' GPUs of the same local rank run a ring all-reduce of that share over the
network; an all-gather inside the node rebuilds the whole. The network's figures are
inputs the reader can change, not measurements (NETWORK below, with its source).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Link:
    alpha_s: float  # fixed cost of one step
    bandwidth: float  # bytes a second, one rank's link


# One 400 Gb/s InfiniBand NDR port per GPU, as NVIDIA's DGX H100 has (eight
# ConnectX-7 for eight GPUs): 50 GB/s a direction. Its per-step cost is an
# assumption of a few microseconds for a hop through a switch. Neither figure is
# measured here.
NETWORK = Link(alpha_s=5e-6, bandwidth=50e9)
GPUS_PER_NODE = 8


def _check(op: str, n: int, nbytes: float, *links: Link) -> None:
    """Ranks a whole number >= 1, bytes a number >= 0, Links of positive figures."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{op}: ranks must be a whole number >= 1, got {n!r}")
    if not isinstance(nbytes, (int, float)) or not nbytes >= 0:
        raise ValueError(f"{op}: bytes must be a number >= 0, got {nbytes!r}")
    for link in links:
        if not (isinstance(link, Link) and link.alpha_s >= 0 and link.bandwidth > 0):
            raise ValueError(
                f"{op}: needs a Link with alpha_s >= 0 and bandwidth > 0, got {link!r}"
            )


def ring_time(link: Link, n: int, nbytes: float) -> float:
    """Seconds for a ring all-reduce of `nbytes` on `n` ranks over `link`."""
    _check("ring_time", n, nbytes, link)
    if n < 2:
        return 0.0
    return 2 * (n - 1) * link.alpha_s + 2 * (n - 1) / n * nbytes / link.bandwidth


def fit(rows: list[dict], n: int, who: str = "library") -> Link:
    """alpha and B from a record's all-reduce rows (bytes, `who`_s) on n ranks."""
    _check("fit", n, 0)
    if n < 2 or len(rows) < 2:
        raise ValueError(
            f"fit: needs 2 ranks and 2 sizes or more, got {n}, {len(rows)}"
        )
    if who not in ("library", "v1", "v2"):
        raise ValueError(f"fit: who is one of library, v1, v2; got {who!r}")
    s = np.array([r["bytes"] for r in rows], float)
    t = np.array([r[f"{who}_s"] for r in rows], float)
    if not (np.all(s > 0) and np.all(t > 0)):
        raise ValueError("fit: every row needs bytes > 0 and a time > 0")
    design = np.stack([2 * (n - 1) * np.ones_like(s), 2 * (n - 1) / n * s], axis=1)
    w = 1 / t  # relative error: each row divided by its own time
    (alpha, inv_b), *_ = np.linalg.lstsq(design * w[:, None], t * w, rcond=None)
    if not inv_b > 0:
        raise ValueError(f"fit: {who}'s times do not grow with the size: no bandwidth")
    return Link(alpha_s=float(alpha), bandwidth=float(1 / inv_b))


def hierarchical_time(
    inside: Link, gpus: int, nbytes: float, network: Link = NETWORK
) -> float:
    """Seconds for an all-reduce over `gpus` GPUs in nodes of GPUS_PER_NODE: the
    node's reduce-scatter and all-gather over `inside`, a ring over the nodes."""
    _check("hierarchical_time", gpus, nbytes, inside, network)
    g = min(gpus, GPUS_PER_NODE)
    nodes = gpus // g
    if nodes * g != gpus:
        raise ValueError(f"hierarchical_time: {gpus} GPUs are not whole nodes of {g}")
    local = ring_time(inside, g, nbytes)  # = reduce-scatter + all-gather inside
    return local + ring_time(network, nodes, nbytes / g)


def busbw(n: int, nbytes: float, seconds: float) -> float:
    """nccl-tests' bus bandwidth of an all-reduce, GB/s."""
    _check("busbw", n, nbytes)
    if not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"busbw: seconds must be a number > 0, got {seconds!r}")
    return nbytes / seconds * 2 * (n - 1) / n / 1e9

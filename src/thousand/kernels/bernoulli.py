"""Binary stochastic units: sample 1 with probability P, from given uniforms (A5).

python -m thousand.kernels.bernoulli
"""

from __future__ import annotations

import numpy as np

from thousand.kernels.layer_launch import matrix_family

OP = "bernoulli"


def bernoulli_ref(P: np.ndarray, U: np.ndarray) -> np.ndarray:
    return (U < P).astype(np.float32)


def make_inputs(rng, size):
    return (
        rng.random(size, dtype=np.float32),
        rng.random(size, dtype=np.float32),
    )


FAMILY = matrix_family(
    OP,
    "one thread per unit: on when its uniform falls below its probability",
    bernoulli_ref,
    make_inputs,
    ("P", "U"),
    bytes_moved=lambda size: 3 * 4 * size[0] * size[1],
)
bernoulli_v1 = FAMILY.versions[0].run


def bernoulli(P, U, out=None, version=1, block=256):
    return FAMILY.version(version).run(P, U, out=out, block=block)


if __name__ == "__main__":
    from thousand.bench.quick import check_then_time

    check_then_time(FAMILY)

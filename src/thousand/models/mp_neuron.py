"""A1: the McCulloch–Pitts neuron (1943), on the threshold kernel.

A unit adds its binary inputs with fixed weights and fires when the sum reaches a
threshold. With the right weights it is AND, OR or NOT, but no weights and threshold
make it XOR. Why, in four lines: XOR needs
    0 < theta            (0, 0) -> 0
    w1 >= theta          (1, 0) -> 1
    w2 >= theta          (0, 1) -> 1
    w1 + w2 < theta      (1, 1) -> 0
and the two middle lines add up to w1 + w2 >= 2 theta > theta, against the last one.
`xor_search` checks the same thing by trying every small integer weight.

python -m thousand.models.mp_neuron
"""

from __future__ import annotations

import itertools

import numpy as np

from thousand.kernels.threshold import threshold

# --8<-- [start:gates]
GATES = {  # name: (weights, threshold)
    "AND": ([1, 1], 2),  # fires only when both inputs are on
    "OR": ([1, 1], 1),  # fires when at least one is on
    "NOT": ([-1], 0),  # an inhibitory input: on silences the unit
}


def inputs(d: int) -> np.ndarray:
    """Every binary input of d values, one per row: (2^d, d)."""
    return np.array(list(itertools.product([0, 1], repeat=d)), dtype=np.float32)


def unit(X: np.ndarray, w, theta) -> np.ndarray:
    """The unit's output for each row of X, computed by the threshold kernel."""
    w = np.asarray(w, dtype=np.float32)
    return threshold(X, w, np.array([theta], dtype=np.float32))


def truth_table(gate: str) -> list[tuple[tuple[int, ...], int]]:
    w, theta = GATES[gate]
    X = inputs(len(w))
    return [
        (tuple(int(v) for v in x), int(o))
        for x, o in zip(X, unit(X, w, theta), strict=True)
    ]


# --8<-- [end:gates]


# --8<-- [start:xor-search]
def search(target, limit: int = 3) -> tuple[int, list]:
    """Try every two-input unit with integer weights in [-limit, limit] and a
    threshold in [-2 limit, 2 limit + 1] (past these the output is constant) on the
    four inputs; `target(a, b)` is the truth table wanted. Returns how many units
    were tried and the (w1, w2, theta) of those that compute it."""
    X = inputs(2)
    wanted = np.array([target(int(a), int(b)) for a, b in X], dtype=np.float32)
    weights = range(-limit, limit + 1)
    thetas = range(-2 * limit, 2 * limit + 2)
    tried, found = 0, []
    for w1, w2, theta in itertools.product(weights, weights, thetas):
        tried += 1
        if np.array_equal(unit(X, [w1, w2], theta), wanted):
            found.append((w1, w2, theta))
    return tried, found


def xor_search(limit: int = 3) -> tuple[int, list]:
    return search(lambda a, b: a ^ b, limit)


# --8<-- [end:xor-search]


if __name__ == "__main__":
    for gate in GATES:
        print(gate, truth_table(gate))
    for name, target in (("AND", lambda a, b: a & b), ("XOR", lambda a, b: a ^ b)):
        tried, found = search(target)
        print(f"{name}: {tried} units tried, {len(found)} compute it")

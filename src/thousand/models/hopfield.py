"""A5: a Hopfield network (1982) on the kernels: Hebbian storage, asynchronous
recall, and the energy that every sweep lowers (or leaves as it is).

python -m thousand.models.hopfield
"""

from __future__ import annotations

import numpy as np

from thousand.cuda import to_device
from thousand.kernels.hebbian import hebbian, hebbian_ref
from thousand.kernels.hopfield import hopfield, hopfield_ref


def random_patterns(seed: int, p: int, n: int) -> np.ndarray:
    """p patterns of n values +-1, each value a fair coin."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random((p, n)) < 0.5, -1.0, 1.0).astype(np.float32)


def corrupt(patterns: np.ndarray, flips: int, seed: int) -> np.ndarray:
    """Each pattern with `flips` of its values, chosen at random, turned over."""
    rng = np.random.default_rng(seed)
    out = patterns.copy()
    for row in out:
        row[rng.choice(len(row), flips, replace=False)] *= -1
    return out


# --8<-- [start:energy]
def energy(W: np.ndarray, S: np.ndarray) -> np.ndarray:
    """E(s) = -1/2 s^T W s for each state (row of S), in float64."""
    S = S.astype(np.float64)
    return -0.5 * np.einsum("mi,ij,mj->m", S, W.astype(np.float64), S)


# --8<-- [end:energy]


# --8<-- [start:recall]
def recall(patterns: np.ndarray, probes: np.ndarray, max_sweeps: int = 20):
    """Store `patterns`, then run sweeps from `probes` until no neuron changes.
    Returns the final states and the energy of every state before each sweep and
    after the last (a list of arrays, one value per probe)."""
    W = hebbian(to_device(patterns))  # weights on the device, made by the kernel
    W_host = W.get()
    S, S_next = to_device(probes), to_device(probes)
    energies = [energy(W_host, probes)]
    for _ in range(max_sweeps):
        hopfield(W, S, out=S_next)  # one asynchronous sweep of every probe
        S, S_next = S_next, S
        states = S.get()
        energies.append(energy(W_host, states))
        if np.array_equal(states, S_next.get()):
            break  # a fixed point: no neuron wants to flip
    return S.get(), energies


# --8<-- [end:recall]


def recall_numpy(patterns, probes, max_sweeps: int = 20):
    """The twin: the same sweeps with the kernels' NumPy references."""
    W = hebbian_ref(patterns)
    S = probes.astype(np.float64)
    energies = [energy(W, S)]
    for _ in range(max_sweeps):
        S_next = hopfield_ref(W, S)
        energies.append(energy(W, S_next))
        done = np.array_equal(S, S_next)
        S = S_next
        if done:
            break
    return S.astype(np.float32), energies


if __name__ == "__main__":
    n = 100
    for p in (5, 30):  # well under and well over the ~0.14 n patterns it can hold
        P = random_patterns(seed=0, p=p, n=n)
        final, energies = recall(P, corrupt(P, flips=15, seed=1))
        exact = np.all(final == P, axis=1).mean()
        print(
            f"{p} patterns of {n}: {exact:.0%} recalled exactly after "
            f"{len(energies) - 1} sweeps; mean energy "
            + " -> ".join(f"{e.mean():.0f}" for e in energies)
        )

"""A Hopfield network on the GPU: recall with the energy falling, and capacity (A5)."""

import numpy as np

from thousand.models.hopfield import corrupt, random_patterns, recall

n = 100
for p in (5, 30):  # large-N capacity ~0.14 n patterns (Amit, Gutfreund, Sompolinsky)
    patterns = random_patterns(seed=0, p=p, n=n)
    probes = corrupt(patterns, flips=15, seed=1)  # 15 of 100 values turned over
    final, energies = recall(patterns, probes)
    exact = np.all(final == patterns, axis=1).mean()
    path = " -> ".join(f"{e.mean():.0f}" for e in energies)
    print(f"{p} patterns: {exact:.0%} recalled exactly; mean energy {path}")

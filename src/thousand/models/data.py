"""Data for track A: generated (XOR, separable points) or shipped with a package
(scikit-learn's 8 x 8 digits). Every function is deterministic given its seed."""

from __future__ import annotations

import numpy as np

from thousand.optional import require

SPLIT_SEED = 0  # the held-out digits are the same in every run, whatever the seed

# --8<-- [start:xor]
XOR_X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
XOR_Y = np.array([0, 1, 1, 0])  # 1 when exactly one input is 1
# --8<-- [end:xor]


def one_hot(labels: np.ndarray, classes: int) -> np.ndarray:
    T = np.zeros((len(labels), classes), dtype=np.float32)
    T[np.arange(len(labels)), labels] = 1.0
    return T


# --8<-- [start:separable]
def separable_points(seed: int, n: int = 100, margin: int = 2):
    """n points with integer coordinates in [-10, 10]^2, labelled +1 or -1 by the
    side of a hidden line a x + b y + c = 0 they lie on; points within `margin` of
    the line (in units of a x + b y + c) are drawn again, so the classes are
    separable with room to spare. Returns X (n, 2), y (n,) and the line (a, b, c)."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(1, 4, 2) * rng.choice([-1, 1], 2)
    c = int(rng.integers(-5, 6))
    X = np.empty((0, 2))
    while len(X) < n:
        P = rng.integers(-10, 11, (n, 2))
        X = np.vstack([X, P[np.abs(P @ [a, b] + c) >= margin]])[:n]
    y = np.sign(X @ [a, b] + c)
    return X.astype(np.float32), y.astype(np.float32), (int(a), int(b), c)


# --8<-- [end:separable]


# --8<-- [start:digits]
def digits(test_fraction: float = 0.25):
    """scikit-learn's 1,797 handwritten digits (8 x 8 pixels, values 0 to 16),
    scaled to [0, 1], split once into training and held-out sets with the same
    share of each digit in both (the split's seed is fixed: SPLIT_SEED)."""
    require("sklearn", "thousand.models.data.digits")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    X = (d.data / 16.0).astype(np.float32)  # (1797, 64)
    return train_test_split(
        X,
        d.target,
        test_size=test_fraction,
        stratify=d.target,
        random_state=SPLIT_SEED,
    )  # X_train, X_test, y_train, y_test


# --8<-- [end:digits]


# --8<-- [start:images]
def as_images(X: np.ndarray, scale: int = 3, pad: int = 4) -> np.ndarray:
    """Rows of 64 pixels to NHWC images for LeNet-5: each pixel repeated into a
    scale x scale block, then a border of `pad` zeros, so 8 x 8 digits become 24 x 24
    ones centred in the 32 x 32 field the network was drawn for (LeCun et al. centred
    MNIST's 28 x 28 digits in 32 x 32 the same way, so that strokes near the edge
    still reach the middle of C1's 5 x 5 windows)."""
    images = X.reshape(-1, 8, 8)
    images = np.repeat(np.repeat(images, scale, axis=1), scale, axis=2)
    images = np.pad(images, ((0, 0), (pad, pad), (pad, pad)))
    return np.ascontiguousarray(images[..., None], dtype=np.float32)  # (N, H, W, 1)


# --8<-- [end:images]


# --8<-- [start:reversal]
SEP = 10  # the token between a sequence of digits and its reverse; digits are 0-9


def reversal(rng: np.random.Generator, n: int, digits: int):
    """n sequences "d1 ... dL SEP dL ... d1" of L = `digits` random digits, as a
    language model reads them: the tokens in, `idx` (n, 2L) int32, and the next
    token out, `targets` (n, 2L) int32; `weights` (n, 2L) is 1 where the target is
    a digit of the answer (the positions from SEP on) and 0 on the prompt, whose
    digits are random and cannot be predicted."""
    prompt = rng.integers(0, 10, (n, digits), dtype=np.int32)
    sep = np.full((n, 1), SEP, np.int32)
    seq = np.concatenate([prompt, sep, prompt[:, ::-1]], axis=1)  # (n, 2L + 1)
    weights = np.zeros((n, 2 * digits), np.float32)
    weights[:, digits:] = 1.0  # target t is the answer's digit t - L + 1
    return np.ascontiguousarray(seq[:, :-1]), np.ascontiguousarray(seq[:, 1:]), weights


def reversal_split(digits: int, held_out: int = 1000):
    """The held-out sequences (drawn from SPLIT_SEED, the same in every run) and a
    function batch(rng, n) that draws training sequences, never a held-out one."""
    test = reversal(np.random.default_rng(SPLIT_SEED), held_out, digits)
    seen = {row.tobytes() for row in test[0][:, :digits]}

    def batch(rng: np.random.Generator, n: int):
        idx, targets, weights = reversal(rng, n, digits)
        for i, row in enumerate(idx[:, :digits]):
            while row.tobytes() in seen:  # one in 10^L / held_out draws: redraw it
                row = rng.integers(0, 10, digits, dtype=np.int32)
            idx[i, :digits], idx[i, digits + 1 :] = row, row[::-1][:-1]
            targets[i, : digits - 1], targets[i, digits:] = row[1:], row[::-1]
        return idx, targets, weights

    return test, batch


# --8<-- [end:reversal]

"""Launchers reject bad input with a message that says what was expected. All of it
is checked before any GPU work, so these tests need no GPU."""

import numpy as np
import pytest

from thousand.kernels.matmul import matmul
from thousand.kernels.matrix_add import matrix_add
from thousand.kernels.neuron_layer import neuron_layer
from thousand.kernels.vector_add import vector_add

f32 = np.ones(8, dtype=np.float32)


@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda: vector_add(f32.astype(np.float64), f32),
            "`x` must be float32, got float64",
        ),
        (
            lambda: vector_add(f32, f32.astype(np.int32)),
            "`y` must be float32, got int32",
        ),
        (lambda: vector_add(f32, np.ones(9, np.float32)), "`y` must have shape (8,)"),
        (lambda: vector_add(f32.reshape(2, 4), f32.reshape(2, 4)), "`x` must be 1-D"),
        (lambda: vector_add(np.ones(16, np.float32)[::2], f32), "must be C-contiguous"),
        (
            lambda: vector_add([1.0] * 8, f32),
            "numpy.ndarray or a device array, got list",
        ),
        (
            lambda: vector_add(f32, f32, block=2048),
            "2048 threads; CUDA allows at most 1024",
        ),
        (lambda: vector_add(f32, f32, block=0), "block dimensions must be positive"),
        (
            lambda: vector_add(f32, f32, version=9),
            "no version 9; versions are [1, 2, 3, 4, 5]",
        ),
        (
            lambda: vector_add(f32, f32, out=np.ones(3, np.float32)),
            "`out` must have shape",
        ),
        (
            lambda: matrix_add(
                np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)
            ),
            "`b` must have shape (2, 3)",
        ),
        (
            lambda: matrix_add(
                np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), block=(64, 32)
            ),
            "2048 threads",
        ),
        (
            lambda: matmul(np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)),
            "inner dimensions differ",
        ),
        (
            lambda: matmul(
                np.asfortranarray(np.ones((3, 3), np.float32)),
                np.ones((3, 3), np.float32),
            ),
            "must be C-contiguous",
        ),
        (
            lambda: neuron_layer(
                np.ones((4, 3), np.float32),
                np.ones(4, np.float32),
                np.ones(4, np.float32),
            ),
            "`x` must have shape (3,)",
        ),
        (
            lambda: neuron_layer(
                np.ones((4, 3), np.float32),
                np.ones(3, np.float32),
                np.ones(4, np.float32),
                version=2,
                block=48,
            ),
            "block must be a multiple of 32",
        ),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)

"""Reduction beyond the float32 sum on the CPU backend (checked build): max and a
user-written operator, float32 and float64, every version; and the errors bad input
gets. The GPU layer runs the same cases up to 2^30 (tests/gpu/test_reduce_ops.py)."""

import numpy as np
import pytest

from tests.reduce_cases import OPS, check, inputs
from thousand.kernels.reduce import FAMILY, SUM, Operator, reduce

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")

CPU_SIZES = [1, 2, 33, 1025, 4099]


@pytest.mark.parametrize("version", [v.number for v in FAMILY.versions])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_operator_and_dtype(op, dtype, version):
    for n in CPU_SIZES:
        x = inputs(n, dtype, seed=n)
        check(reduce(x, version=version, op=op), x, op)


def test_empty_input_gives_the_identity():
    assert reduce(np.zeros(0, np.float32))[0] == 0.0
    assert reduce(np.zeros(0, np.float64), op=OPS[1], version=3)[0] == -np.inf


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: reduce(np.arange(10)), "must be float32 or float64, got int64"),
        (lambda: reduce(np.ones((2, 2), np.float32)), "must be 1-D"),
        (lambda: reduce(np.ones(8, np.float32), version=3, block=96), "takes blocks"),
        (lambda: reduce(np.ones(8, np.float32), version=6, block=128), "takes blocks"),
        (lambda: reduce(np.ones(8, np.float32), block=48), "multiple of 32"),
        (lambda: reduce(np.ones(8, np.float32), op=np.sum), "must be an Operator"),
        (
            lambda: reduce(np.ones(8), op=Operator("two words", "a", 0.0, np.sum)),
            "must be an identifier",
        ),
        (
            lambda: reduce(np.ones(8), out=np.zeros(1, np.float32)),
            "must be float64",
        ),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_an_operator_that_does_not_compile_says_so():
    broken = Operator("broken", "a +* b", 0.0, np.sum)
    with pytest.raises(Exception, match="broken|error"):
        reduce(np.ones(8, np.float32), op=broken)


def test_misaligned_device_view_is_rejected_by_v7():
    from thousand.cuda import to_device

    d = to_device(np.ones(9, np.float32))
    view = d[1:]
    with pytest.raises(ValueError, match="aligned to 16 bytes"):
        reduce(view)
    assert reduce(np.ones(9, np.float32)[1:], version=3)[0] == 8  # host: copied
    assert SUM.identity == 0.0

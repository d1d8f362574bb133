"""B11's convolution families on the CPU backend: every version at every check size
(the generic layer skips sizes whose dimensions multiply past its limit, which here
would skip groups, dilation and stride), against the float64 references, plus the
errors a caller gets for a bad geometry or shape."""

import numpy as np
import pytest

from thousand.bench.checks import check_version
from thousand.kernels import conv as conv_mod
from thousand.kernels import conv_backward_data as data_mod
from thousand.kernels import conv_backward_filter as filter_mod
from thousand.kernels.conv import conv, conv_ref
from thousand.kernels.conv_backward_data import conv_backward_data
from thousand.kernels.conv_backward_filter import conv_backward_filter, splits_for
from thousand.kernels.conv_geometry import ConvGeometry

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")

FAMILIES = [conv_mod.FAMILY, data_mod.FAMILY, filter_mod.FAMILY]
CASES = [
    pytest.param(f, v, size, id=f"{v.kernel}-{'x'.join(map(str, size))}")
    for f in FAMILIES
    for v in f.versions
    if not v.gpu_only
    for size in f.check_sizes
]


@pytest.mark.parametrize("family,version,size", CASES)
def test_every_geometry_matches_reference(family, version, size):
    err, tol = check_version(family, version, size, version.blocks[-1], seed=1)
    assert err <= tol, f"{version.kernel} at {size}: error {err:.3g}"


def test_backward_filter_sums_several_slices():
    """Enough pixels that v2 cuts the sum into slices and adds them in order."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2, 48, 40, 4), dtype=np.float32)
    geom = ConvGeometry(pad=1)
    dY = rng.standard_normal((2, 48, 40, 8), dtype=np.float32)
    assert splits_for(2 * 48 * 40) > 1
    got = conv_backward_filter(X, dY, (3, 3), geom)
    want = filter_mod.conv_backward_filter_ref(X, dY, (3, 3), geom)
    assert np.abs(got - want).max() / np.abs(want).max() < 1e-5


def test_gradients_are_the_adjoints_of_the_forward():
    """<conv(X), dY> = <X, dX> = <K, dK>: each gradient is the transpose of the
    forward map, checked with the kernels alone (no reference involved)."""
    rng = np.random.default_rng(4)
    geom = ConvGeometry(stride=2, pad=1, dilation=2, groups=2)
    X = rng.standard_normal((2, 9, 10, 4), dtype=np.float32)
    K = rng.standard_normal((3, 3, 2, 6), dtype=np.float32)
    Y = conv(X, K, geom)
    dY = rng.standard_normal(Y.shape, dtype=np.float32)
    dX = conv_backward_data(dY, K, (9, 10), geom)
    dK = conv_backward_filter(X, dY, (3, 3), geom)
    lhs = float((Y.astype(np.float64) * dY).sum())
    assert np.isclose(lhs, float((X.astype(np.float64) * dX).sum()), rtol=1e-4)
    assert np.isclose(lhs, float((K.astype(np.float64) * dK).sum()), rtol=1e-4)


def test_depthwise_is_one_filter_per_channel():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1, 6, 6, 3), dtype=np.float32)
    K = rng.standard_normal((3, 3, 1, 3), dtype=np.float32)
    geom = ConvGeometry(pad=1, groups=3)
    got = conv(X, K, geom)
    for c in range(3):  # channel c alone, through its own filter
        one = conv_ref(X[..., c : c + 1], K[..., c : c + 1], ConvGeometry(pad=1))
        assert np.allclose(got[..., c : c + 1], one, atol=1e-5)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda X, K: conv(X, K, ConvGeometry(groups=3)), "reads 12 channels"),
        (
            lambda X, K: conv(X, K[:, :, :2, :5].copy(), ConvGeometry(groups=2)),
            "groups = 2 must divide",
        ),
        (lambda X, K: conv(X, K, (1, 0, 1, 1)), "must be a ConvGeometry"),
        (lambda X, K: conv(X.astype(np.float64), K), "must be float32"),
        (lambda X, K: conv(X, K[:, :, :2].copy()), "reads 2 channels"),
        (lambda X, K: conv(X, K, ConvGeometry(dilation=4)), "does not fit"),
        (lambda X, K: conv(X, K, version=9), "no version 9"),
        (
            lambda X, K: conv(X, K, version=3, block=256),
            "written for blocks of 128 threads",
        ),
        (
            lambda X, K: conv_backward_data(
                np.zeros((1, 2, 2, 6), np.float32), K, (6, 6)
            ),
            "gives a (4, 4) output",
        ),
        (
            lambda X, K: conv_backward_data(
                np.zeros((1, 4, 4, 6), np.float32), K, (6,)
            ),
            "`hw` must be",
        ),
        (
            lambda X, K: conv_backward_filter(
                X, np.zeros((2, 4, 4, 6), np.float32), (3, 3)
            ),
            "holds 1 images",
        ),
    ],
)
def test_bad_input_is_refused(call, message):
    X = np.zeros((1, 6, 6, 4), np.float32)
    K = np.zeros((3, 3, 4, 6), np.float32)
    with pytest.raises(
        ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        call(X, K)


def test_geometry_refuses_bad_numbers():
    for bad in ({"stride": 0}, {"pad": -1}, {"dilation": 0}, {"groups": 1.5}):
        with pytest.raises(ValueError, match="must be an int"):
            ConvGeometry(**bad)

"""The coordinates family (B3): its reference against a simulated launch, checks that
would catch a wrong kernel, and launchers that refuse what a GPU would refuse."""

import itertools
from dataclasses import replace

import numpy as np
import pytest

from thousand.bench.checks import check_version
from thousand.kernels.coordinates import FAMILY, coordinates, coordinates_ref


def simulated_launch(shape, version, block):
    """The launch run forwards, the way the kernels work: every block, every thread,
    its element from its coordinates, the bounds check, then the record."""
    d, h, w = shape
    n = d * h * w
    size = tuple(block) + (1,) * (3 - len(block))
    extent = {1: (n, 1, 1), 2: (w, d * h, 1), 3: (w, h, d)}[version]
    grid = [-(-e // s) for e, s in zip(extent, size, strict=True)]
    out = np.full((6, n), -1, np.int64)
    for b in itertools.product(*(range(g) for g in grid)):
        for t in itertools.product(*(range(s) for s in size)):
            x, y, z = (bi * s + ti for bi, s, ti in zip(b, size, t, strict=True))
            if not (x < extent[0] and y < extent[1] and z < extent[2]):
                continue
            i = {1: x, 2: y * w + x, 3: (z * h + y) * w + x}[version]
            assert (out[:, i] == -1).all(), "two threads wrote one element"
            out[:, i] = (*b, *t)
    return out.reshape(6, d, h, w)


CASES = [
    (shape, version, block)
    for shape in [(1, 1, 1), (1, 3, 7), (2, 5, 9), (3, 4, 13)]
    for version, block in [
        (1, (4,)),
        (1, (7,)),
        (2, (4, 2)),
        (2, (3, 5)),
        (3, (4, 2, 2)),
        (3, (5, 3, 1)),
    ]
]


@pytest.mark.parametrize("shape,version,block", CASES)
def test_reference_matches_a_simulated_launch(shape, version, block):
    a = np.zeros(shape, np.float32)
    expected = simulated_launch(shape, version, block)
    assert (expected >= 0).all()  # every element has an owner
    np.testing.assert_array_equal(coordinates_ref(a, version, block), expected)


def test_family_reference_is_v3_with_its_default_block():
    a = np.zeros((3, 5, 70), np.float32)
    np.testing.assert_array_equal(
        coordinates_ref(a), simulated_launch(a.shape, 3, (32, 4, 2))
    )


@pytest.mark.usefixtures("cpu_backend_checked")
@pytest.mark.parametrize("version", [1, 2, 3])
def test_the_check_fails_when_the_block_differs_from_the_reference(version):
    """The per-version reference depends on the block: a launch with another block
    shape than the one checked against must fail, or the check proves nothing."""
    v = FAMILY.version(version)
    size = (2, 9, 37)
    err, tol = check_version(FAMILY, v, size, v.blocks[0])
    assert err <= tol

    def other_block(a, out=None, block=None):
        return v.run(a, out=out, block=v.blocks[1])

    err, tol = check_version(FAMILY, replace(v, run=other_block), size, v.blocks[0])
    assert err > tol


@pytest.mark.usefixtures("cpu_backend_checked")
def test_an_output_nobody_writes_fails_the_check():
    def writes_nothing(a, out=None, block=None):
        return out

    v = replace(FAMILY.version(2), run=writes_nothing)
    err, tol = check_version(FAMILY, v, (1, 4, 8), (4, 2))
    assert err > tol


@pytest.mark.usefixtures("cpu_backend_checked")
@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda: coordinates(np.zeros((2, 3, 4), np.float32), version=2, block=64),
            "coordinates_v2 takes a 2-D block (bx, by), got (64,)",
        ),
        (
            lambda: coordinates(np.zeros((2, 3), np.float32)),
            "`a` must be 3-D, got shape (2, 3)",
        ),
        (
            lambda: coordinates(
                np.zeros((1, 2, 3), np.float32), out=np.zeros((6, 1, 2, 3), np.float32)
            ),
            "`out` must be int32, got float32",
        ),
        (
            lambda: coordinates(
                np.zeros((1, 2, 3), np.float32), out=np.zeros((6, 2, 3), np.int32)
            ),
            "`out` must be 4-D",
        ),
        (
            lambda: coordinates(np.zeros((2, 3, 4), np.float32), block=(1, 1, 65)),
            "coordinates_v3 needs a block of 65 along z; this device allows at most 64",
        ),
        (
            lambda: coordinates(np.zeros((2, 3, 4), np.float32), block=(64, 4, 8)),
            "a block of (64, 4, 8) has 2048 threads; CUDA allows at most 1024",
        ),
        (  # 600,000 rows in blocks 8 high: 75,000 blocks along y
            lambda: coordinates(
                np.zeros((3, 200_000, 1), np.float32), version=2, block=(1, 8)
            ),
            "coordinates_v2 needs a grid of 75,000 along y; this device allows at "
            "most 65,535",
        ),
    ],
)
def test_launchers_refuse_what_the_device_cannot_launch(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)


@pytest.mark.usefixtures("cpu_backend_checked")
def test_arrays_whose_six_planes_overflow_int_are_refused():
    a = np.empty((1, 1, 2**31 // 6 + 1), np.float32)  # never touched: no pages used
    with pytest.raises(ValueError, match="overflow the kernels' int offsets"):
        coordinates(a)


def test_the_committed_launch_picture_is_what_the_reference_says():
    """The picture on the page (traced stores, docs/assets/access) agrees with the
    reference worked out from the block shape alone."""
    from thousand.site import access

    (panel,) = access.load("coordinates-2d")["panels"]
    rows, cols = panel["shape"]
    ref = coordinates_ref(np.zeros((1, rows, cols), np.float32), 2, panel["block"])
    for key, plane in (
        ("block_x", 0),
        ("block_y", 1),
        ("thread_x", 3),
        ("thread_y", 4),
    ):
        np.testing.assert_array_equal(panel[key], ref[plane, 0], err_msg=key)
    threads = np.prod(panel["grid"]) * np.prod(panel["block"])
    assert threads > rows * cols  # the picture shows idle threads past the edge

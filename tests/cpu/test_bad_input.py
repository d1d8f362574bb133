"""What a hostile caller gets: every launcher of every family refuses bad input with
a ValueError naming the argument, before any kernel runs; an `out` that overlaps an
input is refused unless the kernel is elementwise and `out` is that very input;
sizes beyond int32 indices are refused with the numbers before anything is
allocated; and max and min propagate NaN as NumPy does. Walking
`all_families()` holds a family added later to the same rules."""

import inspect
import re

import numpy as np
import pytest

from thousand.cuda import INDEX_LIMIT, Staging, check_block, to_device
from thousand.kernels.family import all_families

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")

FAMILIES = all_families()
VERSIONS = [(f, v) for f in FAMILIES for v in f.versions]
IDS = [v.kernel for _, v in VERSIONS]


def names(version) -> list[str]:
    """The launcher's input arguments, in order (what precedes `out`)."""
    params = inspect.signature(version.run, follow_wrapped=False).parameters
    return [p for p in params if p not in ("out", "block")][: len(params)]


def read_inputs(version, inputs) -> list[int]:
    """The positions of the inputs this version reads: a None there is refused.
    (row_sum's versions get the matrix in both orders and read one of them.)"""
    read = []
    for i in range(len(inputs)):
        try:
            version.run(*inputs[:i], None, *inputs[i + 1 :])
        except ValueError:
            read.append(i)
    return read


def sized_inputs(family, want):
    """Inputs of the first check size where `want(inputs)` holds."""
    rng = np.random.default_rng(0)
    for size in family.check_sizes:
        inputs = family.make_inputs(rng, size)
        if want(inputs):
            return inputs
    return None


def strided(x: np.ndarray) -> np.ndarray:
    """The same values, shape and dtype, but not C-contiguous."""
    return np.stack([x, x], axis=-1)[..., 0]


CORRUPT = {
    "not an array": lambda x: x.tolist(),
    # int32 inputs (token ids, class targets) get int64, what torch's .long() makes
    "wrong dtype": lambda x: x.astype(np.int64 if x.dtype == np.int32 else np.int32),
    # 1-D for a matrix, 2-D for a vector (a batch of rows may have any ndim >= 2)
    "wrong ndim": lambda x: x.ravel() if x.ndim > 1 else x[None],
    "not contiguous": strided,
}


@pytest.mark.parametrize("family, version", VERSIONS, ids=IDS)
@pytest.mark.parametrize("how", CORRUPT)
def test_every_launcher_names_a_bad_input(family, version, how):
    # every array at least 2 long (a flag, attention's `causal`, has no size)
    inputs = sized_inputs(
        family, lambda ins: all(a.size >= 2 for a in ins if isinstance(a, np.ndarray))
    )
    inputs = inputs or family.make_inputs(
        np.random.default_rng(0), family.check_sizes[0]
    )
    args = names(version)
    for i in read_inputs(version, inputs):
        if not isinstance(inputs[i], np.ndarray):
            continue  # a flag (attention's `causal`): tests/cpu/test_attention.py
        if how == "not contiguous" and inputs[i].size < 2:
            continue  # one element is contiguous whatever its strides
        bad = [*inputs[:i], CORRUPT[how](inputs[i]), *inputs[i + 1 :]]
        with pytest.raises(ValueError) as info:
            version.run(*bad)
        message = str(info.value)
        if how == "not an array":  # nothing else can be checked without an array
            assert f"`{args[i]}`" in message, message
        else:  # the input, or one whose shape no longer matches it
            assert re.search(r"`\w+`", message), message


def wrong_kind_blocks(version):
    """Blocks of the wrong kind for this launcher, and sizes no GPU launches."""
    default = version.default_block
    other = (32, 8) if isinstance(default, int) or len(default) == 1 else (256,)
    return [256.7, True, None, "256", 0, -32, 2048, other, (1, 1, 1, 1)]


@pytest.mark.parametrize("family, version", VERSIONS, ids=IDS)
def test_every_launcher_refuses_a_bad_block(family, version):
    inputs = family.make_inputs(np.random.default_rng(0), family.check_sizes[0])
    for block in wrong_kind_blocks(version):
        with pytest.raises(ValueError, match="block") as info:
            version.run(*inputs, block=block)
        assert "block" in str(info.value), (block, str(info.value))


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_version_must_be_an_int(family):
    first = family.versions[0].number
    assert family.version(np.int64(first)) is family.versions[0]
    for bad in (str(first), float(first), True, None):
        with pytest.raises(ValueError, match="version must be an int such as"):
            family.version(bad)


def test_version_as_a_string_is_not_a_missing_version():
    from thousand.kernels.vector_add import vector_add

    x = np.ones(8, np.float32)
    with pytest.raises(ValueError) as info:
        vector_add(x, x, version="4")
    assert "version must be an int such as 5, got '4' (str)" in str(info.value)


def test_numpy_ints_are_blocks():
    from thousand.kernels.transpose import transpose
    from thousand.kernels.vector_add import vector_add

    x = np.arange(300, dtype=np.float32)
    assert np.array_equal(vector_add(x, x, block=np.int64(256)), x + x)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(transpose(a, block=(np.int32(32), np.int64(8))), a.T)
    assert check_block("op", np.int64(256), ndim=1) == (256,)
    assert type(check_block("op", (np.int64(32), 8), ndim=2)[0]) is int


@pytest.mark.parametrize(
    "block, ndim, message",
    [
        ((256,), 1, "an int (threads per block) such as 256, got (256,)"),
        (256.7, 1, "got 256.7 (float)"),
        (256, 2, "a tuple of 2 ints such as (32, 8), got 256 (int)"),
        ((32, 8.0), 2, "a tuple of 2 ints"),
        ((256.7,), None, "an int (threads per block) such as 256, got 256.7"),
        (((32, 8),), None, "got (32, 8) (tuple)"),
        (256, None, "a tuple of 1 to 3 ints"),
        ((0,), None, "block dimensions must be positive"),
        ((64, 4, 8), 3, "a block of (64, 4, 8) has 2048 threads"),
    ],
)
def test_check_block_says_what_it_accepts(block, ndim, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_block("op", block, ndim)


# ---- out= overlapping an input ----


def output_shape(family, version, inputs):
    ref = version.ref or family.ref
    kw = {"block": version.default_block} if version.ref else {}
    return np.shape(ref(*inputs, **kw))


OUT_VERSIONS = [
    (f, v)
    for f, v in VERSIONS
    if "out" in inspect.signature(v.run, follow_wrapped=False).parameters
    and f.out_dtype == np.float32
    and not v.gpu_only
]


@pytest.mark.parametrize(
    "family, version", OUT_VERSIONS, ids=[v.kernel for _, v in OUT_VERSIONS]
)
def test_out_overlapping_an_input_is_refused(family, version):
    """`out` starts 4 floats into an input (16 bytes: aligned for vector loads), so
    it overlaps it without being it: no kernel can be right about that."""
    inputs = sized_inputs(family, lambda ins: ins[0].size > 4)
    read = read_inputs(version, inputs)
    shape = output_shape(family, version, inputs)
    for i in read:
        if not isinstance(inputs[i], np.ndarray):  # a flag (attention's `causal`)
            continue
        if inputs[i].size <= 4 or not int(np.prod(shape)):
            continue
        if inputs[i].dtype != np.float32:  # int32 ids: the float32 buffer below
            continue  # cannot hold them; the same span check refuses their overlap
        n, m = inputs[i].size, int(np.prod(shape))
        buffer = to_device(np.zeros(4 + max(n, m), np.float32))
        d_in = buffer[:n].reshape(inputs[i].shape)
        d_in.set(inputs[i])
        out = buffer[4 : 4 + m].reshape(shape)
        # arrays to the device; a flag (attention's `causal`, a bool) as it is
        d_inputs = [to_device(a) if isinstance(a, np.ndarray) else a for a in inputs]
        d_inputs[i] = d_in
        with pytest.raises(ValueError, match="`out` overlaps `"):
            version.run(*d_inputs, out=out)


def test_overlap_on_the_host_follows_the_same_rule():
    from thousand.kernels.matmul import matmul
    from thousand.kernels.vector_add import vector_add

    x = np.arange(9, dtype=np.float32)
    with pytest.raises(ValueError, match="`out` overlaps `x` in memory; only the"):
        vector_add(x[:-1], x[:-1], out=x[1:])
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    with pytest.raises(ValueError, match="`out` overlaps `a`.*cannot work in place"):
        matmul(a, a, out=a)
    with pytest.raises(ValueError, match="`out` overlaps `b`"):
        matmul(np.eye(3, dtype=np.float32), a, out=a)


def test_in_place_transpose_and_product_are_refused_on_the_device():
    from thousand.kernels.matmul import matmul
    from thousand.kernels.transpose import transpose

    dA = to_device(np.arange(16, dtype=np.float32).reshape(4, 4))
    for version in (1, 2, 3, 4):
        with pytest.raises(ValueError, match="`out` overlaps `a`"):
            transpose(dA, out=dA, version=version)
    for version in range(1, 8):
        with pytest.raises(ValueError, match="`out` overlaps `a`"):
            matmul(dA, dA, out=dA, version=version)
    assert np.array_equal(dA.get().ravel(), np.arange(16))  # untouched


def test_elementwise_kernels_work_in_place():
    from thousand.kernels.axpy import axpy
    from thousand.kernels.bias_relu import bias_relu
    from thousand.kernels.matrix_add import matrix_add
    from thousand.kernels.sgd import sgd
    from thousand.kernels.vector_add import vector_add

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 1001), dtype=np.float32)
    for version in (1, 2, 3, 4):  # host and device, out the first input or the second
        for host in (True, False):
            a, b = (x.copy(), y.copy()) if host else (to_device(x), to_device(y))
            got = vector_add(a, b, out=a, version=version)
            assert got is a and np.array_equal(a if host else a.get(), x + y)
            a, b = (x.copy(), y.copy()) if host else (to_device(x), to_device(y))
            vector_add(a, b, out=b, version=version)
            assert np.array_equal(b if host else b.get(), x + y)
    w, g, lr = x.copy(), y.copy(), np.array([0.1], np.float32)
    expected = (x.astype(np.float64) - 0.1 * y).astype(np.float32)
    sgd(w, g, lr, out=w)  # the docstring's in-place update
    np.testing.assert_allclose(w, expected, rtol=1e-6)
    dw = to_device(x)
    sgd(dw, to_device(y), to_device(lr), out=dw)
    np.testing.assert_allclose(dw.get(), expected, rtol=1e-6)
    dy = to_device(y)
    axpy(0.5, to_device(x), dy, out=dy)
    np.testing.assert_allclose(dy.get(), 0.5 * x + y, rtol=1e-6)
    Z, bias = rng.standard_normal((7, 5), dtype=np.float32), np.ones(5, np.float32)
    dZ = to_device(Z)
    bias_relu(dZ, to_device(bias), out=dZ)
    np.testing.assert_allclose(dZ.get(), np.maximum(Z + 1, 0), rtol=1e-6)
    dM = to_device(Z)
    matrix_add(dM, to_device(Z), out=dM)
    assert np.array_equal(dM.get(), Z + Z)


def test_a_shifted_view_is_not_in_place():
    from thousand.kernels.vector_add import vector_add

    d = to_device(np.arange(12, dtype=np.float32))
    with pytest.raises(ValueError, match="`out` overlaps `y`"):
        vector_add(to_device(np.ones(8, np.float32)), d[:8], out=d[4:12], version=2)


def test_softmax_xent_outputs_may_not_overlap_each_other():
    from thousand.kernels.softmax_xent import softmax_xent

    Z, T = np.zeros((4, 3), np.float32), np.full((4, 3), 1 / 3, np.float32)
    d = to_device(np.zeros(12, np.float32))
    with pytest.raises(ValueError, match="`loss` overlaps `out`"):
        softmax_xent(to_device(Z), to_device(T), out=d.reshape(4, 3), loss=d[:4])


# ---- sizes beyond int32 indices, refused before anything is allocated ----


def test_a_product_too_large_for_int32_is_refused_with_the_numbers():
    from thousand.kernels.matmul import matmul

    a, b = np.ones((65536, 1), np.float32), np.ones((1, 65536), np.float32)
    for version in range(1, 8):
        with pytest.raises(ValueError) as info:
            matmul(a, b, version=version)
        assert (
            "matmul: the output (65,536 x 65,536 = 4,294,967,296 elements) exceeds "
            "the int32 index range the kernels use"
        ) in str(info.value)


def test_conv2d_patch_matrix_is_checked_before_it_is_allocated():
    from thousand.kernels.conv2d import conv2d

    X, K = (
        np.zeros((1, 2048, 2048, 1), np.float32),
        np.zeros((32, 32, 1, 1), np.float32),
    )
    with pytest.raises(ValueError, match=r"the patch matrix \(4,068,289 x 1,024"):
        conv2d(X, K, version=2)


def test_hebbian_output_is_checked():
    from thousand.kernels.hebbian import hebbian

    with pytest.raises(ValueError, match=r"the output \(65,536 x 65,536"):
        hebbian(np.ones((1, 65536), np.float32))


def test_every_new_device_array_is_checked():
    """The backstop for any launcher: Staging refuses the size, and the scratch
    buffers of the im2col launchers do too, before allocating."""
    from thousand.kernels.layer_launch import scratch

    stage = Staging("op", np.zeros(1, np.float32))
    with pytest.raises(ValueError, match="the output"):
        stage.output(None, (65536, 65536))
    with pytest.raises(ValueError, match="the scratch buffer `cols`"):
        scratch("op", "cols", (65536, 65536))
    assert INDEX_LIMIT < 2**31


# ---- zero-size dimensions ----


@pytest.mark.parametrize(
    "call, message",
    [
        ("conv2d", "`X` has no channels (C = 0)"),
        ("conv2d_backward_data", "`dY` has no channels (F = 0)"),
        ("conv2d_backward_filter", "hold no images (N = 0)"),
    ],
)
def test_empty_sums_in_convolutions_are_refused(call, message):
    import importlib

    fn = getattr(importlib.import_module(f"thousand.kernels.{call}"), call)
    shapes = {
        "conv2d": ((1, 4, 4, 0), (2, 2, 0, 3)),
        "conv2d_backward_data": ((1, 3, 3, 0), (2, 2, 1, 0)),
        "conv2d_backward_filter": ((0, 4, 4, 1), (0, 3, 3, 2)),
    }[call]
    for version in (1, 2):
        with pytest.raises(ValueError, match=re.escape(message)):
            fn(*(np.zeros(s, np.float32) for s in shapes), version=version)


def test_empty_outputs_are_empty():
    from thousand.kernels.conv2d import conv2d
    from thousand.kernels.matmul import matmul
    from thousand.kernels.softmax_xent import softmax_xent

    assert conv2d(
        np.zeros((0, 4, 4, 1), np.float32), np.ones((2, 2, 1, 3), np.float32)
    ).shape == (0, 3, 3, 3)
    assert matmul(np.zeros((0, 3), np.float32), np.ones((3, 2), np.float32)).shape == (
        0,
        2,
    )
    # an empty sum over K is zero, as in NumPy
    assert np.array_equal(
        matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)),
        np.zeros((2, 3)),
    )
    assert softmax_xent(
        np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)
    ).shape == (0, 3)


# ---- NaN through reductions ----


def nan_cases():
    for n in (2, 33, 1025, 65537):
        for where in ("first", "middle", "last"):
            yield n, where
    yield 5, "all"


@pytest.mark.parametrize("op_name", ["max", "min", "sum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_nan_propagates_through_every_reduction(op_name, dtype):
    from thousand.kernels import reduce as R

    op = {"max": R.MAX, "min": R.MIN, "sum": R.SUM}[op_name]
    for n, where in nan_cases():
        x = np.random.default_rng(n).standard_normal(n).astype(dtype)
        index = {"first": 0, "middle": n // 2, "last": n - 1, "all": slice(None)}
        x[index[where]] = np.nan
        expected = R.reduce_ref(x, op)
        assert np.isnan(expected[0])
        for v in R.FAMILY.versions:
            got = R.reduce(x, version=v.number, op=op)
            assert np.isnan(got[0]), (op_name, v.number, n, where, got)


def test_max_and_min_without_nan_pick_an_element():
    from thousand.kernels.reduce import MAX, MIN, reduce

    x = np.random.default_rng(3).standard_normal(4099).astype(np.float32)
    x[17] = np.inf
    for version in range(1, 8):
        assert reduce(x, op=MAX, version=version)[0] == np.inf
        assert reduce(x, op=MIN, version=version)[0] == x.min()

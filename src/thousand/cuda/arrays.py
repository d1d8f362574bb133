"""Input checks and host/device staging shared by every launcher.

Checks run before anything touches the device, so bad input is rejected the same way
on every backend. Launchers accept NumPy arrays (copied in and out for you) or device
arrays (PyCUDA GPUArrays, or the CPU backend's DeviceArrays, left on the device);
mixing the two is an error.
"""

from __future__ import annotations

import math

import numpy as np

from .backend import device_address, empty, is_device_array, to_device

INT32_MAX = 2**31 - 1
# The kernels index with int, and an index runs past the last element by up to a
# grid's width (a bounds-checked tail, a grid-stride step, a ragged tile): sizes stop
# 2^24 short of 2^31, more than any grid adds.
INDEX_LIMIT = 2**31 - 2**24


def check_index_range(op: str, what: str, *dims: int, unit="elements") -> None:
    """Refuse `what` (an output, a scratch buffer, a count of threads) of `dims`
    elements in all when int32 indices could not reach every element. Call it before
    allocating: the numbers say what was asked for."""
    count = math.prod(int(d) for d in dims)
    if count > INDEX_LIMIT:
        shape = " x ".join(f"{int(d):,}" for d in dims)
        sizes = f"{shape} = {count:,}" if len(dims) > 1 else f"{count:,}"
        raise ValueError(
            f"{op}: {what} ({sizes} {unit}) exceeds the int32 index range the "
            f"kernels use (at most {INDEX_LIMIT:,})"
        )


def check_array(op: str, name: str, x, *, ndim: int, dtype=np.float32) -> None:
    """Raise ValueError unless `x` is a C-contiguous `ndim`-D array of `dtype`."""
    if not (isinstance(x, np.ndarray) or is_device_array(x)):
        raise ValueError(
            f"{op}: `{name}` must be a numpy.ndarray or a device array, "
            f"got {type(x).__name__}"
        )
    if x.dtype != np.dtype(dtype):
        raise ValueError(
            f"{op}: `{name}` must be {np.dtype(dtype).name}, got {x.dtype.name} "
            f"(convert with .astype(np.{np.dtype(dtype).name}))"
        )
    if x.ndim != ndim:
        raise ValueError(f"{op}: `{name}` must be {ndim}-D, got shape {tuple(x.shape)}")
    if not x.flags.c_contiguous:
        raise ValueError(
            f"{op}: `{name}` must be C-contiguous (row-major, no strides); "
            "pass np.ascontiguousarray(x)"
        )
    check_index_range(op, f"`{name}`", *x.shape)


def check_shape(op: str, name: str, x, shape: tuple) -> None:
    if tuple(x.shape) != tuple(shape):
        raise ValueError(
            f"{op}: `{name}` must have shape {tuple(shape)}, got {x.shape}"
        )


def _whole(b) -> bool:
    """A count of threads: a Python or NumPy int (a bool is not a count)."""
    return isinstance(b, int | np.integer) and not isinstance(b, bool)


def check_block(op: str, block, ndim: int | None = None, limit: int = 1024) -> tuple:
    """Validate a block shape and return it as a tuple of Python ints.

    `ndim` says what the launcher takes: 1, an int (threads per block); 2 or 3, a
    tuple of that many ints. Without it, `block` is a tuple of 1 to 3 ints the
    launcher built (often `(block,)` around the caller's value). CUDA allows at most
    1024 threads per block (every GPU since compute 2.0).
    """
    if ndim == 1:
        if not _whole(block):
            raise ValueError(
                f"{op}: `block` must be an int (threads per block) such as 256, "
                f"got {block!r} ({type(block).__name__})"
            )
        dims = (block,)
    elif ndim is not None:
        example = (32, 8, 1)[:ndim]
        if not (
            isinstance(block, tuple | list)
            and len(block) == ndim
            and all(_whole(b) for b in block)
        ):
            raise ValueError(
                f"{op}: `block` must be a tuple of {ndim} ints such as {example}, "
                f"got {block!r} ({type(block).__name__})"
            )
        dims = tuple(block)
    else:
        if not isinstance(block, tuple | list) or not 1 <= len(block) <= 3:
            raise ValueError(
                f"{op}: `block` must be a tuple of 1 to 3 ints such as (32, 8), "
                f"got {block!r} ({type(block).__name__})"
            )
        for b in block:
            if not _whole(b):
                # (b,) is the caller's own value, wrapped by a 1-D launcher
                want = "an int (threads per block) such as 256"
                if len(block) > 1:
                    want = "a tuple of ints such as (32, 8)"
                    b = block
                raise ValueError(
                    f"{op}: `block` must be {want}, got {b!r} ({type(b).__name__})"
                )
        dims = tuple(block)
    dims = tuple(int(b) for b in dims)
    if any(b <= 0 for b in dims):
        raise ValueError(f"{op}: block dimensions must be positive, got {dims}")
    threads = math.prod(dims)
    if threads > limit:
        raise ValueError(
            f"{op}: a block of {dims} has {threads} threads; "
            f"CUDA allows at most {limit}"
        )
    return dims


def _span(x) -> tuple[int, int]:
    """[start, end) of the bytes `x` covers (a contiguous array: check_array)."""
    if is_device_array(x):
        start = device_address(x)
    else:
        start = x.__array_interface__["data"][0]
    return start, start + x.nbytes


def _overlaps(a, b) -> bool:
    if not (a.size and b.size) or is_device_array(a) != is_device_array(b):
        return False  # nothing to touch, or host and device: Staging refuses those
    if not is_device_array(a):
        return bool(np.shares_memory(a, b))
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1


def check_no_overlap(
    op: str, out, inputs: dict, *, in_place_ok: bool = False, name: str = "out"
) -> None:
    """Refuse an output that shares memory with an input the kernel still reads.

    A kernel's threads read inputs while others write the output, in no set order,
    so an overlap gives wrong answers (a transpose in place, A @ A into A). An
    elementwise kernel reads element i of each input before writing element i, so
    there (`in_place_ok`) `out` may be exactly one of its inputs: the same memory in
    the same shape, nothing shifted. Host arrays follow the same rule as device
    arrays, so code behaves alike with either.
    """
    if out is None:
        return
    for arg, x in inputs.items():
        if x is None or not _overlaps(out, x):
            continue
        same = _span(out) == _span(x) and tuple(out.shape) == tuple(x.shape)
        if in_place_ok and same:  # the very array (or a view of all of it)
            continue
        why = (
            "only the very same array (same start and shape) can be updated in "
            "place by this elementwise kernel"
            if in_place_ok
            else "this kernel reads its inputs while it writes, so it cannot work "
            "in place"
        )
        raise ValueError(
            f"{op}: `{name}` overlaps `{arg}` in memory; {why}: pass a separate array"
        )


def check_aligned(op: str, name: str, x, nbytes: int) -> None:
    """Vector loads (float4) need addresses that are multiples of their width."""
    # An empty GPUArray has no address at all, and nothing to load.
    if x.size and is_device_array(x) and device_address(x) % nbytes:
        raise ValueError(
            f"{op}: `{name}` starts at a device address not aligned to {nbytes} bytes "
            "(a sliced device array?); this version uses vector loads, copy it first"
        )


class Staging:
    """Move inputs to the device if they are on the host, and results back.

    stage = Staging(op, x, y)          # after the checks; makes the context
    dx, dy = stage.inputs()            # device arrays either way
    d_out = stage.output(out, shape)   # the caller's `out`, or a new array
    ...launch...
    return stage.result(d_out, out)    # NumPy in, NumPy out

    `names` (the inputs' argument names) let errors name the input an `out`
    overlaps; without them an input is named by its position.
    """

    def __init__(self, op: str, *arrays, names: tuple[str, ...] | None = None):
        kinds = {type(a).__name__ if is_device_array(a) else "ndarray" for a in arrays}
        if len(kinds) > 1:
            raise ValueError(
                f"{op}: inputs mix {' and '.join(sorted(kinds))}; pass all of one kind"
            )
        self.op = op
        self.on_host = kinds.pop() == "ndarray"
        self.arrays = arrays
        names = names or [f"input {i + 1}" for i in range(len(arrays))]
        self.named = dict(zip(names, arrays, strict=True))
        from .backend import backend

        backend()  # decides (and says) where kernels run; a clear error if nowhere

    def inputs(self):
        return [to_device(a) if self.on_host else a for a in self.arrays]

    def output(self, out, shape, dtype=np.float32, *, in_place_ok=False, name="out"):
        """The device array to write into: the caller's `out`, or a new one.

        `out` may not overlap an input, except as the very same array where the
        kernel is elementwise (`in_place_ok`); a new one must be within int32 reach.
        """
        if out is None:
            what = "the output" if name == "out" else f"`{name}`"
            check_index_range(self.op, what, *shape)
            return empty(shape, dtype)
        if self.on_host != (not is_device_array(out)):
            raise ValueError(
                f"{self.op}: `{name}` must be the same kind of array as the inputs"
            )
        check_no_overlap(self.op, out, self.named, in_place_ok=in_place_ok, name=name)
        return to_device(out) if self.on_host else out

    def result(self, d_out, out=None):
        if not self.on_host:
            return d_out
        if out is None:
            return d_out.get()
        d_out.get(ary=out)
        return out

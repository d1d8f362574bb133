"""What a user would otherwise write: the same operation in NumPy (CPU, float32),
where PyTorch is installed in PyTorch on the GPU (cuBLAS for matmul: TF32 off, and
TF32 on for the tensor-core version), and in PyCUDA's own GPUArray methods.

Each entry takes the inputs and returns `run()`, which computes into an output
allocated once (so neither side pays for allocation or page faults) and returns it.
"""

from __future__ import annotations

import numpy as np


def _np_sigmoid_into(z, out):
    with np.errstate(over="ignore"):  # exp(-z) overflows to inf: sigmoid is then 0
        np.negative(z, out=out)
        np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _numpy_neuron_layer(W, x, b):
    o = np.empty(W.shape[0], np.float32)

    def run():
        np.dot(W, x, out=o)
        np.add(o, b, out=o)
        _np_sigmoid_into(o, o)
        return o

    return run


def _numpy_into(op, out_shape):
    def make(*inputs):
        o = np.empty(out_shape(*inputs), np.float32)

        def run():
            op(*inputs, out=o)
            return o

        return run

    return make


def _numpy_axpy(x, y):
    """a * x + y as NumPy computes it: two passes, into an output made once."""
    from thousand.kernels.axpy import A

    o = np.empty_like(y)

    def run():
        np.multiply(x, np.float32(A), out=o)
        np.add(o, y, out=o)
        return o

    return run


def _numpy_coordinates(a):
    """The coordinates of coordinates v3's launch (its default block), from the
    element indices np.indices gives, divided and reduced by the block shape."""
    from thousand.kernels.coordinates import BLOCKS

    o = np.empty((6, *a.shape), np.int32)

    def run():
        z, y, x = np.indices(a.shape, dtype=np.int32)
        for k, (p, size) in enumerate(zip((x, y, z), BLOCKS[3], strict=True)):
            np.floor_divide(p, size, out=o[k])  # blockIdx
            np.remainder(p, size, out=o[k + 3])  # threadIdx
        return o

    return run


def _numpy_stencil(x, taps):
    """np.correlate over x with R zeros on each side (its 'valid' part is n long)."""
    from thousand.kernels.stencil import R

    padded = np.zeros(x.shape[0] + 2 * R, np.float32)

    def run():
        padded[R : R + x.shape[0]] = x
        return np.correlate(padded, taps, mode="valid")

    return run


def _numpy_divergence(x):
    """The same turns per element, as whole-array float32 operations."""
    from thousand.kernels.divergence import divergence_numpy

    return divergence_numpy(x)


NUMPY = {
    "axpy": _numpy_axpy,
    "coordinates": _numpy_coordinates,
    "copy": _numpy_into(lambda x, out: np.copyto(out, x), lambda x: x.shape),
    "vector_add": _numpy_into(np.add, lambda x, y: x.shape),
    "matrix_add": _numpy_into(np.add, lambda a, b: a.shape),
    "sigmoid": _numpy_into(_np_sigmoid_into, lambda x: x.shape),
    "matmul": _numpy_into(np.matmul, lambda a, b: (a.shape[0], b.shape[1])),
    "neuron_layer": _numpy_neuron_layer,
    "reduce": _numpy_into(
        lambda x, out: np.sum(x, keepdims=True, out=out), lambda x: (1,)
    ),
    "transpose": _numpy_into(
        lambda a, out: np.copyto(out, a.T), lambda a: a.shape[::-1]
    ),
    "stencil": _numpy_stencil,
    # unroll sums the columns of a (K, n) matrix: K rows added into n outputs
    "unroll": _numpy_into(
        lambda x, out: np.sum(x, axis=0, out=out), lambda x: x.shape[1:]
    ),
    # strided's benchmark runs at its default stride, 1: x[::1] is all of x
    "strided": _numpy_into(lambda x, out: np.copyto(out, x[::1]), lambda x: x.shape),
    # row_sum's inputs are the matrix row-major and column-major; NumPy sums `a`
    "row_sum": _numpy_into(
        lambda a, a_cm, out: np.sum(a, axis=1, out=out), lambda a, a_cm: a.shape[:1]
    ),
    "divergence": _numpy_divergence,
    # occupancy's kernels are copies, each limited in another way
    "occupancy": _numpy_into(lambda x, out: np.copyto(out, x), lambda x: x.shape),
}


def torch_ops():
    """PyTorch equivalents, or {} when PyTorch (with CUDA) is not installed."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False  # compare float32 with float32

    def into(op, like):
        def make(*inputs):
            o = like(*inputs)

            def run():
                op(*inputs, out=o)
                return o

            return run

        return make

    def neuron_layer(W, x, b):
        o = torch.empty_like(b)
        return lambda: torch.addmv(b, W, x, out=o).sigmoid_()

    def matmul_tf32(a, b):
        o = a.new_empty((a.shape[0], b.shape[1]))

        def run():  # the switch is read when the call is made; put it back after
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                return torch.matmul(a, b, out=o)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False

        return run

    def axpy(x, y):
        from thousand.kernels.axpy import A

        o = torch.empty_like(y)
        return lambda: torch.add(y, x, alpha=A, out=o)

    return {
        "axpy": axpy,
        "copy": into(lambda x, out: out.copy_(x), lambda x: torch.empty_like(x)),
        "vector_add": into(torch.add, lambda x, y: torch.empty_like(x)),
        "matrix_add": into(torch.add, lambda a, b: torch.empty_like(a)),
        "sigmoid": into(torch.sigmoid, lambda x: torch.empty_like(x)),
        "matmul": into(
            torch.matmul, lambda a, b: a.new_empty((a.shape[0], b.shape[1]))
        ),
        "neuron_layer": neuron_layer,
        "matmul_tf32": matmul_tf32,
        "reduce": into(
            lambda x, out: torch.sum(x, dim=0, keepdim=True, out=out),
            lambda x: x.new_empty(1),
        ),
        "transpose": into(
            lambda a, out: out.copy_(a.t()), lambda a: a.new_empty(a.shape[::-1])
        ),
        "unroll": into(
            lambda x, out: torch.sum(x, dim=0, out=out),
            lambda x: x.new_empty(x.shape[1]),
        ),
        "row_sum": into(
            lambda a, a_cm, out: torch.sum(a, dim=1, out=out),
            lambda a, a_cm: a.new_empty(a.shape[0]),
        ),
    }


# A baseline measured for a version rather than for its family (Version.baseline),
# and the family whose inputs it takes.
BASELINE_FAMILY = {"matmul_tf32": "matmul"}


PYCUDA_BASELINES = ("reduce",)  # the families pycuda_ops() covers


def pycuda_ops():
    """PyCUDA's built-in GPUArray reductions (two passes, generated kernels). They
    allocate their partial results and output on every call: a memory pool serves
    those, as our launchers keep their scratch buffers, so neither side times
    cudaMalloc."""
    from pycuda import gpuarray
    from pycuda.tools import DeviceMemoryPool

    pool = DeviceMemoryPool()

    def reduce(x):
        return lambda: gpuarray.sum(x, allocator=pool.allocate)

    return {"reduce": reduce}

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


NUMPY = {
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

    return {
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

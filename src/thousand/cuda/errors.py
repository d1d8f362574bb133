"""Errors that say what is missing and how to get it, instead of a bare traceback."""


class CudaUnavailable(RuntimeError):
    """Kernels cannot run here; the message says why and what to do."""


class PyCudaMissing(CudaUnavailable):
    pass


class NoGpu(CudaUnavailable):
    pass


class NvccMissing(CudaUnavailable):
    pass

"""Errors that say what is missing and how to get it, instead of a bare traceback."""


class CudaUnavailable(RuntimeError):
    """Kernels cannot run here; the message says why and what to do."""


class PyCudaMissing(CudaUnavailable):
    pass


class NoGpu(CudaUnavailable):
    pass


class NvccMissing(CudaUnavailable):
    pass


class CompilerMissing(CudaUnavailable):
    """The CPU backend needs a host C++ compiler (g++) and none was found."""


class CpuBuildError(RuntimeError):
    """The host C++ compiler rejected a kernel file for the CPU backend."""


class BuildCacheError(CpuBuildError):
    """The build cache cannot be written (no permission, not a folder, a full disk):
    the message names the folder and THOUSAND_CACHE_DIR."""


class KernelFault(RuntimeError):
    """A kernel failed while running: the message names the kernel, block and thread."""

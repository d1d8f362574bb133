"""The runtime every kernel family uses: device, compilation, launch, timing, errors."""

from .arrays import Staging, check_aligned, check_array, check_block, check_shape
from .backend import (
    backend,
    device_address,
    empty,
    empty_like,
    fill,
    is_device_array,
    on_cpu,
    synchronize,
    timing_label,
    to_device,
    use_backend,
)
from .compiler import (
    compile_ptx,
    generated_source,
    kernel,
    module,
    nvcc_path,
    source_path,
)
from .constant import set_constant
from .device import device_info, driver, gpu_status, shared_memory_optin
from .errors import (
    CompilerMissing,
    CpuBuildError,
    CudaUnavailable,
    KernelFault,
    NoGpu,
    NvccMissing,
    PyCudaMissing,
)
from .launch import cdiv, grid_stride_blocks, launch, launch_1d
from .timing import host_time_ms, median, time_ms

__all__ = [
    "CompilerMissing",
    "CpuBuildError",
    "CudaUnavailable",
    "KernelFault",
    "NoGpu",
    "NvccMissing",
    "PyCudaMissing",
    "Staging",
    "backend",
    "device_address",
    "empty",
    "empty_like",
    "fill",
    "generated_source",
    "is_device_array",
    "on_cpu",
    "synchronize",
    "timing_label",
    "to_device",
    "use_backend",
    "cdiv",
    "check_aligned",
    "check_array",
    "check_block",
    "check_shape",
    "compile_ptx",
    "device_info",
    "driver",
    "gpu_status",
    "grid_stride_blocks",
    "host_time_ms",
    "kernel",
    "launch",
    "launch_1d",
    "median",
    "module",
    "nvcc_path",
    "set_constant",
    "shared_memory_optin",
    "source_path",
    "time_ms",
]

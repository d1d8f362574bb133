// B15: this package's GELU kernels, launched for PyTorch. nvcc compiles this file;
// the C++ compiler compiles gelu_extension.cpp, which checks PyTorch's tensors, picks
// a version and binds the functions for Python (thousand.beyond.extension.load
// builds both with torch.utils.cpp_extension).
//
// The kernels are not copied: gelu.cu and gelu_backward.cu (src/thousand/kernels, on
// nvcc's include path) are included whole, so the extension compiles the very source
// that the package's PyCUDA launchers run and its tests check. What is added here is
// only the launch: grid size, stream, and the launch's error handed back.
//
// Two files, as PyTorch's own extensions are laid out: PyTorch's headers and pybind11
// stay with the host compiler, and nvcc sees only CUDA.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "empty.cu"          // empty_kernel
#include "gelu.cu"           // gelu_v1, gelu_v2 (and the formula, gelu.cuh)
#include "gelu_backward.cu"  // gelu_backward_v1, gelu_backward_v2

namespace {

constexpr int kBlock = 256;  // the launchers' default block

// thousand.cuda.grid_stride_blocks: enough blocks to fill every SM, no more than
// `items` needs.
int blocks_for(int64_t items) {
    int device = 0, sms = 1, threads = kBlock;  // the runtime caches the attributes
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    int64_t full = int64_t{sms} * (threads / kBlock);
    int64_t need = (items + kBlock - 1) / kBlock;
    return static_cast<int>(std::max<int64_t>(1, std::min(full, need)));
}

}  // namespace

// --8<-- [start:forward]
// v2 (float4) needs 16-byte addresses; a view that starts mid-float4 (x[1:]) gets v1.
cudaError_t launch_gelu(const float* x, float* y, int n, bool aligned,
                        cudaStream_t stream) {
    if (aligned) {
        gelu_v2<<<blocks_for((n + 3) / 4), kBlock, 0, stream>>>(x, y, n);
    } else {
        gelu_v1<<<blocks_for(n), kBlock, 0, stream>>>(x, y, n);
    }
    return cudaGetLastError();  // a refused launch, by name, in the caller
}
// --8<-- [end:forward]

cudaError_t launch_gelu_backward(const float* dy, const float* x, float* dx, int n,
                                 bool aligned, cudaStream_t stream) {
    if (aligned) {
        gelu_backward_v2<<<blocks_for((n + 3) / 4), kBlock, 0, stream>>>(dy, x, dx, n);
    } else {
        gelu_backward_v1<<<blocks_for(n), kBlock, 0, stream>>>(dy, x, dx, n);
    }
    return cudaGetLastError();
}

// --8<-- [start:empty-launch]
// One launch of a kernel that does nothing: what crossing from Python into the
// extension and launching costs, with no work to hide it.
cudaError_t launch_empty(cudaStream_t stream) {
    empty_kernel<<<1, 1, 0, stream>>>();
    return cudaGetLastError();
}
// --8<-- [end:empty-launch]

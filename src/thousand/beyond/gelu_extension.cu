// B15: this package's GELU kernels inside PyTorch, as a CUDA extension
// (torch.utils.cpp_extension builds it: thousand.beyond.extension.load).
//
// The kernels are not copied: gelu.cu and gelu_backward.cu (src/thousand/kernels,
// on nvcc's include path) are included whole, so the extension compiles the very
// source that the package's PyCUDA launchers run and its tests check. This file adds
// what PyTorch needs around them: check every tensor, pick a version, size the grid,
// launch on PyTorch's current stream, hand back a tensor.
//
// Bound with pybind11, not TORCH_LIBRARY: these are plain functions, and the op that
// PyTorch sees, thousand::gelu, is defined once, in Python (extension.py), with
// torch.library.custom_op: its schema, its fake for torch.compile, its autograd and
// its CPU path in one place, which exists also where this file cannot be built (no
// GPU, no nvcc). The price is a hop through Python per call: b15-call-cost measures it.

// c10/cuda's headers, not ATen/cuda/CUDAContext.h: that one pulls in cuBLAS's and
// cuSPARSE's headers, which a CUDA toolkit with only nvcc and cudart lacks.
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/extension.h>

#include <algorithm>
#include <cstdint>

#include "empty.cu"          // empty_kernel
#include "gelu.cu"           // gelu_v1, gelu_v2 (and the formula, gelu.cuh)
#include "gelu_backward.cu"  // gelu_backward_v1, gelu_backward_v2

namespace {

constexpr int kBlock = 256;  // the launchers' default block
// The kernels index with int, and a grid-stride step runs past n by up to a grid's
// width: thousand.cuda.INDEX_LIMIT, the launchers' bound.
constexpr int64_t kIndexLimit = (int64_t{1} << 31) - (int64_t{1} << 24);

// --8<-- [start:check]
// PyTorch would hand a kernel any tensor: CPU memory, float64, a transposed view.
// Each becomes a Python ValueError or TypeError that names the argument.
void check(const torch::Tensor& t, const char* name,
           const torch::Tensor* like = nullptr) {
    TORCH_CHECK_VALUE(t.is_cuda(), "thousand::gelu: ", name,
                      " must be a CUDA tensor, got one on ", t.device());
    TORCH_CHECK_TYPE(t.scalar_type() == torch::kFloat, "thousand::gelu: ", name,
                     " must be float32, got ", t.scalar_type(), " (use .float())");
    TORCH_CHECK_VALUE(t.is_contiguous(), "thousand::gelu: ", name,
                      " must be contiguous, got strides ", t.strides(),
                      " (use .contiguous())");
    TORCH_CHECK_VALUE(t.numel() <= kIndexLimit, "thousand::gelu: ", name, " has ",
                      t.numel(), " elements; the kernels' int indices reach ",
                      kIndexLimit);
    if (like != nullptr) {
        TORCH_CHECK_VALUE(t.sizes() == like->sizes(), "thousand::gelu: ", name,
                          " must have x's shape ", like->sizes(), ", got ", t.sizes());
        TORCH_CHECK_VALUE(t.device() == like->device(), "thousand::gelu: ", name,
                          " must be on x's device ", like->device(), ", got ",
                          t.device());
    }
}
// --8<-- [end:check]

bool aligned16(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// thousand.cuda.grid_stride_blocks: enough blocks to fill every SM, no more than
// `items` needs.
int blocks_for(int64_t items) {
    int device = 0, sms = 0, threads = 0;  // the runtime caches these attributes
    C10_CUDA_CHECK(cudaGetDevice(&device));
    C10_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(
        &threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    int64_t full = int64_t{sms} * (threads / kBlock);
    int64_t need = (items + kBlock - 1) / kBlock;
    return static_cast<int>(std::max<int64_t>(1, std::min(full, need)));
}

// --8<-- [start:forward]
torch::Tensor gelu_forward(const torch::Tensor& x) {
    check(x, "x");
    const c10::cuda::CUDAGuard guard(x.device());  // x's GPU, not the current one
    torch::Tensor y = torch::empty_like(x);
    const int n = static_cast<int>(x.numel());
    if (n == 0) {
        return y;
    }
    // PyTorch's current stream, so the kernel is ordered with PyTorch's own work
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    const float* px = x.data_ptr<float>();
    float* py = y.data_ptr<float>();
    if (aligned16(px) && aligned16(py)) {  // float4 loads need 16-byte addresses
        gelu_v2<<<blocks_for((n + 3) / 4), kBlock, 0, stream>>>(px, py, n);
    } else {  // a view that starts mid-float4 (x[1:]): one float at a time
        gelu_v1<<<blocks_for(n), kBlock, 0, stream>>>(px, py, n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();  // a refused launch raises here, by name
    return y;
}
// --8<-- [end:forward]

torch::Tensor gelu_backward(const torch::Tensor& dy, const torch::Tensor& x) {
    check(x, "x");
    check(dy, "dy", &x);
    const c10::cuda::CUDAGuard guard(x.device());
    torch::Tensor dx = torch::empty_like(x);
    const int n = static_cast<int>(x.numel());
    if (n == 0) {
        return dx;
    }
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    const float* pdy = dy.data_ptr<float>();
    const float* px = x.data_ptr<float>();
    float* pdx = dx.data_ptr<float>();
    if (aligned16(pdy) && aligned16(px) && aligned16(pdx)) {
        int grid = blocks_for((n + 3) / 4);  // a thread per float4
        gelu_backward_v2<<<grid, kBlock, 0, stream>>>(pdy, px, pdx, n);
    } else {
        gelu_backward_v1<<<blocks_for(n), kBlock, 0, stream>>>(pdy, px, pdx, n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return dx;
}

// --8<-- [start:empty-launch]
// One launch of a kernel that does nothing, on `on`'s GPU: what crossing from Python
// into the extension and launching costs, with no work to hide it.
void launch_empty(const torch::Tensor& on) {
    TORCH_CHECK_VALUE(on.is_cuda(), "launch_empty: `on` must be a CUDA tensor (it ",
                      "names the GPU), got one on ", on.device());
    const c10::cuda::CUDAGuard guard(on.device());
    empty_kernel<<<1, 1, 0, c10::cuda::getCurrentCUDAStream()>>>();
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
// --8<-- [end:empty-launch]

}  // namespace

// --8<-- [start:bind]
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "thousand's gelu.cu and gelu_backward.cu, launched from PyTorch";
    m.def("gelu_forward", &gelu_forward, "GELU (tanh form) of a float32 CUDA tensor",
          pybind11::arg("x"));
    m.def("gelu_backward", &gelu_backward, "dy * gelu'(x), float32 CUDA tensors",
          pybind11::arg("dy"), pybind11::arg("x"));
    m.def("launch_empty", &launch_empty, "launch a kernel that does nothing",
          pybind11::arg("on"));
}
// --8<-- [end:bind]

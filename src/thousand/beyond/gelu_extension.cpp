// B15: the host side of the extension, compiled by the C++ compiler: check PyTorch's
// tensors, pick a version, call gelu_extension.cu's launches on PyTorch's current
// stream, and bind the functions for Python.
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

#include <cstdint>
#include <string>

// gelu_extension.cu
cudaError_t launch_gelu(const float* x, float* y, int n, bool aligned,
                        cudaStream_t stream);
cudaError_t launch_gelu_backward(const float* dy, const float* x, float* dx, int n,
                                 bool aligned, cudaStream_t stream);
cudaError_t launch_empty(cudaStream_t stream);

namespace {

// The kernels index with int, and a grid-stride step runs past n by up to a grid's
// width: thousand.cuda.INDEX_LIMIT, the launchers' bound.
constexpr int64_t kIndexLimit = (int64_t{1} << 31) - (int64_t{1} << 24);

// "[2, 3]". Not c10's operator<< for IntArrayRef: with PyTorch 2.11's wheel and the
// H200 machine's g++ 13, a message that streamed t.sizes() or t.strides() crashed
// the process (a segmentation fault) instead of raising.
std::string dims(c10::IntArrayRef a) {
    std::string s = "[";
    for (size_t i = 0; i < a.size(); ++i) {
        s += (i ? ", " : "") + std::to_string(a[i]);
    }
    return s + "]";
}

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
                      " must be contiguous, got strides ", dims(t.strides()),
                      " (use .contiguous())");
    TORCH_CHECK_VALUE(t.numel() <= kIndexLimit, "thousand::gelu: ", name, " has ",
                      t.numel(), " elements; the kernels' int indices reach ",
                      kIndexLimit);
    if (like != nullptr) {
        TORCH_CHECK_VALUE(t.sizes() == like->sizes(), "thousand::gelu: ", name,
                          " must have x's shape ", dims(like->sizes()), ", got ",
                          dims(t.sizes()));
        TORCH_CHECK_VALUE(t.device() == like->device(), "thousand::gelu: ", name,
                          " must be on x's device ", like->device(), ", got ",
                          t.device());
    }
}
// --8<-- [end:check]

bool aligned16(const torch::Tensor& t) {
    return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0;
}

// --8<-- [start:call]
torch::Tensor gelu_forward(const torch::Tensor& x) {
    check(x, "x");
    const c10::cuda::CUDAGuard guard(x.device());  // x's GPU, not the current one
    torch::Tensor y = torch::empty_like(x);
    if (x.numel() > 0) {
        // PyTorch's current stream, so the kernel is ordered with PyTorch's own work
        C10_CUDA_CHECK(launch_gelu(
            x.data_ptr<float>(), y.data_ptr<float>(), static_cast<int>(x.numel()),
            aligned16(x) && aligned16(y), c10::cuda::getCurrentCUDAStream()));
    }
    return y;
}
// --8<-- [end:call]

torch::Tensor gelu_backward(const torch::Tensor& dy, const torch::Tensor& x) {
    check(x, "x");
    check(dy, "dy", &x);
    const c10::cuda::CUDAGuard guard(x.device());
    torch::Tensor dx = torch::empty_like(x);
    if (x.numel() > 0) {
        C10_CUDA_CHECK(launch_gelu_backward(
            dy.data_ptr<float>(), x.data_ptr<float>(), dx.data_ptr<float>(),
            static_cast<int>(x.numel()), aligned16(dy) && aligned16(x) && aligned16(dx),
            c10::cuda::getCurrentCUDAStream()));
    }
    return dx;
}

void empty(const torch::Tensor& on) {
    TORCH_CHECK_VALUE(on.is_cuda(), "launch_empty: `on` must be a CUDA tensor (it ",
                      "names the GPU), got one on ", on.device());
    const c10::cuda::CUDAGuard guard(on.device());
    C10_CUDA_CHECK(launch_empty(c10::cuda::getCurrentCUDAStream()));
}

}  // namespace

// --8<-- [start:bind]
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "thousand's gelu.cu and gelu_backward.cu, launched from PyTorch";
    m.def("gelu_forward", &gelu_forward, "GELU (tanh form) of a float32 CUDA tensor",
          pybind11::arg("x"));
    m.def("gelu_backward", &gelu_backward, "dy * gelu'(x), float32 CUDA tensors",
          pybind11::arg("dy"), pybind11::arg("x"));
    m.def("launch_empty", &empty, "launch a kernel that does nothing",
          pybind11::arg("on"));
}
// --8<-- [end:bind]

// elman_step: one step of Elman's simple recurrent network after its two products.
// Gx (B x H) is x_t W_xh + b, from one GEMM over all steps; Gh (B x H) is
// h_{t-1} W_hh. h_t = tanh(Gx + Gh). The backward pass reuses tanh_backward:
// dZ = dh * (1 - h_t^2), computed from the saved h_t.
//
// v1: one thread per element.

// --8<-- [start:elman-step-v1]
extern "C" __global__ void elman_step_v1(const float* Gx, const float* Gh, float* h,
                                         int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) h[k] = tanhf(Gx[k] + Gh[k]);
}
// --8<-- [end:elman-step-v1]

// sgd: one step of stochastic gradient descent, out = w - lr[0] * g, over n values.
// The learning rate lives in device memory, so a schedule can change it without
// recompiling or passing a new argument; out may be w itself (an update in place).
//
// v1: one thread per parameter.

// --8<-- [start:sgd-v1]
extern "C" __global__ void sgd_v1(const float* w, const float* g, const float* lr,
                                  float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = w[i] - lr[0] * g[i];
    }
}
// --8<-- [end:sgd-v1]

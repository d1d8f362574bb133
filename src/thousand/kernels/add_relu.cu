// add_relu: Y = relu(A + B), elementwise over two arrays of the same shape (any
// shape, seen flat): the end of a residual block, where the shortcut A joins the
// block's last (batch-normalised) convolution B before the ReLU. One pass, where
// an add then a ReLU would write A + B and read it back.
//
// v1: one thread per element. Each thread reads A[i] and B[i] before it writes
//     Y[i], so Y may be A or B itself (in place, as a model overwrites its
//     activations).

// --8<-- [start:add-relu-v1]
extern "C" __global__ void add_relu_v1(const float* A, const float* B, float* Y,
                                       int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Y[i] = fmaxf(A[i] + B[i], 0.0f);
    }
}
// --8<-- [end:add-relu-v1]

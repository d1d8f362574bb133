// perceptron: one epoch of Rosenblatt's learning rule, the samples taken in order.
// X is n x d, y[i] is -1 or +1, w0 and w hold d weights and then the bias b.
// For each sample i: if y_i (w . x_i + b) <= 0 (a mistake), w += y_i x_i, b += y_i.
//
// v1: one block shares each sample: every thread multiplies its slice of the
//     features, a shared-memory tree adds the slices, and every thread updates its
//     slice of w. The samples go one after another: each update needs the last one.
//     The block size must be a power of two (the tree halves it).

// --8<-- [start:perceptron-v1]
extern "C" __global__ void perceptron_v1(const float* X, const float* y,
                                         const float* w0, float* w, int n, int d) {
    extern __shared__ float partial[];  // blockDim.x floats
    int t = threadIdx.x;
    for (int k = t; k <= d; k += blockDim.x) {
        w[k] = w0[k];
    }
    __syncthreads();
    for (int i = 0; i < n; ++i) {
        const float* x = X + (size_t)i * d;
        float s = 0.0f;
        for (int k = t; k < d; k += blockDim.x) {
            s += w[k] * x[k];
        }
        partial[t] = s;
        __syncthreads();
        for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
            if (t < stride) {
                partial[t] += partial[t + stride];
            }
            __syncthreads();
        }
        float margin = y[i] * (partial[0] + w[d]);
        __syncthreads();       // all have read partial[0] and w[d] before they change
        if (margin <= 0.0f) {  // a mistake: move the boundary towards x_i
            for (int k = t; k < d; k += blockDim.x) {
                w[k] += y[i] * x[k];
            }
            if (t == 0) {
                w[d] += y[i];
            }
        }
        __syncthreads();  // the next sample sees the updated w
    }
}
// --8<-- [end:perceptron-v1]

// hopfield: one asynchronous sweep of a Hopfield network over m states at once.
// W is n x n (symmetric, zero diagonal), S0 and S are m x n states of +-1. In a
// sweep neurons 0, 1, ..., n-1 update in turn, each seeing the ones before it
// already updated: s_i = +1 if sum_j W[i][j] s_j > 0, -1 if < 0, unchanged if 0.
// One neuron at a time is what makes the energy E = -1/2 s^T W s never rise.
//
// v1: one block per state, the state in shared memory; for each neuron the threads
//     split the sum over j, a shared-memory tree adds the parts, thread 0 decides.
//     The block size must be a power of two.

// --8<-- [start:hopfield-v1]
extern "C" __global__ void hopfield_v1(const float* W, const float* S0, float* S, int m,
                                       int n) {
    extern __shared__ float shared[];
    float* s = shared;            // this block's state: n floats
    float* partial = shared + n;  // then blockDim.x partial sums
    int t = threadIdx.x;
    size_t row = (size_t)blockIdx.x * n;
    for (int k = t; k < n; k += blockDim.x) {
        s[k] = S0[row + k];
    }
    __syncthreads();
    for (int i = 0; i < n; ++i) {
        float h = 0.0f;  // the field on neuron i
        for (int j = t; j < n; j += blockDim.x) {
            h += W[(size_t)i * n + j] * s[j];
        }
        partial[t] = h;
        __syncthreads();
        for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
            if (t < stride) {
                partial[t] += partial[t + stride];
            }
            __syncthreads();
        }
        if (t == 0 && partial[0] != 0.0f) {
            s[i] = partial[0] > 0.0f ? 1.0f : -1.0f;
        }
        __syncthreads();  // neuron i+1 sees the new s_i; partial is free again
    }
    for (int k = t; k < n; k += blockDim.x) {
        S[row + k] = s[k];
    }
}
// --8<-- [end:hopfield-v1]

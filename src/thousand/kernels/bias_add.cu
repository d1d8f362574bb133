// bias_add: out = Z + b, the bias b (N values) added to every row of Z (M x N): a
// dense layer with no activation, such as the one that produces a classifier's logits.
//
// v1: one thread per element; its column, i % N, picks the bias.

// --8<-- [start:bias-add-v1]
extern "C" __global__ void bias_add_v1(const float* Z, const float* b, float* out,
                                       int M, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M * N) {
        out[i] = Z[i] + b[i % N];
    }
}
// --8<-- [end:bias-add-v1]

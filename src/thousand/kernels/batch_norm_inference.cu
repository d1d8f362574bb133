// batch_norm_inference: Y = (X - mean) / sqrt(var + eps) * gamma + beta with the
// C channels on the last axis of X (an NHWC map, or M x C dense activations) and
// mean, var, gamma, beta C values each. At inference they are the running
// statistics the model kept; batch_norm.cu's training pass launches this kernel
// too, with the batch's own mean and biased variance, so both modes normalise
// with the same arithmetic.
//
// v1: one thread per element, consecutive threads on consecutive channels: the C
//     statistics and parameters are read from cache by every row.

// --8<-- [start:batch-norm-inference-v1]
extern "C" __global__ void batch_norm_inference_v1(const float* X, const float* gamma,
                                                   const float* beta, const float* mean,
                                                   const float* var, float* Y, int M,
                                                   int C, float eps) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)M * C) return;
    int c = i % C;
    float scale = rsqrtf(var[c] + eps) * gamma[c];  // the same rsqrtf as invstd
    Y[i] = (X[i] - mean[c]) * scale + beta[c];
}
// --8<-- [end:batch-norm-inference-v1]

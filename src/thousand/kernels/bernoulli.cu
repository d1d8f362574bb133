// bernoulli: out = 1 where U < P, else 0: a sample of independent binary units,
// each on with its probability P, from uniform numbers U in [0, 1) (M x N both).
// The uniforms come in from outside (the host's generator), so a run is repeatable
// and its NumPy twin draws exactly the same samples.
//
// v1: one thread per element.

// --8<-- [start:bernoulli-v1]
extern "C" __global__ void bernoulli_v1(const float* P, const float* U, float* out,
                                        int M, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M * N) {
        out[i] = U[i] < P[i] ? 1.0f : 0.0f;
    }
}
// --8<-- [end:bernoulli-v1]

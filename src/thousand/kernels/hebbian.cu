// hebbian: Hopfield's storage rule. P holds p patterns of n values +-1 (p x n);
// W[i][j] = sum over patterns mu of P[mu][i] * P[mu][j] for i != j, and W[i][i] = 0
// (no neuron drives itself). Units that are on together strengthen their link.
//
// v1: one thread per weight on a 2-D grid, x along j: a warp reads 32 neighbouring
//     values of each pattern (coalesced) and the same P[mu][i] (a broadcast).

// --8<-- [start:hebbian-v1]
extern "C" __global__ void hebbian_v1(const float* P, float* W, int p, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        float w = 0.0f;
        if (i != j) {
            for (int mu = 0; mu < p; ++mu) {
                w += P[(size_t)mu * n + i] * P[(size_t)mu * n + j];
            }
        }
        W[(size_t)i * n + j] = w;
    }
}
// --8<-- [end:hebbian-v1]

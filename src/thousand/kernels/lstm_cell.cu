// lstm_cell: one time step of an LSTM layer after its two matrix products.
// Gx (B x 4H) is x_t W_ih + b for this step, taken from one big GEMM over all
// steps; Gh (B x 4H) is h_{t-1} W_hh. Their sum holds the pre-activations of the
// four gates side by side, in PyTorch's order: input i, forget f, cell g, output o.
//   i = sigma(.), f = sigma(.), g = tanh(.), o = sigma(.)
//   c_t = f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
// The kernel also keeps the four activations (B x 4H) for the backward pass.
//
// v1: one thread per (row, hidden unit): it reads its four gates, writes c and h.

// --8<-- [start:lstm-cell-v1]
__device__ __forceinline__ float sigmoidf(float z) {
    return 1.0f / (1.0f + expf(-z));
}

extern "C" __global__ void lstm_cell_v1(const float* Gx, const float* Gh,
                                        const float* c_prev, float* h, float* c,
                                        float* acts, int B, int H) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;  // hidden unit
    int b = blockIdx.y;                             // row of the batch
    if (j >= H) return;
    size_t g0 = (size_t)b * 4 * H + j;  // gate k of unit j sits at g0 + k * H
    float i = sigmoidf(Gx[g0] + Gh[g0]);
    float f = sigmoidf(Gx[g0 + H] + Gh[g0 + H]);
    float g = tanhf(Gx[g0 + 2 * H] + Gh[g0 + 2 * H]);
    float o = sigmoidf(Gx[g0 + 3 * H] + Gh[g0 + 3 * H]);
    size_t s = (size_t)b * H + j;
    float ct = f * c_prev[s] + i * g;
    c[s] = ct;
    h[s] = o * tanhf(ct);
    acts[g0] = i;  // what the backward pass needs: no exp recomputed there
    acts[g0 + H] = f;
    acts[g0 + 2 * H] = g;
    acts[g0 + 3 * H] = o;
}
// --8<-- [end:lstm-cell-v1]

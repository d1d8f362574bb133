// lstm_cell_backward: the gradient through one LSTM step, the reverse of lstm_cell.
// In: dh (B x H), the gradient reaching h_t (from the loss at t and from step t+1
// through W_hh); dc (B x H), the gradient reaching c_t from step t+1; the saved
// activations acts = [i, f, g, o] (B x 4H); c_{t-1} and c_t (B x H).
// Out: dG (B x 4H), the gradient of the four pre-activations, which the model turns
// into dW_ih, dW_hh, db and dh_{t-1} with GEMMs; dc_prev (B x H) = dc_total * f.
//   dc_total = dc + dh * o * (1 - tanh(c_t)^2)
//   d(pre i) = dc_total * g * i(1-i)      d(pre f) = dc_total * c_{t-1} * f(1-f)
//   d(pre g) = dc_total * i * (1-g^2)     d(pre o) = dh * tanh(c_t) * o(1-o)
//
// v1: one thread per (row, hidden unit), the mirror of lstm_cell_v1.

// --8<-- [start:lstm-cell-backward-v1]
extern "C" __global__ void lstm_cell_backward_v1(const float* dh, const float* dc,
                                                 const float* acts, const float* c_prev,
                                                 const float* c, float* dG,
                                                 float* dc_prev, int B, int H) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    if (j >= H) return;
    size_t g0 = (size_t)b * 4 * H + j;
    size_t s = (size_t)b * H + j;
    float i = acts[g0], f = acts[g0 + H], g = acts[g0 + 2 * H], o = acts[g0 + 3 * H];
    float tc = tanhf(c[s]);
    float dct = dc[s] + dh[s] * o * (1.0f - tc * tc);  // both paths into c_t
    dG[g0] = dct * g * i * (1.0f - i);
    dG[g0 + H] = dct * c_prev[s] * f * (1.0f - f);
    dG[g0 + 2 * H] = dct * i * (1.0f - g * g);
    dG[g0 + 3 * H] = dh[s] * tc * o * (1.0f - o);
    dc_prev[s] = dct * f;  // the cell's own path: only f stands between steps
}
// --8<-- [end:lstm-cell-backward-v1]

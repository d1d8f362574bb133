// col_sum: out[j] = sum over i of G[i, j], for G with M rows and N columns: the
// gradient of a bias that was added to every row is the sum of the rows' gradients.
//
// v1: one thread per column, walking down it: in each step the threads of a warp read
//     neighbouring floats of one row, so the loads are coalesced.

// --8<-- [start:col-sum-v1]
extern "C" __global__ void col_sum_v1(const float* G, float* out, int M, int N) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's column
    if (j < N) {
        float s = 0.0f;
        for (int i = 0; i < M; ++i) {
            s += G[(size_t)i * N + j];
        }
        out[j] = s;
    }
}
// --8<-- [end:col-sum-v1]

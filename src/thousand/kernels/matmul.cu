// matmul: C = A @ B, row-major float32; A is M x K, B is K x N, C is M x N.
//
// v1: naive: one thread per element of C, reading a row of A and a column of B from
//     global memory (2K loads for 2K FLOPs). The start of the ladder in B9.

// --8<-- [start:matmul-v1]
extern "C" __global__ void matmul_v1(const float* A, const float* B, float* C,
                                     int M, int N, int K) {
    // Consecutive threads of a warp take consecutive columns of the same row.
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = acc;
    }
}
// --8<-- [end:matmul-v1]

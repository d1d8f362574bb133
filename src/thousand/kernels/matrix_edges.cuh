// matrix_edges.cuh: loads and stores of a row-major float32 matrix that stay inside
// it, for tiles that hang over its edges: zeros come in, nothing goes out. (matmul.cu
// has the same three functions inline, as its recorded runs were built from it.)

#pragma once

// Element (r, c) of a rows x cols row-major matrix, or 0 outside it.
__device__ __forceinline__ float load_or_zero(const float* M, int r, int c, int rows,
                                              int cols) {
    return (r < rows && c < cols) ? M[r * cols + c] : 0.0f;
}

// Four consecutive elements of row r, columns c..c+3, of a rows x cols matrix; zeros
// past the edges. One 16-byte load when the row length keeps float4s aligned.
__device__ __forceinline__ float4 load4(const float* M, int r, int c, int rows,
                                        int cols) {
    if (r < rows && c + 3 < cols && (cols & 3) == 0) {
        return *reinterpret_cast<const float4*>(M + r * cols + c);
    }
    float4 v;
    v.x = load_or_zero(M, r, c, rows, cols);
    v.y = load_or_zero(M, r, c + 1, rows, cols);
    v.z = load_or_zero(M, r, c + 2, rows, cols);
    v.w = load_or_zero(M, r, c + 3, rows, cols);
    return v;
}

// Store 4 consecutive values at (r, c..c+3), the part of them that lies inside C.
__device__ __forceinline__ void store4(float* C, int r, int c, int M, int N, float4 v) {
    if (r >= M)
        return;
    if (c + 3 < N && (N & 3) == 0) {
        *reinterpret_cast<float4*>(C + r * N + c) = v;
        return;
    }
    float e[4] = {v.x, v.y, v.z, v.w};
    for (int j = 0; j < 4; ++j) {
        if (c + j < N)
            C[r * N + c + j] = e[j];
    }
}

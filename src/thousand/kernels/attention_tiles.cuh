// Tiles of the float32 attention kernels (attention.cu, attention_backward.cu): a
// (T, d) matrix of one head staged into shared memory 64 rows at a time, and the two
// products every step of the forward and the backward is made of, on CUDA cores.
//
// A tile in shared memory is row-major with rows of D + PAD floats, D the head
// dimension rounded up to 16, 32, 64 or 128 (the columns past d hold zeros, which
// add nothing to a dot product). The 4 floats of padding shift each row by 4 banks,
// so the 8 rows that a quarter-warp reads with float4 loads start in 8 different
// groups of 4 banks: conflict-free, where rows of exactly 128 floats would all start
// in bank 0.
//
// Register tiling: the threads form an RS x 16 grid, and thread (ty, tx) owns rows
// ty + RS * i and columns tx + 16 * j of a product. The 16 threads of a row group
// read the same row of the left operand (a broadcast) and 16 different rows (or
// consecutive columns) of the right one, and each value a thread loads feeds TM or
// TN multiply-adds instead of one.

constexpr int PAD = 4;    // floats past D in every shared row
constexpr int TILE = 64;  // rows of q, k, v per tile: the kernels' Br = Bc = 64
constexpr unsigned FULL = 0xffffffffu;

// --8<-- [start:tiles]
// Rows row0 .. row0 + TILE - 1 of a (T, d) head into a (TILE, D + PAD) shared tile,
// one float4 per thread per step, consecutive threads on consecutive float4s of a
// row (coalesced); zeros past T and past d (d % 4 == 0 and d <= D).
template <int D, int THREADS>
__device__ __forceinline__ void load_tile(float* s, const float* g, int row0, int T,
                                          int d) {
    constexpr int PER_ROW = D / 4;
    for (int e = threadIdx.x; e < TILE * PER_ROW; e += THREADS) {
        int r = e / PER_ROW, c = (e % PER_ROW) * 4;
        float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (row0 + r < T && c < d) {
            x = *reinterpret_cast<const float4*>(g + (size_t)(row0 + r) * d + c);
        }
        *reinterpret_cast<float4*>(s + r * (D + PAD) + c) = x;
    }
}

__device__ __forceinline__ float part(const float4& v, int k) {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;  // k is a constant
}

// acc[i][j] += sum over k < K of A[ty + RS i][k] * B[tx + 16 j][k]: A times B
// transposed, both read along their rows, four k at a time (float4).
template <int TM, int TN, int RS, int K>
__device__ __forceinline__ void tile_abt(float (&acc)[TM][TN], const float* A, int lda,
                                         const float* B, int ldb, int ty, int tx) {
#pragma unroll 2
    for (int k = 0; k < K; k += 4) {
        float4 a[TM], b[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            a[i] = *reinterpret_cast<const float4*>(A + (ty + RS * i) * lda + k);
        }
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            b[j] = *reinterpret_cast<const float4*>(B + (tx + 16 * j) * ldb + k);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                acc[i][j] = fmaf(a[i].x, b[j].x, acc[i][j]);
                acc[i][j] = fmaf(a[i].y, b[j].y, acc[i][j]);
                acc[i][j] = fmaf(a[i].z, b[j].z, acc[i][j]);
                acc[i][j] = fmaf(a[i].w, b[j].w, acc[i][j]);
            }
        }
    }
}

// acc[i][j] += sum over k < K of A[ty + RS i][k] * B[k][tx + 16 j]: A times B. A is
// read four k at a time (float4, broadcast to the row group); B one row k at a
// time, 16 consecutive floats across the row group: one conflict-free wavefront.
template <int TM, int TN, int RS, int K>
__device__ __forceinline__ void tile_ab(float (&acc)[TM][TN], const float* A, int lda,
                                        const float* B, int ldb, int ty, int tx) {
#pragma unroll 2
    for (int k = 0; k < K; k += 4) {
        float4 a[TM];
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            a[i] = *reinterpret_cast<const float4*>(A + (ty + RS * i) * lda + k);
        }
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            float b[TN];
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                b[j] = B[(k + kk) * ldb + tx + 16 * j];
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] = fmaf(part(a[i], kk), b[j], acc[i][j]);
                }
            }
        }
    }
}
// --8<-- [end:tiles]

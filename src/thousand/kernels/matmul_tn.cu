// matmul_tn: C = A^T B, with A (K x M), B (K x N) and C (M x N) row-major float32:
// a linear layer's weight gradient dW = X^T dY, read straight from the activations X
// (tokens x inputs) with no transposed copy. The sum runs over K, the tokens of a
// batch (thousands), while M and N are the layer's widths (hundreds): 128 x 128 tiles
// of C make a few dozen blocks, and an H200 has 132 SMs. So the sum is split: block
// z of the grid's z takes the slice of K from z * kslice and writes its partial
// product to C + z M N, and col_sum adds the slices (in slice order, so every run
// gives the same bits). With `with_bias` the first row of blocks also sums the columns
// of B, each slice into bias + z N: a bias's gradient, db = sum over tokens of dY,
// from the tiles of dY already in shared memory.
//
// v1: matmul_v7's warp tiling (a 128 x 128 block tile, 8 warps of 64 x 32, each
//     thread two 8 x 4 patches, the next tiles fetched into registers while the
//     current ones are used), with A's tile read along its rows: A^T's tile is
//     stored k-major in shared memory, as v7 stores A transposed, so here the
//     float4 loads go straight in without being taken apart.

#define BM 128
#define BN 128
#define BK 16
#define WM 64
#define WN 32
#define TM 8
#define TN 4
#define WNIT 2
#define THREADS 256
#define WSUB_N (WN / WNIT)  // 16 columns per sub-tile

// Four consecutive floats of row r (row stride `cols`) from column c, zeros past
// `rows` rows or `cols` columns; one 16-byte load when the row allows it.
__device__ __forceinline__ float4 tn_load4(const float* X, int r, int c, int rows,
                                           int cols) {
    if (r < rows && c + 3 < cols && (cols & 3) == 0) {
        return *reinterpret_cast<const float4*>(X + (size_t)r * cols + c);
    }
    float v[4];
    for (int j = 0; j < 4; ++j) {
        v[j] = (r < rows && c + j < cols) ? X[(size_t)r * cols + c + j] : 0.0f;
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

// --8<-- [start:matmul-tn-v1]
extern "C" __global__ void __launch_bounds__(THREADS)
    matmul_tn_v1(const float* A, const float* B, float* C, float* bias, int with_bias,
                 int M, int N, int K, int kslice) {
    __shared__ __align__(16) float As[BK][BM];  // A^T's tile, k-major
    __shared__ __align__(16) float Bs[BK][BN];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int kbeg = blockIdx.z * kslice, kend = min(K, kbeg + kslice);
    int wrow = warp / (BN / WN) * WM, wcol = warp % (BN / WN) * WN;
    int lrow = lane / (WSUB_N / TN) * TM, lcol = lane % (WSUB_N / TN) * TN;
    bool sums = with_bias && blockIdx.y == 0 && tid < BN;  // db's threads

    float4 ra[2], rb[2];  // 16 x 128 floats of each tile: 512 float4s, 2 a thread
    auto fetch = [&](int k0) {
        for (int l = 0; l < 2; ++l) {
            int f = tid + l * THREADS, r = f / (BM / 4), c = f % (BM / 4) * 4;
            ra[l] = tn_load4(A, k0 + r, row0 + c, kend, M);  // rows past kend: 0
            rb[l] = tn_load4(B, k0 + r, col0 + c, kend, N);
        }
    };
    float acc[TM][WNIT * TN] = {};
    float a[TM], b[WNIT * TN], colsum = 0.0f;
    fetch(kbeg);
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        for (int l = 0; l < 2; ++l) {
            int f = tid + l * THREADS, r = f / (BM / 4), c = f % (BM / 4) * 4;
            *reinterpret_cast<float4*>(&As[r][c]) = ra[l];
            *reinterpret_cast<float4*>(&Bs[r][c]) = rb[l];
        }
        __syncthreads();
        if (k0 + BK < kend) fetch(k0 + BK);  // in flight while we compute below
        for (int k = 0; k < BK; ++k) {
            for (int i = 0; i < TM; i += 4) {
                *reinterpret_cast<float4*>(&a[i]) =
                    *reinterpret_cast<float4*>(&As[k][wrow + lrow + i]);
            }
            for (int ni = 0; ni < WNIT; ++ni) {
                *reinterpret_cast<float4*>(&b[ni * TN]) =
                    *reinterpret_cast<float4*>(&Bs[k][wcol + ni * WSUB_N + lcol]);
            }
            for (int i = 0; i < TM; ++i) {
                for (int j = 0; j < WNIT * TN; ++j) {
                    acc[i][j] += a[i] * b[j];
                }
            }
            if (sums) colsum += Bs[k][tid];  // zeros past kend and past N
        }
        __syncthreads();  // read before the next tiles overwrite them
    }
    float* out = C + (size_t)blockIdx.z * M * N;  // this slice's partial product
    for (int ni = 0; ni < WNIT; ++ni) {
        int c = col0 + wcol + ni * WSUB_N + lcol;
        for (int i = 0; i < TM; ++i) {
            int r = row0 + wrow + lrow + i;
            if (r >= M) break;
            for (int j = 0; j < TN; ++j) {
                if (c + j < N) out[(size_t)r * N + c + j] = acc[i][ni * TN + j];
            }
        }
    }
    if (sums && col0 + tid < N) bias[(size_t)blockIdx.z * N + col0 + tid] = colsum;
}
// --8<-- [end:matmul-tn-v1]

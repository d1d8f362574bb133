// matmul: C = A @ B, row-major float32; A is M x K, B is K x N, C is M x N.
// Every version takes any M, N, K >= 1: tiles that hang over an edge load zeros
// and store nothing outside C.
//
// v1: naive, threads mapped the wrong way: x walks down the rows of C, so a warp's
//     loads of A and stores of C are 32 lines apart (uncoalesced).
// v2: naive, coalesced: x walks along a row of C (the kernel of B1).
// v3: shared-memory tiles: a 32 x 32 block stages 32 x 32 tiles of A and B, and
//     every value loaded from DRAM/L2 is used 32 times.
// v4: 1-D register blocking: each thread computes 8 outputs of a column, so one
//     shared-memory load of B feeds 8 FMAs.
// v5: 2-D register blocking: each thread computes an 8 x 8 patch (outer products
//     of 8 values of A and 8 of B per k).
// v6: v5 with 16-byte loads: float4 from global memory, A stored transposed in
//     shared memory so the 8 values a thread needs are two float4 reads.
// v7: warp tiling: each of 8 warps owns a 64 x 32 piece of the block's 128 x 128
//     tile, and each of its threads two 8 x 4 patches in it; the next tiles are loaded
//     into registers while the current ones are multiplied (double buffering).
// v8: tensor cores (GPU only): mma.sync m16n8k8 on TF32 (inputs rounded to a 10-bit
//     mantissa, products accumulated in float32), tiles copied by cp.async into a
//     three-stage shared-memory pipeline.

// --8<-- [start:matmul-v1]
extern "C" __global__ void matmul_v1(const float* A, const float* B, float* C, int M,
                                     int N, int K) {
    // Consecutive threads of a warp take consecutive *rows*: 32 different lines.
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = acc;
    }
}
// --8<-- [end:matmul-v1]

// --8<-- [start:matmul-v2]
extern "C" __global__ void matmul_v2(const float* A, const float* B, float* C, int M,
                                     int N, int K) {
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
// --8<-- [end:matmul-v2]

// --8<-- [start:matmul-edges]
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
    if (r >= M) return;
    if (c + 3 < N && (N & 3) == 0) {
        *reinterpret_cast<float4*>(C + r * N + c) = v;
        return;
    }
    float e[4] = {v.x, v.y, v.z, v.w};
    for (int j = 0; j < 4; ++j) {
        if (c + j < N) C[r * N + c + j] = e[j];
    }
}
// --8<-- [end:matmul-edges]

// --8<-- [start:matmul-v3]
#define T3 32  // tile edge; the block is T3 x T3 threads
extern "C" __global__ void matmul_v3(const float* A, const float* B, float* C, int M,
                                     int N, int K) {
    __shared__ float As[T3][T3], Bs[T3][T3];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T3 + ty, col = blockIdx.x * T3 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T3) {
        As[ty][tx] = load_or_zero(A, row, k0 + tx, M, K);  // both loads coalesced
        Bs[ty][tx] = load_or_zero(B, k0 + ty, col, K, N);
        __syncthreads();  // the tiles are complete
        for (int k = 0; k < T3; ++k) {
            acc += As[ty][k] * Bs[k][tx];  // As: broadcast; Bs: 32 banks
        }
        __syncthreads();  // everyone is done before the next tiles overwrite these
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
// --8<-- [end:matmul-v3]

// --8<-- [start:matmul-v4]
#define BM4 64
#define BN4 64
#define BK4 8
#define TM4 8  // outputs per thread, down a column; 64 * 64 / 8 = 512 threads
extern "C" __global__ void __launch_bounds__(512)
    matmul_v4(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[BM4][BK4], Bs[BK4][BN4];
    int tid = threadIdx.x;
    int row0 = blockIdx.y * BM4, col0 = blockIdx.x * BN4;
    int tcol = tid % BN4, trow = tid / BN4 * TM4;  // this thread: rows trow..trow+7
    float acc[TM4] = {};
    for (int k0 = 0; k0 < K; k0 += BK4) {
        // 512 threads, 512 elements per tile: one load each, coalesced
        int ar = tid / BK4, ak = tid % BK4, bk = tid / BN4, bc = tid % BN4;
        As[ar][ak] = load_or_zero(A, row0 + ar, k0 + ak, M, K);
        Bs[bk][bc] = load_or_zero(B, k0 + bk, col0 + bc, K, N);
        __syncthreads();
        for (int k = 0; k < BK4; ++k) {
            float b = Bs[k][tcol];  // one shared load, reused TM4 times
            for (int i = 0; i < TM4; ++i) {
                acc[i] += As[trow + i][k] * b;
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < TM4; ++i) {
        int r = row0 + trow + i, c = col0 + tcol;
        if (r < M && c < N) {
            C[r * N + c] = acc[i];
        }
    }
}
// --8<-- [end:matmul-v4]

// --8<-- [start:matmul-v5]
#define BM5 128
#define BN5 128
#define BK5 8
#define TM5 8
#define TN5 8  // an 8 x 8 patch per thread: 128 * 128 / 64 = 256 threads
extern "C" __global__ void __launch_bounds__(256)
    matmul_v5(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[BM5][BK5], Bs[BK5][BN5];
    int tid = threadIdx.x;
    int row0 = blockIdx.y * BM5, col0 = blockIdx.x * BN5;
    int trow = tid / (BN5 / TN5) * TM5, tcol = tid % (BN5 / TN5) * TN5;
    float acc[TM5][TN5] = {}, a[TM5], b[TN5];
    for (int k0 = 0; k0 < K; k0 += BK5) {
        for (int i = tid; i < BM5 * BK5; i += 256) {  // 4 loads per thread per tile
            As[i / BK5][i % BK5] = load_or_zero(A, row0 + i / BK5, k0 + i % BK5, M, K);
            Bs[i / BN5][i % BN5] = load_or_zero(B, k0 + i / BN5, col0 + i % BN5, K, N);
        }
        __syncthreads();
        for (int k = 0; k < BK5; ++k) {
            for (int i = 0; i < TM5; ++i)
                a[i] = As[trow + i][k];
            for (int j = 0; j < TN5; ++j)
                b[j] = Bs[k][tcol + j];
            for (int i = 0; i < TM5; ++i) {  // 64 FMAs from 16 shared loads
                for (int j = 0; j < TN5; ++j) {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < TM5; ++i) {
        for (int j = 0; j < TN5; ++j) {
            int r = row0 + trow + i, c = col0 + tcol + j;
            if (r < M && c < N) {
                C[r * N + c] = acc[i][j];
            }
        }
    }
}
// --8<-- [end:matmul-v5]

// --8<-- [start:matmul-v6]
#define BM6 128
#define BN6 128
#define BK6 8
#define TM6 8
#define TN6 8
extern "C" __global__ void __launch_bounds__(256)
    matmul_v6(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ __align__(16) float AsT[BK6][BM6];  // A transposed: k major
    __shared__ __align__(16) float Bs[BK6][BN6];
    int tid = threadIdx.x;
    int row0 = blockIdx.y * BM6, col0 = blockIdx.x * BN6;
    int trow = tid / (BN6 / TN6) * TM6, tcol = tid % (BN6 / TN6) * TN6;
    // Each thread loads one float4 of A (row ar, k ak..ak+3) and one of B.
    int ar = tid / (BK6 / 4), ak = tid % (BK6 / 4) * 4;
    int bk = tid / (BN6 / 4), bc = tid % (BN6 / 4) * 4;
    float acc[TM6][TN6] = {}, a[TM6], b[TN6];
    for (int k0 = 0; k0 < K; k0 += BK6) {
        float4 va = load4(A, row0 + ar, k0 + ak, M, K);
        AsT[ak + 0][ar] = va.x;  // transpose on the way into shared memory
        AsT[ak + 1][ar] = va.y;
        AsT[ak + 2][ar] = va.z;
        AsT[ak + 3][ar] = va.w;
        *reinterpret_cast<float4*>(&Bs[bk][bc]) = load4(B, k0 + bk, col0 + bc, K, N);
        __syncthreads();
        for (int k = 0; k < BK6; ++k) {
            // two 16-byte shared loads for each operand
            float4* a4 = reinterpret_cast<float4*>(a);
            float4* b4 = reinterpret_cast<float4*>(b);
            a4[0] = *reinterpret_cast<const float4*>(&AsT[k][trow]);
            a4[1] = *reinterpret_cast<const float4*>(&AsT[k][trow + 4]);
            b4[0] = *reinterpret_cast<const float4*>(&Bs[k][tcol]);
            b4[1] = *reinterpret_cast<const float4*>(&Bs[k][tcol + 4]);
            for (int i = 0; i < TM6; ++i) {
                for (int j = 0; j < TN6; ++j) {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < TM6; ++i) {
        for (int j = 0; j < TN6; j += 4) {
            const float* p = &acc[i][j];
            store4(C, row0 + trow + i, col0 + tcol + j, M, N,
                   make_float4(p[0], p[1], p[2], p[3]));
        }
    }
}
// --8<-- [end:matmul-v6]

// --8<-- [start:matmul-v7]
// Block tile BM7 x BN7, BK7 deep; 8 warps, each a WM7 x WN7 warp tile; a thread's
// share of its warp tile is WMITER x WNITER patches of TM7 x TN7.
#define BM7 128
#define BN7 128
#define BK7 16
#define WM7 64
#define WN7 32
#define TM7 8
#define TN7 4
#define WNITER 2
#define THREADS7 256  // (128 / 64) x (128 / 32) = 8 warps
#define WMITER (WM7 * WN7 / (32 * TM7 * TN7 * WNITER))  // 1
#define WSUBM (WM7 / WMITER)                            // 64 rows per sub-tile
#define WSUBN (WN7 / WNITER)                            // 16 columns per sub-tile
extern "C" __global__ void __launch_bounds__(THREADS7)
    matmul_v7(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ __align__(16) float AsT[BK7][BM7];
    __shared__ __align__(16) float Bs[BK7][BN7];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int row0 = blockIdx.y * BM7, col0 = blockIdx.x * BN7;
    int wrow = warp / (BN7 / WN7) * WM7, wcol = warp % (BN7 / WN7) * WN7;
    // A lane's place in a WSUBM x WSUBN sub-tile: 8 rows of lanes by 4 columns.
    int lrow = lane / (WSUBN / TN7) * TM7, lcol = lane % (WSUBN / TN7) * TN7;

    // Loads: a tile of A is BM7 x BK7 / 4 = 512 float4s, 2 per thread; same for B.
    constexpr int A_LOADS = BM7 * BK7 / 4 / THREADS7;
    constexpr int B_LOADS = BK7 * BN7 / 4 / THREADS7;
    float4 ra[A_LOADS], rb[B_LOADS];
    auto fetch = [&](int k0) {  // global -> registers
        for (int l = 0; l < A_LOADS; ++l) {
            int f = tid + l * THREADS7;  // float4 number f of the tile
            ra[l] = load4(A, row0 + f / (BK7 / 4), k0 + f % (BK7 / 4) * 4, M, K);
        }
        for (int l = 0; l < B_LOADS; ++l) {
            int f = tid + l * THREADS7;
            rb[l] = load4(B, k0 + f / (BN7 / 4), col0 + f % (BN7 / 4) * 4, K, N);
        }
    };
    auto stash = [&]() {  // registers -> shared memory
        for (int l = 0; l < A_LOADS; ++l) {
            int f = tid + l * THREADS7, r = f / (BK7 / 4), k = f % (BK7 / 4) * 4;
            AsT[k + 0][r] = ra[l].x;
            AsT[k + 1][r] = ra[l].y;
            AsT[k + 2][r] = ra[l].z;
            AsT[k + 3][r] = ra[l].w;
        }
        for (int l = 0; l < B_LOADS; ++l) {
            int f = tid + l * THREADS7;
            *reinterpret_cast<float4*>(&Bs[f / (BN7 / 4)][f % (BN7 / 4) * 4]) = rb[l];
        }
    };

    float acc[WMITER * TM7][WNITER * TN7] = {};
    float a[WMITER * TM7], b[WNITER * TN7];
    fetch(0);
    for (int k0 = 0; k0 < K; k0 += BK7) {
        stash();
        __syncthreads();
        if (k0 + BK7 < K) fetch(k0 + BK7);  // in flight while we compute below
        for (int k = 0; k < BK7; ++k) {
            for (int mi = 0; mi < WMITER; ++mi) {
                int wm0 = wrow + mi * WSUBM;  // this sub-tile's first row
                for (int i = 0; i < TM7; i += 4) {
                    *reinterpret_cast<float4*>(&a[mi * TM7 + i]) =
                        *reinterpret_cast<float4*>(&AsT[k][wm0 + lrow + i]);
                }
            }
            for (int ni = 0; ni < WNITER; ++ni) {
                *reinterpret_cast<float4*>(&b[ni * TN7]) =
                    *reinterpret_cast<float4*>(&Bs[k][wcol + ni * WSUBN + lcol]);
            }
            for (int i = 0; i < WMITER * TM7; ++i) {
                for (int j = 0; j < WNITER * TN7; ++j) {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        __syncthreads();  // the tiles are read before the next stash overwrites them
    }
    for (int mi = 0; mi < WMITER; ++mi) {
        for (int ni = 0; ni < WNITER; ++ni) {
            for (int i = 0; i < TM7; ++i) {
                int r = row0 + wrow + mi * WSUBM + lrow + i;
                int c = col0 + wcol + ni * WSUBN + lcol;
                float* p = &acc[mi * TM7 + i][ni * TN7];
                store4(C, r, c, M, N, make_float4(p[0], p[1], p[2], p[3]));
            }
        }
    }
}
// --8<-- [end:matmul-v7]

#ifndef THOUSAND_ON_CPU  // tensor cores and inline PTX: nothing the CPU can emulate

// --8<-- [start:matmul-v8]
// WARPS_M x WARPS_N warps, each owning WTM x WTN tiles of 16 x 8 (one mma.sync
// m16n8k8 each per 8 of k); tiles BK8 deep flow through STAGES shared-memory buffers
// filled by cp.async. Rows are padded (+4, +8 floats) so that a warp's fragment
// reads hit 32 different banks.
#define WARPS_M 2
#define WARPS_N 4
#define WTM 4
#define WTN 8  // 2 x 4 warps of 64 x 64: a 128 x 256 block tile
#define BK8 32
#define STAGES 3  // 3 x 51 KiB of shared memory: the launcher opts in beyond 48 KiB
#define BM8 (WARPS_M * WTM * 16)
#define BN8 (WARPS_N * WTN * 8)
#define THREADS8 (WARPS_M * WARPS_N * 32)
#define APAD 4
#define BPAD 8
#define A_STAGE (BM8 * (BK8 + APAD))  // floats in one stage of A
#define B_STAGE (BK8 * (BN8 + BPAD))

// cp.async: copy `bytes` (4 or 16) from global to shared memory without passing
// through registers; `valid` bytes are read and the rest filled with zeros.
template <int bytes>
__device__ __forceinline__ void copy_async(float* smem, const float* gmem, int valid) {
    unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    if (bytes == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
                     "l"(gmem), "r"(valid));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
                     "l"(gmem), "r"(valid));
    }
}

// Start copying the tiles of A (BM8 x BK8) and B (BK8 x BN8) at k0 into one stage.
template <bool vec>
__device__ __forceinline__ void load_tiles(float* As, float* Bs, const float* A,
                                           const float* B, int M, int N, int K,
                                           int row0, int col0, int k0) {
    constexpr int W = vec ? 4 : 1;  // floats per copy
    for (int f = threadIdx.x; f < BM8 * BK8 / W; f += THREADS8) {
        int r = f / (BK8 / W), k = f % (BK8 / W) * W;
        int gr = row0 + r, gk = k0 + k;
        bool in = gr < M && gk < K;  // zero-filled otherwise (0 valid bytes)
        const float* src = in ? A + (size_t)gr * K + gk : A;
        copy_async<4 * W>(&As[r * (BK8 + APAD) + k], src, in ? 4 * W : 0);
    }
    for (int f = threadIdx.x; f < BK8 * BN8 / W; f += THREADS8) {
        int k = f / (BN8 / W), c = f % (BN8 / W) * W;
        int gk = k0 + k, gc = col0 + c;
        bool in = gk < K && gc < N;
        const float* src = in ? B + (size_t)gk * N + gc : B;
        copy_async<4 * W>(&Bs[k * (BN8 + BPAD) + c], src, in ? 4 * W : 0);
    }
}

// Round to TF32's 10-bit mantissa (nearest, ties away), as cuBLAS does. Passing the
// float unrounded also works (the tensor core ignores the low 13 bits, truncating):
// a few instructions fewer per fragment, and a larger error.
__device__ __forceinline__ unsigned tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

template <bool vec>
__device__ __forceinline__ void matmul_tc(const float* A, const float* B, float* C,
                                          int M, int N, int K) {
    extern __shared__ __align__(16) float smem8[];  // STAGES x (A tile, then B tile)
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int g = lane / 4, t = lane % 4;  // "group" and "thread in group" in PTX's layouts
    int row0 = blockIdx.y * BM8, col0 = blockIdx.x * BN8;
    int wm = warp / WARPS_N * WTM * 16, wn = warp % WARPS_N * WTN * 8;
    float acc[WTM][WTN][4] = {};  // the 4 values a lane holds of each 16 x 8 tile
    auto As = [&](int s) { return smem8 + s * A_STAGE; };
    auto Bs = [&](int s) { return smem8 + STAGES * A_STAGE + s * B_STAGE; };

    int tiles = (K + BK8 - 1) / BK8;
    for (int s = 0; s < STAGES - 1; ++s) {  // fill all but one stage
        if (s < tiles) {
            load_tiles<vec>(As(s), Bs(s), A, B, M, N, K, row0, col0, s * BK8);
        }
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int i = 0; i < tiles; ++i) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));  // tile i landed
        __syncthreads();  // ... for every thread, and tile i-1's stage is free again
        int next = i + STAGES - 1;
        if (next < tiles) {
            load_tiles<vec>(As(next % STAGES), Bs(next % STAGES), A, B, M, N, K, row0,
                            col0, next * BK8);
        }
        asm volatile("cp.async.commit_group;\n" ::);
        const float* a_s = As(i % STAGES);
        const float* b_s = Bs(i % STAGES);
#pragma unroll
        for (int kk = 0; kk < BK8; kk += 8) {
            unsigned a[WTM][4], b[WTN][2];
#pragma unroll
            for (int mi = 0; mi < WTM; ++mi) {  // A: rows g, g+8; columns t, t+4
                const float* p = &a_s[(wm + mi * 16 + g) * (BK8 + APAD) + kk + t];
                a[mi][0] = tf32(p[0]);
                a[mi][1] = tf32(p[8 * (BK8 + APAD)]);
                a[mi][2] = tf32(p[4]);
                a[mi][3] = tf32(p[8 * (BK8 + APAD) + 4]);
            }
#pragma unroll
            for (int ni = 0; ni < WTN; ++ni) {  // B: rows (k) t, t+4; column g
                const float* p = &b_s[(kk + t) * (BN8 + BPAD) + wn + ni * 8 + g];
                b[ni][0] = tf32(p[0]);
                b[ni][1] = tf32(p[4 * (BN8 + BPAD)]);
            }
#pragma unroll
            for (int mi = 0; mi < WTM; ++mi) {
#pragma unroll
                for (int ni = 0; ni < WTN; ++ni) {
                    float* d = acc[mi][ni];
                    asm volatile(
                        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                        : "r"(a[mi][0]), "r"(a[mi][1]), "r"(a[mi][2]), "r"(a[mi][3]),
                          "r"(b[ni][0]), "r"(b[ni][1]));
                }
            }
        }
    }
#pragma unroll
    for (int mi = 0; mi < WTM; ++mi) {  // C fragment: rows g, g+8; columns 2t, 2t+1
#pragma unroll
        for (int ni = 0; ni < WTN; ++ni) {
            int r = row0 + wm + mi * 16 + g, c = col0 + wn + ni * 8 + 2 * t;
            const float* d = acc[mi][ni];
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // rows r and r + 8
                int rr = r + 8 * h;
                if (rr < M && c + 1 < N && (N & 1) == 0) {
                    *reinterpret_cast<float2*>(&C[(size_t)rr * N + c]) =
                        make_float2(d[2 * h], d[2 * h + 1]);
                } else if (rr < M) {
                    if (c < N) C[(size_t)rr * N + c] = d[2 * h];
                    if (c + 1 < N) C[(size_t)rr * N + c + 1] = d[2 * h + 1];
                }
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS8)
    matmul_v8(const float* A, const float* B, float* C, int M, int N, int K) {
#if __CUDA_ARCH__ >= 800  // TF32 mma.sync and cp.async: Ampere and later
    // 16-byte copies need rows that start on 16-byte boundaries: K and N of 4k.
    if ((K & 3) == 0 && (N & 3) == 0) {
        matmul_tc<true>(A, B, C, M, N, K);
    } else {
        matmul_tc<false>(A, B, C, M, N, K);
    }
#else
    __trap();  // the launcher refuses older GPUs before it gets here
#endif
}
// --8<-- [end:matmul-v8]

#endif  // THOUSAND_ON_CPU

// softmax: y[i][k] = exp(x[i][k] - m_i) / sum_j exp(x[i][j] - m_i) along each row of a
// rows x cols float32 matrix (C order), m_i the row's max. Subtracting the max keeps
// every exponent <= 0, so no term overflows however large x is (1e30), and the max's
// own term is exp(0) = 1, so the sum is at least 1. A row with no finite max (all
// -inf, or holding +inf or NaN) gives NaN everywhere, as the same formula does in
// NumPy and in torch.softmax; -inf next to finite values gives 0.
//
// v1: one block per row, three passes over it: a block reduction for the max, one
//     for the sum of exp(x - max), then the outputs. Reads the row three times.
// v2: online softmax (Milakov & Gimelshein 2018, arXiv:1805.02867): one pass keeps
//     a running max m and a running sum d, rescaled by exp(m_old - m_new) whenever
//     the max grows; the block combines the threads' (m, d) pairs by the same rule,
//     then one pass writes the outputs. Two reads of the row instead of three.
// v3: one warp per row, several rows per block, for short rows (up to ~1,024
//     columns, where a block per row leaves most threads idle): v2's online pass,
//     the pairs combined by warp shuffles only: no shared memory, no __syncthreads.
// v4: one block per row, the row held in registers (16 floats per thread, loaded
//     and stored as float4 where the row is 16-byte aligned): read from DRAM once
//     and written once, the traffic of a copy. 256 threads hold 4,096 columns
//     (on an H100, 16 x 256 ran at the copy's speed where 8 x 512 reached 90% of
//     it: smaller blocks wait less at the barrier); the columns of a longer row
//     past 16 x blockDim are read twice, as in v2.
//
// Every version uses expf (within 2 ulp on a GPU, correctly rounded on the CPU
// backend). __expf's error grows with |x| (2 + 1.16|x| ulp), and the CPU backend
// maps it to expf, where that error would go unseen. Blocks are whole warps: the
// shuffles read all 32 lanes.

constexpr unsigned FULL = 0xffffffffu;

// --8<-- [start:block-reduce]
struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// xor butterfly: every lane ends with the combination of all 32 lanes
template <typename Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v = op(v, __shfl_xor_sync(FULL, v, offset));
    }
    return v;
}

// The block's max or sum, returned to every thread.
template <typename Op>
__device__ __forceinline__ float block_reduce(float v, Op op, float identity) {
    __shared__ float partial[32];  // one per warp: at most 1024 / 32
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce(v, op);
    __syncthreads();  // every warp has read partial[] of the previous call
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : identity;
    return warp_reduce(v, op);  // each warp combines the partials itself
}
// --8<-- [end:block-reduce]

// --8<-- [start:softmax-v1]
extern "C" __global__ void softmax_v1(const float* x, float* y, int rows, int cols) {
    const float* xr = x + (size_t)blockIdx.x * cols;  // this block's row
    float* yr = y + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        m = fmaxf(m, xr[k]);
    }
    m = block_reduce(m, Max(), -INFINITY);
    float s = 0.0f;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        s += expf(xr[k] - m);  // each term in [0, 1]: no overflow
    }
    s = block_reduce(s, Sum(), 0.0f);
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        yr[k] = expf(xr[k] - m) / s;
    }
}
// --8<-- [end:softmax-v1]

// --8<-- [start:online]
// e^(a - m) for m a running max (m >= a): 0 where a = -inf, even when m = -inf too
// (nothing finite seen yet), where expf(-inf - -inf) would be NaN.
__device__ __forceinline__ float exp_from(float a, float m) {
    return a == -INFINITY ? 0.0f : expf(a - m);
}

// A running max m and the sum d of e^(x - m) over the elements seen so far.
struct MD {
    float m, d;
};

// Two pairs become one: each sum rescaled to the larger max. One element x is the
// pair (x, 1), so a pass adds x with md_combine(md, {x, 1.0f}).
__device__ __forceinline__ MD md_combine(MD a, MD b) {
    float m = fmaxf(a.m, b.m);
    return {m, a.d * exp_from(a.m, m) + b.d * exp_from(b.m, m)};
}

// md_combine is commutative, bit for bit, so every lane ends with the same pair.
__device__ __forceinline__ MD warp_md(MD v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        MD other = {__shfl_xor_sync(FULL, v.m, offset),
                    __shfl_xor_sync(FULL, v.d, offset)};
        v = md_combine(v, other);
    }
    return v;
}

__device__ __forceinline__ MD block_md(MD v) {
    __shared__ MD partial[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_md(v);
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : MD{-INFINITY, 0.0f};
    return warp_md(v);
}
// --8<-- [end:online]

// --8<-- [start:softmax-v2]
extern "C" __global__ void softmax_v2(const float* x, float* y, int rows, int cols) {
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    MD md = {-INFINITY, 0.0f};
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        md = md_combine(md, {xr[k], 1.0f});  // the one pass over x for max and sum
    }
    md = block_md(md);
    float inv = 1.0f / md.d;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        yr[k] = expf(xr[k] - md.m) * inv;
    }
}
// --8<-- [end:softmax-v2]

// --8<-- [start:softmax-v3]
extern "C" __global__ void softmax_v3(const float* x, float* y, int rows, int cols) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;  // this warp's row
    if (row >= rows) return;  // whole warps leave together: the shuffles stay full
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    MD md = {-INFINITY, 0.0f};
    for (int k = lane; k < cols; k += 32) {
        md = md_combine(md, {xr[k], 1.0f});
    }
    md = warp_md(md);
    float inv = 1.0f / md.d;
    for (int k = lane; k < cols; k += 32) {
        yr[k] = expf(xr[k] - md.m) * inv;
    }
}
// --8<-- [end:softmax-v3]

// --8<-- [start:softmax-v4]
constexpr int HELD = 16;  // floats per thread kept in registers: four float4

// Column of a thread's register j: float4 j / 4 of the thread's packs, or, with
// scalar loads, one column per warp-wide step. Both cover [0, HELD * blockDim).
__device__ __forceinline__ int held_column(int j, bool vec) {
    return vec ? 4 * ((j / 4) * blockDim.x + threadIdx.x) + j % 4
               : j * blockDim.x + threadIdx.x;
}

extern "C" __global__ void __launch_bounds__(1024)
    softmax_v4(const float* x, float* y, int rows, int cols) {
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    // float4 needs every row on 16 bytes: 4 | cols and both buffers aligned
    bool vec = cols % 4 == 0 && (size_t)x % 16 == 0 && (size_t)y % 16 == 0;
    float v[HELD];  // constant indices after unrolling: registers, not local memory
    if (vec) {
#pragma unroll
        for (int p = 0; p < HELD / 4; ++p) {
            int k = held_column(4 * p, true);  // a whole float4 is in or out
            float4 f = k < cols
                           ? *reinterpret_cast<const float4*>(xr + k)
                           : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
            v[4 * p] = f.x, v[4 * p + 1] = f.y, v[4 * p + 2] = f.z, v[4 * p + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < HELD; ++j) {
            int k = held_column(j, false);
            v[j] = k < cols ? xr[k] : -INFINITY;  // -inf adds e^-inf = 0 below
        }
    }
    float m = v[0];
#pragma unroll
    for (int j = 1; j < HELD; ++j) {
        m = fmaxf(m, v[j]);
    }
    MD md = {m, 0.0f};
#pragma unroll
    for (int j = 0; j < HELD; ++j) {
        md.d += exp_from(v[j], m);
    }
    int tail = HELD * blockDim.x;  // a longer row: the rest streams past, twice
    for (int k = tail + threadIdx.x; k < cols; k += blockDim.x) {
        md = md_combine(md, {xr[k], 1.0f});
    }
    md = block_md(md);
    float inv = 1.0f / md.d;
#pragma unroll
    for (int j = 0; j < HELD; ++j) {
        v[j] = expf(v[j] - md.m) * inv;
    }
    if (vec) {
#pragma unroll
        for (int p = 0; p < HELD / 4; ++p) {
            int k = held_column(4 * p, true);
            if (k < cols) {
                float4 f = {v[4 * p], v[4 * p + 1], v[4 * p + 2], v[4 * p + 3]};
                *reinterpret_cast<float4*>(yr + k) = f;
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < HELD; ++j) {
            int k = held_column(j, false);
            if (k < cols) {
                yr[k] = v[j];
            }
        }
    }
    for (int k = tail + threadIdx.x; k < cols; k += blockDim.x) {
        yr[k] = expf(xr[k] - md.m) * inv;
    }
}
// --8<-- [end:softmax-v4]

// embedding_backward: the gradients of embedding (embedding.cu) for one upstream
// gradient dout (B, T, C), into one (V + maxT, C) array: rows 0 .. V-1 are dwte,
// rows V .. V+maxT-1 are dwpe.
//     dwte[v] = sum of dout[b][t] over the positions with idx[b][t] == v
//               (0 for a token that does not occur),
//     dwpe[t] = sum over b of dout[b][t] for t < T, 0 for T <= t < maxT.
// dwte is a scatter-add: the rows of one token may be anywhere in dout, and a
// frequent token ("the", or every position in a batch of one repeated id) gathers
// thousands of them. An id outside [0, V) adds to no row of dwte; it turns its
// position's row of dwpe to NaN instead, so the mistake shows (the launchers
// refuse such ids on the host; this is for device arrays).
//
// v1: one thread per element of dout, atomicAdd into dwte and dwpe (the launcher
//     zeroes both first). Simple, but the order in which the atomics land varies
//     from run to run, so the float sums do too, in their last bits.
// v2: deterministic, no float atomics, one launch. Blocks 0 .. G-1 own the tokens
//     v with v % G == block (so frequent ids, often small, spread over blocks):
//     each zeroes its rows, then walks all of idx in order, a tile of blockDim ids
//     at a time, collects its own positions in shared memory in ascending order
//     (warp ballots), and adds their rows of dout to dwte one position after
//     another, thread k owning columns k, k + blockDim, ...: every sum is taken
//     in position order, with no race. Blocks G .. of the grid own rows of dwpe
//     and sum them over b in order. Each block reads idx whole (B*T ints, from the
//     L2) and dout is read twice: once by token, once by position.

#include <math.h>  // NAN

constexpr unsigned FULL = 0xffffffffu;

// --8<-- [start:embedding-backward-v1]
extern "C" __global__ void embedding_backward_v1(const float* dout, const int* idx,
                                                 float* out, int BT, int T, int C,
                                                 int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < BT * C) {
        int row = i / C, c = i % C;
        int id = idx[row];
        float d = dout[i];
        bool ok = (unsigned)id < (unsigned)V;
        if (ok) {
            atomicAdd(out + (size_t)id * C + c, d);
        }
        float* dwpe = out + (size_t)V * C;
        atomicAdd(dwpe + (size_t)(row % T) * C + c, ok ? d : NAN);
    }
}
// --8<-- [end:embedding-backward-v1]

// --8<-- [start:embedding-backward-v2]
constexpr int MAX_BLOCK = 1024;

// dst[k] += src[k] over a row of C floats, thread by thread over the columns
__device__ __forceinline__ void add_row(float* __restrict__ dst,
                                        const float* __restrict__ src, int C,
                                        bool vec) {
    if (vec) {
        float4* d4 = reinterpret_cast<float4*>(dst);
        const float4* s4 = reinterpret_cast<const float4*>(src);
        for (int k = threadIdx.x; k < C / 4; k += blockDim.x) {
            float4 a = d4[k], b = s4[k];
            d4[k] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        }
    } else {
        for (int k = threadIdx.x; k < C; k += blockDim.x) {
            dst[k] += src[k];
        }
    }
}

extern "C" __global__ void __launch_bounds__(MAX_BLOCK)
    embedding_backward_v2(const float* __restrict__ dout, const int* __restrict__ idx,
                          float* __restrict__ out, int B, int T, int C, int V, int maxT,
                          int G) {
    __shared__ int mine[MAX_BLOCK];  // this tile's positions of my tokens, in order
    __shared__ int per_warp[MAX_BLOCK / 32];
    int BT = B * T;
    bool vec = C % 4 == 0 && ((size_t)dout | (size_t)out) % 16 == 0;
    if (blockIdx.x >= G) {  // dwpe: row t, summed over b in order
        float* dwpe = out + (size_t)V * C;
        for (int t = blockIdx.x - G; t < maxT; t += gridDim.x - G) {
            float* dst = dwpe + (size_t)t * C;
            for (int c = threadIdx.x; c < C; c += blockDim.x) {
                float s = 0.0f;
                for (int b = 0; b < B && t < T; ++b) {
                    int row = b * T + t;
                    bool ok = (unsigned)idx[row] < (unsigned)V;
                    s += ok ? dout[(size_t)row * C + c] : NAN;
                }
                dst[c] = s;
            }
        }
        return;
    }
    for (int v = blockIdx.x; v < V; v += G) {  // zero my rows of dwte
        for (int c = threadIdx.x; c < C; c += blockDim.x) {
            out[(size_t)v * C + c] = 0.0f;
        }
    }
    __syncthreads();  // the zeros are written before any row adds to them
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int tile = 0; tile < BT; tile += blockDim.x) {
        int p = tile + threadIdx.x;
        int id = p < BT ? idx[p] : -1;
        bool own = (unsigned)id < (unsigned)V && id % G == (int)blockIdx.x;
        unsigned votes = __ballot_sync(FULL, own);
        if (lane == 0) {
            per_warp[warp] = __popc(votes);
        }
        __syncthreads();
        int before = 0, total = 0;  // my tokens' positions in earlier warps, all
        for (int w = 0; w < (int)blockDim.x / 32; ++w) {
            before += w < warp ? per_warp[w] : 0;
            total += per_warp[w];
        }
        if (own) {
            mine[before + __popc(votes & ((1u << lane) - 1u))] = p;  // stable
        }
        __syncthreads();
        for (int j = 0; j < total; ++j) {  // one position after another: fixed order
            int q = mine[j];
            add_row(out + (size_t)idx[q] * C, dout + (size_t)q * C, C, vec);
        }
        __syncthreads();  // mine[] and per_warp[] are read before the next tile
    }
}
// --8<-- [end:embedding-backward-v2]

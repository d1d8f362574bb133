// embedding: out[b][t][:] = wte[idx[b][t]][:] + wpe[t][:], GPT-2's input layer: a
// token's row of the (V, C) token table plus its position's row of the (maxT, C)
// position table, for idx an int32 (B, T) array of token ids, T <= maxT. A gather:
// every output row copies one row of wte chosen by data, so reads are whole rows
// at addresses only the ids know. An id outside [0, V) never reads past wte: its
// row comes out NaN (the launchers refuse such ids on the host before launching;
// this guard is for device arrays, whose ids the host does not see).
//
// v1: one thread per output element: element i is row i / C, column i % C. Each
//     thread reloads its row's id (a warp's 32 loads of one id are one
//     transaction) and divides by C.
// v2: one warp per output row: the id read once, then the row moved with float4
//     loads and stores when C % 4 == 0 and the arrays are 16-byte aligned (every
//     row then is too), else one float per lane and step.

#include <math.h>  // NAN

// --8<-- [start:embedding-v1]
extern "C" __global__ void embedding_v1(const int* idx, const float* wte,
                                        const float* wpe, float* out, int BT, int T,
                                        int C, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < BT * C) {
        int row = i / C, c = i % C;
        int id = idx[row];
        // as unsigned, a negative id is huge: one comparison checks both ends
        float e = (unsigned)id < (unsigned)V ? wte[(size_t)id * C + c] : NAN;
        out[i] = e + wpe[(size_t)(row % T) * C + c];
    }
}
// --8<-- [end:embedding-v1]

// --8<-- [start:embedding-v2]
extern "C" __global__ void embedding_v2(const int* __restrict__ idx,
                                        const float* __restrict__ wte,
                                        const float* __restrict__ wpe,
                                        float* __restrict__ out, int BT, int T, int C,
                                        int V) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;  // this warp's (b, t)
    if (row >= BT) return;
    int id = idx[row];
    float* o = out + (size_t)row * C;
    if ((unsigned)id >= (unsigned)V) {
        for (int c = lane; c < C; c += 32) {
            o[c] = NAN;
        }
        return;
    }
    const float* e = wte + (size_t)id * C;
    const float* p = wpe + (size_t)(row % T) * C;
    bool vec = C % 4 == 0 && ((size_t)wte | (size_t)wpe | (size_t)out) % 16 == 0;
    if (vec) {
        const float4* e4 = reinterpret_cast<const float4*>(e);
        const float4* p4 = reinterpret_cast<const float4*>(p);
        float4* o4 = reinterpret_cast<float4*>(o);
        for (int k = lane; k < C / 4; k += 32) {
            float4 a = e4[k], b = p4[k];
            o4[k] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        }
    } else {
        for (int c = lane; c < C; c += 32) {
            o[c] = e[c] + p[c];
        }
    }
}
// --8<-- [end:embedding-v2]

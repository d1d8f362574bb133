// reduce: out[0] = x[0] ⊕ x[1] ⊕ ... ⊕ x[n-1], ⊕ associative with an identity.
//
// The package builds this file as it is: float32 and ⊕ = +. For max, a user's
// operator or float64, reduce.py puts other definitions of REDUCE_T, REDUCE_IDENTITY
// and REDUCE_COMBINE in front of the same text.
//
// v1-v6 are the classic ladder (after Mark Harris, "Optimizing Parallel Reduction in
// CUDA", NVIDIA, 2007): each block writes its partial result to partial[blockIdx.x],
// and the launcher runs the kernel again over the partials until one value is left.
// Blocks are powers of two, at least 64 threads.
// v1: interleaved addressing, the active threads chosen by tid % (2 * stride):
//     divergent warps.
// v2: interleaved addressing with the active threads packed at the front: no
//     divergence, but shared-memory bank conflicts.
// v3: sequential addressing: conflict-free.
// v4: each thread adds two elements while loading: half the blocks.
// v5: the last warp unrolled, safely (__syncwarp between every read and write).
// v6: the whole tree unrolled (the block size is a template parameter) and a
//     grid-stride loop: many elements per thread, a grid sized to the GPU.
// v7: the modern form: 16-byte loads in a grid-stride loop, warp shuffles instead of
//     shared memory, one atomic per block into out[0] (set to the identity first).

#ifndef REDUCE_T  // the package's own build: a float32 sum
#define REDUCE_T float
#define REDUCE_IDENTITY 0.0f
#define REDUCE_COMBINE(a, b) ((a) + (b))
#define REDUCE_IS_SUM 1
#endif

typedef REDUCE_T T;

// --8<-- [start:combine]
__device__ __forceinline__ T combine(T a, T b) {
    return REDUCE_COMBINE(a, b);
}
// --8<-- [end:combine]

// --8<-- [start:reduce-v1]
extern "C" __global__ void reduce_v1(const T* x, T* partial, int n) {
    extern __shared__ T s[];  // blockDim.x values, sized at launch
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : REDUCE_IDENTITY;
    __syncthreads();
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) {  // threads 0, 2, 4, ... then 0, 4, 8, ...
            s[tid] = combine(s[tid], s[tid + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}
// --8<-- [end:reduce-v1]

// --8<-- [start:reduce-v2]
extern "C" __global__ void reduce_v2(const T* x, T* partial, int n) {
    extern __shared__ T s[];
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : REDUCE_IDENTITY;
    __syncthreads();
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        int index = 2 * stride * tid;  // the busy threads are 0, 1, 2, ...
        if (index < blockDim.x) {      // ... but they touch s[] 2 * stride apart
            s[index] = combine(s[index], s[index + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}
// --8<-- [end:reduce-v2]

// --8<-- [start:reduce-v3]
extern "C" __global__ void reduce_v3(const T* x, T* partial, int n) {
    extern __shared__ T s[];
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : REDUCE_IDENTITY;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {  // a warp's 32 threads read 32 consecutive words
            s[tid] = combine(s[tid], s[tid + half]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}
// --8<-- [end:reduce-v3]

// --8<-- [start:reduce-v4]
extern "C" __global__ void reduce_v4(const T* x, T* partial, int n) {
    extern __shared__ T s[];
    int tid = threadIdx.x, i = blockIdx.x * 2 * blockDim.x + tid;  // 2 per thread
    T v = i < n ? x[i] : REDUCE_IDENTITY;
    if (i + blockDim.x < n) {
        v = combine(v, x[i + blockDim.x]);
    }
    s[tid] = v;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] = combine(s[tid], s[tid + half]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}
// --8<-- [end:reduce-v4]

// --8<-- [start:last-warp]
// The last 64 values in s[] down to s[0], by the first warp. Harris's 2007 version
// has no __syncwarp and relies on `volatile` and on the warp's 32 threads running in
// lock step. Since Volta (2017) the threads of a warp are scheduled independently,
// so one lane may read s[tid + offset] before its neighbour has written it; every
// read is now separated from the writes by __syncwarp().
__device__ __forceinline__ void last_warp(volatile T* s, int tid) {
    T v = s[tid];
    for (int offset = 32; offset > 0; offset /= 2) {
        v = combine(v, s[tid + offset]);
        __syncwarp();  // every lane has read before any lane writes
        s[tid] = v;
        __syncwarp();  // every lane has written before the next read
    }
}
// --8<-- [end:last-warp]

// --8<-- [start:reduce-v5]
extern "C" __global__ void reduce_v5(const T* x, T* partial, int n) {
    extern __shared__ T s[];
    int tid = threadIdx.x, i = blockIdx.x * 2 * blockDim.x + tid;
    T v = i < n ? x[i] : REDUCE_IDENTITY;
    if (i + blockDim.x < n) {
        v = combine(v, x[i + blockDim.x]);
    }
    s[tid] = v;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 32; half /= 2) {  // stop at one warp
        if (tid < half) {
            s[tid] = combine(s[tid], s[tid + half]);
        }
        __syncthreads();
    }
    if (tid < 32) {
        last_warp(s, tid);
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}
// --8<-- [end:reduce-v5]

// --8<-- [start:reduce-v6]
template <int BLOCK>  // a compile-time block size: the tree needs no loop
__device__ __forceinline__ void reduce_unrolled(const T* x, T* partial, int n) {
    __shared__ T s[BLOCK];
    int tid = threadIdx.x;
    T v = REDUCE_IDENTITY;
    // Many elements per thread: two per step, the grid striding over the array.
    for (int i = blockIdx.x * 2 * BLOCK + tid; i < n; i += gridDim.x * 2 * BLOCK) {
        v = combine(v, x[i]);
        if (i + BLOCK < n) {
            v = combine(v, x[i + BLOCK]);
        }
    }
    s[tid] = v;
    __syncthreads();
    // BLOCK is a constant, so the compiler drops the steps a smaller block skips
    // and unrolls the rest: no loop counter, no loop test.
#pragma unroll
    for (int half = BLOCK / 2; half > 32; half /= 2) {
        if (tid < half) {
            s[tid] = combine(s[tid], s[tid + half]);
        }
        __syncthreads();
    }
    if (tid < 32) {
        last_warp(s, tid);
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}

extern "C" __global__ void __launch_bounds__(256)
    reduce_v6(const T* x, T* partial, int n) {
    reduce_unrolled<256>(x, partial, n);
}
// --8<-- [end:reduce-v6]

// --8<-- [start:warp-reduce]
// After the loop, lane 0 holds the combination of all 32 lanes' values.
__device__ __forceinline__ T warp_reduce(T v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v = combine(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
}
// --8<-- [end:warp-reduce]

// --8<-- [start:atomic-combine]
// out[0] = combine(out[0], v) as one atomic step. A sum has atomicAdd; any other
// operator retries a compare-and-swap on the value's bits until no other block has
// changed it in between.
__device__ __forceinline__ void atomic_combine(T* out, T v) {
#ifdef REDUCE_IS_SUM
    atomicAdd(out, v);
#else
    if constexpr (sizeof(T) == 4) {
        unsigned* bits = reinterpret_cast<unsigned*>(out);
        unsigned seen = *bits, expected;
        do {
            expected = seen;
            T now = combine(__uint_as_float(expected), v);
            seen = atomicCAS(bits, expected, __float_as_uint(now));
        } while (seen != expected);
    } else {
        unsigned long long* bits = reinterpret_cast<unsigned long long*>(out);
        unsigned long long seen = *bits, expected;
        do {
            expected = seen;
            T now = combine(__longlong_as_double(expected), v);
            seen = atomicCAS(bits, expected, __double_as_longlong(now));
        } while (seen != expected);
    }
#endif
}
// --8<-- [end:atomic-combine]

// --8<-- [start:reduce-v7]
extern "C" __global__ void reduce_v7(const T* x, T* out, int n) {
    __shared__ T warp_results[32];       // one per warp: at most 1024 / 32
    constexpr int PER = 16 / sizeof(T);  // per 16-byte load: 4 floats, 2 doubles
    struct alignas(16) Pack {
        T v[PER];
    };
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    int packs = n / PER;  // the launcher checked 16-byte alignment
    const Pack* xp = reinterpret_cast<const Pack*>(x);
    T v = REDUCE_IDENTITY;
    for (int i = first; i < packs; i += stride) {
        Pack p = xp[i];
        for (int j = 0; j < PER; ++j) {
            v = combine(v, p.v[j]);
        }
    }
    for (int i = PER * packs + first; i < n; i += stride) {  // fewer than PER left
        v = combine(v, x[i]);
    }
    v = warp_reduce(v);
    if (lane == 0) {
        warp_results[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {  // the first warp combines the block's warps
        v = lane < blockDim.x / 32 ? warp_results[lane] : REDUCE_IDENTITY;
        v = warp_reduce(v);
        if (lane == 0) {
            atomic_combine(out, v);
        }
    }
}
// --8<-- [end:reduce-v7]

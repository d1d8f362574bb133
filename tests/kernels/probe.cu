// probe.cu: small kernels that pin down CUDA semantics for the test suite.
// The same file runs on the GPU (tests/gpu) and on the CPU backend (tests/cpu): the
// expected results are computed in Python, so both backends answer to one oracle.

// Every thread writes its coordinates: 6 ints per thread, in launch order.
extern "C" __global__ void coords(int* out) {
    int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int g = block * blockDim.x * blockDim.y * blockDim.z + thread;
    int* o = out + 6 * g;
    o[0] = threadIdx.x;
    o[1] = threadIdx.y;
    o[2] = threadIdx.z;
    o[3] = blockIdx.x;
    o[4] = blockIdx.y;
    o[5] = blockIdx.z;
}

// Reverse each block's slice through static shared memory (blockDim.x <= 256).
extern "C" __global__ void reverse_static(const float* in, float* out) {
    __shared__ float tile[256];
    int base = blockIdx.x * blockDim.x;
    tile[threadIdx.x] = in[base + threadIdx.x];
    __syncthreads();  // every write lands before any read
    out[base + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

// The same through dynamic shared memory, sized at launch.
extern "C" __global__ void reverse_dynamic(const float* in, float* out) {
    extern __shared__ float buf[];
    int base = blockIdx.x * blockDim.x;
    buf[threadIdx.x] = in[base + threadIdx.x];
    __syncthreads();
    out[base + threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

// Warp collectives: 7 results per thread.
extern "C" __global__ void warp_ops(const int* in, int* out) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int v = in[g];
    int sum = v;
#pragma unroll  // accepted on both backends (g++ ignores CUDA's spelling)
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    int prefix = v;  // inclusive scan with shuffles up
    for (int d = 1; d < 32; d *= 2) {
        int other = __shfl_up_sync(0xffffffffu, prefix, d);
        if (lane >= d) prefix += other;
    }
    int butterfly = v;  // every lane ends with the warp's maximum
    for (int m = 16; m > 0; m /= 2) {
        butterfly = max(butterfly, __shfl_xor_sync(0xffffffffu, butterfly, m));
    }
    int* o = out + 7 * g;
    o[0] = sum;  // meaningful in lane 0
    o[1] = prefix;
    o[2] = butterfly;
    o[3] = __shfl_sync(0xffffffffu, v, 3);  // broadcast lane 3
    o[4] = (int)__ballot_sync(0xffffffffu, v % 2 != 0);
    o[5] = __all_sync(0xffffffffu, v >= 0);
    o[6] = __any_sync(0xffffffffu, v > 90);
}

// Atomics from every thread of every block: results independent of the order.
extern "C" __global__ void atomics(int* counter, float* fsum, double* dsum, int* imax,
                                   int* imin, unsigned int* cas_counter) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(counter, 1);
    atomicAdd(fsum, 0.5f);  // sums of halves stay exact in float32 up to 2^24
    atomicAdd(dsum, 0.25);
    atomicMax(imax, g);
    atomicMin(imin, -g);
    unsigned int seen = *cas_counter, assumed;  // increment by compare-and-swap
    do {
        assumed = seen;
        seen = atomicCAS(cas_counter, assumed, assumed + 1u);
    } while (seen != assumed);
}

// __syncthreads_count: how many threads of the block pass a predicate.
extern "C" __global__ void count_multiples_of_three(int* out) {
    int c = __syncthreads_count(threadIdx.x % 3 == 0);
    if (threadIdx.x == 0) out[blockIdx.x] = c;
}

// float4 loads and make_float4, with __ldg for the read-only input.
extern "C" __global__ void scale4(const float* x, float* out, float a, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = __ldg(reinterpret_cast<const float4*>(x) + i);
        reinterpret_cast<float4*>(out)[i] =
            make_float4(a * v.x, a * v.y, a * v.z, a * v.w);
    }
}

// ---- bugs the CPU backend must report instead of hanging or corrupting memory ----

// Threads past n leave before a barrier the others wait at.
extern "C" __global__ void early_return_before_barrier(float* out, int n) {
    if (threadIdx.x >= n) return;
    __syncthreads();
    out[threadIdx.x] = 1.0f;
}

// Odd and even threads wait at different barriers.
extern "C" __global__ void divergent_barriers(float* out) {
    if (threadIdx.x % 2) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1.0f;
}

// Half a warp leaves, then the other half shuffles with a full mask.
extern "C" __global__ void shuffle_after_exit(float* out) {
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1.0f, 1);
}

// Reads one element past the end: out[i] = x[i + 1].
extern "C" __global__ void read_past_end(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i + 1];
}

// A local array larger than a thread's stack.
extern "C" __global__ void huge_local_array(float* out) {
    volatile float big[32768];  // 128 KiB
    for (int i = 0; i < 32768; i += 1024)
        big[i] = (float)i;
    out[threadIdx.x] = big[threadIdx.x * 1024 % 32768];
}

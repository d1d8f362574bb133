// vector_add: out[i] = x[i] + y[i] for float32 vectors of length n.
//
// v1: one block; each thread strides by blockDim.x. Correct for any n; one SM works.
// v2: one thread per element over many blocks; the bounds check covers the last block.
// v3: grid-stride loop: a grid sized to the GPU, each thread walks the array.
// v4: v3 over float4: one 16-byte load per operand, a scalar loop for the tail.
// v5: one float4 per thread and a grid that covers the array once (copy_v3's
//     shape): no loop, and the block scheduler balances the work.

// --8<-- [start:vector-add-v1]
extern "C" __global__ void vector_add_v1(const float* x, const float* y, float* out,
                                         int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[i] = x[i] + y[i];
    }
}
// --8<-- [end:vector-add-v1]

// --8<-- [start:vector-add-v2]
extern "C" __global__ void vector_add_v2(const float* x, const float* y, float* out,
                                         int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {  // the last block usually has threads past the end
        out[i] = x[i] + y[i];
    }
}
// --8<-- [end:vector-add-v2]

// --8<-- [start:vector-add-v3]
extern "C" __global__ void vector_add_v3(const float* x, const float* y, float* out,
                                         int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = x[i] + y[i];
    }
}
// --8<-- [end:vector-add-v3]

// --8<-- [start:vector-add-v4]
extern "C" __global__ void vector_add_v4(const float* x, const float* y, float* out,
                                         int n) {
    int stride = gridDim.x * blockDim.x;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;  // whole float4s; the launcher checked 16-byte alignment
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* y4 = reinterpret_cast<const float4*>(y);
    float4* out4 = reinterpret_cast<float4*>(out);
    for (int i = first; i < n4; i += stride) {
        float4 a = x4[i];
        float4 b = y4[i];
        out4[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {  // at most 3 leftovers
        out[i] = x[i] + y[i];
    }
}
// --8<-- [end:vector-add-v4]

// --8<-- [start:vector-add-v5]
extern "C" __global__ void vector_add_v5(const float* x, const float* y, float* out,
                                         int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        float4 a = reinterpret_cast<const float4*>(x)[i];
        float4 b = reinterpret_cast<const float4*>(y)[i];
        reinterpret_cast<float4*>(out)[i] =
            make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    } else if (4 * n4 + (i - n4) < n) {  // the last n % 4 elements, one a thread
        int j = 4 * n4 + (i - n4);
        out[j] = x[j] + y[j];
    }
}
// --8<-- [end:vector-add-v5]

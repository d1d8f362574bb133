// softmax_backward: the gradient through y = softmax(x) along each row, from the
// output y and the gradient dy of the loss with respect to y:
// dx[k] = y[k] * (dy[k] - s), s = sum_j dy[j] * y[j], the row's dot product.
// (The Jacobian of softmax is diag(y) - y y^T; applied to dy it gives the line
// above, so the rows x cols x cols matrix is never formed.)
//
// v1: one block per row: a block reduction for s, then one pass writes dx. Reads
//     dy and y twice.
// v2: one warp per row, several rows per block, for short rows: s by warp shuffles
//     only, no shared memory or __syncthreads.
//
// Blocks are whole warps: the shuffles read all 32 lanes.

constexpr unsigned FULL = 0xffffffffu;

// --8<-- [start:block-sum]
// xor butterfly: every lane ends with the sum of all 32 lanes
__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(FULL, v, offset);
    }
    return v;
}

// The block's sum, returned to every thread (one call per kernel).
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float partial[32];  // one per warp: at most 1024 / 32
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
    return warp_sum(v);  // each warp adds the partials itself
}
// --8<-- [end:block-sum]

// --8<-- [start:softmax-backward-v1]
extern "C" __global__ void softmax_backward_v1(const float* dy, const float* y,
                                               float* dx, int rows, int cols) {
    size_t start = (size_t)blockIdx.x * cols;  // this block's row
    float s = 0.0f;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        s += dy[start + k] * y[start + k];
    }
    s = block_sum(s);
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        dx[start + k] = y[start + k] * (dy[start + k] - s);
    }
}
// --8<-- [end:softmax-backward-v1]

// --8<-- [start:softmax-backward-v2]
extern "C" __global__ void softmax_backward_v2(const float* dy, const float* y,
                                               float* dx, int rows, int cols) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;  // this warp's row
    if (row >= rows) return;  // whole warps leave together: the shuffles stay full
    size_t start = (size_t)row * cols;
    float s = 0.0f;
    for (int k = lane; k < cols; k += 32) {
        s += dy[start + k] * y[start + k];
    }
    s = warp_sum(s);
    for (int k = lane; k < cols; k += 32) {
        dx[start + k] = y[start + k] * (dy[start + k] - s);
    }
}
// --8<-- [end:softmax-backward-v2]

// divergence: every element takes one of P code paths (P = `paths`, a power of two
// up to 32). Every path turns the point (x[i], 0) STEPS times by its own small
// rotation and writes the first coordinate: the same arithmetic on every path, but
// each path is its own loop with its own constants compiled into its instructions,
// so the hardware cannot run two paths with one instruction.
//
// v1: the path is decided per thread, p = i % P: a warp's 32 lanes take P different
//     paths, and the warp runs the P paths one after another.
// v2: the path is decided per warp, p = (i / 32) % P: all 32 lanes of a warp take
//     the same path, so no warp diverges (blockDim must be a multiple of 32).
// Both read and write element i in thread i: only the branch differs.

#define STEPS 32  // turns per element: the work that divergence multiplies

// --8<-- [start:turn]
// STEPS turns of (u, w) by [[c, -s], [s, c]], starting from (u, 0). Two chains of
// fused multiply-adds, the same for every path except the constants c and s.
__device__ __forceinline__ float turn(float u, float c, float s) {
    float w = 0.0f;
#pragma unroll 4
    for (int k = 0; k < STEPS; ++k) {
        float next = fmaf(c, u, -s * w);
        w = fmaf(s, u, c * w);
        u = next;
    }
    return u;
}

// Path p turns by c = 1 - (p + 1)^2 / 8192, s = (p + 1) / 64: exact in float32, so
// NumPy can use the very same constants. Each case is its own loop.
// clang-format off: one case a PATH, laid out by hand (clang-format cannot)
#define PATH(p)                                                                \
    case p:                                                                    \
        return turn(u, 1.0f - (p + 1) * (p + 1) / 8192.0f, (p + 1) / 64.0f);

__device__ float take_path(float u, int path) {
    switch (path) {
        PATH(0) PATH(1) PATH(2) PATH(3) PATH(4) PATH(5) PATH(6) PATH(7)
        PATH(8) PATH(9) PATH(10) PATH(11) PATH(12) PATH(13) PATH(14) PATH(15)
        PATH(16) PATH(17) PATH(18) PATH(19) PATH(20) PATH(21) PATH(22) PATH(23)
        PATH(24) PATH(25) PATH(26) PATH(27) PATH(28) PATH(29) PATH(30) PATH(31)
    }
    // clang-format on
    return u;  // not reached: the launcher allows 1 to 32 paths
}
// --8<-- [end:turn]

// --8<-- [start:divergence-v1]
extern "C" __global__ void divergence_v1(const float* x, float* out, int n, int paths) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = take_path(x[i], i % paths);  // neighbouring lanes: other paths
    }
}
// --8<-- [end:divergence-v1]

// --8<-- [start:divergence-v2]
extern "C" __global__ void divergence_v2(const float* x, float* out, int n, int paths) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = take_path(x[i], i / 32 % paths);  // one path for the whole warp
    }
}
// --8<-- [end:divergence-v2]

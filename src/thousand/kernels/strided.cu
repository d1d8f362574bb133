// strided: out[i] = x[i * stride] for 0 <= i < n: a gather with a constant stride,
// the classic coalescing experiment. The 32 loads of a warp span 32 * stride floats:
// at stride 1 they fill four 32-byte sectors, from stride 8 on each load has a
// sector of its own, of which it uses 4 bytes. The writes are always contiguous.
//
// v1: one thread per output, scalar loads.

// --8<-- [start:strided-v1]
extern "C" __global__ void strided_v1(const float* x, float* out, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = x[i * stride];  // the launcher keeps (n - 1) * stride inside x
    }
}
// --8<-- [end:strided-v1]

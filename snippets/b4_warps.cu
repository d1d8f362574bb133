// Kernels for B4's "Run it yourself": which lanes of which warp take a branch.

// --8<-- [start:ballots]
// One block. Lane 0 of each warp writes four masks, bit k standing for lane k: the
// lanes that exist, then the lanes for which each of three conditions holds.
extern "C" __global__ void branch_ballots(unsigned* out) {
    int warp = threadIdx.x / warpSize;  // warps are cut from consecutive threads
    int lane = threadIdx.x % warpSize;
    int lanes = min(warpSize, (int)blockDim.x - warp * warpSize);
    unsigned here = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    // __ballot_sync: every lane named in `here` votes; all get the 32-bit result.
    unsigned every_third = __ballot_sync(here, threadIdx.x % 3 == 0);
    unsigned first_64 = __ballot_sync(here, threadIdx.x < 64);
    unsigned first_48 = __ballot_sync(here, threadIdx.x < 48);
    if (lane == 0) {
        out[4 * warp + 0] = here;
        out[4 * warp + 1] = every_third;
        out[4 * warp + 2] = first_64;
        out[4 * warp + 3] = first_48;
    }
}
// --8<-- [end:ballots]

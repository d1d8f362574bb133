// kv_append: the key-value cache of generation. A GPT that writes text one token at
// a time keeps each layer's keys and values so far, (B, H, Tmax, d) each, and at
// every step computes k and v for the n new tokens only (n = 1 while decoding, the
// prompt's length once, to fill the cache), writes them into rows pos .. pos + n - 1
// of every (b, h), and attends over rows 0 .. pos + n - 1 (attention_decode.cu).
// In place, only the new rows move: B H n d floats read and as many written, 197 KB
// at GPT-2 small's decode step for 32 sequences, some 40 ns of an H200's DRAM time:
// the launch takes microseconds, so the op is launch-bound whatever the kernel does.
//
// v1: one thread per float4 (d % 4 == 0 and 16-byte aligned arrays; else per float),
//     in a grid-stride loop over rows row0 .. row0 + rows - 1 of every (b, h): row t
//     of out comes from new (its row t - pos) where pos <= t < pos + n, else from
//     cache. In place (out is the cache) the launcher gives the rows pos .. pos + n -
//     1: the cache is never read and the rest of it never touched. Out of place it
//     gives every row: a copy of the cache with the new rows merged in, one pass.

// --8<-- [start:kv-append-v1]
// V is float4 (w = d / 4 per row) or float (w = d); bh runs over the B H heads.
template <typename V>
__device__ __forceinline__ void merge_rows(const V* cache, const V* x, V* out,
                                           int heads, int T, int w, int pos, int n,
                                           int row0, int rows) {
    int total = heads * rows * w;  // within int: the launcher checks the arrays
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += gridDim.x * blockDim.x) {
        int e = i % w, r = i / w;
        int t = row0 + r % rows, bh = r / rows;
        int j = t - pos;  // the row of x, where 0 <= j < n
        size_t at = ((size_t)bh * T + t) * w + e;
        out[at] =
            (unsigned)j < (unsigned)n ? x[((size_t)bh * n + j) * w + e] : cache[at];
    }
}

// cache, out (B H, T, d); x (B H, n, d). out may be cache itself: rows outside
// pos .. pos + n - 1 are then left out of row0 .. row0 + rows - 1.
extern "C" __global__ void kv_append_v1(const float* cache, const float* x, float* out,
                                        int heads, int T, int d, int pos, int n,
                                        int row0, int rows, int vec) {
    if (vec) {
        merge_rows(reinterpret_cast<const float4*>(cache),
                   reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(out),
                   heads, T, d / 4, pos, n, row0, rows);
    } else {
        merge_rows(cache, x, out, heads, T, d, pos, n, row0, rows);
    }
}
// --8<-- [end:kv-append-v1]

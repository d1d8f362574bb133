// threshold: the McCulloch–Pitts unit. For each of n input rows x (d values each),
// out = 1 if w . x >= theta, else 0; w holds d weights, theta[0] is the threshold.
//
// v1: one thread per input row: the thread walks its row, then fires or stays quiet.

// --8<-- [start:threshold-v1]
extern "C" __global__ void threshold_v1(const float* X, const float* w,
                                        const float* theta, float* out, int n, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's input row
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < d; ++k) {
            s += w[k] * X[i * d + k];
        }
        out[i] = s >= theta[0] ? 1.0f : 0.0f;  // all or nothing
    }
}
// --8<-- [end:threshold-v1]

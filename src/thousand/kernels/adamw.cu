// adamw: one step of AdamW (Loshchilov & Hutter 2019) over n float32 parameters p
// with gradients g and moments m, v, as torch.optim.AdamW computes it:
//     p -= lr * wd * p                     (weight decay, decoupled from g)
//     m  = beta1 * m + (1 - beta1) * g
//     v  = beta2 * v + (1 - beta2) * g^2
//     p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The hyper-parameters sit in device memory, hyper = [lr, beta1, beta2, eps, wd, t]
// (as sgd.cu's lr): a schedule changes lr and t without a new launch argument, and
// the host never waits on the device to read them. 1 - beta^t cancels when
// beta^t is near 1 (beta2 = 0.999, early steps): the kernels take it as
// -expm1(t * log1p(beta - 1)), beta - 1 exact in float32 for beta in [0.5, 1].
// Each output may be the memory of any of p, g, m, v (in place): every element is
// read before it is written, by the same thread.
//
// v1: grid-stride loop, one element at a time; the bias corrections once per
//     thread, not per element.
// v2: v1 over float4: 16-byte loads of p, g, m, v, stores of the three outputs,
//     when all seven arrays are 16-byte aligned (else v1's scalar loop), and a
//     scalar loop for the last n % 4.

// --8<-- [start:hyper]
// The step's constants, from hyper[6] = {lr, beta1, beta2, eps, wd, t}.
struct Hyper {
    float lr, beta1, beta2, eps, decay, step_size, rsqrt_bc2;
};

// 1 - beta^t without the cancellation of 1 - powf(beta, t).
__device__ __forceinline__ float bias_correction(float beta, float t) {
    return -expm1f(t * log1pf(beta - 1.0f));
}

__device__ __forceinline__ Hyper read_hyper(const float* h) {
    float lr = h[0], beta1 = h[1], beta2 = h[2], t = h[5];
    return {lr,
            beta1,
            beta2,
            h[3],
            lr * h[4],                           // lr * wd: the decay's share of p
            lr / bias_correction(beta1, t),      // mhat = m / (1 - beta1^t)
            rsqrtf(bias_correction(beta2, t))};  // sqrt(vhat) = sqrt(v) / sqrt(...)
}

// One parameter's step: reads p, g, m, v, returns the new p, m, v through them.
__device__ __forceinline__ void step(float& p, float g, float& m, float& v,
                                     const Hyper& h) {
    p -= h.decay * p;
    m = h.beta1 * m + (1.0f - h.beta1) * g;
    v = h.beta2 * v + (1.0f - h.beta2) * g * g;
    p -= h.step_size * m / (sqrtf(v) * h.rsqrt_bc2 + h.eps);
}
// --8<-- [end:hyper]

// --8<-- [start:adamw-v1]
extern "C" __global__ void adamw_v1(const float* p, const float* g, const float* m,
                                    const float* v, const float* hyper, float* p_out,
                                    float* m_out, float* v_out, int n) {
    Hyper h = read_hyper(hyper);
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float pi = p[i], mi = m[i], vi = v[i];
        step(pi, g[i], mi, vi, h);
        p_out[i] = pi;
        m_out[i] = mi;
        v_out[i] = vi;
    }
}
// --8<-- [end:adamw-v1]

// --8<-- [start:adamw-v2]
__device__ __forceinline__ bool aligned16(const void* a) {
    return (size_t)a % 16 == 0;
}

extern "C" __global__ void adamw_v2(const float* p, const float* g, const float* m,
                                    const float* v, const float* hyper, float* p_out,
                                    float* m_out, float* v_out, int n) {
    Hyper h = read_hyper(hyper);
    int stride = gridDim.x * blockDim.x;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    bool vec = aligned16(p) && aligned16(g) && aligned16(m) && aligned16(v) &&
               aligned16(p_out) && aligned16(m_out) && aligned16(v_out);
    int n4 = vec ? n / 4 : 0;  // whole float4s; a misaligned array: none
    for (int i = first; i < n4; i += stride) {
        float4 P = reinterpret_cast<const float4*>(p)[i];
        float4 G = reinterpret_cast<const float4*>(g)[i];
        float4 M = reinterpret_cast<const float4*>(m)[i];
        float4 V = reinterpret_cast<const float4*>(v)[i];
        step(P.x, G.x, M.x, V.x, h);
        step(P.y, G.y, M.y, V.y, h);
        step(P.z, G.z, M.z, V.z, h);
        step(P.w, G.w, M.w, V.w, h);
        reinterpret_cast<float4*>(p_out)[i] = P;
        reinterpret_cast<float4*>(m_out)[i] = M;
        reinterpret_cast<float4*>(v_out)[i] = V;
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {  // the rest, or everything
        float pi = p[i], mi = m[i], vi = v[i];
        step(pi, g[i], mi, vi, h);
        p_out[i] = pi;
        m_out[i] = mi;
        v_out[i] = vi;
    }
}
// --8<-- [end:adamw-v2]

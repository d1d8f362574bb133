// GELU in the tanh form GPT-2 uses (Hendrycks & Gimpel 2016, arXiv:1606.08415),
// and its derivative: the one formula the forward and backward families share.
#pragma once

// --8<-- [start:gelu-device]
constexpr float GELU_K = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float GELU_A = 0.044715f;

// y = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3). tanhf, not a fast
// approximation: its error stays within 2 ulp for every x, and where tanh(u) nears
// -1 (x below -3) 1 + tanh(u) cancels, so a sloppier tanh would show there.
__device__ __forceinline__ float gelu(float x) {
    float u = GELU_K * (x + GELU_A * x * x * x);
    return 0.5f * x * (1.0f + tanhf(u));
}

// dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) du/dx,  t = tanh(u),
// du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
__device__ __forceinline__ float gelu_grad(float x) {
    float x2 = x * x;
    float t = tanhf(GELU_K * (x + GELU_A * x2 * x));
    float du = GELU_K * (1.0f + 3.0f * GELU_A * x2);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
}
// --8<-- [end:gelu-device]

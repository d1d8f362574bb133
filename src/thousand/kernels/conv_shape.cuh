// conv_shape.cuh: the sizes of one convolution as its three families' kernels take
// them (N H W C R S F, stride, pad, dilation, groups), with what follows from them.

#pragma once

// The sizes of one convolution, with what follows from them.
struct ConvShape {
    int N, H, W, C, R, S, F, st, pad, dil, G;
    int P, Q, Cg, Fg;  // output size; channels a group reads and writes
    __device__ ConvShape(int N, int H, int W, int C, int R, int S, int F, int st,
                         int pad, int dil, int G)
        : N(N),
          H(H),
          W(W),
          C(C),
          R(R),
          S(S),
          F(F),
          st(st),
          pad(pad),
          dil(dil),
          G(G),
          P((H + 2 * pad - dil * (R - 1) - 1) / st + 1),
          Q((W + 2 * pad - dil * (S - 1) - 1) / st + 1),
          Cg(C / G),
          Fg(F / G) {}
    __device__ int g0(int g) const { return g * Cg; }  // group g's first channel
};

#define CONV_ARGS \
    int N, int H, int W, int C, int R, int S, int F, int st, int pad, int dil, int G
#define CONV_SHAPE ConvShape cs(N, H, W, C, R, S, F, st, pad, dil, G)

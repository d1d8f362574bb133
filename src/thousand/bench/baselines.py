"""What a user would otherwise write: the same operation in NumPy (CPU, float32),
where PyTorch is installed in PyTorch on the GPU (cuBLAS for matmul: TF32 off, and
TF32 on for the tensor-core version), and in PyCUDA's own GPUArray methods.

Each entry takes the inputs and returns `run()`, which computes into an output
allocated once (so neither side pays for allocation or page faults) and returns it.
"""

from __future__ import annotations

import numpy as np


def _np_sigmoid_into(z, out):
    with np.errstate(over="ignore"):  # exp(-z) overflows to inf: sigmoid is then 0
        np.negative(z, out=out)
        np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _numpy_neuron_layer(W, x, b):
    o = np.empty(W.shape[0], np.float32)

    def run():
        np.dot(W, x, out=o)
        np.add(o, b, out=o)
        _np_sigmoid_into(o, o)
        return o

    return run


def _numpy_into(op, out_shape):
    def make(*inputs):
        o = np.empty(out_shape(*inputs), np.float32)

        def run():
            op(*inputs, out=o)
            return o

        return run

    return make


def _numpy_axpy(x, y):
    """a * x + y as NumPy computes it: two passes, into an output made once."""
    from thousand.kernels.axpy import A

    o = np.empty_like(y)

    def run():
        np.multiply(x, np.float32(A), out=o)
        np.add(o, y, out=o)
        return o

    return run


def _numpy_coordinates(a):
    """The coordinates of coordinates v3's launch (its default block), from the
    element indices np.indices gives, divided and reduced by the block shape."""
    from thousand.kernels.coordinates import BLOCKS

    o = np.empty((6, *a.shape), np.int32)

    def run():
        z, y, x = np.indices(a.shape, dtype=np.int32)
        for k, (p, size) in enumerate(zip((x, y, z), BLOCKS[3], strict=True)):
            np.floor_divide(p, size, out=o[k])  # blockIdx
            np.remainder(p, size, out=o[k + 3])  # threadIdx
        return o

    return run


def _numpy_stencil(x, taps):
    """np.correlate over x with R zeros on each side (its 'valid' part is n long)."""
    from thousand.kernels.stencil import R

    padded = np.zeros(x.shape[0] + 2 * R, np.float32)

    def run():
        padded[R : R + x.shape[0]] = x
        return np.correlate(padded, taps, mode="valid")

    return run


def _numpy_divergence(x):
    """The same turns per element, as whole-array float32 operations."""
    from thousand.kernels.divergence import divergence_numpy

    return divergence_numpy(x)


def _numpy_threshold(X, w, theta):
    s = np.empty(X.shape[0], np.float32)
    o = np.empty(X.shape[0], np.float32)

    def run():
        np.dot(X, w, out=s)
        np.greater_equal(s, theta[0], out=o, casting="unsafe")
        return o

    return run


def _numpy_perceptron(X, y, w0):
    """Rosenblatt's rule is a chain: NumPy, too, goes sample by sample."""
    w = np.empty_like(w0)

    def run():
        w[:] = w0
        for x_i, y_i in zip(X, y, strict=True):
            if y_i * (np.dot(w[:-1], x_i) + w[-1]) <= 0:
                w[:-1] += y_i * x_i
                w[-1] += y_i
        return w

    return run


def _numpy_bias_then(act):
    def make(Z, b):
        o = np.empty(Z.shape, np.float32)

        def run():
            np.add(Z, b, out=o)
            act(o)
            return o

        return run

    return make


def _np_sigmoid_backward_into(g, y, out):
    np.subtract(1, y, out=out)
    out *= y
    out *= g


def _np_tanh_backward_into(g, y, out):
    np.multiply(y, y, out=out)
    np.subtract(1, out, out=out)
    out *= g


def _numpy_sgd(w, g, lr):
    o = np.empty(w.shape, np.float32)

    def run():
        np.multiply(g, -lr[0], out=o)
        np.add(o, w, out=o)
        return o

    return run


def _numpy_softmax_xent(Z, T):
    """The same three steps: the row's max, the exponentials' sum, p - T over M."""
    o = np.empty(Z.shape, np.float32)

    def run():
        np.subtract(Z, Z.max(axis=1, keepdims=True), out=o)
        np.exp(o, out=o)
        np.divide(o, o.sum(axis=1, keepdims=True), out=o)
        np.subtract(o, T, out=o)
        np.divide(o, Z.shape[0], out=o)
        return o

    return run


def _numpy_softmax(x):
    """Max, exp(x - max), sum, divide: each step over the whole array, as NumPy
    runs it, into buffers made once."""
    o = np.empty(x.shape, np.float32)
    r = np.empty((x.shape[0], 1), np.float32)  # each row's max, then its sum

    def run():
        np.max(x, axis=1, keepdims=True, out=r)
        np.subtract(x, r, out=o)
        np.exp(o, out=o)
        np.sum(o, axis=1, keepdims=True, out=r)
        np.divide(o, r, out=o)
        return o

    return run


def _numpy_softmax_backward(dy, y):
    """dx = y * (dy - sum(dy * y, row)), into buffers made once."""
    o = np.empty(y.shape, np.float32)
    r = np.empty((y.shape[0], 1), np.float32)  # each row's dot product dy . y

    def run():
        np.multiply(dy, y, out=o)
        np.sum(o, axis=1, keepdims=True, out=r)
        np.subtract(dy, r, out=o)
        np.multiply(o, y, out=o)
        return o

    return run


def _numpy_cross_entropy(logits, targets):
    """Max, exp(x - max), sum, log, then (max - the target's logit) added: each step
    over the whole array, as NumPy runs it, into buffers made once."""
    N = logits.shape[0]
    e = np.empty_like(logits)
    r = np.empty((N, 1), np.float32)  # each row's max
    o = np.empty(N, np.float32)
    rows = np.arange(N)

    def run():
        np.max(logits, axis=1, keepdims=True, out=r)
        np.subtract(logits, r, out=e)
        np.exp(e, out=e)
        np.sum(e, axis=1, out=o)
        np.log(o, out=o)
        np.add(o, r[:, 0] - logits[rows, targets], out=o)  # m - x[t]: exact if close
        return o

    return run


def _numpy_cross_entropy_backward(logits, targets, lse, dloss):
    """exp(x - lse), minus 1 at each row's target, times the row's dloss."""
    o = np.empty_like(logits)
    rows = np.arange(logits.shape[0])

    def run():
        np.subtract(logits, lse[:, None], out=o)
        np.exp(o, out=o)
        o[rows, targets] -= 1
        np.multiply(o, dloss[:, None], out=o)
        return o

    return run


def _numpy_adamw(p, g, m, v, hyper):
    """torch.optim.AdamW's step, one whole-array float32 operation at a time, into
    the (3, n) output the kernels write (made once) and one scratch array."""
    lr, beta1, beta2, eps, wd, t = (float(h) for h in hyper)
    f = np.float32
    o = np.empty((3, p.shape[0]), np.float32)
    s = np.empty_like(p)

    def run():
        po, mo, vo = o
        np.multiply(p, f(1 - lr * wd), out=po)
        np.multiply(m, f(beta1), out=mo)
        np.multiply(g, f(1 - beta1), out=s)
        mo += s
        np.multiply(g, g, out=s)
        np.multiply(s, f(1 - beta2), out=s)
        np.multiply(v, f(beta2), out=vo)
        vo += s
        np.sqrt(vo, out=s)  # sqrt(vhat) + eps
        np.multiply(s, f(1 / (1 - beta2**t) ** 0.5), out=s)
        np.add(s, f(eps), out=s)
        np.divide(mo, s, out=s)
        np.multiply(s, f(lr / (1 - beta1**t)), out=s)
        po -= s
        return o

    return run


def _patch_matrix(X, R, S):
    """im2col as a NumPy user writes it: every R x S x C patch of X as one row of an
    (N*P*Q, R*S*C) matrix, in the (r, s, c) order of the filters (a copy)."""
    windows = np.lib.stride_tricks.sliding_window_view(X, (R, S), axis=(1, 2))
    # windows[n, p, q, c, r, s] = X[n, p+r, q+s, c]
    N, P, Q = windows.shape[:3]
    return windows.transpose(0, 1, 2, 4, 5, 3).reshape(N * P * Q, -1)


def _numpy_conv2d(X, K):
    """What a NumPy user writes: im2col (a copy of the patches), then one matmul."""
    R, S, C, F = K.shape
    N, H, W, _ = X.shape
    P, Q = H - R + 1, W - S + 1
    Kmat = K.reshape(R * S * C, F)

    def run():
        return (_patch_matrix(X, R, S) @ Kmat).reshape(N, P, Q, F)

    return run


def _numpy_conv2d_backward_data(dY, K):
    N, P, Q, F = dY.shape
    R, S, C, _ = K.shape
    KT = np.ascontiguousarray(K.reshape(R * S * C, F).T)
    dX = np.empty((N, P + R - 1, Q + S - 1, C), np.float32)

    def run():
        dcols = (dY.reshape(N * P * Q, F) @ KT).reshape(N, P, Q, R, S, C)
        dX.fill(0)
        for r in range(R):
            for s in range(S):
                dX[:, r : r + P, s : s + Q, :] += dcols[:, :, :, r, s, :]
        return dX

    return run


def _numpy_conv2d_backward_filter(X, dY):
    N, P, Q, F = dY.shape
    R, S, C = X.shape[1] - P + 1, X.shape[2] - Q + 1, X.shape[3]

    def run():
        return (_patch_matrix(X, R, S).T @ dY.reshape(N * P * Q, F)).reshape(R, S, C, F)

    return run


def _geometry_patches(X, R, S, geom):
    """B11's patch matrix as a NumPy user writes it: pad once, take strided,
    dilated windows, copy them into (N*P*Q, R*S*C) rows in the filters' order."""
    st, d, pad = geom.stride, geom.dilation, geom.pad
    Xp = np.pad(X, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    P, Q = geom.output_hw(X.shape[1], X.shape[2], R, S)
    span = (d * (R - 1) + 1, d * (S - 1) + 1)
    w = np.lib.stride_tricks.sliding_window_view(Xp, span, axis=(1, 2))
    w = w[:, : (P - 1) * st + 1 : st, : (Q - 1) * st + 1 : st, :, ::d, ::d]
    return w.transpose(0, 1, 2, 4, 5, 3).reshape(X.shape[0] * P * Q, -1)


def _grouped(geom, C, F):
    G = geom.groups
    return [
        (slice(g * C // G, (g + 1) * C // G), slice(g * F // G, (g + 1) * F // G))
        for g in range(G)
    ]


def _numpy_conv(X, K, geom):
    R, S, Cg, F = K.shape
    N, H, W, C = X.shape
    P, Q = geom.output_hw(H, W, R, S)
    groups = _grouped(geom, C, F)

    def run():
        Y = np.empty((N * P * Q, F), np.float32)
        for cs, fs in groups:
            cols = _geometry_patches(X[..., cs], R, S, geom)
            Y[:, fs] = cols @ K[..., fs].reshape(R * S * Cg, -1)
        return Y.reshape(N, P, Q, F)

    return run


def _numpy_conv_backward_data(dY, K, hw, geom):
    """The patch gradients by matmul, then added back into the padded image."""
    N, P, Q, F = dY.shape
    R, S, Cg, _ = K.shape
    (H, W), st, d, pad = hw, geom.stride, geom.dilation, geom.pad
    groups = _grouped(geom, Cg * geom.groups, F)

    def run():
        dXp = np.zeros((N, H + 2 * pad, W + 2 * pad, Cg * geom.groups), np.float32)
        for cs, fs in groups:
            KT = K[..., fs].reshape(R * S * Cg, -1).T
            dcols = (dY[..., fs].reshape(N * P * Q, -1) @ KT).reshape(N, P, Q, R, S, Cg)
            for r in range(R):
                for s in range(S):
                    dXp[
                        :,
                        r * d : r * d + (P - 1) * st + 1 : st,
                        s * d : s * d + (Q - 1) * st + 1 : st,
                        cs,
                    ] += dcols[:, :, :, r, s]
        return dXp[:, pad : pad + H, pad : pad + W]

    return run


def _numpy_conv_backward_filter(X, dY, rs, geom):
    (R, S), F = rs, dY.shape[3]
    groups = _grouped(geom, X.shape[3], F)

    def run():
        dK = np.empty((R, S, X.shape[3] // geom.groups, F), np.float32)
        for cs, fs in groups:
            cols = _geometry_patches(X[..., cs], R, S, geom)
            dK[..., fs] = (cols.T @ dY[..., fs].reshape(cols.shape[0], -1)).reshape(
                R, S, -1, fs.stop - fs.start
            )
        return dK

    return run


def _numpy_avg_pool(X):
    N, H, W, C = X.shape
    P, Q = H // 2, W // 2

    def run():
        windows = X[:, : 2 * P, : 2 * Q, :].reshape(N, P, 2, Q, 2, C)
        return windows.mean(axis=(2, 4), dtype=np.float32)

    return run


def _numpy_max_pool(X, geom):
    """What a NumPy user writes: the image padded with -inf, every window as a view
    (sliding_window_view, strided by the pooling stride), then the max over it.
    No argmax: NumPy has no arg-max over two axes at once."""
    k, s, pad = geom.window, geom.stride, geom.pad
    padded = np.pad(
        X, ((0, 0), (pad, pad), (pad, pad), (0, 0)), constant_values=-np.inf
    )

    def run():
        windows = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))
        return windows[:, ::s, ::s].max(axis=(4, 5))  # (N, P, Q, C)

    return run


def _numpy_max_pool_backward(dY, argmax, hw, geom):
    """np.add.at (an unbuffered scatter) of each dY at its argmax, into zeros."""
    N, P, Q, C = dY.shape
    dX = np.empty((N, hw[0] * hw[1], C), np.float32)
    n, c = np.arange(N)[:, None, None, None], np.arange(C)[None, None, None, :]

    def run():
        dX.fill(0)
        np.add.at(dX, (n, argmax, c), dY)
        return dX.reshape(N, *hw, C)

    return run


def _numpy_global_avg_pool_backward(dY, hw):
    N, C = dY.shape
    dX = np.empty((N, *hw, C), np.float32)

    def run():  # dY / (H W), broadcast over the pixels
        np.divide(dY[:, None, None, :], np.float32(hw[0] * hw[1]), out=dX)
        return dX

    return run


def _numpy_dropout(X, p, seed, offset):
    """NumPy draws none of Philox-4x32-10's numbers itself (numpy.random.Philox is
    the 4x64 generator, its stream laid out another way), so this is the mask our
    kernel draws, made with uint64 array arithmetic, then applied in float32: what
    reproducing it on the CPU costs."""
    from thousand.kernels.dropout import dropout_uniforms

    keep_scale = np.float32(1 / (1 - np.float64(np.float32(p))))
    o = np.empty_like(X)

    def run():
        keep = dropout_uniforms(X.size, seed, offset) >= np.float32(p)
        np.multiply(X, keep.reshape(X.shape), out=o)
        return np.multiply(o, keep_scale, out=o)

    return run


def _numpy_batch_norm(X, gamma, beta):
    """Training mode as a NumPy user writes it: the batch's mean and biased
    variance over every axis but the channels, then normalise, in float32."""
    from thousand.kernels.batch_norm_inference import EPS

    rows = X.reshape(-1, X.shape[-1])  # (M, C)

    def run():
        mean, var = rows.mean(axis=0), rows.var(axis=0)
        return (X - mean) / np.sqrt(var + np.float32(EPS)) * gamma + beta

    return run


def _numpy_batch_norm_inference(X, gamma, beta, running_mean, running_var):
    from thousand.kernels.batch_norm_inference import EPS

    def run():
        scale = gamma / np.sqrt(running_var + np.float32(EPS))  # (C,)
        return (X - running_mean) * scale + beta

    return run


def _numpy_batch_norm_backward(dY, X, gamma, mean, invstd):
    C = X.shape[-1]
    g, rows = dY.reshape(-1, C), X.reshape(-1, C)  # (M, C)
    M = rows.shape[0]

    def run():
        xhat = (rows - mean) * invstd
        dbeta, dgamma = g.sum(axis=0), (g * xhat).sum(axis=0)
        dX = gamma * invstd / np.float32(M) * (M * g - dbeta - xhat * dgamma)
        return dX.reshape(X.shape)

    return run


def _numpy_hebbian(P):
    W = np.empty((P.shape[1], P.shape[1]), np.float32)

    def run():
        np.matmul(P.T, P, out=W)
        np.fill_diagonal(W, 0)
        return W

    return run


def _numpy_hopfield(W, S0):
    """The sweep is a chain over the neurons; NumPy vectorises over the states."""
    S = np.empty_like(S0)

    def run():
        S[:] = S0
        for i in range(W.shape[0]):
            h = S @ W[i]
            S[:, i] = np.where(h > 0, 1, np.where(h < 0, -1, S[:, i]))
        return S

    return run


def _numpy_layer_norm(x, gamma, beta):
    """Two passes in float32, as a NumPy user writes it: the mean, then the
    variance of the deviations; y written into an output made once."""
    from thousand.kernels.layer_norm import EPS

    o = np.empty_like(x)
    mean = np.empty((x.shape[0], 1), np.float32)
    std = np.empty((x.shape[0], 1), np.float32)

    def run():
        np.mean(x, axis=1, keepdims=True, out=mean)
        np.subtract(x, mean, out=o)
        np.mean(np.square(o), axis=1, keepdims=True, out=std)
        np.add(std, np.float32(EPS), out=std)
        np.sqrt(std, out=std)
        np.divide(o, std, out=o)
        np.multiply(o, gamma, out=o)
        np.add(o, beta, out=o)
        return o

    return run


def _numpy_layer_norm_backward(x, dy, gamma, mean, rstd):
    """dx, dgamma, dbeta packed into (rows + 2, C), as layer_norm_backward writes
    them; xhat and dy * gamma kept in buffers made once."""
    rows, C = x.shape
    o = np.empty((rows + 2, C), np.float32)
    xhat, g = np.empty_like(x), np.empty_like(x)
    m, r = mean[:, None], rstd[:, None]  # (rows, 1)

    def run():
        dx, dgamma, dbeta = o[:rows], o[rows], o[rows + 1]
        np.subtract(x, m, out=xhat)
        np.multiply(xhat, r, out=xhat)
        np.multiply(dy, xhat, out=g)
        np.sum(g, axis=0, out=dgamma)
        np.sum(dy, axis=0, out=dbeta)
        np.multiply(dy, gamma, out=g)  # dL/dxhat
        np.multiply(g, xhat, out=dx)
        mgx = dx.mean(axis=1, keepdims=True)
        np.multiply(xhat, mgx, out=dx)
        np.subtract(g, dx, out=dx)
        dx -= g.mean(axis=1, keepdims=True)
        dx *= r
        return o

    return run


def _numpy_gelu(x):
    """0.5 x (1 + tanh(k (x + a x^3))) one whole-array step at a time, in float32,
    into buffers made once."""
    from thousand.kernels.gelu import A, K

    o, u = np.empty_like(x), np.empty_like(x)

    def run():
        np.multiply(x, x, out=u)
        np.multiply(u, x, out=u)
        np.multiply(u, np.float32(A), out=u)
        np.add(u, x, out=u)
        np.multiply(u, np.float32(K), out=u)
        np.tanh(u, out=u)
        np.add(u, 1, out=u)
        np.multiply(x, u, out=o)
        np.multiply(o, np.float32(0.5), out=o)
        return o

    return run


def _numpy_gelu_backward(dy, x):
    """dy * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3a x^2)), step by step."""
    from thousand.kernels.gelu import A, K

    o, t, w = np.empty_like(x), np.empty_like(x), np.empty_like(x)

    def run():
        np.multiply(x, x, out=w)  # x^2
        np.multiply(w, x, out=t)
        np.multiply(t, np.float32(A), out=t)
        np.add(t, x, out=t)
        np.multiply(t, np.float32(K), out=t)
        np.tanh(t, out=t)
        np.multiply(w, np.float32(3 * A), out=w)
        np.add(w, 1, out=w)
        np.multiply(w, np.float32(K), out=w)  # du/dx
        np.multiply(t, t, out=o)
        np.subtract(1, o, out=o)
        np.multiply(o, w, out=o)
        np.multiply(o, x, out=o)
        np.add(o, t, out=o)
        np.add(o, 1, out=o)
        np.multiply(o, np.float32(0.5), out=o)
        np.multiply(o, dy, out=o)
        return o

    return run


def _numpy_embedding(idx, wte, wpe):
    """wte[idx] + wpe[:T]: np.take into an output made once, then the add."""
    o = np.empty((*idx.shape, wte.shape[1]), np.float32)

    def run():
        np.take(wte, idx, axis=0, out=o)
        np.add(o, wpe[: idx.shape[1]], out=o)
        return o

    return run


def _numpy_embedding_backward(dout, idx, wte, wpe):
    """np.add.at, NumPy's unbuffered scatter-add (a repeated id adds each time),
    for dwte; a sum over the batch for dwpe; packed as the kernels pack them."""
    B, T, C = dout.shape
    V = wte.shape[0]
    o = np.empty((V + wpe.shape[0], C), np.float32)
    rows, ids = dout.reshape(B * T, C), idx.reshape(B * T)

    def run():
        o.fill(0)
        np.add.at(o, ids, rows)
        np.sum(dout, axis=0, out=o[V : V + T])
        return o

    return run


def _numpy_scores(q, k, b, causal, s):
    """s = q k^T * scale for batch b, -inf above the diagonal when causal: (H, T, T)
    float32, into the buffer s."""
    T, d = q.shape[2:]
    np.matmul(q[b], np.swapaxes(k[b], -1, -2), out=s)
    s *= np.float32(1 / np.sqrt(d))
    if causal:
        i, j = np.triu_indices(T, 1)  # key j > query i
        s[:, i, j] = -np.inf


def _numpy_attention(q, k, v, causal):
    """Scores, mask, softmax, P v, one batch at a time into an (H, T, T) buffer
    made once (at the benchmark's size, 2 GiB rather than all B * H heads' 8)."""
    B, H, T, _ = q.shape
    s = np.empty((H, T, T), np.float32)
    r = np.empty((H, T, 1), np.float32)  # each row's max, then its sum
    o = np.empty_like(q)

    def run():
        for b in range(B):
            _numpy_scores(q, k, b, causal, s)
            np.max(s, axis=-1, keepdims=True, out=r)
            np.subtract(s, r, out=s)
            np.exp(s, out=s)
            np.sum(s, axis=-1, keepdims=True, out=r)
            np.divide(s, r, out=s)
            np.matmul(s, v[b], out=o[b])
        return o

    return run


def _numpy_attention_decode(q, k, v, length):
    """Scores against the first `length` keys, softmax, P v, each step over every
    (b, h) at once, as NumPy runs it, into buffers made once; the caches' first
    `length` rows are views, not copies."""
    B, H, _, d = q.shape
    n = int(length)
    kt, vn = np.swapaxes(k[:, :, :n], -1, -2), v[:, :, :n]
    s = np.empty((B, H, 1, n), np.float32)
    r = np.empty((B, H, 1, 1), np.float32)  # each row's max, then its sum
    o = np.empty_like(q)
    scale = np.float32(1 / np.sqrt(d))

    def run():
        np.matmul(q, kt, out=s)
        np.multiply(s, scale, out=s)
        np.max(s, axis=-1, keepdims=True, out=r)
        np.subtract(s, r, out=s)
        np.exp(s, out=s)
        np.sum(s, axis=-1, keepdims=True, out=r)
        np.divide(s, r, out=s)
        np.matmul(s, vn, out=o)
        return o

    return run


def _numpy_kv_append(cache, new, pos):
    """The slice assignment, in place, as a NumPy cache is appended to: only the
    new rows are written. Returns the cache."""
    rows = slice(int(pos), int(pos) + new.shape[2])

    def run():
        cache[:, :, rows] = new
        return cache

    return run


def _numpy_attention_bf16(q, k, v, causal):
    """NumPy has no bfloat16 arithmetic: the float32 baseline on the same values,
    widened once, untimed."""
    return _numpy_attention(*(a.astype(np.float32) for a in (q, k, v)), causal)


def _numpy_matmul_nt(a, bt):
    """A B^T as a NumPy user writes it, the transposed view, no copy; bf16 operands
    (NumPy has no bf16 arithmetic) widened to float32 once, untimed."""
    a, bt = a.astype(np.float32, copy=False), bt.astype(np.float32, copy=False)
    out = np.empty((a.shape[0], bt.shape[0]), np.float32)
    return lambda: np.matmul(a, bt.T, out=out)


def _numpy_attention_backward(q, k, v, o, do, lse, causal):
    """P from the scores and lse, then dV, dP, dS, dQ, dK one batch at a time,
    packed (3, B, H, T, d) as the kernel packs them."""
    B, H, T, d = q.shape
    p, ds = np.empty((H, T, T), np.float32), np.empty((H, T, T), np.float32)
    D = np.empty((H, T, 1), np.float32)  # rowsum(dO * O)
    g = np.empty((3, B, H, T, d), np.float32)
    scale = np.float32(1 / np.sqrt(d))

    def run():
        for b in range(B):
            _numpy_scores(q, k, b, causal, p)
            np.subtract(p, lse[b][..., None], out=p)
            np.exp(p, out=p)  # P
            np.matmul(np.swapaxes(p, -1, -2), do[b], out=g[2, b])  # dV
            np.matmul(do[b], np.swapaxes(v[b], -1, -2), out=ds)  # dP
            np.sum(do[b] * o[b], axis=-1, keepdims=True, out=D)
            np.subtract(ds, D, out=ds)
            np.multiply(ds, p, out=ds)  # dS
            np.matmul(ds, k[b], out=g[0, b])
            g[0, b] *= scale  # dQ
            np.matmul(np.swapaxes(ds, -1, -2), q[b], out=g[1, b])
            g[1, b] *= scale  # dK
        return g

    return run


NUMPY = {
    # the head permutations: NumPy's transposed view copied into an output made once
    "split_heads": _numpy_into(
        lambda x, out: np.copyto(out, x.transpose(2, 0, 3, 1, 4)),
        lambda x: tuple(x.shape[i] for i in (2, 0, 3, 1, 4)),
    ),
    "merge_heads": _numpy_into(
        lambda y, out: np.copyto(out, y.transpose(1, 3, 0, 2, 4)),
        lambda y: tuple(y.shape[i] for i in (1, 3, 0, 2, 4)),
    ),
    "attention": _numpy_attention,
    "attention_bf16": _numpy_attention_bf16,
    # generation's step: the cache appended to in place, one query against it
    "kv_append": _numpy_kv_append,
    "attention_decode": _numpy_attention_decode,
    "attention_backward": _numpy_attention_backward,
    "gelu": _numpy_gelu,
    "gelu_backward": _numpy_gelu_backward,
    "embedding": _numpy_embedding,
    "embedding_backward": _numpy_embedding_backward,
    "axpy": _numpy_axpy,
    "coordinates": _numpy_coordinates,
    "copy": _numpy_into(lambda x, out: np.copyto(out, x), lambda x: x.shape),
    "vector_add": _numpy_into(np.add, lambda x, y: x.shape),
    "matrix_add": _numpy_into(np.add, lambda a, b: a.shape),
    "sigmoid": _numpy_into(_np_sigmoid_into, lambda x: x.shape),
    "matmul": _numpy_into(np.matmul, lambda a, b: (a.shape[0], b.shape[1])),
    # A^T B as a NumPy user writes it: the transposed view, no copy
    "matmul_tn": _numpy_into(
        lambda a, b, out: np.matmul(a.T, b, out=out),
        lambda a, b: (a.shape[1], b.shape[1]),
    ),
    "matmul_wgmma": _numpy_matmul_nt,
    "matmul_wgmma_tf32": _numpy_matmul_nt,
    "neuron_layer": _numpy_neuron_layer,
    "reduce": _numpy_into(
        lambda x, out: np.sum(x, keepdims=True, out=out), lambda x: (1,)
    ),
    "transpose": _numpy_into(
        lambda a, out: np.copyto(out, a.T), lambda a: a.shape[::-1]
    ),
    "stencil": _numpy_stencil,
    # unroll sums the columns of a (K, n) matrix: K rows added into n outputs
    "unroll": _numpy_into(
        lambda x, out: np.sum(x, axis=0, out=out), lambda x: x.shape[1:]
    ),
    # strided's benchmark runs at its default stride, 1: x[::1] is all of x
    "strided": _numpy_into(lambda x, out: np.copyto(out, x[::1]), lambda x: x.shape),
    # row_sum's inputs are the matrix row-major and column-major; NumPy sums `a`
    "row_sum": _numpy_into(
        lambda a, a_cm, out: np.sum(a, axis=1, out=out), lambda a, a_cm: a.shape[:1]
    ),
    "divergence": _numpy_divergence,
    # occupancy's kernels are copies, each limited in another way
    "occupancy": _numpy_into(lambda x, out: np.copyto(out, x), lambda x: x.shape),
    # track A's layer kernels
    "threshold": _numpy_threshold,
    "perceptron": _numpy_perceptron,
    "bias_add": _numpy_into(np.add, lambda z, b: z.shape),
    "bias_relu": _numpy_bias_then(lambda o: np.maximum(o, 0, out=o)),
    "bias_sigmoid": _numpy_bias_then(lambda o: _np_sigmoid_into(o, o)),
    "bias_tanh": _numpy_bias_then(lambda o: np.tanh(o, out=o)),
    "relu_backward": _numpy_into(
        lambda g, y, out: np.multiply(g, y > 0, out=out), lambda g, y: g.shape
    ),
    "sigmoid_backward": _numpy_into(_np_sigmoid_backward_into, lambda g, y: g.shape),
    "tanh_backward": _numpy_into(_np_tanh_backward_into, lambda g, y: g.shape),
    "col_sum": _numpy_into(
        lambda g, out: np.sum(g, axis=0, out=out), lambda g: g.shape[1:]
    ),
    "sgd": _numpy_sgd,
    "softmax_xent": _numpy_softmax_xent,
    "softmax": _numpy_softmax,
    "softmax_backward": _numpy_softmax_backward,
    "cross_entropy": _numpy_cross_entropy,
    "cross_entropy_backward": _numpy_cross_entropy_backward,
    "adamw": _numpy_adamw,
    "layer_norm": _numpy_layer_norm,
    "layer_norm_backward": _numpy_layer_norm_backward,
    "hebbian": _numpy_hebbian,
    "hopfield": _numpy_hopfield,
    "bernoulli": _numpy_into(
        lambda p, u, out: np.less(u, p, out=out, casting="unsafe"), lambda p, u: p.shape
    ),
    "conv2d": _numpy_conv2d,
    "conv2d_backward_data": _numpy_conv2d_backward_data,
    "conv2d_backward_filter": _numpy_conv2d_backward_filter,
    "conv": _numpy_conv,
    "conv_backward_data": _numpy_conv_backward_data,
    "conv_backward_filter": _numpy_conv_backward_filter,
    "avg_pool": _numpy_avg_pool,
    "avg_pool_backward": _numpy_into(
        lambda dy, out: np.copyto(
            out, np.repeat(np.repeat(dy, 2, axis=1), 2, axis=2) * np.float32(0.25)
        ),
        lambda dy: (dy.shape[0], 2 * dy.shape[1], 2 * dy.shape[2], dy.shape[3]),
    ),
    # the other layers of the deep CNNs (A10, A11)
    "max_pool": _numpy_max_pool,
    "max_pool_backward": _numpy_max_pool_backward,
    "global_avg_pool": _numpy_into(
        lambda x, out: np.mean(x, axis=(1, 2), out=out),
        lambda x: (x.shape[0], x.shape[3]),
    ),
    "global_avg_pool_backward": _numpy_global_avg_pool_backward,
    "dropout": _numpy_dropout,
    "batch_norm": _numpy_batch_norm,
    "batch_norm_inference": _numpy_batch_norm_inference,
    "batch_norm_backward": _numpy_batch_norm_backward,
    "add_relu": _numpy_into(
        lambda a, b, out: np.maximum(np.add(a, b, out=out), 0, out=out),
        lambda a, b: a.shape,
    ),
}
NUMPY["sgemm"] = NUMPY["matmul"]  # the same product: sgemm holds matmul's tuned rungs


def as_torch(a):
    """A host input on the GPU as a tensor; a flag (attention's `causal`) as it is.
    torch.from_numpy knows no ml_dtypes bfloat16: its bits go over as int16 and are
    viewed as torch.bfloat16, the same 2-byte format."""
    import torch

    if not isinstance(a, np.ndarray):
        return a
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16)
    return torch.from_numpy(a).cuda()


def torch_ops():
    """PyTorch equivalents, or {} when PyTorch (with CUDA) is not installed."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False  # compare float32 with float32

    def into(op, like):
        def make(*inputs):
            o = like(*inputs)

            def run():
                op(*inputs, out=o)
                return o

            return run

        return make

    def neuron_layer(W, x, b):
        o = torch.empty_like(b)
        return lambda: torch.addmv(b, W, x, out=o).sigmoid_()

    def with_tf32(product):
        """cuBLAS with TF32 on, for a TF32 kernel: product(a, b, out)."""

        def make(a, b):
            o = product(a, b, None)

            def run():  # the switch is read when the call is made; put it back after
                torch.backends.cuda.matmul.allow_tf32 = True
                try:
                    return product(a, b, o)
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = False

            return run

        return make

    def nt(a, bt, out):  # A B^T, B given K-major (N x K): cuBLAS reads the view
        if out is None:
            return a.new_empty((a.shape[0], bt.shape[0]))
        return torch.matmul(a, bt.T, out=out)

    def nn(a, b, out):
        if out is None:
            return a.new_empty((a.shape[0], b.shape[1]))
        return torch.matmul(a, b, out=out)

    def axpy(x, y):
        from thousand.kernels.axpy import A

        o = torch.empty_like(y)
        return lambda: torch.add(y, x, alpha=A, out=o)

    # cuDNN through PyTorch for track A's convolution and pooling. Our arrays are
    # NHWC; PyTorch sees them as NCHW tensors in channels_last memory (a view, no
    # copy); the filters are rearranged once, outside the timed call. TF32 is off,
    # so both sides compute in float32.
    torch.backends.cudnn.allow_tf32 = False
    nchw = lambda t: t.permute(0, 3, 1, 2)  # noqa: E731  (N,H,W,C) -> (N,C,H,W)

    def weights(K):  # (R, S, C, F) -> (F, C, R, S), channels_last
        return K.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)

    def conv2d(X, K):
        w = weights(K)
        return lambda: torch.nn.functional.conv2d(nchw(X), w)

    def conv2d_backward_data(dY, K):
        w = weights(K)
        N, P, Q, F = dY.shape
        size = (N, K.shape[2], P + K.shape[0] - 1, Q + K.shape[1] - 1)
        return lambda: torch.nn.grad.conv2d_input(size, w, nchw(dY))

    def conv2d_backward_filter(X, dY):
        R, S = X.shape[1] - dY.shape[1] + 1, X.shape[2] - dY.shape[2] + 1
        size = (dY.shape[3], X.shape[3], R, S)
        return lambda: torch.nn.grad.conv2d_weight(nchw(X), size, nchw(dY))

    def options(geom):  # B11's geometry as PyTorch's keyword arguments
        return {
            "stride": geom.stride,
            "padding": geom.pad,
            "dilation": geom.dilation,
            "groups": geom.groups,
        }

    def conv(X, K, geom):
        w = weights(K)
        return lambda: torch.nn.functional.conv2d(nchw(X), w, **options(geom))

    def conv_tf32(X, K, geom):
        """cuDNN with TF32 on, for conv_v4; the switch is put back after each call."""
        w, x = weights(K), nchw(X)

        def run():
            torch.backends.cudnn.allow_tf32 = True
            try:
                return torch.nn.functional.conv2d(x, w, **options(geom))
            finally:
                torch.backends.cudnn.allow_tf32 = False

        return run

    def conv_backward_data(dY, K, hw, geom):
        w = weights(K)
        size = (dY.shape[0], K.shape[2] * geom.groups, *hw)
        return lambda: torch.nn.grad.conv2d_input(size, w, nchw(dY), **options(geom))

    def conv_backward_filter(X, dY, rs, geom):
        size = (dY.shape[3], X.shape[3] // geom.groups, *rs)
        return lambda: torch.nn.grad.conv2d_weight(
            nchw(X), size, nchw(dY), **options(geom)
        )

    def avg_pool(X):
        return lambda: torch.nn.functional.avg_pool2d(nchw(X), 2)

    # The other layers of the deep CNNs, as a PyTorch model calls them on
    # channels_last tensors (our NHWC arrays seen through permuted views).
    def max_pool(X, geom):
        """With return_indices, as our kernel writes its argmax (PyTorch's as
        int64: h W + w in each plane, the same numbers)."""
        k, s, pad = geom.window, geom.stride, geom.pad
        F = torch.nn.functional
        return lambda: F.max_pool2d(nchw(X), k, s, pad, return_indices=True)

    def max_pool_backward(dY, argmax, hw, geom):
        """What autograd runs: max_pool2d_with_indices_backward, given the forward's
        input (only its shape and layout are read) and int64 indices, both made
        once, untimed."""
        k, s, pad = geom.window, geom.stride, geom.pad
        N, P, Q, C = dY.shape
        X = dY.new_zeros((N, C, *hw)).contiguous(memory_format=torch.channels_last)
        idx = nchw(argmax.long())
        backward = torch.ops.aten.max_pool2d_with_indices_backward
        return lambda: backward(
            nchw(dY), X, [k, k], [s, s], [pad, pad], [1, 1], False, idx
        )

    def dropout(X, p, seed, offset):
        """A stand-in: F.dropout in training also draws Philox-4x32 numbers per
        element, but from its own seed and counters, so its mask is not ours (no
        check against the reference). It also writes that mask, one byte per
        element, for its backward; ours recomputes it."""
        return lambda: torch.nn.functional.dropout(X, p, training=True)

    # Batch norm as F.batch_norm takes it: channels on axis 1 (NHWC arrays as
    # channels_last views, (M, C) as they are).
    channels_first = lambda t: t.movedim(-1, 1)  # noqa: E731

    def batch_norm(X, gamma, beta):
        from thousand.kernels.batch_norm_inference import EPS

        x = channels_first(X)
        F = torch.nn.functional
        return lambda: F.batch_norm(x, None, None, gamma, beta, True, eps=EPS)

    def batch_norm_inference(X, gamma, beta, running_mean, running_var):
        from thousand.kernels.batch_norm_inference import EPS

        x, stats = channels_first(X), (running_mean, running_var)
        F = torch.nn.functional
        return lambda: F.batch_norm(x, *stats, gamma, beta, False, eps=EPS)

    def batch_norm_backward(dY, X, gamma, mean, invstd):
        """dX, dgamma and dbeta by autograd from PyTorch's own forward, built once,
        untimed (its saved mean and invstd, not ours: the same values within
        float32 rounding)."""
        from thousand.kernels.batch_norm_inference import EPS

        leaves = [t.detach().requires_grad_() for t in (channels_first(X), gamma)]
        beta = torch.zeros_like(gamma, requires_grad=True)
        F = torch.nn.functional
        out = F.batch_norm(leaves[0], None, None, leaves[1], beta, True, eps=EPS)
        wrt, grad = [*leaves, beta], channels_first(dY)
        return lambda: torch.autograd.grad(out, wrt, grad, retain_graph=True)

    def global_avg_pool_backward(dY, hw):
        """What autograd runs for x.mean((1, 2)): the gradient expanded over the
        pixels and divided by their count (one kernel writing all of dX)."""
        N, C = dY.shape
        return lambda: dY[:, None, None, :].expand(N, *hw, C) / (hw[0] * hw[1])

    def softmax(x):
        o = torch.empty_like(x)
        try:  # the out= form of torch.softmax (PyTorch 2.x); tried once, untimed
            torch.softmax(x, 1, out=o)
            return lambda: torch.softmax(x, 1, out=o)
        except TypeError:  # older: the op torch.softmax dispatches to, with out=
            return lambda: torch._softmax(x, 1, False, out=o)

    def softmax_backward(dy, y):
        """What autograd runs for softmax's backward: one kernel, given y."""
        o = torch.empty_like(y)
        if hasattr(torch, "_softmax_backward_data"):
            # its out= argument is named grad_input (PyTorch 2.11 refuses out=)
            return lambda: torch._softmax_backward_data(dy, y, 1, y.dtype, grad_input=o)
        s = y.new_empty((y.shape[0], 1))  # without it, the formula in torch ops

        def run():
            torch.mul(dy, y, out=o)
            torch.sum(o, dim=1, keepdim=True, out=s)
            torch.sub(dy, s, out=o)
            return o.mul_(y)

        return run

    # The language-model loss and its optimizer. Targets arrive as int32, as our
    # kernels take them; PyTorch holds class targets as int64, so each baseline
    # converts them once, untimed.
    def cross_entropy(logits, targets):
        """F.cross_entropy per row (reduction="none"): log_softmax writes the (N, V)
        log-probabilities, then nll_loss picks each row's target from them."""
        t = targets.long()
        return lambda: torch.nn.functional.cross_entropy(logits, t, reduction="none")

    def cross_entropy_backward(logits, targets, lse, dloss):
        """What autograd runs for F.cross_entropy(logits, t, reduction="none")
        .backward(dloss), the two calls of a training step: nll_loss_backward
        scatters -dloss into a zeroed (N, V) gradient of the log-probabilities, then
        _log_softmax_backward_data makes it dlogits = g - softmax * sum(g) from the
        log-softmax the forward saved (made here once, untimed, as the forward
        would). The whole autograd backward() adds only graph bookkeeping."""
        t = targets.long()
        logp = torch.log_softmax(logits, 1)  # (N, V), what autograd saved
        total = torch.ops.aten.nll_loss_forward(logp, t, None, 0, -100)[1]
        nll_backward = torch.ops.aten.nll_loss_backward
        log_softmax_backward = torch.ops.aten._log_softmax_backward_data

        def run():
            g = nll_backward(dloss, logp, t, None, 0, -100, total)  # 0: "none"
            return log_softmax_backward(g, logp, 1, logp.dtype)

        return run

    def adamw(p, g, m, v, hyper):
        """torch._fused_adamw_, the one kernel call of torch.optim.AdamW(fused=True)
        .step() (which first adds 1 to its step counters, a second tiny kernel), on
        one flat tensor of n parameters. The step counter is a float32 tensor on
        the GPU holding t, as the optimizer keeps it, so the bias corrections are
        taken in the kernel, as ours are. p, m and v are the rows of one (3, n)
        tensor (our output's layout), copied once and then stepped in place."""
        lr, beta1, beta2, eps, wd, t = hyper.tolist()  # one read, at setup
        state = torch.stack([p, m, v])  # (3, n)
        step = torch.tensor(t, dtype=torch.float32, device=p.device)
        lists = ([state[0]], [g], [state[1]], [state[2]], [], [step])
        kw = dict(lr=lr, beta1=beta1, beta2=beta2, weight_decay=wd, eps=eps)

        def run():
            torch._fused_adamw_(*lists, **kw, amsgrad=False, maximize=False)
            return state

        return run

    # Layer norm: the calls a user makes, not their out= overloads. On the H200,
    # native_layer_norm.out took 0.62 ms where the plain call took 0.35 ms at
    # 32,768 x 4,096 (the overload writes a temporary, then copies it); the caching
    # allocator makes the plain call's output nearly free, so it is the fair ruler.
    def layer_norm(x, gamma, beta):
        from thousand.kernels.layer_norm import EPS

        return lambda: torch.nn.functional.layer_norm(x, x.shape[1:], gamma, beta, EPS)

    def layer_norm_backward(x, dy, gamma, mean, rstd):
        """native_layer_norm_backward, what autograd runs: dx, dgamma and dbeta in
        one call (the bias only switches its gradient on)."""
        beta = torch.zeros_like(gamma)
        m, r = mean[:, None], rstd[:, None]  # (rows, 1), as native_layer_norm keeps
        args = (dy, x, [x.shape[1]], m, r, gamma, beta, [True, True, True])
        return lambda: torch.ops.aten.native_layer_norm_backward(*args)

    # GPT-2's layers: the plain calls, as for layer norm (the caching allocator
    # serves their outputs). Token ids arrive as int32, as our kernels take them;
    # PyTorch code holds them as int64, so each baseline converts them once, untimed.
    def gelu(x):
        return lambda: torch.nn.functional.gelu(x, approximate="tanh")

    def gelu_backward(dy, x):
        """What autograd runs for gelu(x, approximate="tanh")'s backward."""
        return lambda: torch.ops.aten.gelu_backward(dy, x, approximate="tanh")

    def embedding(idx, wte, wpe):
        """nanoGPT's forward: wte(idx) + wpe(pos), a gather, then a broadcast add."""
        ids, T = idx.long(), idx.shape[1]
        return lambda: torch.nn.functional.embedding(ids, wte) + wpe[:T]

    def embedding_backward(dout, idx, wte, wpe):
        """What autograd runs for nanoGPT's wte(idx) + wpe(pos), pos = arange(T):
        embedding_dense_backward for wte (a sort of the ids, then segment sums),
        and for wpe after the broadcast's sum over the batch. Returns both."""
        ids, V, maxT = idx.long(), wte.shape[0], wpe.shape[0]
        pos = torch.arange(idx.shape[1], device=idx.device)
        dense = torch.ops.aten.embedding_dense_backward

        def run():
            dwte = dense(dout, ids, V, -1, False)
            return dwte, dense(dout.sum(0), pos, maxT, -1, False)

        return run

    # Attention: scaled_dot_product_attention as a user calls it. In float32 its
    # flash kernel is out (fp16 and bf16 only), so PyTorch picks the
    # memory-efficient kernel (from xFormers) where it applies, else the math path
    # that forms the T x T scores. The backward times what autograd runs for it:
    # the graph is built once, untimed, and each call is torch.autograd.grad.
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def attention(q, k, v, causal):
        return lambda: sdpa(q, k, v, is_causal=causal)

    def attention_backward(q, k, v, o, do, lse, causal):
        """dq, dk, dv by autograd from PyTorch's own forward (its o and lse, which
        it saves, not ours: the same values within float32 rounding)."""
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        out = sdpa(*leaves, is_causal=causal)
        return lambda: torch.autograd.grad(out, leaves, do, retain_graph=True)

    # Generation with a KV cache, as a PyTorch model writes it: the new rows copied
    # into a slice of the cache (in place), and sdpa of the one new query against
    # the first `length` rows (strided views of the caches, no copy). `pos` and
    # `length` arrive as NumPy ints: plain ints for the slices, once, untimed.
    def kv_append(cache, new, pos):
        rows = slice(int(pos), int(pos) + new.shape[2])

        def run():
            cache[:, :, rows].copy_(new)
            return cache

        return run

    def attention_decode(q, k, v, length):
        n = int(length)
        return lambda: sdpa(q, k[:, :, :n], v[:, :, :n])

    ops = {
        # what nanoGPT writes: a permuted view, then .contiguous() (the copy)
        "split_heads": lambda x: lambda: x.permute(2, 0, 3, 1, 4).contiguous(),
        "merge_heads": lambda y: lambda: y.permute(1, 3, 0, 2, 4).contiguous(),
        "attention": attention,
        "attention_bf16": attention,  # the same call on bf16 tensors: flash kernels
        "attention_backward": attention_backward,
        "kv_append": kv_append,
        "attention_decode": attention_decode,
        "gelu": gelu,
        "gelu_backward": gelu_backward,
        "embedding": embedding,
        "embedding_backward": embedding_backward,
        "conv2d": conv2d,
        "conv2d_backward_data": conv2d_backward_data,
        "conv2d_backward_filter": conv2d_backward_filter,
        "conv": conv,
        "conv_backward_data": conv_backward_data,
        "conv_backward_filter": conv_backward_filter,
        "avg_pool": avg_pool,
        "max_pool": max_pool,
        "max_pool_backward": max_pool_backward,
        "global_avg_pool": lambda x: lambda: x.mean((1, 2)),
        "global_avg_pool_backward": global_avg_pool_backward,
        "dropout": dropout,
        "batch_norm": batch_norm,
        "batch_norm_inference": batch_norm_inference,
        "batch_norm_backward": batch_norm_backward,
        "add_relu": lambda a, b: lambda: torch.relu(a + b),
        "softmax": softmax,
        "softmax_backward": softmax_backward,
        "cross_entropy": cross_entropy,
        "cross_entropy_backward": cross_entropy_backward,
        "adamw": adamw,
        "layer_norm": layer_norm,
        "layer_norm_backward": layer_norm_backward,
        "col_sum": into(
            lambda g, out: torch.sum(g, dim=0, out=out),
            lambda g: g.new_empty(g.shape[1]),
        ),
        "axpy": axpy,
        "copy": into(lambda x, out: out.copy_(x), lambda x: torch.empty_like(x)),
        "vector_add": into(torch.add, lambda x, y: torch.empty_like(x)),
        "matrix_add": into(torch.add, lambda a, b: torch.empty_like(a)),
        "sigmoid": into(torch.sigmoid, lambda x: torch.empty_like(x)),
        "matmul": into(
            torch.matmul, lambda a, b: a.new_empty((a.shape[0], b.shape[1]))
        ),
        # cuBLAS reads the transposed view as it is (a transposed operand)
        "matmul_tn": into(
            lambda a, b, out: torch.matmul(a.T, b, out=out),
            lambda a, b: a.new_empty((a.shape[1], b.shape[1])),
        ),
        "neuron_layer": neuron_layer,
        "matmul_tf32": with_tf32(nn),
        "conv_tf32": conv_tf32,
        "matmul_wgmma": into(nt, lambda a, bt: nt(a, bt, None)),
        "matmul_wgmma_tf32": with_tf32(nt),
        "reduce": into(
            lambda x, out: torch.sum(x, dim=0, keepdim=True, out=out),
            lambda x: x.new_empty(1),
        ),
        "transpose": into(
            lambda a, out: out.copy_(a.t()), lambda a: a.new_empty(a.shape[::-1])
        ),
        "unroll": into(
            lambda x, out: torch.sum(x, dim=0, out=out),
            lambda x: x.new_empty(x.shape[1]),
        ),
        "row_sum": into(
            lambda a, a_cm, out: torch.sum(a, dim=1, out=out),
            lambda a, a_cm: a.new_empty(a.shape[0]),
        ),
    }
    ops["sgemm"] = ops["matmul"]  # the same product: sgemm holds matmul's tuned rungs
    return ops


# A baseline measured for a version rather than for its family (Version.baseline),
# and the family whose inputs it takes.
BASELINE_FAMILY = {"matmul_tf32": "matmul", "conv_tf32": "conv"}


PYCUDA_BASELINES = ("reduce",)  # the families pycuda_ops() covers


def pycuda_ops():
    """PyCUDA's built-in GPUArray reductions (two passes, generated kernels). They
    allocate their partial results and output on every call: a memory pool serves
    those, as our launchers keep their scratch buffers, so neither side times
    cudaMalloc."""
    from pycuda import gpuarray
    from pycuda.tools import DeviceMemoryPool

    pool = DeviceMemoryPool()

    def reduce(x):
        return lambda: gpuarray.sum(x, allocator=pool.allocate)

    return {"reduce": reduce}

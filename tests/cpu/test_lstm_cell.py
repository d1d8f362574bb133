"""A7 on the CPU backend: the recurrent kernels against NumPy (float64) and PyTorch,
their backward against finite differences, backpropagation through time of whole
layers against finite differences, and the model against its PyTorch twin step by
step. The generic tests (test_emulated_kernels.py) check each version's main output
against its reference; these check the other outputs (c, the activations, dc_prev)
and the references themselves.
"""

import numpy as np
import pytest
import torch

from tests.cpu.test_models import fd_grad, rel
from thousand.cuda import empty, to_device
from thousand.kernels.clip_norm import clip_all_ref, clip_global_norm, clip_norm
from thousand.kernels.elman_step import elman_step, elman_step_ref
from thousand.kernels.lstm_cell import lstm_cell, lstm_cell_all_ref
from thousand.kernels.lstm_cell_backward import (
    lstm_cell_backward,
    lstm_cell_backward_all_ref,
)
from thousand.models import rnn, rnn_twin

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
rng = np.random.default_rng(7)


def _inputs(B=3, H=5):
    Gx, Gh = rng.standard_normal((2, B, 4 * H)).astype(np.float32)
    c_prev = rng.standard_normal((B, H)).astype(np.float32)
    return Gx, Gh, c_prev


def test_lstm_ref_matches_torch_lstm_cell():
    """torch.nn.LSTMCell with identity weights on [Gx | Gh] computes the same step."""
    Gx, Gh, c_prev = (a.astype(np.float64) for a in _inputs())
    B, H = c_prev.shape
    cell = torch.nn.LSTMCell(4 * H, H, dtype=torch.float64)
    with torch.no_grad():
        cell.weight_ih.copy_(torch.eye(4 * H, dtype=torch.float64))
        cell.weight_hh.zero_()
        cell.bias_ih.zero_()
        cell.bias_hh.zero_()
    h0 = torch.zeros(B, H, dtype=torch.float64)
    h, c = cell(torch.from_numpy(Gx + Gh), (h0, torch.from_numpy(c_prev)))
    h_ref, c_ref, _ = lstm_cell_all_ref(Gx, Gh, c_prev)
    np.testing.assert_allclose(h_ref, h.detach().numpy(), atol=1e-14)
    np.testing.assert_allclose(c_ref, c.detach().numpy(), atol=1e-14)


def test_lstm_kernel_writes_c_and_activations():
    Gx, Gh, c_prev = _inputs(4, 33)
    c, acts = np.empty_like(c_prev), np.empty_like(Gx)
    h = lstm_cell(Gx, Gh, c_prev, c=c, acts=acts, block=32)
    h_ref, c_ref, a_ref = lstm_cell_all_ref(Gx, Gh, c_prev)
    assert rel(h, h_ref) < 1e-6 and rel(c, c_ref) < 1e-6 and rel(acts, a_ref) < 1e-6


def test_lstm_backward_ref_matches_finite_differences_and_torch():
    """L = sum(R_h * h_t + R_c * c_t) of one step: the reference's dG and dc_prev
    against central differences in float64, and against torch.autograd."""
    Gx, Gh, c_prev = (a.astype(np.float64) for a in _inputs())
    Rh, Rc = rng.standard_normal((2,) + c_prev.shape)
    Z = Gx + Gh
    zero = np.zeros_like(Z)

    def loss():
        h, c, _ = lstm_cell_all_ref(Z, zero, c_prev)
        return float((Rh * h + Rc * c).sum())

    _, c, acts = lstm_cell_all_ref(Z, zero, c_prev)
    dG, dcp = lstm_cell_backward_all_ref(Rh, Rc, acts, c_prev, c)
    assert rel(dG, fd_grad(loss, Z)) < 1e-8
    assert rel(dcp, fd_grad(loss, c_prev)) < 1e-8

    z = torch.from_numpy(Z).requires_grad_()
    cp = torch.from_numpy(c_prev.copy()).requires_grad_()
    i, f, g, o = z.chunk(4, dim=1)
    ct = torch.sigmoid(f) * cp + torch.sigmoid(i) * torch.tanh(g)
    ht = torch.sigmoid(o) * torch.tanh(ct)
    (torch.from_numpy(Rh) * ht + torch.from_numpy(Rc) * ct).sum().backward()
    np.testing.assert_allclose(dG, z.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(dcp, cp.grad.numpy(), atol=1e-12)


def test_lstm_backward_kernel_writes_dc_prev():
    Gx, Gh, c_prev = _inputs(3, 37)
    _, c, acts = (a.astype(np.float32) for a in lstm_cell_all_ref(Gx, Gh, c_prev))
    dh, dc = rng.standard_normal((2,) + c_prev.shape).astype(np.float32)
    dcp = np.empty_like(c_prev)
    dG = lstm_cell_backward(dh, dc, acts, c_prev, c, dc_prev=dcp, block=32)
    dG_ref, dcp_ref = lstm_cell_backward_all_ref(dh, dc, acts, c_prev, c)
    assert rel(dG, dG_ref) < 1e-6 and rel(dcp, dcp_ref) < 1e-6


def test_elman_step_matches_torch():
    Gx, Gh = rng.standard_normal((2, 4, 9)).astype(np.float32)
    want = torch.tanh(torch.from_numpy(Gx) + torch.from_numpy(Gh)).numpy()
    assert rel(elman_step(Gx, Gh), want) < 1e-6
    assert rel(elman_step_ref(Gx, Gh), want) < 1e-6


@pytest.mark.parametrize("scale", [0.01, 10.0])  # below the bound, far above it
def test_clip_global_norm_matches_torch(scale):
    gs = [(rng.standard_normal(n) * scale).astype(np.float32) for n in (7, 300, 1)]
    params = [torch.nn.Parameter(torch.zeros(len(g))) for g in gs]
    for p, g in zip(params, gs, strict=True):
        p.grad = torch.from_numpy(g.copy())
    norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
    d = [to_device(g) for g in gs]
    sumsq = clip_global_norm(d, 1.0, empty((1,), np.float32))
    assert abs(np.sqrt(sumsq.get()[0]) - float(norm)) <= 1e-5 * float(norm)
    refs = clip_all_ref(*gs, max_norm=1.0)
    for dg, p, ref in zip(d, params, refs, strict=True):
        assert rel(dg.get(), p.grad.numpy()) < 1e-6
        assert rel(dg.get(), ref) < 1e-6


def test_clip_refuses_bad_arguments():
    with pytest.raises(ValueError, match="max_norm` must be a positive real"):
        clip_norm(np.ones(3, np.float32), max_norm=0)
    with pytest.raises(ValueError, match="grads` must be a non-empty list"):
        clip_global_norm([], 1.0, empty((1,), np.float32))
    with pytest.raises(ValueError, match=r"grads\[0\] must be a float32 device"):
        clip_global_norm([np.ones(3, np.float32)], 1.0, empty((1,), np.float32))


@pytest.mark.parametrize("kind", ["lstm", "elman"])
def test_bptt_matches_finite_differences(kind):
    """A whole layer over T = 4 steps: L = sum(R * h_t over all t), the gradients of
    W_ih, W_hh, b and X from backpropagation through time against central
    differences of the float64 twin (torch.nn.LSTM / RNN in float64)."""
    cfg = rnn.Config(kind=kind, n_in=3, hidden=4, n_out=2)
    p = rnn.init_params(cfg, seed=2)
    T, B = 4, 2
    X = rng.standard_normal((T, B, 3)).astype(np.float32)
    R = rng.standard_normal((T, B, 4)).astype(np.float32)
    layer = rnn.Recurrent(kind, p["W_ih"], p["W_hh"], p["b"])
    layer.forward(to_device(X))
    dX = layer.backward(to_device(R)).get()
    dW_ih, dW_hh, db = (g.get() for g in layer.grads)

    twin = rnn_twin.Twin(cfg, p)
    twin.rnn.double()
    w = {k: v.astype(np.float64) for k, v in p.items()}
    X64, R64 = X.astype(np.float64), R.astype(np.float64)

    def loss():
        with torch.no_grad():
            twin.rnn.weight_ih_l0.copy_(torch.from_numpy(w["W_ih"].T.copy()))
            twin.rnn.weight_hh_l0.copy_(torch.from_numpy(w["W_hh"].T.copy()))
            twin.rnn.bias_ih_l0.copy_(torch.from_numpy(w["b"]))
            out, _ = twin.rnn(torch.from_numpy(X64))
        return float((out.numpy() * R64).sum())

    assert rel(dW_ih, fd_grad(loss, w["W_ih"])) < 2e-6
    assert rel(dW_hh, fd_grad(loss, w["W_hh"])) < 2e-6
    assert rel(db, fd_grad(loss, w["b"])) < 2e-6
    assert rel(dX, fd_grad(loss, X64)) < 2e-6


@pytest.mark.parametrize("kind", ["lstm", "elman"])
def test_model_agrees_with_its_pytorch_twin_step_by_step(kind):
    """Three AdamW steps with clipping on copy-task batches: the same losses and
    the same weights after each step."""
    cfg = rnn.Config(kind=kind, n_in=10, hidden=8, n_out=10, lr=1e-2, clip=0.5)
    p = rnn.init_params(cfg, seed=0)
    model, twin = rnn.SequenceModel(cfg, p), rnn_twin.Twin(cfg, p)
    data = np.random.default_rng(1)
    for _ in range(3):  # the same shapes: steps 2 and 3 replay step 1's launches
        X, Y, ids = rnn.copy_task(data, B=4, lag=3, S=3)
        scored = X.shape[0] - Y.shape[0]
        ours = model.step(X, Y, scored)
        theirs = twin.step(X, ids, scored)
        assert abs(ours - theirs) < 1e-5
        got = twin.host_params()
        for name, d in zip(model.names, model.params(), strict=True):
            assert rel(d.get().reshape(got[name].shape), got[name]) < 1e-5, name


def test_config_refuses_bad_settings():
    with pytest.raises(ValueError, match="kind must be one of"):
        rnn.Config(kind="gru")
    with pytest.raises(ValueError, match="hidden must be an int >= 1"):
        rnn.Config(hidden=0)
    with pytest.raises(ValueError, match="clip must be a positive number"):
        rnn.Config(clip=-1.0)

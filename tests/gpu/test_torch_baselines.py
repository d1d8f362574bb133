"""A library baseline is only a fair yardstick if it computes what our kernels do.
The cuDNN baselines of track A see NHWC arrays through permuted views and
rearranged filters: here each one's result, put back in our layout, must match
the family's NumPy reference."""

import numpy as np
import pytest

from tests.helpers import torch_baseline
from thousand.bench.baselines import as_torch, torch_ops
from thousand.cuda import driver
from thousand.kernels.family import all_families

pytestmark = pytest.mark.gpu

BY_NAME = {f.name: f for f in all_families()}


def _stacked(dwte, dwpe):
    """embedding_backward's two gradients, packed as the kernels pack them."""
    import torch

    return torch.cat([dwte, dwpe])


def _grads(dq, dk, dv):
    """autograd's (dq, dk, dv) -> attention_backward's (3, B, H, T, d)"""
    import torch

    return torch.stack([dq, dk, dv])


# PyTorch's result -> our layout
def _packed_rows(grads):
    """(dx, dgamma, dbeta) from native_layer_norm_backward, packed (rows + 2, C)
    as layer_norm_backward writes them."""
    import torch

    dx, dgamma, dbeta = grads
    return torch.cat([dx, dgamma[None], dbeta[None]])


OURS = {
    "attention_bf16": lambda t: t,
    "layer_norm_backward": _packed_rows,
    "split_heads": lambda t: t,
    "merge_heads": lambda t: t,
    "conv2d": lambda t: t.permute(0, 2, 3, 1),  # NCHW view -> NHWC
    "conv2d_backward_data": lambda t: t.permute(0, 2, 3, 1),
    "conv2d_backward_filter": lambda t: t.permute(2, 3, 1, 0),  # FCRS -> RSCF
    "conv": lambda t: t.permute(0, 2, 3, 1),  # every geometry of B11's check sizes
    "conv_backward_data": lambda t: t.permute(0, 2, 3, 1),
    "conv_backward_filter": lambda t: t.permute(2, 3, 1, 0),  # F C/G R S -> R S C/G F
    "avg_pool": lambda t: t.permute(0, 2, 3, 1),
    "max_pool": lambda t: t[0].permute(0, 2, 3, 1),  # (values, indices): values
    "max_pool_backward": lambda t: t.permute(0, 2, 3, 1),
    "global_avg_pool": lambda t: t,
    "global_avg_pool_backward": lambda t: t,
    "add_relu": lambda t: t,
    "batch_norm": lambda t: t.movedim(1, -1),  # channels back to the last axis
    "batch_norm_inference": lambda t: t.movedim(1, -1),
    "batch_norm_backward": lambda t: t[0].movedim(1, -1),  # (dX, dgamma, dbeta)
    "col_sum": lambda t: t,
    "matmul_tn": lambda t: t,
    "softmax": lambda t: t,
    "softmax_backward": lambda t: t,
    "cross_entropy": lambda t: t,
    "cross_entropy_backward": lambda t: t,
    "adamw": lambda t: t,  # the (3, n) state [p, m, v] after the step
    "layer_norm": lambda t: t,
    "gelu": lambda t: t,
    "gelu_backward": lambda t: t,
    "embedding": lambda t: t,
    "embedding_backward": lambda t: _stacked(*t),
    "attention": lambda t: t,
    "attention_backward": lambda t: _grads(*t),
    "kv_append": lambda t: t,  # the cache after the in-place copy
    "attention_decode": lambda t: t,
}


# A family whose module defines its own `torch_baseline` is checked too, its result
# taken in the family's own layout unless OURS says otherwise.
OWN = {f.name for f in BY_NAME.values() if torch_baseline(f) is not None}


@pytest.mark.parametrize("name", sorted(set(OURS) | OWN))
def test_torch_baseline_computes_what_the_family_does(name):
    ops = torch_ops()
    if not ops:
        pytest.skip("PyTorch with CUDA is not installed: no library baseline")

    family = BY_NAME[name]
    make = ops.get(name) or torch_baseline(family)
    ours = OURS.get(name, lambda t: t)
    driver()
    for size in family.check_sizes:
        host = family.make_inputs(np.random.default_rng(1), size)
        arrays = [a for a in host if isinstance(a, np.ndarray)]  # not `causal`
        if any(a.size == 0 for a in arrays):
            continue
        got = ours(make(*[as_torch(a) for a in host])())
        want = family.ref(*host).astype(np.float64)
        got = got.double().cpu().numpy()  # (bf16 has no NumPy twin in torch)
        assert got.shape == want.shape, (name, size)
        scale = max(float(np.abs(want).max()), 1.0)
        # float32 families within 1e-4; bf16 ones round every output to 8 bits,
        # so there the family's own tolerance is the bound
        bound = max(1e-4, family.tolerance)
        assert float(np.abs(got - want).max()) / scale < bound, (name, size)


def test_adamw_baseline_takes_the_optimizers_step():
    """torch.optim.AdamW(fused=True).step() from moments m, v at step t - 1 (the
    public call) takes the step adamw_ref takes, so the baseline's direct call to
    its kernel, checked above, stands for it."""
    if not torch_ops():
        pytest.skip("PyTorch with CUDA is not installed: no library baseline")
    import torch

    from thousand.kernels.adamw import adamw_ref
    from thousand.kernels.family import rel_error

    driver()
    host = BY_NAME["adamw"].make_inputs(np.random.default_rng(2), (10007,))
    p, g, m, v, hyper = host
    lr, beta1, beta2, eps, wd, t = hyper.tolist()
    param = torch.nn.Parameter(as_torch(p))
    opt = torch.optim.AdamW(
        [param], lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=wd, fused=True
    )
    param.grad = as_torch(g)
    opt.state[param] = {  # as the optimizer keeps it: the step a GPU float32
        "step": torch.tensor(t - 1, dtype=torch.float32, device="cuda"),
        "exp_avg": as_torch(m),
        "exp_avg_sq": as_torch(v),
    }
    opt.step()
    state = opt.state[param]
    got = torch.stack([param.detach(), state["exp_avg"], state["exp_avg_sq"]])
    # float32 arithmetic in another order than the float64 reference: as our own
    # kernels' bound, with a margin
    assert rel_error(got.cpu().numpy(), adamw_ref(*host)) < 1e-5

"""A library baseline is only a fair yardstick if it computes what our kernels do.
The cuDNN baselines of track A see NHWC arrays through permuted views and
rearranged filters: here each one's result, put back in our layout, must match
the family's NumPy reference."""

import numpy as np
import pytest

from thousand.bench.baselines import torch_ops
from thousand.cuda import driver
from thousand.kernels.family import all_families

pytestmark = pytest.mark.gpu

BY_NAME = {f.name: f for f in all_families()}


def _stacked(dwte, dwpe):
    """embedding_backward's two gradients, packed as the kernels pack them."""
    import torch

    return torch.cat([dwte, dwpe])


# PyTorch's result -> our layout
OURS = {
    "conv2d": lambda t: t.permute(0, 2, 3, 1),  # NCHW view -> NHWC
    "conv2d_backward_data": lambda t: t.permute(0, 2, 3, 1),
    "conv2d_backward_filter": lambda t: t.permute(2, 3, 1, 0),  # FCRS -> RSCF
    "avg_pool": lambda t: t.permute(0, 2, 3, 1),
    "col_sum": lambda t: t,
    "softmax": lambda t: t,
    "softmax_backward": lambda t: t,
    "layer_norm": lambda t: t,
    "gelu": lambda t: t,
    "gelu_backward": lambda t: t,
    "embedding": lambda t: t,
    "embedding_backward": lambda t: _stacked(*t),
}


@pytest.mark.parametrize("name", sorted(OURS))
def test_torch_baseline_computes_what_the_family_does(name):
    ops = torch_ops()
    if not ops:
        pytest.skip("PyTorch with CUDA is not installed: no library baseline")
    import torch

    family = BY_NAME[name]
    driver()
    for size in family.check_sizes:
        host = family.make_inputs(np.random.default_rng(1), size)
        if any(a.size == 0 for a in host):
            continue
        got = OURS[name](ops[name](*[torch.from_numpy(a).cuda() for a in host])())
        want = family.ref(*host)
        got = got.cpu().numpy()
        assert got.shape == want.shape, (name, size)
        scale = max(float(np.abs(want).max()), 1.0)
        assert float(np.abs(got - want).max()) / scale < 1e-4, (name, size)

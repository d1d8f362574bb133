"""The split_heads and merge_heads families: the references against index loops and
against PyTorch's view-permute-contiguous; each the inverse of the other; every
version on a device array and on the qkv of a model; the argument checks of v2.
The kernels also run in the generic tests (test_emulated_kernels.py,
test_bad_input.py)."""

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.merge_heads import FAMILY as MERGE
from thousand.kernels.merge_heads import merge_heads, merge_heads_ref
from thousand.kernels.split_heads import FAMILY as SPLIT
from thousand.kernels.split_heads import split_heads, split_heads_ref

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")
rng = np.random.default_rng(17)


def test_split_ref_against_a_loop():
    B, T, n, H, d = 2, 3, 3, 2, 4
    x = rng.standard_normal((B, T, n, H, d)).astype(np.float32)
    y = np.empty((n, B, H, T, d), np.float32)
    for b in range(B):
        for t in range(T):
            for s in range(n):
                for h in range(H):
                    for e in range(d):
                        y[s, b, h, t, e] = x[b, t, s, h, e]
    assert np.array_equal(split_heads_ref(x), y)


def test_refs_are_what_pytorch_writes():
    """nanoGPT: q, k, v = qkv.split(C, 2), each .view(B, T, H, d).transpose(1, 2);
    the attention output y.transpose(1, 2).contiguous().view(B, T, C)."""
    torch = pytest.importorskip("torch")
    B, T, H, d = 2, 5, 3, 8
    C = H * d
    qkv = rng.standard_normal((B, T, 3 * C)).astype(np.float32)
    got = split_heads_ref(qkv.reshape(B, T, 3, H, d))
    for s, part in enumerate(torch.from_numpy(qkv).split(C, dim=2)):
        want = part.reshape(B, T, H, d).transpose(1, 2).contiguous().numpy()
        assert np.array_equal(got[s], want)
    o = rng.standard_normal((B, H, T, d)).astype(np.float32)
    want = torch.from_numpy(o).transpose(1, 2).contiguous().view(B, T, C).numpy()
    assert np.array_equal(merge_heads_ref(o[None]).reshape(B, T, C), want)


@pytest.mark.parametrize("version", [1, 2])
def test_each_undoes_the_other_on_the_device(version):
    x = rng.standard_normal((3, 7, 3, 2, 12)).astype(np.float32)
    d_y = split_heads(to_device(x), version=version)  # (3, 3, 2, 7, 12)
    assert tuple(d_y.shape) == (3, 3, 2, 7, 12)
    assert np.array_equal(d_y.get(), split_heads_ref(x))
    back = merge_heads(d_y, version=version)
    assert np.array_equal(back.get(), x)


@pytest.mark.parametrize("family", [SPLIT, MERGE], ids=lambda f: f.name)
def test_v2_refuses_a_head_size_not_a_multiple_of_4(family):
    (x,) = family.make_inputs(rng, (2, 3, 3, 2, 6))
    assert np.array_equal(family.versions[0].run(x), family.ref(x))  # v1 takes it
    with pytest.raises(ValueError, match="multiple of 4, got 6"):
        family.versions[1].run(x)


@pytest.mark.parametrize("family", [SPLIT, MERGE], ids=lambda f: f.name)
def test_out_of_the_wrong_shape_is_refused(family):
    (x,) = family.make_inputs(rng, (2, 3, 3, 2, 8))
    out = np.empty(x.shape, np.float32)  # x's own shape, not the permuted one
    with pytest.raises(ValueError, match="`out` must have shape"):
        family.versions[1].run(x, out=out)


def test_v2_refuses_a_grid_too_tall():
    x = np.empty((1, 1, 1, 65536, 4), np.float32)  # H = 65,536 heads
    with pytest.raises(ValueError, match="at most 65,535, got 65536"):
        split_heads(x)

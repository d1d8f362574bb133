"""matmul_tn beyond the family's generic checks: every split of K gives the same
product (and the same bits as one slice would not: the order of additions
changes, so within the tolerance), the bias gradient it sums on the side, and the
Linear layer that uses it against Dense's transpose-then-multiply backward."""

import numpy as np
import pytest

from thousand.cuda import to_device
from thousand.kernels.matmul_tn import matmul_tn, matmul_tn_ref, slices_for
from thousand.models.gpt import Linear
from thousand.models.layers import Dense

pytestmark = pytest.mark.usefixtures("cpu_backend_checked")


def rel(a, ref):
    return float(np.abs(a - ref).max() / max(np.abs(ref).max(), 1.0))


@pytest.mark.parametrize("slices", [1, 2, 5, 64])
def test_every_split_of_k_gives_the_product_and_the_column_sums(slices):
    rng = np.random.default_rng(slices)
    a = rng.standard_normal((1000, 130), dtype=np.float32)  # (K, M)
    b = rng.standard_normal((1000, 37), dtype=np.float32)  # (K, N)
    db = np.full(37, np.nan, np.float32)
    c = matmul_tn(a, b, db=db, slices=slices)
    assert rel(c, matmul_tn_ref(a, b)) < 1e-5
    assert rel(db, b.astype(np.float64).sum(axis=0)) < 1e-5


def test_slices_fill_the_gpu_but_never_get_thinner_than_256_rows(monkeypatch):
    import thousand.kernels.matmul_tn as tn

    monkeypatch.setattr(tn, "device_info", lambda: {"sm_count": 132})  # an H200
    assert slices_for(384, 384, 8192) == 30  # 9 tiles of 128 x 128: 270 blocks
    assert slices_for(384, 384, 1000) == 3  # 256 rows a slice at least
    assert slices_for(384, 384, 300) == 1
    assert slices_for(4096, 4096, 8192) == 1  # 1,024 tiles fill the GPU


def test_bad_slices_and_db_are_refused():
    a, b = np.ones((8, 4), np.float32), np.ones((8, 4), np.float32)
    with pytest.raises(ValueError, match="slices"):
        matmul_tn(a, b, slices=0)
    with pytest.raises(ValueError, match="db"):
        matmul_tn(a, b, db=np.ones(5, np.float32))
    with pytest.raises(ValueError, match="same rows K"):
        matmul_tn(a, np.ones((7, 4), np.float32))


def test_linear_gives_the_gradients_dense_gives():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((24, 40), dtype=np.float32)
    b = rng.standard_normal(40, dtype=np.float32)
    X = to_device(rng.standard_normal((700, 24), dtype=np.float32))
    G = to_device(rng.standard_normal((700, 40), dtype=np.float32))
    dense, linear = Dense(W, b), Linear(W, b)
    assert rel(linear.forward(X).get(), dense.forward(X).get()) == 0
    dx, ref_dx = linear.backward(G).get(), dense.backward(G).get()
    assert rel(dx, ref_dx) == 0  # the same dY W^T
    for g, ref in zip(linear.grads, dense.grads, strict=True):
        assert rel(g.get(), ref.get()) < 1e-5

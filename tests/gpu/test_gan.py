"""A13's GANs on the GPU: the CPU layer's twin checks again with the kernels on the
device and the PyTorch twin on the GPU when PyTorch has CUDA (TF32 off on both
sides). cuDNN sums in orders of its own, so the bound is five times the CPU's."""

import pytest

from tests.cpu import test_gan as G
from thousand.models import gan

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("loss", gan.LOSSES)
@pytest.mark.parametrize("cfg", [G.RING, G.DIGITS], ids=["ring", "digits"])
def test_steps_agree_with_the_pytorch_twin_on_the_gpu(cfg, loss):
    torch = pytest.importorskip("torch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    G.check_against_twin(cfg, loss, device=device, tol=1e-3)


def test_transposed_conv_gradients_on_the_gpu():
    G.test_transposed_conv_gradients_match_finite_differences()

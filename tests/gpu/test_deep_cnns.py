"""A10 and A11's networks on the GPU: the CPU layer's twin checks again with the
kernels on the device and the PyTorch twin on the GPU when PyTorch has CUDA (TF32
off on both sides: float32 against float32). cuDNN sums in orders of its own, so
the bound is ten times the CPU layer's."""

import pytest

from tests.cpu import test_deep_cnns as DC

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", list(DC.SPECS))
def test_steps_agree_with_the_pytorch_twin_on_the_gpu(name):
    torch = pytest.importorskip("torch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    DC.check_against_twin(name, steps=3, batch=8, device=device, tol=1e-3)


def test_shapes_calibration_and_shifts():
    DC.test_shapes_depths_and_parameter_counts()
    DC.test_evaluation_needs_calibration_and_dropout_is_off()
    DC.test_shift_moves_each_image_within_its_bounds()

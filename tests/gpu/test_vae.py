"""A9's VAE on the GPU: the CPU layer's checks of the latent layer and of the
model against its PyTorch twin (on the host, fed the same eps), with the kernels
on the device. The kernels' float32 logf, cosf and expf differ from the CPU
backend's in the last bits, so the bounds are the CPU layer's, which allow that."""

import pytest

from tests.cpu import test_reparam_kl as RK

pytestmark = pytest.mark.gpu


def test_latent_layer_matches_references_and_pytorch():
    RK.test_kernels_match_the_references_on_the_cpu_backend()
    RK.test_forward_and_backward_match_pytorch()


def test_vae_steps_agree_with_the_pytorch_twin_on_the_gpu():
    from thousand.models.rbm import binary_digits

    X_train, _ = binary_digits()
    RK.check_against_twin(X_train[:96])


def test_iwae_estimate_matches_a_quadrature_on_the_gpu():
    from thousand.models.rbm import binary_digits

    X_train, X_test = binary_digits()
    RK.test_iwae_estimate_matches_a_quadrature_and_bounds_the_elbo(
        (X_train[:96], X_test[:24])
    )

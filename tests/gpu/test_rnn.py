"""A7's recurrent networks on the GPU: the CPU layer's checks of the LSTM and Elman
kernels' extra outputs, backpropagation through time against finite differences,
clipping against PyTorch and the model against its PyTorch twin, run again with
the kernels on the device (PyCUDA views of time steps, nvcc's rounding)."""

import pytest

from tests.cpu import test_lstm_cell as R

pytestmark = pytest.mark.gpu


def test_cell_kernels_and_clipping():
    R.test_lstm_kernel_writes_c_and_activations()
    R.test_lstm_backward_kernel_writes_dc_prev()
    R.test_elman_step_matches_torch()
    R.test_clip_global_norm_matches_torch(0.01)
    R.test_clip_global_norm_matches_torch(10.0)


@pytest.mark.parametrize("kind", ["lstm", "elman"])
def test_bptt_and_twin(kind):
    R.test_bptt_matches_finite_differences(kind)
    R.test_model_agrees_with_its_pytorch_twin_step_by_step(kind)

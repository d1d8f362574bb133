"""Track A's models on the GPU: the CPU layer's model checks, run again with the
kernels on the device (PyCUDA arrays, views made by reshape and slicing, nvcc's
rounding). The checks themselves live in tests/cpu; here they only change backend.
"""

import pytest

from tests.cpu import test_dbn as DBN
from tests.cpu import test_energy_models as E
from tests.cpu import test_lenet as LN
from tests.cpu import test_models as M

pytestmark = pytest.mark.gpu


def test_gates_and_the_xor_search():
    M.test_no_unit_computes_xor_but_the_search_finds_and()


def test_perceptron_separable_and_xor():
    M.test_perceptron_converges_on_separable_points_as_its_twin_does()
    M.test_perceptron_never_converges_on_xor()
    M.test_signed_inputs_count_the_rules_mistakes()


@pytest.mark.parametrize("activation", ["linear", "relu", "sigmoid", "tanh"])
def test_dense_backward_matches_finite_differences(activation):
    M.test_dense_backward_matches_finite_differences(activation)


def test_softmax_xent_and_network_gradients():
    M.test_softmax_xent_matches_finite_differences_and_its_loss()
    M.test_softmax_xent_survives_huge_logits()
    M.test_network_gradients_match_finite_differences()


def test_mlp_agrees_with_its_twin_and_solves_xor():
    M.test_mlp_steps_agree_with_the_numpy_twin(M.np.float32)
    M.test_mlp_solves_xor_on_the_kernels()


@pytest.mark.parametrize("version", [1, 2])
def test_conv_and_lenet(version):
    LN.test_conv_backward_matches_finite_differences(version, "tanh")
    LN.test_small_conv_network_gradients_match_finite_differences(version)
    LN.test_lenet_steps_agree_with_the_numpy_twin(version)


def test_pool_and_lenet_shapes():
    LN.test_avg_pool_backward_matches_finite_differences_odd_sizes_too()
    LN.test_lenet_shapes_are_the_papers()


def test_hopfield_and_rbm():
    E.test_hopfield_recalls_corrupted_patterns_with_the_energy_falling()
    E.test_stored_patterns_are_fixed_points()
    E.test_past_capacity_the_network_recalls_nothing_exactly()
    E.test_rbm_steps_agree_with_the_numpy_twin()


def test_dbn_agrees_with_its_twins():
    """A8: the greedy stack against the NumPy twins, the fine-tuned net against
    its PyTorch twin (on the CPU: the comparison is of our kernels on the GPU),
    the dreams against the twins', with the CPU layer's bounds."""
    pytest.importorskip("torch")
    data = DBN.D.binary_digits()
    X = data[0][:100]
    stacks = (
        DBN.D.pretrain(X, DBN.SIZES, seed=3, **DBN.PRE),
        DBN.D.pretrain(X, DBN.SIZES, seed=3, numpy=True, **DBN.PRE),
    )
    DBN.test_the_stack_on_the_kernels_agrees_with_the_numpy_twins(stacks)
    DBN.test_each_rbm_learned_the_codes_of_the_one_below(data, stacks)
    DBN.test_the_arms_differ_only_in_their_hidden_layers(stacks)
    for hidden in ("sigmoid", "relu"):
        DBN.test_the_finetuned_net_agrees_with_its_pytorch_twin_step_by_step(
            data, stacks, hidden
        )
    DBN.test_the_dreams_on_the_kernels_agree_with_the_twins(stacks)


def test_transformer_agrees_with_its_pytorch_twin():
    """A14 at four heads of 32, 64 tokens (a whole attention tile), two blocks;
    the twin on the GPU too when PyTorch has CUDA (TF32 off in both). The loss,
    logits and gradient bound is ten times the CPU layer's (the CPU backend met
    1e-5 at this size): cuBLAS and PyTorch's fused attention add in orders of
    their own. The AdamW steps keep the CPU layer's bounds (in units of lr)."""
    torch = pytest.importorskip("torch")
    from tests.cpu import test_transformer as TR

    torch.backends.cuda.matmul.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    cfg = TR.Config(vocab=11, block_size=64, n_layer=2, n_head=4, n_embd=128)
    TR.test_forward_and_every_gradient_match_the_twin(cfg, 16, device, tol=1e-4)
    TR.test_adamw_steps_agree_with_the_twin(cfg, 16, 5, device)
    TR.test_a_fixed_batch_is_learned()
    TR.test_the_loss_is_the_weighted_mean_over_the_answer()


def test_gpt_agrees_with_its_pytorch_twin_and_generates_with_its_cache():
    """A15/A16's GPT (tied head, matmul_tn's split weight gradients, queued
    uploads) at four heads of 32 over 128 tokens and a 4,096-token vocabulary,
    against its twin on the GPU (TF32 off); the same bound as the Transformer's.
    Then generation through kv_append and attention_decode against full runs."""
    torch = pytest.importorskip("torch")
    from tests.cpu import test_gpt as G

    torch.backends.cuda.matmul.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    cfg = G.Config(vocab=4096, block_size=128, n_layer=2, n_head=4, n_embd=128)
    G.check_against_twin(cfg, device=device, tol=1e-4)
    G.test_wte_gets_the_heads_gradient_as_well_as_the_embeddings()
    G.test_generation_with_the_cache_equals_generation_without_it()
    G.test_cache_step_logits_match_a_full_run()

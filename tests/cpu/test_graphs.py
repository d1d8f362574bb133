"""B18's machinery on the CPU backend: a Graph records launches without running
them and runs them, in order, when called; it refuses what it cannot do; and the
four ways of thousand.models.graphed train A4's MLP to the very same weights."""

import numpy as np
import pytest

from thousand.cuda import Graph, to_device
from thousand.kernels.vector_add import vector_add


def test_a_graph_records_without_running_then_replays_in_order():
    x = to_device(np.arange(8, dtype=np.float32))
    y = to_device(np.ones(8, dtype=np.float32))
    out = to_device(np.zeros(8, dtype=np.float32))
    with Graph() as g:
        vector_add(x, y, out=out)  # out = x + 1
        vector_add(out, y, out=out)  # out = x + 2, only after the first
    assert g.nodes == 2
    assert not out.get().any(), "a recorded launch ran before the graph was called"
    g()
    np.testing.assert_array_equal(out.get(), np.arange(8) + 2)
    g()  # a replay reads the arrays as they are now
    np.testing.assert_array_equal(out.get(), np.arange(8) + 2)


def test_a_graph_refuses_nesting_rerecording_and_replay_while_recording():
    x = to_device(np.ones(4, dtype=np.float32))
    with Graph() as g:
        vector_add(x, x, out=x)
        with pytest.raises(RuntimeError, match="already recording"):
            Graph().__enter__()
        with pytest.raises(RuntimeError, match="while a graph is recording"):
            g()
    with pytest.raises(RuntimeError, match="recorded already"):
        with g:
            pass
    assert Graph.recording is None


def test_a_failing_block_leaves_no_graph_recording():
    with pytest.raises(ValueError, match="must have shape"):
        with Graph():
            vector_add(np.ones(3, np.float32), np.ones(4, np.float32))
    assert Graph.recording is None


@pytest.fixture(scope="module")
def digits():
    pytest.importorskip("sklearn")
    from thousand.models.data import digits

    X, X_test, y, y_test = digits()
    return X[:320], X_test, y[:320], y_test  # ten batches: a short epoch


def test_the_four_ways_train_to_the_same_weights_as_the_twin(digits):
    from thousand.models import graphed, mlp

    X, _, y, _ = digits
    settings = dict(epochs=2, batch=32, lr=0.1, seed=0)
    weights = {}
    for way in graphed.WAYS:
        net = mlp.network(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, 0)
        _, nodes, _ = graphed.fit(net, X, y, way=way, **settings)
        weights[way] = [p for layer in net.get_params() for p in layer]
        if way == "graph":
            assert nodes == 10 * 18  # ten steps of 18 kernels each
    for way in graphed.WAYS[1:]:  # the same kernels in the same order: bit for bit
        for a, b in zip(weights["upload"], weights[way], strict=True):
            np.testing.assert_array_equal(a, b)
    twin = mlp.network_twin(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, 0)
    graphed.fit(twin, X, y, way=None, twin=True, **settings)
    twin_weights = [p for layer in twin.get_params() for p in layer]
    for a, b in zip(weights["graph"], twin_weights, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_an_unknown_way_is_refused():
    from thousand.models import graphed, mlp

    net = mlp.network(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, 0)
    with pytest.raises(ValueError, match="way must be one of"):
        graphed.Epochs(net, "fast", 1, 32, 64, 10)


def test_a_copy_inside_a_recording_is_refused_as_on_a_gpu():
    x = to_device(np.ones(4, dtype=np.float32))
    with pytest.raises(RuntimeError, match="cannot be recorded in a CUDA graph"):
        with Graph():
            x.get()
    with pytest.raises(RuntimeError, match="cannot be recorded in a CUDA graph"):
        with Graph():
            vector_add(np.ones(4, np.float32), np.ones(4, np.float32))  # host inputs
    assert Graph.recording is None
    np.testing.assert_array_equal(x.get(), 1)  # and the arrays work afterwards

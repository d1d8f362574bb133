"""B18 on the GPU: stream capture through libcuda records launches without running
them, replays them in order, names a copy inside the capture as the error it is,
and A4's MLP trained through a graph ends with the weights of A4's own loop."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def test_a_captured_graph_runs_only_when_called_and_in_order():
    from thousand.cuda import Graph, to_device
    from thousand.kernels.vector_add import vector_add

    n = 1_000_003
    x = to_device(np.arange(n, dtype=np.float32))
    y = to_device(np.ones(n, dtype=np.float32))
    out = to_device(np.zeros(n, dtype=np.float32))
    with Graph() as g:
        for _ in range(50):
            vector_add(out, y, out=out)  # each needs the one before
    assert g.nodes == 50
    assert not out.get().any()
    g()
    g()
    np.testing.assert_array_equal(out.get(), np.full(n, 100, np.float32))
    assert x.get()[-1] == n - 1


# --8<-- [start:copy-in-capture]
def test_a_copy_inside_a_capture_is_a_clear_error():
    from thousand.cuda import Graph, to_device
    from thousand.kernels.vector_add import vector_add

    x = to_device(np.ones(16, dtype=np.float32))
    with pytest.raises(Exception) as caught:
        with Graph():
            vector_add(x, x, out=x)
            x.get()  # a device-to-host copy cannot be captured
    assert Graph.recording is None
    # the process goes on: a new graph records and runs
    with Graph() as g:
        vector_add(x, x, out=x)
    g()
    assert caught.value is not None


# --8<-- [end:copy-in-capture]


def test_graph_training_matches_a4s_loop():
    pytest.importorskip("sklearn")
    from thousand.models import graphed, mlp
    from thousand.models.data import digits

    X, _, y, _ = digits()
    settings = dict(epochs=3, batch=32, lr=0.1, seed=0)
    weights = {}
    for way in ("upload", "graph"):
        net = mlp.network(mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN, 0)
        graphed.fit(net, X, y, way=way, **settings)
        weights[way] = [p for layer in net.get_params() for p in layer]
    for a, b in zip(weights["upload"], weights["graph"], strict=True):
        np.testing.assert_array_equal(a, b)

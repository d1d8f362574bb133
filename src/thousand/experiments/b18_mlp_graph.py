"""B18: A4's MLP (64 -> 128 -> 10, ReLU) trained on the digits at batch 32 four
ways on the same kernels (thousand.models.graphed: A4's loop, the epoch resident
on the device, replayed launches, a CUDA graph of the whole epoch), against its
NumPy twin over the same batches. Seconds per epoch are host-clock medians of the
epochs after the first (which records the replays and the graph, timed apart);
the accuracies are on the held-out digits after the last epoch.
"""

from __future__ import annotations

from thousand.experiments import Experiment, Note

EPOCHS, QUICK_EPOCHS = 12, 2
BATCH, LR, SEED = 32, 0.1, 0
NUMPY = "NumPy twin (CPU)"
LABELS = {
    "upload": "kernels, A4's loop (a copy a step)",
    "resident": "kernels, epoch on the device",
    "replay": "kernels, replayed launches",
    "graph": "kernels, one CUDA graph an epoch",
}
WAYS = [NUMPY, *LABELS.values()]
UNIT = "ms per epoch"


def run(quick: bool) -> dict:
    from thousand.models import graphed, mlp
    from thousand.models.data import digits

    X, X_test, y, y_test = digits()
    epochs = QUICK_EPOCHS if quick else EPOCHS
    settings = dict(epochs=epochs, batch=BATCH, lr=LR, seed=SEED)
    sizes, hidden = mlp.DIGITS_SIZES, mlp.DIGITS_HIDDEN
    ms, acc = {}, {}
    twin = mlp.network_twin(sizes, hidden, SEED)
    seconds, _, _ = graphed.fit(twin, X, y, way=None, twin=True, **settings)
    ms[NUMPY], acc[NUMPY] = 1e3 * seconds, mlp.accuracy(twin, X_test, y_test)
    for way, label in LABELS.items():
        net = mlp.network(sizes, hidden, SEED)
        seconds, nodes, first = graphed.fit(net, X, y, way=way, **settings)
        ms[label], acc[label] = 1e3 * seconds, mlp.accuracy(net, X_test, y_test)
        if way == "graph":
            graph_nodes, graph_first_ms = nodes, 1e3 * first
    steps = len(X) // BATCH
    graph = LABELS["graph"]
    return {
        "kind": "bars",
        "x": {"label": "way", "values": WAYS},
        "y": {"label": UNIT, "format": "{:,.2f}"},
        "series": {UNIT: [ms[w] for w in WAYS]},
        "notes": {
            "numpy_ms": ms[NUMPY],
            "upload_ms": ms[LABELS["upload"]],
            "graph_ms": ms[graph],
            "numpy_over_graph": ms[NUMPY] / ms[graph],
            "upload_over_numpy": ms[LABELS["upload"]] / ms[NUMPY],
            "upload_over_graph": ms[LABELS["upload"]] / ms[graph],
            "graph_first_ms": graph_first_ms,
            "kernels_per_step": graph_nodes / steps,
            "steps": steps,
            "epochs": epochs,
            "graph_accuracy": 100 * acc[graph],
            "numpy_accuracy": 100 * acc[NUMPY],
            "same_accuracy": float(len({acc[LABELS[w]] for w in LABELS}) == 1),
        },
    }


def _ms(zh, en):
    return Note(zh, en, "{:,.2f}")


EXPERIMENT = Experiment(
    name="b18-mlp-graph",
    title={
        "zh": "A4 的 MLP 在批大小 32 时每轮的训练时间：四种发出核函数的方式与 NumPy",
        "en": "A4's MLP at batch 32, time per epoch: four ways to issue the kernels, "
        "and NumPy",
    },
    run=run,
    families=(
        "matmul",
        "transpose",
        "bias_relu",
        "bias_add",
        "relu_backward",
        "col_sum",
        "softmax_xent",
        "sgd",
    ),
    files=(
        "models/graphed.py",
        "models/mlp.py",
        "models/layers.py",
        "models/twin.py",
        "models/data.py",
        "cuda/graphs.py",
        "cuda/launch.py",
    ),
    notes={
        "numpy_ms": _ms("NumPy 每轮（毫秒）", "NumPy, per epoch (ms)"),
        "upload_ms": _ms("A4 的循环每轮（毫秒）", "A4's loop, per epoch (ms)"),
        "graph_ms": _ms("CUDA 图每轮（毫秒）", "CUDA graph, per epoch (ms)"),
        "numpy_over_graph": Note(
            "NumPy 与 CUDA 图的每轮时间比（大于 1 即图更快）",
            "NumPy's epoch over the graph's (above 1: the graph is faster)",
            "{:,.2f}×",
        ),
        "upload_over_numpy": Note(
            "A4 的循环与 NumPy 的每轮时间比",
            "A4's loop's epoch over NumPy's",
            "{:,.1f}×",
        ),
        "upload_over_graph": Note(
            "A4 的循环与 CUDA 图的每轮时间比",
            "A4's loop's epoch over the graph's",
            "{:,.1f}×",
        ),
        "graph_first_ms": _ms(
            "第一轮（记录 CUDA 图）用时（毫秒）",
            "the first epoch, recording the graph (ms)",
        ),
        "kernels_per_step": Note(
            "每步的核函数数（图中节点数 / 步数）",
            "kernels a step (graph nodes / steps)",
            "{:.0f}",
        ),
        "steps": Note("每轮的步数（整批）", "steps an epoch (full batches)", "{:.0f}"),
        "epochs": Note("训练轮数", "epochs trained", "{:.0f}"),
        "graph_accuracy": Note(
            "留出集准确率，CUDA 图 (%)", "held-out accuracy, CUDA graph (%)"
        ),
        "numpy_accuracy": Note(
            "留出集准确率，NumPy (%)", "held-out accuracy, NumPy (%)"
        ),
        "same_accuracy": Note(
            "四种方式准确率是否相同（1 是，0 否）",
            "the four ways' accuracies equal (1 yes, 0 no)",
            "{:.0f}",
        ),
    },
    zh={
        "way": "方式",
        UNIT: "每轮（毫秒）",
        NUMPY: "NumPy 孪生模型（CPU）",
        LABELS["upload"]: "核函数，A4 的循环（每步一次拷贝）",
        LABELS["resident"]: "核函数，整轮数据常驻设备",
        LABELS["replay"]: "核函数，重放启动",
        LABELS["graph"]: "核函数，每轮一个 CUDA 图",
    },
)

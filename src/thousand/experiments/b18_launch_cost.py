"""B18: what a launch costs the host, eager and replayed. The kernel does nothing
(beyond/empty.cu), so each figure is the path that issues it: PyCUDA's function
call, the package's launch (its checks), a Replay of recorded launches, a CUDA
graph of GRAPH_KERNELS launches (per kernel), and PyTorch's own op on one float,
eager and in a torch.cuda.CUDAGraph. Host clock over many calls back to back, then
one synchronisation, divided by the calls; the median of several windows.
"""

from __future__ import annotations

from thousand.experiments import Experiment, Note
from thousand.experiments.b15_call_cost import us_per_call

CALLS, WINDOWS = 5000, 9
GRAPH_KERNELS = 1000  # launches recorded in each graph
GRAPH_CALLS = 50  # replays a window

RAW = "PyCUDA function, called directly"
LAUNCH = "thousand.cuda.launch"
REPLAY = "Replay (recorded launches)"
GRAPH = "CUDA graph, per kernel"
TORCH = "PyTorch op (x.neg_())"
TORCH_GRAPH = "torch.cuda.CUDAGraph, per op"
WAYS = (RAW, LAUNCH, REPLAY, GRAPH, TORCH, TORCH_GRAPH)
UNIT = "µs per launch"


# --8<-- [start:ways]
def ways() -> dict:
    """name -> (a call, the launches one call makes)."""
    import torch

    from thousand.beyond import extension
    from thousand.cuda import Graph, Replay, kernel, launch

    def empty():
        launch(extension.EMPTY, "empty_kernel", (1,), (1,))

    raw = kernel(extension.EMPTY, "empty_kernel")  # PyCUDA compiles empty.cu
    with Replay() as replay:  # recorded as they run
        for _ in range(GRAPH_KERNELS):
            empty()
    with Graph() as graph:  # recorded, not run
        for _ in range(GRAPH_KERNELS):
            empty()
    t = torch.zeros(1, device="cuda")
    torch_graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()  # PyTorch captures on a stream of its own
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        t.neg_()  # a warm-up before capture, as PyTorch asks
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(torch_graph):
        for _ in range(GRAPH_KERNELS):
            t.neg_()
    return {
        RAW: (lambda: raw(grid=(1, 1, 1), block=(1, 1, 1)), 1),
        LAUNCH: (empty, 1),
        REPLAY: (replay, GRAPH_KERNELS),
        GRAPH: (graph, GRAPH_KERNELS),
        TORCH: (t.neg_, 1),
        TORCH_GRAPH: (torch_graph.replay, GRAPH_KERNELS),
    }


# --8<-- [end:ways]


def run(quick: bool) -> dict:
    import torch

    us = {}
    for name, (call, launches) in ways().items():
        calls = CALLS if launches == 1 else GRAPH_CALLS
        if quick:
            calls = max(2, calls // 50)
        per_call = us_per_call(call, torch.cuda.synchronize, calls, WINDOWS)
        us[name] = per_call / launches
    return {
        "kind": "bars",
        "x": {"label": "way", "values": list(WAYS)},
        "y": {"label": UNIT, "format": "{:.2f}"},
        "series": {UNIT: [us[w] for w in WAYS]},
        "notes": {
            "raw_us": us[RAW],
            "launch_us": us[LAUNCH],
            "replay_us": us[REPLAY],
            "graph_us": us[GRAPH],
            "torch_us": us[TORCH],
            "torch_graph_us": us[TORCH_GRAPH],
            "launch_over_graph": us[LAUNCH] / us[GRAPH],
            "graph_kernels": GRAPH_KERNELS,
        },
    }


def _us(zh, en):
    return Note(zh, en, "{:.2f}")


EXPERIMENT = Experiment(
    name="b18-launch-cost",
    title={
        "zh": "一次启动的代价：空核函数逐个启动、重放与 CUDA 图",
        "en": "What a launch costs: an empty kernel launched one by one, replayed, "
        "and in a CUDA graph",
    },
    run=run,
    files=(
        "beyond/extension.py",
        "beyond/empty.cu",
        "cuda/graphs.py",
        "cuda/launch.py",
        "experiments/b15_call_cost.py",
    ),
    gpu_only="it times launches on a GPU, and CUDA graphs are the GPU's",
    notes={
        "raw_us": _us(
            "PyCUDA 直接调用，每次启动（微秒）", "PyCUDA call, per launch (µs)"
        ),
        "launch_us": _us(
            "thousand.cuda.launch，每次启动（微秒）",
            "thousand.cuda.launch, per launch (µs)",
        ),
        "replay_us": _us("重放（Replay），每次启动（微秒）", "Replay, per launch (µs)"),
        "graph_us": _us("CUDA 图中每个核函数（微秒）", "CUDA graph, per kernel (µs)"),
        "torch_us": _us(
            "PyTorch 原生算子，每次调用（微秒）", "PyTorch op, per call (µs)"
        ),
        "torch_graph_us": _us(
            "PyTorch 的 CUDA 图中每个算子（微秒）",
            "torch.cuda.CUDAGraph, per op (µs)",
        ),
        "launch_over_graph": Note(
            "逐个启动与图中每核函数的时间比",
            "launch one by one over a kernel in a graph (times)",
            "{:,.1f}×",
        ),
        "graph_kernels": Note(
            "每个图记录的核函数数", "kernels recorded in each graph", "{:,.0f}"
        ),
    },
    zh={
        "way": "方式",
        UNIT: "每次启动（微秒）",
        RAW: "PyCUDA 直接调用函数",
        LAUNCH: "thousand.cuda.launch",
        REPLAY: "Replay（重放记录的启动）",
        GRAPH: "CUDA 图，每个核函数",
        TORCH: "PyTorch 算子（x.neg_()）",
        TORCH_GRAPH: "torch.cuda.CUDAGraph，每个算子",
    },
)

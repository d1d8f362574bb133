"""CUDA graphs: record a run of launches once, then replay all of it in one call.

    with Graph() as step:        # the launches made inside are recorded, not run
        train_step(...)
    step()                       # runs every one of them, in order
    step.nodes                   # how many kernels the graph holds

Each launch costs the host microseconds (Python, the launcher's checks, the driver);
a kernel of a small model runs for less. A graph pays those costs once, when it is
recorded; replaying it is one driver call, and the GPU walks the kernels itself.

On the GPU this is CUDA's stream capture: every launch inside the block goes to the
graph's own stream, which is capturing, through libcuda's graph API (PyCUDA has no
binding for it: ctypes, as for tensor maps). Nothing inside the block may copy to or
from the host or wait for the GPU: a capture cannot contain that, and CUDA ends it
with an error. Replays read the device arrays that the recorded launches named: to
feed new data, copy it into those same arrays before calling. On the CPU backend a
graph is the list of recorded launches, run in order when called.
"""

from __future__ import annotations

import ctypes
import functools

from .backend import on_cpu
from .device import driver

CAPTURE_RELAXED = 2  # CU_STREAM_CAPTURE_MODE_RELAXED: allocations stay allowed


@functools.cache
def _cuda():
    return ctypes.CDLL("libcuda.so.1")


def _check(result: int, what: str) -> None:
    if result:
        text = ctypes.c_char_p()
        _cuda().cuGetErrorString(result, ctypes.byref(text))
        why = text.value.decode() if text.value else f"CUresult {result}"
        raise RuntimeError(f"CUDA graph: {what} failed: {why}")


class Graph:
    """Launches recorded once, replayed with one call (see the module's doc)."""

    recording: Graph | None = None  # the graph a `with` block is recording into

    def __init__(self):
        self.calls = []  # the CPU backend's record
        self.stream = None  # the GPU's capture stream (a pycuda Stream)
        self._graph = self._exec = None
        self.nodes = 0

    def __enter__(self):
        if Graph.recording is not None:
            raise RuntimeError("Graph: one is already recording launches")
        if self._exec is not None or self.calls:
            raise RuntimeError("Graph: this graph is recorded already; make another")
        if not on_cpu():
            self.stream = driver().Stream()
            _check(
                _cuda().cuStreamBeginCapture_v2(
                    ctypes.c_void_p(self.stream.handle), CAPTURE_RELAXED
                ),
                "beginning the capture",
            )
        Graph.recording = self
        return self

    def __exit__(self, kind, error, trace):
        Graph.recording = None
        if on_cpu():
            self.nodes = len(self.calls)
            return False
        graph = ctypes.c_void_p()
        ended = _cuda().cuStreamEndCapture(
            ctypes.c_void_p(self.stream.handle), ctypes.byref(graph)
        )
        self._graph = graph
        if kind is not None:  # the block failed: its error is the one to see
            return False
        _check(ended, "ending the capture (a copy or a wait inside the block?)")
        count = ctypes.c_size_t()
        _check(
            _cuda().cuGraphGetNodes(graph, None, ctypes.byref(count)),
            "counting the nodes",
        )
        self.nodes = count.value
        graph_exec = ctypes.c_void_p()
        _check(
            _cuda().cuGraphInstantiateWithFlags(
                ctypes.byref(graph_exec), graph, ctypes.c_ulonglong(0)
            ),
            "instantiating the graph",
        )
        self._exec = graph_exec
        return False

    def __call__(self) -> None:
        """Run every recorded launch, in order (queued on the GPU; the next use of
        the default stream waits for it, as for any launch)."""
        if Graph.recording is not None:
            raise RuntimeError("Graph: cannot replay while a graph is recording")
        if on_cpu():
            for call in self.calls:
                call()
            return
        if self._exec is None:
            raise RuntimeError("Graph: record launches in a `with` block first")
        _check(
            _cuda().cuGraphLaunch(self._exec, ctypes.c_void_p(self.stream.handle)),
            "launching the graph",
        )

    def __del__(self):
        try:
            if self._exec is not None:
                _cuda().cuGraphExecDestroy(self._exec)
            if self._graph is not None and self._graph.value:
                _cuda().cuGraphDestroy(self._graph)
        except Exception:  # interpreter shutdown: the driver may be gone already
            pass

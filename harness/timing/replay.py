"""A launch replayed back to back for the energy meter (harness/timing/energy.py): one CUDA graph of many
launches where the launch is short and can be captured, else host launches, and how many replays are
kept queued ahead of the GPU."""

from __future__ import annotations

import math

GRAPH_S = 0.01  # GPU time of one replayed graph
# Replays kept queued ahead of the GPU: 100 ms of its work and at least three. With 30 ms (three
# graphs of 10 ms) the GPU waited for the host 0.08-0.15 s of a 3.5 s replay of the 1024² adds and
# cuBLAS 1000³ on an H200 (the poll loop's NVML calls for the 50 Hz samples and the clocks take that
# long at times), which adds idle energy to their windows (NOTES.md)
QUEUED = 3
QUEUED_S = 0.1
# Host launches (a launch CUDA graphs cannot hold: cuBLAS under CuPy) are kept to this many queued
# kernels: past the driver's queue a launch call blocks the poll loop, and a counter change seen a
# few ms late is a window a few ms off. With ten replays of 167 cuBLAS 1000³ launches queued the
# 95% interval of its joules per launch widened from ±0.76% to ±1.61% (±0.70% to ±1.35% at 1024³;
# NOTES.md); 512 of them is the three replays of before there.
MAX_HOST_LAUNCHES = 512

class Replay:
    """`run(stream)` many times per `launch()`: one CUDA graph where it can be captured, else host launches."""

    def __init__(self, run, stream, launch_s: float):
        self.run, self.stream = run, stream
        self.per_launch = max(1, round(GRAPH_S / launch_s))
        self.queued = max(QUEUED, math.ceil(QUEUED_S / (self.per_launch * launch_s)))
        self.graph = None
        self.how = "host launches, one per replay"
        if self.per_launch > 1:
            self.graph, why_not = _captured(run, stream, self.per_launch)
            self.how = (f"a CUDA graph of {self.per_launch} launches" if self.graph is not None else
                        f"host launches, {self.per_launch} per replay (no CUDA graph: {why_not})")
        if self.graph is None:
            self.queued = max(QUEUED, min(self.queued, MAX_HOST_LAUNCHES // self.per_launch))

    def launch(self) -> None:
        if self.graph is not None:
            self.graph.launch(self.stream)
            return
        for _ in range(self.per_launch):
            self.run(self.stream)


def _captured(run, stream, count: int):
    """(the graph of `count` launches of `run` on `stream`, "") or (None, why it could not be captured)."""
    try:
        stream.begin_capture()
        try:
            for _ in range(count):
                run(stream)
        finally:
            graph = stream.end_capture()
        if hasattr(graph, "upload"):  # where CuPy has it: the graph is on the GPU before its first launch
            graph.upload(stream)
        return graph, ""
    except Exception as error:  # a launch that cannot be captured (a host sync, a library that refuses)
        stream.synchronize()
        return None, f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"

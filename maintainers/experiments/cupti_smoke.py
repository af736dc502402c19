"""Smoke test of the CUPTI timer on a GPU machine, and a recorder of real activity data.

    python -m maintainers.experiments.cupti_smoke OUT_DIR

Builds a GpuTimer, measures a few cases (vector_add_vec4 at 1 M and 64 M
floats, warptile and cuBLAS at 1024, a device-to-device memcpy, the streams
pipeline with 1 and 4 chunks from pinned memory), prints CUPTI and held-event
medians and the kernel kind the timer chose side by side, and writes the raw
activity records of each case's first batch of timed samples (the batch after
the warm-up's) to OUT_DIR/cupti_records.json (the CPU tests' data:
tests/data/cupti/). It also checks on the GPU what the
CPU tests check on fakes: an empty run is a TimingError naming the case, and
no activity is recorded after measure() returns.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from maintainers.environment import needs_gpu, summary

MEMCPY_BYTES = 256 * 2**20


def cases():
    """name -> run(stream), each on its own inputs."""
    import cupy
    import numpy as np

    from kernels import prepare_add, prepare_matmul
    from suites.perf_cases import random_device

    found = {}
    for floats in (2**20, 64 * 2**20):
        prepared = prepare_add("vector_add_vec4", random_device((floats,), 1), random_device((floats,), 2))
        found[f"vector_add_vec4 {floats // 2**20}M"] = prepared.run
    for name in ("warptile", "cublas"):
        prepared = prepare_matmul(name, random_device((1024, 1024), 1), random_device((1024, 1024), 2))
        found[f"{name} 1024"] = prepared.run
    src = cupy.ones(MEMCPY_BYTES // 4, np.float32)
    dst = cupy.empty_like(src)
    rt = cupy.cuda.runtime

    def copy(stream):
        rt.memcpyAsync(dst.data.ptr, src.data.ptr, MEMCPY_BYTES, rt.memcpyDeviceToDevice, stream.ptr)

    found["memcpy d2d 256MiB"] = copy
    from kernels import pinned_empty
    from kernels.streams import PreparedStreams

    floats = 10_000_000  # the tutorial's 4 x 2.5 M floats (suites/test_perf_elementwise.py)
    a, b, out = pinned_empty(floats), pinned_empty(floats), pinned_empty(floats)
    a[:], b[:] = 1.0, 2.0
    for chunks in (1, 4):
        found[f"streams {chunks} chunk(s)"] = PreparedStreams(a, b, out, chunks).run
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.cupti_smoke", description=summary(__doc__))
    parser.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="where cupti_records.json is written")
    out_dir = parser.parse_args(argv).out_dir
    needs_gpu("maintainers.experiments.cupti_smoke")
    import cupy

    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer, TimingError

    info = gpu_info()
    print(f"GPU {info.name} uuid={info.uuid} host={info.host} driver={info.driver}")
    timer = GpuTimer(info.l2_bytes)
    print(f"CUPTI: {timer.uses_cupti}; note: {timer.note!r}")
    profile = PROFILES["nightly"]
    recorded = {"gpu": info.name, "uuid": info.uuid, "driver": info.driver, "cases": []}

    batches: list = []
    collect_seconds: list[float] = []
    if timer._recorder is not None:
        original_collect = timer._recorder.collect

        def keeping_collect():
            t0 = time.perf_counter()
            records, dropped = original_collect()
            collect_seconds.append(time.perf_counter() - t0)
            batches.append((records, dropped))
            return records, dropped

        timer._recorder.collect = keeping_collect

    print("| case | CUPTI µs | kind | events µs | events - CUPTI µs | rsd | samples | stopped by | collects |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case, run in cases().items():
        batches.clear()
        try:
            m = timer.measure(run, profile, case=case)
        except TimingError as error:  # report and go on: one call has to show as much as it can
            names = Counter(r.name for records, _ in batches for r in records)
            print(f"| {case} | TimingError: {error}; records by name in its batches: {dict(names)} |")
            continue
        events = statistics.median(m.event_samples)
        print(f"| {case} | {m.median * 1e6:.2f} | {m.timer} | {events * 1e6:.2f} | {(events - m.median) * 1e6:+.2f} | "
              f"{m.rsd:.4f} | {len(m.samples)} | {m.stopped_by} | {len(batches)} |")
        if len(batches) > 1:
            records, dropped = batches[1]  # batches[0]: the warm-up's, always with the concurrent kind
            n = profile.min_samples  # the first collection of timed samples holds min_samples samples
            recorded["cases"].append({
                "case": case, "timer": m.timer, "host_copies": m.host_copies, "samples": n, "dropped": dropped,
                "records": [list(r) for r in sorted(records, key=lambda r: r.start_ns)],
                "spans_s": m.samples[:n], "event_samples_s": m.event_samples[:n],
            })
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "cupti_records.json").write_text(json.dumps(recorded, indent=1))
    print(f"wrote {out_dir / 'cupti_records.json'}")
    if collect_seconds:
        print(f"CUPTI collect (flush + hand-over): median {statistics.median(collect_seconds) * 1e6:.0f} µs, "
              f"max {max(collect_seconds) * 1e6:.0f} µs over {len(collect_seconds)} calls")

    vec = cases()["vector_add_vec4 1M"]
    import kernelwatch.timing.timer as timing

    for every in (1, timing.COLLECT_EVERY):
        saved, timing.COLLECT_EVERY = timing.COLLECT_EVERY, every
        t0 = time.perf_counter()
        m = timer.measure(vec, profile, case=f"collect every {every}")
        wall = time.perf_counter() - t0
        timing.COLLECT_EVERY = saved
        print(f"collect every {every:2d}: {len(m.samples)} samples in {wall:.3f} s, median {m.median * 1e6:.2f} µs, "
              f"rsd {m.rsd:.4f}, stopped by {m.stopped_by}")

    a, b = timer.measure_interleaved(vec, vec, profile, case="vector_add_vec4 1M, A/A")
    print(f"interleaved A/A: {a.median * 1e6:.2f} / {b.median * 1e6:.2f} µs CUPTI, "
          f"{statistics.median(a.event_samples) * 1e6:.2f} / {statistics.median(b.event_samples) * 1e6:.2f} µs events, "
          f"{len(a.samples)} samples each, stopped by {a.stopped_by} / {b.stopped_by}")

    events_only = GpuTimer(info.l2_bytes, prefer_cupti=False)
    m = events_only.measure(vec, profile, case="vector_add_vec4 1M, events only")
    print(f"events-only timer: {m.timer!r}, median {m.median * 1e6:.2f} µs; note {events_only.note!r}")

    try:
        timer.measure(lambda stream: None, profile, case="an empty run")
        print("empty run: NO TimingError (unexpected)")
    except TimingError as error:
        print(f"empty run: TimingError: {error}")

    if timer._recorder is not None:
        vec(timer.stream)
        cupy.cuda.runtime.deviceSynchronize()
        leaked, _ = original_collect()
        print(f"records after measure() returned: {len(leaked)} (expected 0)")



if __name__ == "__main__":
    main()

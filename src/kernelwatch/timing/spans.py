"""From CUPTI activity records to the GPU time of each sample: plain data, no CUPTI.

The timer (src/kernelwatch/timing/timer.py) runs every sample as: L2-flush kernel, hold
kernel, the launches under test, release. With CUPTI activity recording on,
each kernel, memcpy and memset of those becomes a record (kind, name, start,
end in ns). This module turns the records of a batch of samples into one
figure per sample: the span from the first activity's start to the last
activity's end among the launches under test.

The hold kernels are the sample markers: every sample has exactly one, and an
activity belongs to the last hold kernel that ended at or before it started.
The flush and hold kernels themselves are never part of a span.

`runs_one_at_a_time` tells whether a launch's activities overlap each other;
the timer records the kernels of a launch that does not overlap, and runs 20
µs or more, with CUPTI's serializing KERNEL kind (src/kernelwatch/timing/timer.py says why).

Anything that would make a span wrong raises `TimingError` naming the case:
a marker count that differs from the samples taken, a sample without
activity, records that CUPTI dropped, a record that ends before it starts,
an activity before the first marker.
"""

from __future__ import annotations

import bisect
import itertools
from typing import NamedTuple

HOLD_KERNEL = "hold_stream"  # src/kernelwatch/timing/kernels.cu
FLUSH_KERNEL = "flush_l2"
TIMER_KERNELS = (HOLD_KERNEL, FLUSH_KERNEL)
# Work of one stream can read as overlapping by a few tens of ns: a copy engine and the SMs stamp
# their own records (on an H200 a device-to-host copy queued after a kernel read 64 ns before
# that kernel's end, once in 10 samples). Work spread over streams on purpose overlaps by far
# more (the streams pipeline at 4 chunks: 100 µs and more).
SERIAL_SLACK_NS = 1_000
HOST_COPY_KINDS = ("HTOD", "DTOH", "HTOH", "HTOA", "ATOH")  # CUPTI's copy kinds with host memory on one side


class TimingError(RuntimeError):
    """The activity records of a case cannot give its GPU time."""


class Activity(NamedTuple):
    """One CUPTI activity record, reduced to what the spans need."""

    kind: str  # "kernel", "memcpy" or "memset"
    name: str  # kernel name; "memcpy <direction>" or "memset" otherwise
    start_ns: int
    end_ns: int


def sample_activities(records: list[Activity], samples: int, case: str, dropped: int = 0) -> list[list[Activity]]:
    """The activities of each of `samples` consecutive samples, the timer's own kernels left out, in
    sample order.

    `records` are all activity records of those samples, in any order, and
    `dropped` is CUPTI's count of records lost meanwhile.
    """
    label = case or "an unnamed case"
    if dropped:
        raise TimingError(f"{label}: CUPTI dropped {dropped} activity records; its spans would be incomplete")
    for record in records:
        if record.end_ns < record.start_ns:
            raise TimingError(f"{label}: activity record {record.name!r} ends ({record.end_ns} ns) "
                              f"before it starts ({record.start_ns} ns)")
    markers = sorted((r for r in records if r.name == HOLD_KERNEL), key=lambda r: r.start_ns)
    if len(markers) != samples:
        raise TimingError(f"{label}: {len(markers)} {HOLD_KERNEL} records for {samples} samples; "
                          "CUPTI records are missing or belong to other work")
    marker_ends = [m.end_ns for m in markers]
    by_sample: list[list[Activity]] = [[] for _ in range(samples)]
    for record in records:
        if record.name in TIMER_KERNELS:
            continue
        sample = bisect.bisect_right(marker_ends, record.start_ns) - 1
        if sample < 0:
            raise TimingError(f"{label}: activity {record.name!r} starts before the first sample's "
                              f"{HOLD_KERNEL} kernel ends")
        by_sample[sample].append(record)
    for sample, activities in enumerate(by_sample):
        if not activities:
            raise TimingError(f"{label}: sample {sample + 1} of {samples} has no activity record "
                              "besides the timer's own kernels")
    return by_sample


def span(activities: list[Activity]) -> float:
    """Seconds from the first activity's start to the last one's end."""
    return (max(a.end_ns for a in activities) - min(a.start_ns for a in activities)) * 1e-9


def runs_one_at_a_time(activities: list[Activity]) -> bool:
    """Whether no two of the activities overlap in time (beyond SERIAL_SLACK_NS): work that runs
    as one stream would, each kernel or copy after the last one ended. Work spread over streams
    (the streams pipeline's copies beside its kernels) overlaps."""
    ordered = sorted(activities, key=lambda a: a.start_ns)
    return all(later.start_ns >= earlier.end_ns - SERIAL_SLACK_NS for earlier, later in itertools.pairwise(ordered))


def crosses_to_the_host(activities: list[Activity]) -> bool:
    """Whether any activity is a copy between host and device memory (over PCIe on an H200)."""
    return any(a.kind == "memcpy" and any(way in a.name for way in HOST_COPY_KINDS) for a in activities)


def activities_from_json(rows: list) -> list[Activity]:
    """Records stored as [kind, name, start_ns, end_ns] rows (tests/data/cupti/*.json)."""
    return [Activity(str(kind), str(name), int(start), int(end)) for kind, name, start, end in rows]

"""From CUPTI activity records to the GPU time of each sample: plain data, no CUPTI.

The timer (harness/timing.py) runs every sample as: L2-flush kernel, hold
kernel, the launches under test, release. With CUPTI activity recording on,
each kernel, memcpy and memset of those becomes a record (kind, name, start,
end in ns). This module turns the records of a batch of samples into one
figure per sample: the span from the first activity's start to the last
activity's end among the launches under test.

The hold kernels are the sample markers: every sample has exactly one, and an
activity belongs to the last hold kernel that ended at or before it started.
The flush and hold kernels themselves are never part of a span.

Anything that would make a span wrong raises `TimingError` naming the case:
a marker count that differs from the samples taken, a sample without
activity, records that CUPTI dropped, a record that ends before it starts,
an activity before the first marker.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple

HOLD_KERNEL = "hold_stream"  # harness/timing_kernels.cu
FLUSH_KERNEL = "flush_l2"
TIMER_KERNELS = (HOLD_KERNEL, FLUSH_KERNEL)


class TimingError(RuntimeError):
    """The activity records of a case cannot give its GPU time."""


class Activity(NamedTuple):
    """One CUPTI activity record, reduced to what the spans need."""

    kind: str  # "kernel", "memcpy" or "memset"
    name: str  # kernel name; "memcpy <direction>" or "memset" otherwise
    start_ns: int
    end_ns: int


def sample_spans(records: list[Activity], samples: int, case: str, dropped: int = 0) -> list[float]:
    """The span of each of `samples` consecutive samples, in seconds, in sample order.

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
    first: list[int | None] = [None] * samples
    last: list[int | None] = [None] * samples
    for record in records:
        if record.name in TIMER_KERNELS:
            continue
        sample = bisect.bisect_right(marker_ends, record.start_ns) - 1
        if sample < 0:
            raise TimingError(f"{label}: activity {record.name!r} starts before the first sample's "
                              f"{HOLD_KERNEL} kernel ends")
        if first[sample] is None or record.start_ns < first[sample]:
            first[sample] = record.start_ns
        if last[sample] is None or record.end_ns > last[sample]:
            last[sample] = record.end_ns
    spans = []
    for sample, (start, end) in enumerate(zip(first, last, strict=True)):
        if start is None:
            raise TimingError(f"{label}: sample {sample + 1} of {samples} has no activity record "
                              "besides the timer's own kernels")
        spans.append((end - start) * 1e-9)
    return spans


def activities_from_json(rows: list) -> list[Activity]:
    """Records stored as [kind, name, start_ns, end_ns] rows (tests/data/cupti/*.json)."""
    return [Activity(str(kind), str(name), int(start), int(end)) for kind, name, start, end in rows]

"""A host routine's wall-clock samples cut into phases by CUPTI's records: plain data, no CUPTI.

A host routine (allocate, copy in, launch, copy back; timed by wall clock,
src/kernelwatch/timing/wall.py) is one figure end to end, and most of its spread is the
host's (the pageable staging copy). Its phases tell where a change happened.
Before each sample the timer launches its empty `mark_sample` kernel and waits
for it (outside the timed interval); CUPTI records the mark, then the routine's
kernels and copies, until the next mark. Per sample:

- `kernel`: the routine's kernels, their records' durations summed;
- `HtoD`, `DtoH` (and any other copy kind, `DtoD`, ...): its copies in that
  direction, summed; `memset` where it has any;
- `host`: the wall-clock sample less the time any of those ran (the union of
  their spans): allocation, staging pageable memory into the driver's buffer,
  launching, Python, waiting for the GPU to say it is done.

The timer records the routine's kernels with CUPTI's KERNEL kind (a routine
runs one thing at a time, and that kind leaves the kernel's code alone).
Records are read once, after the last sample (the stop rule judges the wall
clock alone), so reading them costs no sample anything.
"""

from __future__ import annotations

import bisect

from kernelwatch.timing.spans import Activity, TimingError

MARK_KERNEL = "mark_sample"  # src/kernelwatch/timing/kernels.cu
HOST_PHASE = "host"
KERNEL_PHASE = "kernel"
# report order: the routine's own order, then any other kind by name, the host last
ORDER = ("HtoD", KERNEL_PHASE, "DtoH")
_COPY_NAMES = {"HTOD": "HtoD", "DTOH": "DtoH", "DTOD": "DtoD", "HTOH": "HtoH", "HTOA": "HtoA", "ATOH": "AtoH"}


def phase_of(activity: Activity) -> str:
    """The phase an activity belongs to: `kernel`, a copy direction (`HtoD`, ...) or `memset`."""
    if activity.kind == "memcpy":
        direction = activity.name.removeprefix("memcpy ").strip()
        return _COPY_NAMES.get(direction, direction or "copy")
    return KERNEL_PHASE if activity.kind == "kernel" else activity.kind


def by_sample(records: list[Activity], samples: int, case: str, dropped: int = 0) -> list[list[Activity]]:
    """The activities of each of `samples` samples, in order, cut at the marks (which are left out)."""
    if dropped:
        raise TimingError(f"{case or 'a host routine'}: CUPTI dropped {dropped} activity records, so its phases "
                          "cannot be cut")
    ordered = sorted(records, key=lambda a: (a.start_ns, a.end_ns))
    marks = [a.end_ns for a in ordered if a.kind == "kernel" and a.name == MARK_KERNEL]
    if len(marks) != samples:
        raise TimingError(f"{case or 'a host routine'}: {len(marks)} sample marks in CUPTI's records for "
                          f"{samples} samples")
    cut: list[list[Activity]] = [[] for _ in range(samples)]
    for activity in ordered:
        if activity.kind == "kernel" and activity.name == MARK_KERNEL:
            continue
        index = bisect.bisect_right(marks, activity.start_ns) - 1
        if index < 0:
            raise TimingError(f"{case or 'a host routine'}: {activity.name} ran before the first sample's mark")
        cut[index].append(activity)
    return cut


def busy_ns(activities: list[Activity]) -> int:
    """How long any of `activities` ran: the union of their spans."""
    total, end = 0, None
    for activity in sorted(activities, key=lambda a: a.start_ns):
        if end is None or activity.start_ns > end:
            total += activity.end_ns - activity.start_ns
            end = activity.end_ns
        elif activity.end_ns > end:
            total += activity.end_ns - end
            end = activity.end_ns
    return total


def phases_of(per_sample: list[list[Activity]], wall_s: list[float]) -> dict[str, list[float]]:
    """Seconds per phase and sample (module docstring); a phase a sample lacks counts 0 there."""
    if len(per_sample) != len(wall_s):
        raise ValueError(f"{len(per_sample)} samples of activities for {len(wall_s)} wall-clock samples")
    seen = {phase_of(a) for activities in per_sample for a in activities}
    names = [name for name in ORDER if name in seen] + sorted(seen - set(ORDER))
    phases: dict[str, list[float]] = {name: [] for name in [*names, HOST_PHASE]}
    for activities, wall in zip(per_sample, wall_s, strict=True):
        for name in names:
            phases[name].append(sum(a.end_ns - a.start_ns for a in activities if phase_of(a) == name) * 1e-9)
        phases[HOST_PHASE].append(max(0.0, wall - busy_ns(activities) * 1e-9))
    return phases


class PhaseRecorder:
    """Records a host routine's phases through the timer's CUPTI recorder: `start()`, `mark()` before each
    sample, `phases(wall samples, case)` after the last, `stop()`. `mark` is the timer's: it launches
    MARK_KERNEL on the routine's stream and waits for it."""

    def __init__(self, recorder, mark):
        self.recorder, self.mark = recorder, mark

    def start(self) -> None:
        self.recorder.start(serial_kernels=True)

    def phases(self, wall_s: list[float], case: str) -> dict[str, list[float]]:
        records, dropped = self.recorder.collect()
        return phases_of(by_sample(records, len(wall_s), case, dropped), wall_s)

    def stop(self) -> None:
        self.recorder.stop()

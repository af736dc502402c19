"""Judging case records against a baseline run and the stored history.

Used in two places with the same rules: by the pytest plugin while a run
times its cases, and by `python -m harness.compare` on two saved files.

A case's verdict compares its samples with the baseline's samples for the
same node id. How large a change must be to count comes from the noise
model (harness/noise.py): a floor that depends on whether the baseline was
recorded on this very GPU (its UUID), and the noise of the samples and of the
stored runs of this GPU model.

Some baseline cases are no reference, and the case is reported with its ratio
but not judged: one timed by another timer ("other timer": held CUDA events
read 2.6-4.2 µs more per sample than CUPTI, depending on the host; NOTES.md),
one recorded while NVML reported throttling ("throttled"), and for a host
routine timed by wall clock, one from another machine ("other host").
Cases recorded while throttled are left out of the history too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from .noise import NoiseFloors, StoredMedian, detectable_change, relevant_history, same_physical_gpu
from .record import TIMER_WALL, CaseRecord, records_of
from .verdict import OTHER_HOST, OTHER_TIMER, THROTTLED, Verdict, judge

# Host routines are timed end to end by wall clock: pageable copies, page
# placement and the CPU move them far more than GPU time moves (on the H200:
# 0.77x to 1.09x between single-process runs minutes apart, up to 1.41x beside
# a second xdist worker; NOTES.md). A verdict on them means a change of 30%.
WALL_CLOCK_FLOORS = NoiseFloors(same_gpu=0.30, other_gpu=0.30, absolute_s=0.0)

ALPHA = 0.01  # significance of the one-sided Mann-Whitney U test
DEFAULT_FLOORS = NoiseFloors()


def run_gpu_uuid(doc: dict) -> str | None:
    """The GPU UUID a saved run was recorded on (None for runs that did not record it)."""
    gpu = (doc.get("machine_info") or {}).get("gpu") or {}
    return gpu.get("uuid")


@dataclass
class Baseline:
    """One stored run, read once, as the comparison needs it."""

    path: Path
    gpu_uuid: str | None
    cases: dict[str, CaseRecord]

    @classmethod
    def from_doc(cls, path: Path, doc: dict) -> Baseline:
        return cls(Path(path), run_gpu_uuid(doc), {r.case: r for r in records_of(doc)})


def history_of(docs: list[dict]) -> dict[str, list[StoredMedian]]:
    """Per case, the median, GPU and timer of each stored run (the noise model's history).

    Cases recorded while throttled are left out: their medians are not the
    GPU's spread.
    """
    history: dict[str, list[StoredMedian]] = {}
    for doc in docs:
        uuid = run_gpu_uuid(doc)
        for record in records_of(doc):
            if record.timer and record.samples and not record.throttled:
                history.setdefault(record.case, []).append(StoredMedian(uuid, record.timer, record.median_s))
    return history


def floors_with_threshold(floors: NoiseFloors, threshold: float | None) -> NoiseFloors:
    """The floors with the user's --regression-threshold as the same-GPU floor (never above other-GPU)."""
    if threshold is None:
        return floors
    return dataclasses.replace(floors, same_gpu=threshold, other_gpu=max(floors.other_gpu, threshold))


def _not_judged(record: CaseRecord, base: CaseRecord, label: str, reason: str) -> Verdict:
    ratio = record.median_s / base.median_s
    return Verdict(record.case, label, base.median_s, record.median_s, ratio, None, None,
                   f"{reason}; the {ratio:.2f}× ratio was not judged")


def judge_record(record: CaseRecord, baseline: Baseline | None, *, current_gpu_uuid: str | None,
                 history: list[StoredMedian] = (), floors: NoiseFloors = DEFAULT_FLOORS) -> Verdict:
    """Judge one record and write the verdict into it; returns the verdict.

    NO_BASELINE without a baseline case; OTHER_HOST for a wall-clock case
    against another machine's baseline; OTHER_TIMER when the baseline case was
    timed by another timer; THROTTLED when either side was throttled; else the
    noise model's verdict (harness/verdict.judge).
    """
    base = baseline.cases.get(record.case) if baseline is not None else None
    if record.timer == TIMER_WALL:
        floors = WALL_CLOCK_FLOORS
    same_gpu = baseline is not None and same_physical_gpu(current_gpu_uuid, baseline.gpu_uuid)
    if base is None or not base.samples:
        verdict = judge(record.case, None, record.samples, detectable=floors.same_gpu, alpha=ALPHA)
    elif record.timer == TIMER_WALL and not same_gpu:
        verdict = _not_judged(record, base, OTHER_HOST, "timed by wall clock, which measures the host (CPU, memory, "
                              "PCIe) as much as the GPU: judged only against a baseline from the same machine")
    elif base.timer != record.timer:
        verdict = _not_judged(record, base, OTHER_TIMER, f"the baseline was timed by {base.timer or 'an unknown timer'} "
                              f"and this run by {record.timer or 'an unknown timer'}, and no two timers are compared "
                              f"(held CUDA events read 2.6-4.2 µs more per sample than CUPTI, depending on the host)")
    elif base.throttled:
        verdict = _not_judged(record, base, THROTTLED, f"the baseline was throttled (NVML reported "
                              f"{', '.join(base.throttle_reasons)} while it was recorded), so it is no reference")
    else:
        relevant = relevant_history(list(history), current_gpu_uuid, baseline.gpu_uuid, record.timer)
        detectable = detectable_change(base.samples, record.samples, same_gpu=same_gpu, history=relevant,
                                       floors=floors)
        verdict = judge(record.case, base.samples, record.samples, detectable=detectable.fraction, alpha=ALPHA,
                        throttled=record.throttled, because=detectable.because)
    record.verdict, record.ratio, record.p_value = verdict.label, verdict.ratio, verdict.p_value
    record.detectable, record.verdict_reason = verdict.detectable, verdict.reason
    record.baseline = baseline.path.name if baseline is not None else None
    return verdict

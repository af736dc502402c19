"""Judging case records against a baseline run and the stored history.

Used in two places with the same rules: by the pytest plugin while a run
times its cases, and by `python -m harness.compare` on two saved files.

A case's verdict compares its samples with the baseline's samples for the
same node id. How large a change must be to count comes from the noise
model (harness/noise.py): a floor that depends on whether the baseline was
recorded on this very GPU (its UUID) and with the same timer, and the noise
of the samples and of the stored runs of this GPU model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from .noise import NoiseFloors, StoredMedian, detectable_change, relevant_history
from .record import TIMER_WALL, CaseRecord, records_of
from .verdict import OTHER_HOST, Verdict, judge

# Host routines are timed end to end by wall clock: pageable copies, page
# placement and the CPU move them far more than GPU time moves (on the H200:
# 0.77x to 1.09x between single-process runs minutes apart, up to 1.41x beside
# a second xdist worker; NOTES.md). A verdict on them means a change of 30%.
WALL_CLOCK_FLOORS = NoiseFloors(same_gpu=0.30, other_gpu=0.30, absolute_s=0.0, other_timer_absolute_s=0.0)

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
    """Per case, the median, GPU and timer of each stored run (the noise model's history)."""
    history: dict[str, list[StoredMedian]] = {}
    for doc in docs:
        uuid = run_gpu_uuid(doc)
        for record in records_of(doc):
            if record.timer and record.samples:
                history.setdefault(record.case, []).append(StoredMedian(uuid, record.timer, record.median_s))
    return history


def floors_with_threshold(floors: NoiseFloors, threshold: float | None) -> NoiseFloors:
    """The floors with the user's --regression-threshold as the same-GPU floor (never above other-GPU)."""
    if threshold is None:
        return floors
    return dataclasses.replace(floors, same_gpu=threshold, other_gpu=max(floors.other_gpu, threshold))


def judge_record(record: CaseRecord, baseline: Baseline | None, *, current_gpu_uuid: str | None,
                 history: list[StoredMedian] = (), floors: NoiseFloors = DEFAULT_FLOORS) -> Verdict:
    """Judge one record and write the verdict into it; returns the verdict."""
    base = baseline.cases.get(record.case) if baseline is not None else None
    if record.timer == TIMER_WALL:
        floors = WALL_CLOCK_FLOORS
    same_gpu = baseline is not None and baseline.gpu_uuid is not None and baseline.gpu_uuid == current_gpu_uuid
    if base is None or not base.samples:
        verdict = judge(record.case, None, record.samples, detectable=floors.same_gpu, alpha=ALPHA)
    elif record.timer == TIMER_WALL and not same_gpu:
        verdict = Verdict(record.case, OTHER_HOST, base.median_s, record.median_s, record.median_s / base.median_s,
                          None, None, "timed by wall clock, which measures the host (CPU, memory, PCIe) as much as "
                          "the GPU: judged only against a baseline from the same machine")
    else:
        same_timer = base.timer == record.timer
        relevant = relevant_history(list(history), current_gpu_uuid, baseline.gpu_uuid, record.timer)
        detectable = detectable_change(base.samples, record.samples, same_gpu=same_gpu, same_timer=same_timer,
                                       history=relevant, floors=floors)
        verdict = judge(record.case, base.samples, record.samples, detectable=detectable.fraction, alpha=ALPHA,
                        throttled=record.throttled, because=detectable.because)
    record.verdict, record.ratio, record.p_value = verdict.label, verdict.ratio, verdict.p_value
    record.detectable, record.verdict_reason = verdict.detectable, verdict.reason
    record.baseline = baseline.path.name if baseline is not None else None
    return verdict

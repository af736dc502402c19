"""Judging case records against stored runs: the model's baseline, or this GPU's own history.

Used in two places with the same rules: by the pytest plugin while a run
times its cases, and by `python -m kernelwatch.compare` on two saved files.

A case's verdict compares its samples with its reference for the same node
id: the baseline's samples, pooled with those of the newest other stored runs
(up to REFERENCE_RUNS in all) that ran the same machine code (SASS hash) on
the same GPU (UUID) by the same timer, unthrottled, each run weighing the
same.  One process can sit a few tenths of a percent off its GPU's mean for
its whole life (row_shared 1024³ read 443.5-448.6 µs between processes on one
H200, docs/method.md#between-process-spread); a reference pooled from several processes carries less of its
own offset.
How large a change must be to count comes from the noise model
(src/kernelwatch/verdict/noise.py): a floor that depends on whether the baseline was
recorded on this very GPU (its UUID), and the noise of the samples and of the
stored runs of this GPU model.

Some baseline cases are no reference, and the case is reported with its ratio
but not judged: one timed by another timer ("other timer": held CUDA events
read 2.6-4.2 µs more per sample than CUPTI, depending on the host; docs/method.md#event-timer-cost),
one recorded while NVML reported throttling ("throttled"), and for a host
routine timed by wall clock or a case whose GPU time includes copies between
host and device memory (the streams pipeline over PCIe), one from another
machine ("other host"): both measure the host as much as the GPU.
Cases recorded while throttled are left out of the history too.

With the history store (`--kernelwatch-history`), a case whose physical GPU has at least
HISTORY_MIN_RUNS passed runs of one machine code and this timer is judged
against those instead (`judge_against_history`): the same-GPU floor and the
spread its own runs show, so a runner of a pool sees a 2% change that the
model's baseline from another GPU (5% floor) cannot, and a host routine is
judged against its own machine rather than reported "other host".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelwatch.verdict.labels import (
    FEW_RUNS,
    HISTORY_REFERENCE,
    OTHER_GPU,
    OTHER_HOST,
    OTHER_TIMER,
    THROTTLED,
    ReferenceRun,
    Verdict,
)
from kernelwatch.verdict.noise import (
    NoiseFloors,
    StoredResult,
    detectable_change,
    relevant_history,
    same_physical_gpu,
    stored_phases,
)
from kernelwatch.verdict.record import TIMER_WALL, CaseRecord, records_of
from kernelwatch.verdict.stats import judge
from kernelwatch.verdict.threshold import DEFAULT_FLOORS

# Host routines are timed end to end by wall clock: pageable copies, page
# placement and the CPU move them far more than GPU time moves (on the H200:
# 0.77x to 1.09x between single-process runs minutes apart, up to 1.41x beside
# a second xdist worker; docs/method.md#wall-clock-floor). A verdict on them means a change of 30%.
WALL_CLOCK_FLOORS = NoiseFloors(same_gpu=0.30, other_gpu=0.30, absolute_s=0.0)

ALPHA = 0.01  # significance of the one-sided Mann-Whitney U test
# Stored runs pooled into one case's reference, the baseline included: five processes take
# the reference's own offset down to 1/sqrt(5) of one run's, and keep it to recent runs.
REFERENCE_RUNS = 5
# The newest stored runs read as a case's history, for the noise model's spread between processes (and, the
# newest REFERENCE_RUNS of them, its reference): baseline files of the GPU model (src/kernelwatch/plugin/__init__.py)
# or runs of this GPU in the history store (src/kernelwatch/plugin/recording.py).
NOISE_HISTORY_RUNS = 20


def run_gpu_uuid(doc: dict) -> str | None:
    """The GPU UUID a saved run was recorded on (None for runs that did not record it)."""
    gpu = (doc.get("machine_info") or {}).get("gpu") or {}
    return gpu.get("uuid")


def run_commit(doc: dict) -> str | None:
    """The commit a saved run was made at (pytest-benchmark's commit_info), if it says."""
    commit = (doc.get("commit_info") or {}).get("id")
    return commit if isinstance(commit, str) and commit else None


@dataclass
class Baseline:
    """One stored run, read once, as the comparison needs it."""

    path: Path
    gpu_uuid: str | None
    cases: dict[str, CaseRecord]
    started_at: str | None = None  # pytest-benchmark's "datetime"
    commit: str | None = None
    host: str | None = None  # the machine's name as the run recorded it

    @classmethod
    def from_doc(cls, path: Path, doc: dict) -> Baseline:
        started = doc.get("datetime")
        return cls(Path(path), run_gpu_uuid(doc), {r.case: r for r in records_of(doc)},
                   started if isinstance(started, str) else None, run_commit(doc), run_host(doc))


def run_host(doc: dict) -> str | None:
    """The machine a saved run was recorded on, by name (its GPU's record, else pytest-benchmark's node)."""
    machine = doc.get("machine_info") or {}
    return (machine.get("gpu") or {}).get("host") or machine.get("node")


def case_gpu_uuid(record: CaseRecord, doc_uuid: str | None) -> str | None:
    """The GPU a case ran on: its own record's UUID (an xdist worker's GPU), else its run's."""
    return record.gpu_uuid or doc_uuid


def history_of(runs: dict[str, dict]) -> dict[str, list[StoredResult]]:
    """Per case, its result in each stored run (file name: document; the pool takes the
    newest from the end, so runs other than the baseline go oldest first).

    This is the noise model's history and the pool of the cases' references.
    Each result carries the GPU its case ran on. Cases recorded while throttled
    are left out: their medians are not the GPU's spread.
    """
    history: dict[str, list[StoredResult]] = {}
    for name, doc in runs.items():
        uuid, commit, started = run_gpu_uuid(doc), run_commit(doc), doc.get("datetime")
        for record in records_of(doc):
            if record.timer and record.samples and not record.throttled:
                energy = tuple((record.energy or {}).get("window_joules_per_launch") or ())
                history.setdefault(record.case, []).append(StoredResult(
                    case_gpu_uuid(record, uuid), record.timer, record.median_s, name, record.sass,
                    tuple(record.samples), started if isinstance(started, str) else None, commit, energy=energy,
                    phases=stored_phases(record.phases)))
    return history


def reference_run(run: StoredResult) -> ReferenceRun:
    """How a verdict names a stored run it pooled."""
    return ReferenceRun(run.run or "a stored run", run.started_at, run.commit, run.sass)


# A pooled run contributes at least this many values (interpolated quantiles of its samples).
MIN_VALUES_PER_RUN = 3


def reference_samples(base: CaseRecord, baseline: Baseline, history: list[StoredResult]) -> tuple[list[float], int]:
    """The samples a case is compared with, and how many stored runs they pool.

    The baseline's own samples, alone, or pooled with the newest other stored
    runs (``REFERENCE_RUNS`` in all) of the same machine code (SASS hash, known
    on both sides), GPU (the case's UUID, known) and timer.  A run of other
    code, another GPU or unknown provenance is never pooled: its difference
    could be real.  Pooled, every run weighs the same, whatever its sample
    count (a quick run takes 8 samples of a quiet case and 60 in a noisy
    episode): each gives the m quantiles (i + 1/2)/m of its samples, m being
    the smallest run's sample count, at least ``MIN_VALUES_PER_RUN``.
    """
    newest = pooled_with_baseline(base, baseline, history)
    return pooled_samples([base.samples] + [run.samples for run in newest]), 1 + len(newest)


def pooled_with_baseline(base: CaseRecord, baseline: Baseline, history: list[StoredResult]) -> list[StoredResult]:
    """The stored runs other than the baseline that `reference_samples` pools with it, oldest first."""
    gpu_uuid = case_gpu_uuid(base, baseline.gpu_uuid)
    if base.sass is None or gpu_uuid is None:
        return []
    same_code = [run for run in history
                 if run.run != baseline.path.name and run.samples and run.gpu_uuid == gpu_uuid
                 and run.timer == base.timer and run.sass == base.sass]
    return same_code[max(0, len(same_code) - (REFERENCE_RUNS - 1)):]


def machine_runs(base: CaseRecord, baseline: Baseline, history: list[StoredResult]) -> int:
    """How many runs of this case's machine code and timer the baseline's GPU holds: the baseline and the other
    stored runs `pooled_with_baseline` could take (all of them, not only the newest)."""
    gpu_uuid = case_gpu_uuid(base, baseline.gpu_uuid)
    return 1 + sum(1 for run in history if run.run != baseline.path.name and run.samples and run.gpu_uuid == gpu_uuid
                   and gpu_uuid is not None and run.timer == base.timer and run.sass == base.sass)


def pooled_samples(runs: list) -> list[float]:
    """The samples of several runs pooled so that every run weighs the same: each gives the m
    quantiles (i + 1/2)/m of its samples, m being the smallest run's sample count, at least
    ``MIN_VALUES_PER_RUN``; one run's samples are returned as they are."""
    if len(runs) == 1:
        return list(runs[0])
    per_run = max(MIN_VALUES_PER_RUN, min(len(samples) for samples in runs))
    levels = (np.arange(per_run) + 0.5) / per_run
    return [float(value) for samples in runs for value in np.quantile(samples, levels)]


# A GPU's own history is the reference once it holds this many passed runs of the case with the
# same machine code and timer: fewer say too little about this GPU's spread between processes.
HISTORY_MIN_RUNS = 3
# A host routine timed by wall clock needs more: its pageable copies moved 1.3x-1.9x between nightlies
# minutes apart on one H200 (2026-12-02, GPU-66a73428: row_shared pageable 1738-2466 µs, blocktile_1d
# 1305-2467 µs), where three quiet runs gave a spread of 7% and a 38% move failed the nightly. With
# eight runs the spread they show is the routine's own. The same holds of a baseline folder's runs from this
# machine: on an H100 (2026-12-05, GPU-6c0f81f1) three pageable routines read 1.40-1.46x the two baseline runs
# recorded there minutes before, with no change of code.
HISTORY_MIN_RUNS_WALL = 8


def _not_judged(record: CaseRecord, base: CaseRecord, label: str, reason: str) -> Verdict:
    ratio = record.median_s / base.median_s
    return Verdict(record.case, label, base.median_s, record.median_s, ratio, None,
                   f"{reason}; the {ratio:.2f}× ratio was not judged")


def judge_record(record: CaseRecord, baseline: Baseline | None, *, gpu_uuid: str | None,
                 history: list[StoredResult] = (), floors: NoiseFloors = DEFAULT_FLOORS,
                 current_host: str | None = None) -> Verdict:
    """Judge one record against `baseline` (pooled with `history`); returns the verdict, which
    names its reference (the baseline's file name) and how many stored runs it pools.

    NEW without a baseline case; OTHER_HOST for a wall-clock case, or one
    whose GPU time includes host copies, against another machine's baseline (OTHER_GPU where
    `current_host` names the same host as the baseline's: two GPUs of one name, as VMs are);
    FEW_RUNS for a wall-clock case whose machine has fewer than HISTORY_MIN_RUNS_WALL runs of it in the
    baseline folder (the rule the history store's reference follows too); OTHER_TIMER when the baseline case was
    timed by another timer; THROTTLED when either side was throttled; else the
    noise model's verdict (kernelwatch.verdict.stats.judge).
    """
    base = baseline.cases.get(record.case) if baseline is not None else None
    runs = None  # stored runs pooled into the reference: only for a judged case
    if record.timer == TIMER_WALL:
        floors = WALL_CLOCK_FLOORS
    base_gpu_uuid = case_gpu_uuid(base, baseline.gpu_uuid) if base is not None else None
    same_gpu = base is not None and same_physical_gpu(gpu_uuid, base_gpu_uuid)
    elsewhere = OTHER_GPU if current_host and baseline is not None and current_host == baseline.host else OTHER_HOST
    if base is None or not base.samples:
        verdict = judge(record.case, None, record.samples, detectable=floors.same_gpu, alpha=ALPHA)
    elif record.timer == TIMER_WALL and not same_gpu:
        verdict = _not_judged(record, base, elsewhere, "timed by wall clock, which measures the host (CPU, memory, "
                              "PCIe) as much as the GPU: judged only against a baseline from the same machine")
    elif record.timer == TIMER_WALL and (
            runs_here := machine_runs(base, baseline, list(history))) < HISTORY_MIN_RUNS_WALL:
        verdict = _not_judged(record, base, FEW_RUNS, f"timed by wall clock, whose spread between processes only "
                              f"{HISTORY_MIN_RUNS_WALL} runs of this machine show (pageable copies moved 1.3-1.9x "
                              f"between runs minutes apart): the baseline folder holds {runs_here}")
    elif record.host_copies and not same_gpu:
        verdict = _not_judged(record, base, elsewhere, "its GPU time includes copies between host and device "
                              "memory, which measure the host's PCIe link and memory as much as the GPU (one H200 "
                              "host read the streams 3-6% slower than another): judged only against a baseline "
                              "from the same machine")
    elif base.timer != record.timer:
        verdict = _not_judged(record, base, OTHER_TIMER, f"the baseline was timed by {base.timer or 'an unknown timer'} "
                              f"and this run by {record.timer or 'an unknown timer'}, and no two timers are compared "
                              f"(held CUDA events read 2.6-4.2 µs more per sample than CUPTI, depending on the host; "
                              f"CUPTI's KERNEL kind about 1.4 µs more per kernel than its CONCURRENT_KERNEL kind)")
    elif base.throttled:
        verdict = _not_judged(record, base, THROTTLED, f"the baseline was throttled (NVML reported "
                              f"{', '.join(base.throttle_reasons)} while it was recorded), so it is no reference")
    else:
        relevant = relevant_history(list(history), gpu_uuid, base_gpu_uuid, record.timer)
        reference, runs = reference_samples(base, baseline, list(history))
        detectable = detectable_change(reference, record.samples, same_gpu=same_gpu, history=relevant,
                                       reference_runs=runs, host_copies=bool(record.host_copies), floors=floors)
        because = detectable.because + (f"; reference pooled from {runs} runs of this code" if runs > 1 else "")
        verdict = judge(record.case, reference, record.samples, detectable=detectable.fraction, alpha=ALPHA,
                        throttled=record.throttled, because=because)
        pooled = pooled_with_baseline(base, baseline, list(history))
        verdict = dataclasses.replace(verdict, references=tuple(
            [ReferenceRun(baseline.path.name, baseline.started_at, baseline.commit, base.sass)]
            + [reference_run(run) for run in pooled]))
    return dataclasses.replace(verdict, reference=baseline.path.name if baseline is not None else None,
                               reference_runs=runs)


def judge_against_history(record: CaseRecord, history: list[StoredResult], *, gpu_uuid: str | None,
                          floors: NoiseFloors = DEFAULT_FLOORS) -> Verdict | None:
    """Judge one record against this physical GPU's own stored runs, or None when they are too few.

    `history` is the case's results in the history store's reference runs, oldest
    first (src/kernelwatch/storage/history: never a slower case, nor a run whose
    correctness failed). Only the newest level counts: where a slowdown was
    accepted (`StoredResult.accepted_reason`), the runs before it are never
    pooled with the runs from it on. The reference pools the newest
    ``REFERENCE_RUNS`` runs of this GPU (UUID) and the record's timer that share
    one machine code, the newest run's (a reference of one code, as a baseline
    is); at least ``HISTORY_MIN_RUNS`` are needed (``HISTORY_MIN_RUNS_WALL`` for a host routine timed
    by wall clock), or one where the level began
    with that code (an accepted slowdown's first run is its reference at once).
    The record's own code may differ: a commit that changed the kernel is what
    the verdict is for, and its reason then says so. The floor is the same-GPU
    one (30% for wall-clock host routines), and the spread between processes is
    the one those runs show (a young level's: the runs before it, of their code).
    """
    if gpu_uuid is None or not record.samples:
        return None
    mine = [run for run in history if run.gpu_uuid == gpu_uuid and run.timer == record.timer and run.samples]
    if not mine:
        return None
    start = max((i for i, run in enumerate(mine) if run.accepted_reason is not None), default=0)
    level, before = mine[start:], mine[:start]
    same_code = [run for run in level if run.sass == level[-1].sass]
    accepted_start = level[0].accepted_reason is not None and same_code[0] is level[0]
    needed = HISTORY_MIN_RUNS_WALL if record.timer == TIMER_WALL else HISTORY_MIN_RUNS
    if len(same_code) < needed and not accepted_start:
        return None
    if record.timer == TIMER_WALL:
        floors = WALL_CLOCK_FLOORS
    newest = same_code[-REFERENCE_RUNS:]
    spread_runs = same_code
    if len(same_code) < HISTORY_MIN_RUNS and before:
        spread_runs = [run for run in before if run.sass == before[-1].sass]
    reference = pooled_samples([run.samples for run in newest])
    detectable = detectable_change(reference, record.samples, same_gpu=True,
                                   history=[run.median for run in spread_runs], reference_runs=len(newest),
                                   host_copies=bool(record.host_copies), floors=floors)
    because = (f"{detectable.because}; reference pooled from {len(newest)} runs of this GPU's history" if len(newest) > 1
               else f"{detectable.because}; reference: 1 run of this GPU's history")
    if accepted_start:
        because += f", from {level[0].run} on, where a slowdown was accepted ({level[0].accepted_reason})"
    if record.sass != newest[-1].sass:
        because += ", whose machine code differs from this run's"
    verdict = judge(record.case, reference, record.samples, detectable=detectable.fraction, alpha=ALPHA,
                    throttled=record.throttled, because=because)
    return dataclasses.replace(verdict, reference=f"{HISTORY_REFERENCE}{gpu_uuid}", reference_runs=len(newest),
                               references=tuple(reference_run(run) for run in newest))


def judge_against_stored(record: CaseRecord, *, baseline: Baseline | None, baseline_runs: list[StoredResult],
                         own_history: list[StoredResult], gpu_uuid: str | None,
                         floors: NoiseFloors = DEFAULT_FLOORS, current_host: str | None = None) -> Verdict:
    """The nightly's verdict of one record: against this GPU's own history (`own_history`, from
    the history store) where it holds enough runs, else against the model's `baseline` pooled
    with the baseline folder's other runs (`baseline_runs`), as `judge_record` does."""
    verdict = judge_against_history(record, own_history, gpu_uuid=gpu_uuid, floors=floors)
    if verdict is None:
        verdict = judge_record(record, baseline, gpu_uuid=gpu_uuid, history=baseline_runs, floors=floors,
                               current_host=current_host)
    return verdict

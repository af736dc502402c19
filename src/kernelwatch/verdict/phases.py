"""A host routine's phases, each judged against this GPU's own stored runs.

A host routine's end-to-end time (wall clock) is judged at a 30% floor: its
pageable staging copy moves 3-29% between processes on one H200, so a 20%
regression of the kernel inside it passed. Its phases (src/kernelwatch/timing/phases.py)
are judged one by one, each on its own samples as a case would be
(`judge_against_history`: the newest runs of one level pooled, the spread the
stored runs show, a one-sided Mann-Whitney test):

- the kernel, timed by CUPTI's records, at the GPU's floors (1.5% on the same
  GPU, more where the stored runs spread more);
- each copy to or from host memory (`HtoD`, `DtoH`, ...) at the host-copy floor
  (6%, as the streams cases: src/kernelwatch/verdict/noise.py): on two H200 hosts, 6 of
  72 clean routine-runs read their pinned HtoD 3.4-4.5% slower than the runs
  before them (150 -> 155-158 µs), where a quiet history left the 1.5% floor to
  judge them (docs/method.md#pinned-copy-phase, 2026-12-03); such a process's PCIe mood is not in its
  samples;
- the host phase (the wall clock less the GPU's work) at the wall clock's 30%.

Only against this GPU's own history, never a baseline of another host: a copy
is the host's PCIe link and memory as much as the GPU. A phase needs as many
stored runs as a case of its timer (three; eight for the host phase). A slower
phase fails the routine's test, as a slower case does.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence

from kernelwatch.timing.phases import HOST_PHASE
from kernelwatch.timing.timer import TIMER_CUPTI_KERNEL, TIMER_WALL
from kernelwatch.verdict.against_baseline import judge_against_history
from kernelwatch.verdict.labels import NEW, Verdict
from kernelwatch.verdict.noise import NoiseFloors, StoredResult
from kernelwatch.verdict.record import CaseRecord
from kernelwatch.verdict.threshold import DEFAULT_FLOORS

# the copy kinds CUPTI names (src/kernelwatch/timing/phases.py) that move host memory: judged at the host-copy floor
HOST_COPIES = frozenset({"HtoD", "DtoH", "HtoH", "HtoA", "AtoH"})


def phase_timer(phase: str) -> str:
    """The timer a phase's figures are of: the wall clock for the host phase, CUPTI's KERNEL kind else."""
    return TIMER_WALL if phase == HOST_PHASE else TIMER_CUPTI_KERNEL


def phase_verdicts(record: CaseRecord, history: Sequence[StoredResult], *, gpu_uuid: str | None,
                   floors: NoiseFloors = DEFAULT_FLOORS) -> dict[str, Verdict]:
    """Each phase of `record` (a host routine's) against the same phase in `history` (this GPU's stored
    runs of the routine, oldest first): phase -> verdict, in the record's order."""
    verdicts = {}
    for phase, samples in record.phases.items():
        if not samples:
            continue
        timer, median = phase_timer(phase), statistics.median(samples)
        one = dataclasses.replace(record, case=f"{record.case} {phase}", samples=list(samples), median_s=median,
                                  timer=timer, host_copies=phase in HOST_COPIES, phases={}, phase_verdicts=[])
        runs = [dataclasses.replace(run, timer=timer, samples=run.phase(phase), median=statistics.median(run.phase(phase)))
                for run in history if run.phase(phase) and not run.throttled]
        verdict = judge_against_history(one, runs, gpu_uuid=gpu_uuid, floors=floors)
        if verdict is None:
            verdict = Verdict(one.case, NEW, None, median, None, None,
                              f"{len(runs)} stored runs of this GPU hold its {phase} phase: too few to judge it")
        verdicts[phase] = verdict
    return verdicts


def phase_fields(phase: str, verdict: Verdict) -> dict:
    """What the record keeps of one phase's verdict (`CaseRecord.phase_verdicts`)."""
    return {"phase": phase, "label": verdict.label, "median_s": verdict.current_median,
            "reference_median_s": verdict.reference_median, "ratio": verdict.ratio,
            "detectable": verdict.detectable, "reason": verdict.reason, "fails": verdict.fails,
            "reference_runs": verdict.reference_runs, "references": [run.as_dict() for run in verdict.references]}

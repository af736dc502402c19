"""A timed case's energy: which cases are measured, the measurement and its verdict (its report section:
src/kernelwatch/report/energy.py).

After a case is timed (src/kernelwatch/plugin/timed_case.py), its launch is replayed for
its energy where `--kernelwatch-energy` asks for it: every GPU-timed case (`all`), the
profile's energy cases (`profile`, the default: the kernelwatch_energy_cases ini key's
cases, in the nightly and full profiles) or none. A host routine (wall
clock) and a launch that copies to or from the host (the streams pipeline, bound
by PCIe) are not measured: their energy is the host's and the bus's as much as
the GPU's. The energy is judged against this GPU's own stored runs
(src/kernelwatch/verdict/energy.py), and under `--kernelwatch-compare-ref` from interleaved periods
of base and head in the same run. "more energy" fails the case's test under
`--kernelwatch-energy-verdict fail` (the default).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from kernelwatch.timing.energy import EnergyError
from kernelwatch.timing.measuring import Measuring
from kernelwatch.verdict.energy import (
    MORE_ENERGY,
    energy_block,
    energy_reference,
    interval_text,
    judge_energy,
    judge_energy_paired,
    precise_enough,
)
from kernelwatch.verdict.labels import HISTORY_REFERENCE, Verdict
from kernelwatch.verdict.record import CaseRecord

if TYPE_CHECKING:
    from kernelwatch.plugin.state import SuiteState

PAIRS = 5  # interleaved periods of each side in an energy A/B (about 5 s of GPU)


def energy_wanted(measuring: Measuring, case: str) -> bool:
    """Whether `case` (a node id) is to be measured for energy in this run."""
    if measuring.energy_cases == "all":
        return True
    if measuring.energy_cases == "none":
        return False
    return measuring.profile.is_energy_case(case)


def _measurable(state: SuiteState, record: CaseRecord, wall: bool) -> bool:
    measuring = state.measuring
    return (measuring.energy_meter is not None and not wall and not record.host_copies
            and energy_wanted(measuring, record.case))


def _verdict_fields(verdict: Verdict, fails: bool) -> dict:
    fields = dataclasses.asdict(verdict)
    fields.pop("references")
    return fields | {"fails": fails}


def with_energy(state: SuiteState, record: CaseRecord, run, stream, *, wall: bool) -> CaseRecord:
    """`record` with its energy and, where this GPU's stored runs hold the same code's, its energy verdict."""
    if not _measurable(state, record, wall):
        return record
    try:
        measurement = state.measuring.energy_meter.measure(run, stream, record.median_s, case=record.case,
                                                           enough=precise_enough)
    except EnergyError as error:
        state.findings.problems.append(f"energy not measured: {error}")
        return record
    history = [*state.stored.own_history.get(record.case, []), *state.stored.baseline_runs.get(record.case, [])]
    reference = energy_reference(history, state.measuring.gpu.uuid, record.sass)
    block = energy_block(measurement, flops=record.flops, bytes_moved=record.bytes, reference_runs=reference)
    record = dataclasses.replace(record, energy=block)
    if not (state.judging.comparing or state.stored.store is not None):
        return record
    verdict = judge_energy(record.case, block["window_joules_per_launch"], reference,
                           reference=HISTORY_REFERENCE + str(state.measuring.gpu.uuid))
    return dataclasses.replace(record, energy_verdict=_verdict_fields(
        verdict, state.judging.energy_fails and verdict.label == MORE_ENERGY))


def with_paired_energy(state: SuiteState, record: CaseRecord, base_run, head_run, stream, base_s: float) -> CaseRecord:
    """Under --kernelwatch-compare-ref: `record` (head's) with the energy of base and head from interleaved periods."""
    if not _measurable(state, record, wall=False):
        return record
    try:
        base, head = state.measuring.energy_meter.measure_interleaved(base_run, head_run, stream, base_s,
                                                                      record.median_s, PAIRS, case=record.case)
    except EnergyError as error:
        state.findings.problems.append(f"energy not measured: {error}")
        return record
    verdict = judge_energy_paired(record.case, base.joules_per_launch, head.joules_per_launch,
                                  reference=state.code.ref.ref)
    return dataclasses.replace(record, energy=energy_block(head, flops=record.flops, bytes_moved=record.bytes),
                               energy_verdict=_verdict_fields(verdict, state.judging.energy_fails and
                                                              verdict.label == MORE_ENERGY))


def energy_failure(record: CaseRecord) -> str | None:
    """The failure message of a case whose energy verdict fails its test, else None."""
    verdict = record.energy_verdict or {}
    if not verdict.get("fails"):
        return None
    return f"energy regression: {interval_text(record.energy)} per launch: {verdict['reason']}"

"""One timed case, from samples to a judged record: the `kernelwatch_bench` fixture.

pytest-benchmark times Python callables with a wall clock; the suite's
figures are GPU times (src/kernelwatch/timing/timer.py). `TimedCase.time` measures, builds
the case's record (src/kernelwatch/verdict/record.py), judges it against the baseline
(src/kernelwatch/verdict/against_baseline.py) or the git ref (src/kernelwatch/ab/against_ref.py),
keeps record and verdict in the session's state, and hands the samples and the
flat record to pytest-benchmark's `benchmark` fixture, so that its saving,
JSON output and tables work on GPU time. A slower case fails its own test.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from dataclasses import dataclass

import pytest

from kernelwatch.ab.against_ref import NO_BUILD_INFO, build_of
from kernelwatch.ab.identity import arch_of
from kernelwatch.ab.library import case_identity
from kernelwatch.plugin.benchmark import hand_samples, mark_not_timed
from kernelwatch.plugin.energy import energy_failure, with_energy, with_paired_energy
from kernelwatch.plugin.regression import (
    card_against_stored,
    card_of_phases,
    explain_slower,
    failure_words,
    follow_slower,
    follow_slower_phases,
)
from kernelwatch.plugin.state import SuiteState
from kernelwatch.plugin.xdist import worker_id
from kernelwatch.timing.timer import Measurement
from kernelwatch.timing.wall import measure_wall
from kernelwatch.units import format_duration
from kernelwatch.verdict.against_baseline import judge_against_stored
from kernelwatch.verdict.labels import ACCEPTED, SLOWER
from kernelwatch.verdict.noise import floor_of
from kernelwatch.verdict.phases import phase_fields, phase_verdicts
from kernelwatch.verdict.record import CaseRecord


@dataclass
class TimedCase:
    """The `kernelwatch_bench` fixture: times one case, records it, judges it."""

    benchmark: object  # pytest-benchmark's fixture
    timer: object  # kernelwatch.timing.GpuTimer, or a device layer's stand-in
    state: SuiteState

    def time(self, case, *, kernel: str | None = None, shape: str | None = None, flops: float | None = None,
             bytes_moved: float | None = None, ceiling: tuple[str, object] | None = None,
             datasheet_rate: float | None = None, wall: bool = False, flush: bool = True,
             params: dict | None = None) -> Measurement | None:
        """Measure a case, record it and judge it.

        `case` is a prepared case of the project's kernel library (anything with
        `run(stream)`, `build()` and `same_case_in(library)`, src/kernelwatch/ab/library.py:
        its machine code is recorded, and `--kernelwatch-compare-ref` can prepare it on the base side too),
        a plain `run(stream)` (GPU time), or with wall=True a host routine
        `run()` timed by wall clock. flops or bytes_moved is the case's work;
        ceiling is (name, work per second, or a function giving it) measured in
        this run, and datasheet_rate the datasheet's work per second. A value
        of `params` may also be a function: like the ceiling's, it is called
        only when the case is timed (a case skipped under --kernelwatch-compare-ref
        measures nothing for its record).
        Returns the measurement (None when --kernelwatch-compare-ref found the case unchanged).
        """
        state = self.state
        prepared = case if hasattr(case, "run") else None
        run = prepared.run if prepared is not None else case
        started = time.time()
        if state.code.ref is not None:
            if wall:
                pytest.skip("--kernelwatch-compare-ref compares GPU-timed kernel cases; this host routine is timed by wall clock")
            if prepared is None:
                pytest.skip("--kernelwatch-compare-ref compares GPU-timed kernel cases prepared by the kernel library; "
                            "this case is a plain run, which the base side cannot prepare")
            return self._compare_with_ref(prepared, flush, kernel, shape, started)
        if wall:
            recorder = getattr(self.timer, "phase_recorder", lambda: None)()  # None: no CUPTI, no phases
            measurement = measure_wall(run, state.measuring.profile, recorder, case=self.benchmark.fullname)
        else:
            measurement = self.timer.measure(run, state.measuring.profile, flush=flush, case=self.benchmark.fullname)
        if ceiling is not None and callable(ceiling[1]):
            ceiling = (ceiling[0], ceiling[1]())
        params = {key: value() if callable(value) else value for key, value in (params or {}).items()}
        record = CaseRecord(
            case=self.benchmark.fullname, kernel=kernel, shape=shape, params=params, flops=flops,
            bytes=bytes_moved, ceiling=ceiling[0] if ceiling else None, ceiling_rate=ceiling[1] if ceiling else None,
            datasheet_rate=datasheet_rate, **self._where_and_when(prepared, started, wall),
            **measured_fields(measurement),
        )
        verdict = None
        if state.judging.comparing:  # this GPU's own history where it holds enough runs, else the model's baseline
            verdict = judge_against_stored(record, baseline=state.stored.baseline,
                                           baseline_runs=state.stored.baseline_runs.get(record.case, []),
                                           own_history=state.stored.own_history.get(record.case, []),
                                           gpu_uuid=state.measuring.gpu.uuid, floors=state.judging.floors,
                                           current_host=state.measuring.gpu.host)
            record, verdict = follow_slower(state, record.judged(verdict), verdict)
            if verdict.label in (SLOWER, ACCEPTED):
                card_against_stored(state, record, verdict, prepared)
        if record.phases and (state.judging.comparing or state.stored.store is not None):
            record, phases = follow_slower_phases(state, record, phase_verdicts(
                record, state.stored.own_history.get(record.case, []), gpu_uuid=state.measuring.gpu.uuid,
                floors=state.judging.floors))
            record = dataclasses.replace(record, phase_verdicts=[phase_fields(phase, v) for phase, v in phases.items()])
            card_of_phases(state, record)
        record = with_energy(state, record, run, getattr(self.timer, "stream", None), wall=wall)
        self._keep(record, verdict)
        if verdict is not None and verdict.fails:
            # the reference the ratio was taken against: the baseline's median, or the pooled runs' one
            pooled = f", pooled with {verdict.reference_runs - 1} more stored runs" if verdict.reference_runs > 1 else ""
            pytest.fail(f"performance regression: {format_duration(record.median_s)} now against "
                        f"{format_duration(verdict.reference_median)} in {verdict.reference}{pooled} "
                        f"({verdict.ratio:.3f}x): {verdict.reason}{failure_words(record)}", pytrace=False)
        if (failure := energy_failure(record)) is not None:
            pytest.fail(failure, pytrace=False)
        if slower := [v for v in record.phase_verdicts if v["fails"]]:
            pytest.fail("performance regression in its phases: " + "; ".join(
                f"{v['phase']} {format_duration(v['median_s'])} against {format_duration(v['reference_median_s'])} "
                f"({v['ratio']:.3f}x): {v['reason']}" for v in slower) + failure_words(record), pytrace=False)
        return measurement

    def _where_and_when(self, prepared, started: float, wall: bool = False) -> dict:
        """The record's fields that say where and how the case ran: GPU, worker, timing interval,
        the timer's note and the kernel's machine code (prepared cases only)."""
        info = self.state.measuring.gpu
        return dict(timer_note="" if wall else getattr(self.timer, "note", ""), gpu_uuid=info.uuid,
                    pci_bus_id=info.pci_bus_id, cuda_device=info.cuda_device, worker=worker_id() or "main",
                    timing_started=started, timing_ended=time.time(),
                    sass=sass_of(self.state.code.library, prepared, info) if prepared is not None else None)

    def _compare_with_ref(self, prepared, flush, kernel, shape, started) -> Measurement | None:
        """--kernelwatch-compare-ref: time base and head interleaved (or not at all when their SASS is the same)."""
        state = self.state
        floors = state.judging.floors
        verdict, head = state.code.ref.compare(self.benchmark.fullname, prepared, self.timer, state.measuring.profile,
                                               flush, lambda median_s: floor_of(median_s, floors))
        if head is None:
            mark_not_timed(self.benchmark, "not timed: the same SASS and launch as the ref")
            return None
        record = CaseRecord(
            case=self.benchmark.fullname, kernel=kernel, shape=shape, **self._where_and_when(prepared, started),
            **measured_fields(head)).judged(verdict)
        if self.benchmark.fullname in state.code.ref.timed_base:
            base_run, base_s = state.code.ref.timed_base[self.benchmark.fullname]
            record = with_paired_energy(state, record, base_run, prepared.run, getattr(self.timer, "stream", None),
                                        base_s)
        self._keep(record, None)  # the ref comparison keeps its verdicts (state.code.ref.verdicts)
        if verdict.label in (SLOWER, ACCEPTED):
            explain_slower(state, self.benchmark.fullname, prepared)
        if verdict.fails:
            pytest.fail(f"slower than {state.code.ref.ref}: {verdict.reason}", pytrace=False)
        if (failure := energy_failure(record)) is not None:
            pytest.fail(failure, pytrace=False)
        return head

    def _keep(self, record: CaseRecord, verdict) -> None:
        """The record goes to the session's state (the report and the history read it there) and,
        flat, into pytest-benchmark's extra_info with its samples (its JSON and saved runs)."""
        self.state.findings.add(record, verdict)
        self.benchmark.extra_info.update(record.to_extra_info())
        hand_samples(self.benchmark, record.samples, "kernelwatch_bench.time(...)")


def measured_fields(measurement: Measurement) -> dict:
    """The record's fields that come from a measurement: its samples, median and spread, the
    timer, the held events' median beside CUPTI's, the SM clocks seen and any throttling."""
    return {
        "median_s": measurement.median, "samples": list(measurement.samples), "timer": measurement.timer,
        "event_median_s": statistics.median(measurement.event_samples) if measurement.event_samples else None,
        "rsd": measurement.rsd, "stopped_by": measurement.stopped_by,
        "sm_clock_mhz_min": min(measurement.sm_clock_mhz, default=None),
        "sm_clock_mhz_max": max(measurement.sm_clock_mhz, default=None),
        "throttle_reasons": sorted(set(measurement.throttle)), "retaken_for_throttle": measurement.retaken,
        "host_copies": measurement.host_copies, "launched_kernels": list(measurement.launched_kernels),
        "phases": {name: list(values) for name, values in measurement.phases.items()},
    }


def sass_of(library, prepared, gpu) -> str | None:
    """The identity of a prepared case's machine code and launch, for this GPU's architecture, by the project's
    kernel library (its source_of); None without one, or for a case that cannot describe its build."""
    build = build_of(prepared)
    if library is None or build is NO_BUILD_INFO:
        return None
    return case_identity(library.package, build, arch_of(gpu.compute_capability))

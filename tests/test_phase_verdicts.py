"""harness.verdict.phases: each phase of a host routine judged against the same phase of this GPU's stored runs,
and the report's section (harness/report/phases.py)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.report.phases import phases_section
from harness.timing.timer import TIMER_WALL
from harness.verdict.noise import StoredResult, stored_phases
from harness.verdict.phases import phase_fields, phase_timer, phase_verdicts
from harness.verdict.record import CaseRecord

GPU = "GPU-a"
CASE = "s.py::test_routine[pinned-tiled]"


def cut(seed: int, kernel: float = 1.0, host: float = 1.0, n: int = 60) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    noisy = lambda median, spread=0.003: list(median * (1 + spread * rng.standard_normal(n)))  # noqa: E731
    return {"HtoD": noisy(80e-6), "kernel": noisy(250e-6 * kernel), "DtoH": noisy(80e-6),
            "host": noisy(150e-6 * host, 0.05)}


def stored(i: int, **fields) -> StoredResult:
    values = dict(gpu_uuid=GPU, timer=TIMER_WALL, median=560e-6, run=f"history run {i}", phases=stored_phases(cut(i)))
    return StoredResult(**(values | fields))


def record(seed: int = 99, **scale) -> CaseRecord:
    phases = cut(seed, **scale)
    return CaseRecord(case=CASE, median_s=560e-6, samples=[560e-6] * 60, timer=TIMER_WALL, gpu_uuid=GPU,
                      phases=phases)


def test_each_phase_is_judged_on_its_own_samples_at_its_timers_floor():
    verdicts = phase_verdicts(record(), [stored(i) for i in range(8)], gpu_uuid=GPU)
    assert list(verdicts) == ["HtoD", "kernel", "DtoH", "host"]
    assert {phase: v.label for phase, v in verdicts.items()} == {phase: "same" for phase in verdicts}
    assert verdicts["kernel"].detectable < 0.03 and verdicts["host"].detectable >= 0.30  # GPU floor; wall clock's
    assert verdicts["kernel"].case == f"{CASE} kernel" and verdicts["kernel"].reference_runs == 5


def test_a_slower_kernel_phase_is_slower_while_the_routine_end_to_end_could_not_tell():
    verdicts = phase_verdicts(record(kernel=1.10), [stored(i) for i in range(8)], gpu_uuid=GPU)
    assert verdicts["kernel"].label == "slower" and verdicts["kernel"].ratio == pytest.approx(1.10, rel=0.01)
    assert verdicts["kernel"].fails and not verdicts["HtoD"].fails
    fields = phase_fields("kernel", verdicts["kernel"])
    assert (fields["phase"], fields["label"], fields["fails"]) == ("kernel", "slower", True)
    assert fields["reference_median_s"] == pytest.approx(250e-6, rel=0.01)


def test_too_few_stored_runs_of_a_phase_is_new_and_the_host_phase_needs_eight():
    three = phase_verdicts(record(), [stored(i) for i in range(3)], gpu_uuid=GPU)
    assert three["kernel"].label == "same" and three["host"].label == "new"
    assert three["host"].reason == "3 stored runs of this GPU hold its host phase: too few to judge it"
    two = phase_verdicts(record(), [stored(i) for i in range(2)], gpu_uuid=GPU)
    assert {v.label for v in two.values()} == {"new"}
    # a run without phases, a throttled one and another GPU's are no history of a phase
    others = [stored(i, phases=()) for i in range(3)] + [stored(i, throttled=True) for i in range(3)]
    others += [stored(i, gpu_uuid="GPU-b") for i in range(3)]
    assert {v.label for v in phase_verdicts(record(), others, gpu_uuid=GPU).values()} == {"new"}


def test_the_phase_timer_is_the_wall_clock_for_the_host_and_cuptis_kernel_kind_else():
    assert phase_timer("host") == TIMER_WALL and phase_timer("kernel") == phase_timer("HtoD") == "cupti kernel"


def test_stored_phases_keep_the_records_order_and_drop_empty_ones():
    assert stored_phases({"HtoD": [1, 2], "kernel": [], "host": [3]}) == (("HtoD", (1.0, 2.0)), ("host", (3.0,)))
    assert stored_phases(None) == ()
    assert stored(0).phase("kernel") and stored(0).phase("memset") == ()


def test_the_report_shows_each_routines_phases_their_share_and_verdicts():
    assert phases_section([CaseRecord(case="x", median_s=1e-3)]) == ""
    judged = record(kernel=1.10)
    judged.phase_verdicts = [phase_fields(p, v) for p, v in
                             phase_verdicts(judged, [stored(i) for i in range(8)], gpu_uuid=GPU).items()]
    text = phases_section([judged])
    assert "## Host routines by phase" in text
    row = next(line for line in text.splitlines() if line.startswith(f"| `{CASE}`"))
    assert "| 560 µs |" in row and "(49%, **slower** x1.10" in row and "(14%, same x1.0" in row
    assert f"- `{CASE}` kernel: 10.0% slower than the reference" in text

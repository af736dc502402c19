"""kernelwatch.verdict.phases: each phase of a host routine judged against the same phase of this GPU's stored runs,
and the report's section (src/kernelwatch/report/phases.py)."""

from __future__ import annotations

import numpy as np
import pytest

from kernelwatch.report.phases import phases_section
from kernelwatch.timing.timer import TIMER_WALL
from kernelwatch.verdict.noise import StoredResult, stored_phases
from kernelwatch.verdict.phases import HOST_COPIES, phase_fields, phase_timer, phase_verdicts
from kernelwatch.verdict.record import CaseRecord

GPU = "GPU-a"
CASE = "s.py::test_routine[pinned-tiled]"


def cut(seed: int, kernel: float = 1.0, host: float = 1.0, copy: float = 1.0, n: int = 60) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    noisy = lambda median, spread=0.003: list(median * (1 + spread * rng.standard_normal(n)))  # noqa: E731
    return {"HtoD": noisy(80e-6 * copy), "kernel": noisy(250e-6 * kernel), "DtoH": noisy(80e-6),
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


def test_a_copy_to_or_from_host_memory_is_judged_at_the_host_copy_floor_and_the_kernel_at_the_gpus():
    history = [stored(i) for i in range(8)]
    # a clean process on one H200 host: two routines' pinned HtoD 4.3-4.5% slower, nothing else moved
    moody = phase_verdicts(record(copy=1.045), history, gpu_uuid=GPU)
    assert moody["HtoD"].label == "same" and moody["HtoD"].detectable == pytest.approx(0.06)
    assert "6% floor, host copies" in moody["HtoD"].reason and not moody["HtoD"].fails
    assert moody["DtoH"].detectable == pytest.approx(0.06) and moody["kernel"].detectable < 0.03
    assert phase_verdicts(record(copy=1.08), history, gpu_uuid=GPU)["HtoD"].label == "slower"
    assert phase_verdicts(record(kernel=1.045), history, gpu_uuid=GPU)["kernel"].label == "slower"
    assert HOST_COPIES == {"HtoD", "DtoH", "HtoH", "HtoA", "AtoH"}  # DtoD and memset stay on the GPU's floor


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


def _judged(case: str, median_s: float, phases: dict, verdicts: list[dict]) -> CaseRecord:
    return CaseRecord(case=case, median_s=median_s, samples=[median_s], timer=TIMER_WALL, gpu_uuid=GPU,
                      phases=phases, phase_verdicts=verdicts)


def _fields(phase: str, label: str, ratio, fails: bool, reason: str = "r") -> dict:
    return {"phase": phase, "label": label, "ratio": ratio, "fails": fails, "reason": reason}


def test_the_reports_cells_give_median_share_label_and_ratio_bold_where_it_fails():
    b = _judged("b.py::t", 1e-3, {"kernel": [0.25e-3, 0.3e-3, 0.35e-3], "host": [0.5e-3]},
                [_fields("kernel", "slower", 1.2346, True, "20% slower"), _fields("host", "faster", 0.5, False, "fast")])
    a = _judged("a.py::t", 2e-3, {"HtoD": [1e-3], "kernel": [0.5e-3]}, [_fields("kernel", "new", None, False)])
    text = phases_section([b, a, CaseRecord(case="c.py::t", median_s=1e-3)])
    lines = text.splitlines()
    assert lines[:5] == ["", "## Host routines by phase", "",
                         "Each routine's wall-clock samples cut by CUPTI's records (docs/method.md): medians, the "
                         "share of the routine's median, and each phase's verdict against this GPU's own runs (the "
                         "GPU's floors for the kernel, the host-copy floor for the copies, the wall clock's 30% for the host).", ""]
    rows = [line for line in lines if line.startswith("| `")]
    assert len(rows) == 2 and rows[0].startswith("| `a.py::t`")  # sorted by case, the uncut record left out
    header = next(line for line in lines if line.startswith("| host routine"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["host routine", "end to end", "HtoD", "kernel", "host"]
    assert [c.strip() for c in rows[1].strip("|").split("|")] == [
        "`b.py::t`", "1.00 ms", "—", "300 µs (30%, **slower** x1.235)", "500 µs (50%, faster x0.500)"]
    assert [c.strip() for c in rows[0].strip("|").split("|")] == [
        "`a.py::t`", "2.00 ms", "1.00 ms (50%)", "500 µs (25%, new)", "—"]
    assert lines[-2:] == ["- `b.py::t` kernel: 20% slower", "- `b.py::t` host: fast"]
    assert text.endswith("fast\n")


def test_a_routine_without_a_median_shows_no_share_and_only_same_or_new_give_no_reasons():
    record_ = _judged("a.py::t", 0.0, {"kernel": [1e-3]}, [_fields("kernel", "same", 1.0, False, "same as ever")])
    text = phases_section([record_])
    assert "| 1.00 ms (0%, same x1.000) |" in text and "same as ever" not in text and text.endswith("|\n")


def test_a_phase_without_samples_is_not_judged_and_fields_keep_every_figure():
    routine = record()
    routine.phases = {"kernel": routine.phases["kernel"], "memset": []}
    verdicts = phase_verdicts(routine, [stored(i) for i in range(8)], gpu_uuid=GPU)
    assert list(verdicts) == ["kernel"]
    new = phase_verdicts(routine, [], gpu_uuid=GPU)["kernel"]
    assert (new.label, new.reference_median, new.ratio, new.detectable) == ("new", None, None, None)
    assert new.current_median == pytest.approx(float(np.median(routine.phases["kernel"])), rel=1e-12)
    assert new.reason == "0 stored runs of this GPU hold its kernel phase: too few to judge it"
    fields = phase_fields("kernel", new)
    assert fields == {"phase": "kernel", "label": "new", "median_s": new.current_median, "reference_median_s": None,
                      "ratio": None, "detectable": None, "reason": new.reason, "fails": False, "reference_runs": None,
                      "references": []}
    judged = verdicts["kernel"]  # a judged phase keeps the runs it was judged against, for the slower-case block
    references = phase_fields("kernel", judged)["references"]
    assert len(references) == judged.reference_runs > 0
    assert references == [run.as_dict() for run in judged.references]


def test_a_phases_share_is_its_median_over_the_routines_in_whole_percent():
    # 0.8 ms of a 1 ms routine is 80%; 0.2 ms is 20%: no other scale of the share rounds to both
    routine = _judged("a.py::t", 1e-3, {"kernel": [0.8e-3], "host": [0.2e-3]}, [])
    row = next(line for line in phases_section([routine]).splitlines() if line.startswith("| `"))
    assert [c.strip() for c in row.strip("|").split("|")] == ["`a.py::t`", "1.00 ms", "800 µs (80%)", "200 µs (20%)"]


def test_a_stored_routines_phase_cells_carry_the_verdict_of_their_own_phase():
    import json

    # as a stored run gives them back: the phases' names and the verdicts' are strings read apart
    stored_run = json.loads(json.dumps({
        "phases": {"HtoD": [0.1e-3], "kernel": [0.5e-3], "DtoH": [0.1e-3]},
        "verdicts": [_fields("HtoD", "same", 1.001, False), _fields("kernel", "slower", 1.25, True, "25% slower"),
                     _fields("DtoH", "faster", 0.8, False, "20% faster")]}))
    routine = _judged("a.py::t", 1e-3, stored_run["phases"], stored_run["verdicts"])
    row = next(line for line in phases_section([routine]).splitlines() if line.startswith("| `"))
    assert [c.strip() for c in row.strip("|").split("|")] == [
        "`a.py::t`", "1.00 ms", "100 µs (10%, same x1.001)", "500 µs (50%, **slower** x1.250)",
        "100 µs (10%, faster x0.800)"]


def test_a_phase_without_samples_before_others_leaves_the_others_judged():
    routine = record()
    routine.phases = {"memset": [], **routine.phases}
    verdicts = phase_verdicts(routine, [stored(i) for i in range(8)], gpu_uuid=GPU)
    assert list(verdicts) == ["HtoD", "kernel", "DtoH", "host"]


def test_phase_names_read_back_from_json_keep_the_host_on_the_wall_clocks_floor():
    import json

    # a record read back from its JSON: its phase names are new strings, equal to the recorder's words
    routine = record()
    routine.phases = json.loads(json.dumps(routine.phases))
    host = next(name for name in routine.phases if name == "host")
    assert phase_timer(host) == TIMER_WALL
    verdicts = phase_verdicts(routine, [stored(i) for i in range(8)], gpu_uuid=GPU)
    assert verdicts["host"].detectable >= 0.30 and verdicts["kernel"].detectable < 0.03


def test_the_gpu_of_a_phase_verdict_is_given_by_name():
    with pytest.raises(TypeError):
        phase_verdicts(record(), [stored(i) for i in range(3)], GPU)

"""kernelwatch.report.session_report: the report and the terminal summary built from a session's findings alone,
compared whole with their reviewed snapshots (tests/report/__snapshots__/test_session_report.ambr; `--snapshot-update`
rewrites them), and the rules behind them (the plugin handing them over is tested in tests/plugin/test_reporting.py)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
from pathlib import Path

import pytest

from kernelwatch.report.findings import Findings
from kernelwatch.report.session_report import (
    followed_records,
    is_failing_record,
    ref_report,
    reference_words,
    stored_report,
    summary_sections,
    window_lines,
)
from kernelwatch.verdict.accuracy import LESS_ACCURATE, MORE_ACCURATE, AccuracyRecord
from kernelwatch.verdict.against_baseline import Baseline
from kernelwatch.verdict.labels import (
    ACCEPTED,
    FASTER,
    HISTORY_REFERENCE,
    LABELS,
    NEW,
    OTHER_GPU,
    REMOVED,
    SAME,
    SLOWER,
    THROTTLED,
    UNCHANGED,
    ReferenceRun,
    Verdict,
)
from kernelwatch.verdict.record import CaseRecord
from tests.plugins.fake_gpu import fake_info


def sections(findings: Findings) -> dict:
    return {s.title: s for s in summary_sections(findings, followed=True, run_id=12, bisect={}, energy_seconds=None)}


def test_accuracy_changes_are_listed_less_accurate_first_and_only_those_in_red_with_how_to_acknowledge():
    findings = Findings(accuracy=[AccuracyRecord(f"s.py::{label.replace(' ', '_')}", 2e-6, 1e-6, verdict=label)
                                  for label in (ACCEPTED, MORE_ACCURATE, SAME, LESS_ACCURATE)])
    lines = sections(findings)["kernelwatch: accuracy changes"].lines
    firsts = [(": ".join(line.split(": ")[:2]), red) for line, red in lines if line.startswith("s.py")]
    assert firsts == [("s.py::less_accurate: less accurate", True), ("s.py::accepted: accepted", False),
                      ("s.py::more_accurate: more accurate", False)]  # `same` is no change
    assert ("  if meant: python -m kernelwatch.history acknowledge 's.py::less_accurate' 12 --reason TEXT",
            False) in lines


def test_nothing_found_is_no_section_and_problems_are_red_after_the_notices():
    assert sections(Findings()) == {}
    titles = list(sections(Findings(notices=["saved"], problems=["disk full"])))
    assert titles == ["kernelwatch", "kernelwatch: errors"]
    errors = sections(Findings(problems=["disk full"]))["kernelwatch: errors"]
    assert errors.red and errors.lines == [("ERROR: disk full", True)]


def test_a_slower_cases_window_is_plain_text_with_its_bisect_line():
    window = {"base": "a" * 40, "head": "b" * 40, "commits": [["c" * 40, "tiles"]], "acceptances": []}
    record = CaseRecord(case="s.py::b", median_s=1.1e-3, verdict=SLOWER, ratio=1.1, window=window)
    bisect = {"s.py::b": "python -m kernelwatch.history bisect s.py::b aaaa..bbbb"}
    (section,) = summary_sections(Findings(records=[record]), followed=True, run_id=3, bisect=bisect,
                                  energy_seconds=None)
    assert section.lines[0] == ("s.py::b: slower x1.100", False) and not section.red
    assert not any(red for _, red in section.lines)  # the failure itself is pytest's red line
    assert ("  bisect: python -m kernelwatch.history bisect s.py::b aaaa..bbbb", False) in section.lines
    assert summary_sections(Findings(records=[record]), followed=False, run_id=3, bisect=bisect,
                            energy_seconds=None) == []  # a run not judged against stored runs follows nothing


# ---- the whole report and the whole summary of a rich session, compared with their reviewed snapshots --------------


GPU = fake_info("GPU-0123abcd")
HISTORY = HISTORY_REFERENCE + "GPU-0123abcd"
TILED, NAIVE, ADD, CUBLAS = ("s.py::test_matmul[tiled-4096]", "s.py::test_matmul[naive-1024]", "s.py::test_add[vec4]",
                             "s.py::test_matmul[cublas-4096]")
PIPELINE, THROTTLED_PIPELINE = "s.py::test_pipeline[chunks=4]", "s.py::test_pipeline[chunks=16]"


def run(number: int, day: int | None, commit: str | None) -> ReferenceRun:
    return ReferenceRun(f"history run {number}", None if day is None else f"2026-12-{day:02d}T03:1{day % 10}:42+00:00",
                        commit)


THREE_RUNS = (run(10, 1, "1" * 40), run(11, 2, "2" * 40), run(12, 3, "3456789abcdef0123456789abcdef0123456789a"))


def commits_window(base: str, head: str, *subjects: str, **fields) -> dict:
    commits = [[f"{i + 1:x}{head[1:]}"[:40], subject] for i, subject in enumerate(subjects)]
    return {"base": base, "head": head, "commits": commits, "acceptances": [], **fields}


def energy(mean: float, watts: float, *, between: bool = True) -> dict:
    return {"joules_per_launch": mean, "joules_per_launch_low": mean * 0.99, "joules_per_launch_high": mean * 1.01,
            "confidence": 0.95, **({"between_runs_low": mean * 0.97, "between_runs_high": mean * 1.03} if between
                                   else {}),
            "active_watts_mean": watts, "idle_baseline_watts": 88.0, "work_per_joule": 120.5,
            "work_per_joule_unit": "GFLOP/J", "sm_clock_mhz_min": 1755, "sm_clock_mhz_max": 1980,
            "temperature_c_before": 41, "temperature_c_after": 57}


def judged(case: str, label: str, ratio: float | None, reason: str, *, references=THREE_RUNS, reference=HISTORY,
           **fields):
    """A verdict against this GPU's history (or `reference`) and the case's record judged by it (with `fields`
    set): 2 x 4096³ FLOP in 10 ms at the reference, 13.7 TFLOP/s."""
    verdict = Verdict(case, label, None if ratio is None else 1e-2, 1e-2 * (ratio or 1), ratio,
                      None if ratio is None else 0.02, reason, p_value=None if ratio is None else 0.0012,
                      reference=reference, reference_runs=len(references) or None, references=tuple(references))
    record = CaseRecord(case=case, median_s=1e-2 * (ratio or 1), flops=2 * 4096**3, ceiling="cuBLAS",
                        ceiling_rate=50e12, timer="cupti concurrent kernel")
    return verdict, dataclasses.replace(record.judged(verdict), **fields)


def phase(name: str, label: str, ratio: float, references, *, fails: bool, reason: str) -> dict:
    return {"phase": name, "label": label, "median_s": 2e-4 * ratio, "reference_median_s": 2e-4, "ratio": ratio,
            "detectable": 0.05, "reason": reason, "fails": fails, "reference_runs": len(references),
            "references": [one.as_dict() for one in references]}


def accuracy(case: str, verdict: str | None, max_error: float, reference_max: float | None, **fields):
    """A correctness check's record as the controller reads it back from JSON (a worker's, or the store's): its
    strings are not the vocabulary's own objects."""
    record = AccuracyRecord(case, max_error, max_error / 10, tolerance_max=1e-4, tolerance_avg=1e-5,
                            shape="4096x4096x4096", input_kind="normal", seed=7, measure="relative", verdict=verdict,
                            reference_max=reference_max, reference_avg=None if reference_max is None else
                            reference_max / 10, **fields)
    return AccuracyRecord.from_dict(json.loads(json.dumps(record.as_dict())))


def from_a_worker(item):
    """A record or verdict as the controller of an xdist run holds it: read back from the JSON a worker sent
    (src/kernelwatch/plugin/xdist.py, import_results), its labels no longer the vocabulary's own strings."""
    fields = json.loads(json.dumps(dataclasses.asdict(item)))
    if isinstance(item, Verdict):
        return Verdict(**{**fields, "references": tuple(ReferenceRun(**one) for one in fields["references"])})
    return type(item)(**fields)


def session() -> tuple[Findings, dict[str, str | None]]:
    """A nightly's findings, as the controller of an xdist run holds them, that reach every part of the report and
    the summary, and the bisect command of each followed case (None: nothing to bisect)."""
    cases = [
        judged(TILED, SLOWER, 1.2345, "23.4% slower (detectable 2.0%, p=0.0012)", energy=energy(2.15, 655.0),
               energy_verdict={"label": "more energy", "reason": "more energy: 1.234x the joules per launch",
                               "fails": True},
               window=commits_window("3456789abcdef0123456789abcdef0123456789a", "f" * 40, "tiles: 64 -> 32",
                             "loads: vectorize", "bump the version", link="https://github.com/o/r/compare/3456...ffff",
                             head_dirty=True)),
        judged(NAIVE, SLOWER, 1.5, "50.0% slower (detectable 2.0%, p=0.0012)",
               references=[run(6, 1, "6" * 40), run(7, None, None)],  # the newest names no commit
               window={"base": None, "head": "e" * 40, "unknown": "the reference runs name no commit"}),
        judged(ADD, ACCEPTED, 1.08, "8.0% slower, accepted",
               window=commits_window("2" * 40, "d" * 40, "add: scalar loads",
                                     acceptances=[["d" * 40, "scalar is simpler"]]),
               accepted_reason="scalar is simpler"),
        judged(CUBLAS, FASTER, 0.9, "10.0% faster (detectable 2.0%, p=0.0012)", energy=energy(1.742, 612.4),
               energy_verdict={"label": "less energy", "reason": "less energy: 0.900x the joules per launch",
                               "fails": False}),
        judged("s.py::test_copy", SAME, 1.001, "within the detectable change", energy=energy(0.0123, 402.0,
                                                                                           between=False)),
        judged("s.py::test_new_kernel", NEW, None, "no stored run of this case", references=(), reference=None),
        judged("s.py::test_other", OTHER_GPU, None, "the reference ran on another GPU", references=()),
        # slower against a baseline file with no window: its failure is pytest's; the report lists no window
        judged("s.py::test_matmul[slower-without-window]", SLOWER, 1.3, "30.0% slower",
               references=[run(5, 1, "5" * 40)],
               reference="baselines/0005_h200.json"),
        judged(PIPELINE, SAME, 1.01, "within the detectable change",
               phases={"host": [4e-4] * 3, "kernel": [5e-4] * 3, "copies": [2e-4] * 3},
               phase_verdicts=[
                   phase("host", SLOWER, 1.41, [run(20, 4, "4" * 40)], fails=True, reason="41% slower host"),
                   phase("kernel", ACCEPTED, 1.1, [run(21, 5, "5" * 40)], fails=False, reason="accepted kernel"),
                   phase("copies", SAME, 1.0, [run(21, 5, "5" * 40)], fails=False, reason="same copies")],
               window=commits_window("4" * 40, "f" * 40, "pipeline: one stream")),
        judged(THROTTLED_PIPELINE, THROTTLED, None, "NVML reported throttling", references=(),
               phases={"copies": [3e-4] * 3},
               phase_verdicts=[phase("copies", ACCEPTED, 1.2, [run(22, 6, "6" * 40)], fails=False,
                                     reason="accepted copies")],
               window=commits_window("6" * 40, "f" * 40, "copies: pinned")),
    ]
    checks = [
        accuracy("s.py::test_correct[more]", MORE_ACCURATE, 1e-6, 2e-6, verdict_reason="max error under the band"),
        accuracy("s.py::test_correct[less]", LESS_ACCURATE, 4e-6, 2e-6, reference="history run 12",
                 verdict_reason="max error 2x the band's top",
                 window=commits_window("3" * 40, "f" * 40, "accumulate in fp16", "revert the fma order")),
        accuracy("s.py::test_correct[accepted]", ACCEPTED, 3e-6, 2e-6, accepted_reason="fp16 accumulation",
                 reference="history run 12", window=commits_window("3" * 40, "f" * 40)),
        accuracy("s.py::test_correct[same]", SAME, 2e-6, 2e-6),
        accuracy("s.py::test_correct[new]", NEW, 9.5e-5, None),
    ]
    findings = Findings(records=[from_a_worker(record) for _, record in cases],
                        verdicts=[from_a_worker(verdict) for verdict, _ in cases],
                        accuracy=checks, notices=["history store: this run is run 42"],
                        problems=["energy not measured: the counter did not move"],
                        cards={TILED: ["#### Why `s.py::test_matmul[tiled-4096]` is slower", "", "1. **spills**: x",
                                       ""],
                               NAIVE: ["#### Why `s.py::test_matmul[naive-1024]` is slower", "", "No card: no ref",
                                       ""]})
    bisect = {TILED: "python -m kernelwatch.history bisect 's.py::test_matmul[tiled-4096]' 3456789abcde..ffffffffffff",
              NAIVE: None,
              ADD: "python -m kernelwatch.history bisect 's.py::test_add[vec4]' 222222222222..dddddddddddd"}
    return findings, bisect


def baseline() -> Baseline:
    ran = {case: CaseRecord(case=case, median_s=1e-3) for case in (TILED, CUBLAS)}
    gone = {case: CaseRecord(case=case, median_s=1e-3) for case in ("s.py::test_renamed[b]", "s.py::test_renamed[a]")}
    return Baseline(Path("baselines/0005_h200.json"), "GPU-0123abcd", {**ran, **gone})


def test_the_stored_report_of_a_rich_session_is_its_reviewed_snapshot(snapshot):
    findings, bisect = session()
    written = stored_report(findings, GPU, baseline(), 42, bisect)
    assert written.counts == "3 slower, 1 faster, 1 accepted, 1 throttled, 1 new, 1 other GPU, 2 same"
    assert written.notices == ["2 case(s) of the baseline did not run in this session, e.g. s.py::test_renamed[a]"]
    assert written.text == snapshot


def test_the_stored_report_without_a_baseline_or_a_run_id_and_of_accuracy_alone(snapshot):
    findings, bisect = session()
    written = stored_report(findings, GPU, None, None, bisect)
    assert written.notices == [] and "vs no baseline\n" in written.text
    # without a run id, the acknowledge command says where the run's number goes
    assert ("- if meant: a commit with the trailer `Accept-Slowdown: REASON` (or `Accept-Slowdown: cases=PATTERN "
            "REASON`), or `python -m kernelwatch.history acknowledge 's.py::test_matmul[tiled-4096]' RUN --reason "
            "TEXT`") in written.text.splitlines()
    checks_only = stored_report(Findings(accuracy=findings.accuracy), GPU, None, 42, {})
    assert checks_only.counts == "accuracy: 1 less accurate, 1 more accurate, 1 accepted, 1 new, 1 same"
    assert checks_only.text == snapshot


def rendered(sections) -> str:
    """The terminal summary's sections as the terminal shows them, a red line marked `!`."""
    return "\n".join(f"{'=' * 8} {section.title}{' (red)' if section.red else ''}\n"
                     + "\n".join(f"{'!' if red else ' '} {line}" for line, red in section.lines)
                     for section in sections) + "\n"


def test_the_terminal_summary_of_a_rich_session_is_its_reviewed_snapshot(snapshot):
    findings, bisect = session()
    assert rendered(summary_sections(findings, followed=True, run_id=42, bisect=bisect,
                                     energy_seconds=12.34)) == snapshot


def test_the_terminal_summary_without_a_run_id_or_energy_time_and_of_a_run_that_compared_nothing(snapshot):
    findings, bisect = session()
    summary = rendered(summary_sections(findings, followed=True, run_id=None, bisect=bisect, energy_seconds=None))
    assert "energy of 3 case(s) measured in 0.0 s of this run (idle power included)" in summary
    assert "acknowledge 's.py::test_correct[less]'" not in summary  # no run to acknowledge
    assert summary == snapshot
    unfollowed = summary_sections(findings, followed=False, run_id=42, bisect=bisect, energy_seconds=1.0)
    assert [section.title for section in unfollowed] == [
        "kernelwatch: accuracy changes", "kernelwatch: energy per launch", "kernelwatch", "kernelwatch: errors"]


def test_the_ref_report_of_a_rich_session_is_its_reviewed_snapshot(snapshot):
    findings, _ = session()
    verdicts = [Verdict(case, label, 1e-3, 1e-3 * ratio, ratio, 0.02, reason, ci_low=ratio - 0.01,
                        ci_high=ratio + 0.01, reference="origin/main")
                for case, label, ratio, reason in [
                    (TILED, SLOWER, 1.2, "20.0% slower (interval 1.190-1.210)"),
                    (ADD, ACCEPTED, 1.08, "8.0% slower, accepted"), (CUBLAS, FASTER, 0.9, "10.0% faster"),
                    ("s.py::test_copy", UNCHANGED, 1.0, "the same machine code and launch"),
                    ("s.py::test_gone", REMOVED, 1.0, "only in the ref")]]
    ref = types.SimpleNamespace(ref="origin/main", tree=types.SimpleNamespace(sha="0123456789abcdef"),
                                accepted="scalar is simpler", verdicts=verdicts,
                                cards={TILED: ["#### Why tiled is slower", "", "1. **occupancy**: 8 -> 4", ""],
                                       ADD: ["#### Why add is slower", "", "No card: a library kernel", ""]})
    written = ref_report(findings, ref, GPU)
    assert written.counts == "against origin/main (0123456789): 1 slower, 1 faster, 1 accepted, 1 removed, 1 unchanged"
    assert written.notices == []
    assert written.text == snapshot
    # the note of an accepted slowdown is the report's only where a case was accepted
    unaccepted = types.SimpleNamespace(**{**vars(ref), "verdicts": verdicts[:1] + verdicts[2:], "cards": {}})
    assert "Slowdown accepted" not in ref_report(Findings(), unaccepted, GPU).text
    nothing = types.SimpleNamespace(**{**vars(ref), "verdicts": [], "cards": {}})
    assert ref_report(Findings(), nothing, GPU).counts == "against origin/main (0123456789): no cases"


def test_only_a_slower_case_or_a_slower_phase_nobody_accepted_fails():
    for label in LABELS:
        assert is_failing_record(CaseRecord(case="c", median_s=1.0, verdict=label)) is (label == SLOWER), label
    accepted_phase = phase("kernel", ACCEPTED, 1.1, [], fails=False, reason="")
    slower_phase = phase("host", SLOWER, 1.4, [], fails=True, reason="")
    assert not is_failing_record(CaseRecord(case="c", median_s=1.0, verdict=THROTTLED, phase_verdicts=[accepted_phase]))
    assert is_failing_record(CaseRecord(case="c", median_s=1.0, verdict=SAME,
                                        phase_verdicts=[accepted_phase, slower_phase]))


def test_the_followed_cases_are_the_failing_ones_first_each_group_by_name():
    findings, _ = session()
    assert [record.case for record in followed_records(findings)] == [
        NAIVE, TILED, PIPELINE, ADD, THROTTLED_PIPELINE]


def test_the_reference_words_name_every_run_and_the_newest_ones_minute_and_commit():
    assert reference_words([one.as_dict() for one in THREE_RUNS]) == (
        "history run 10, history run 11, history run 12 (newest: 2026-12-03 03:13 UTC, commit 3456789abcde)")
    assert reference_words([run(3, None, None).as_dict()]) == "history run 3 (newest: commit unknown)"
    assert reference_words([]) == "no stored run"


def test_the_summarys_options_and_a_windows_form_are_named_only():
    parameters = list(inspect.signature(summary_sections).parameters.values())
    assert [p.kind for p in parameters[1:]] == [inspect.Parameter.KEYWORD_ONLY] * 4
    assert inspect.signature(window_lines).parameters["markdown"].kind == inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError):
        summary_sections(Findings(), True, 3, {}, None)  # noqa: FBT003

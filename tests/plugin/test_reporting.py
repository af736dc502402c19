"""The plugin's end-of-run writing, called directly (a --kernelwatch-compare-ref run needs a GPU, a failing store a
pytest run per case): the --kernelwatch-compare-ref report's accepted-slowdown note and title, and a store that
refuses the run's record."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import pytest

from kernelwatch.plugin.recording import record_session
from kernelwatch.plugin.reporting import terminal_summary, write_ref_report
from kernelwatch.storage.history import HistoryError
from kernelwatch.verdict.labels import Verdict
from kernelwatch.verdict.record import CaseRecord
from tests.plugins.fake_gpu import fake_info
from tests.support.suite_states import state_with


def suite_state(**fields):
    """A process's state on the fake GPU, with `fields` set."""
    return state_with(**{"gpu": fake_info("GPU-test"), **fields})


def ref_state(tmp_path, labels, accepted):
    verdicts = [Verdict(f"suites/s.py::test_k[{i}]", label, 1e-3, 1.1e-3, 1.1, 0.02, "10% slower")
                for i, label in enumerate(labels)]
    ref = types.SimpleNamespace(ref="origin/main", tree=types.SimpleNamespace(sha="0123456789abcdef"),
                                accepted=accepted, verdicts=verdicts, removed_kernels=lambda: [], cards={})
    return suite_state(report_path=tmp_path / "report.md", ref=ref)


@pytest.mark.parametrize(("labels", "accepted", "noted", "counts"), [
    (["accepted", "same"], "the new tile trades 1024³ for 4096³", True, "1 accepted, 1 same"),
    (["same", "same"], "the new tile trades 1024³ for 4096³", False, "2 same"),  # nothing accepted in this run
    (["slower"], None, False, "1 slower"),
    ([], None, False, "no cases"),
])
def test_a_ref_report_notes_an_accepted_slowdown_only_where_a_case_was_accepted(tmp_path, labels, accepted, noted,
                                                                                   counts):
    state = ref_state(tmp_path, labels, accepted)
    write_ref_report(state)
    text = (tmp_path / "report.md").read_text()
    assert ("**Slowdown accepted**: the new tile trades 1024³ for 4096³" in text) is noted
    assert text.startswith("# kernelwatch: this tree against `origin/main` (0123456789) on Fake GPU")
    assert state.findings.notices == [f"against origin/main (0123456789): {counts}; report: {tmp_path / 'report.md'}"]


def test_a_ref_whose_library_cannot_name_its_kernels_still_gets_its_report_and_a_notice_why_none_is_removed(tmp_path):
    from kernelwatch.ab.library import LibraryError

    state = ref_state(tmp_path, ["same"], None)

    def cannot():
        raise LibraryError("its kernel library (kernelwatch_base_kernels) has no kernel_names")

    state.code.ref.removed_kernels = cannot
    write_ref_report(state)
    assert "| same |" in (tmp_path / "report.md").read_text()
    assert state.findings.notices[0] == ("removed kernels not looked for: its kernel library (kernelwatch_base_kernels) has "
                                "no kernel_names")


def test_a_ref_report_gives_the_slower_cases_cards_in_the_order_of_their_names_after_the_table(tmp_path):
    state = ref_state(tmp_path, ["slower", "slower"], None)
    state.code.ref.cards = {"suites/s.py::test_k[1]": ["#### card of k[1]", "line b"],
                       "suites/s.py::test_k[0]": ["#### card of k[0]", "line a"]}
    write_ref_report(state)
    text = (tmp_path / "report.md").read_text()
    cards = text[text.index("\n## Why the slower cases are slower\n\n"):]
    assert cards.splitlines()[3:7] == ["#### card of k[0]", "line a", "#### card of k[1]", "line b"]
    assert text.index("test_k[1]`: 10% slower") < text.index("## Why the slower cases are slower")


class RefusingStore:
    safe_url = "sqlite:///history.sqlite"

    def __init__(self):
        self.closed = False

    def record_run(self, document, outcome, profile, other_failures):
        raise HistoryError("disk full")

    def close(self):
        self.closed = True


def session_state(store, records):
    return suite_state(store=store, records=records, profile=types.SimpleNamespace(name="nightly"))


def test_a_run_without_timed_cases_is_not_recorded():
    store = RefusingStore()  # would be a problem if asked
    state = session_state(store, records=[])
    record_session(types.SimpleNamespace(_benchmarksession=object()), state)
    assert (state.findings.problems, state.findings.notices, store.closed) == ([], [], False)


def test_a_store_that_refuses_the_run_is_a_problem_of_the_run_and_is_closed(monkeypatch):
    import kernelwatch.plugin.recording as history

    monkeypatch.setattr(history, "run_document", lambda config: {"benchmarks": []})
    store = RefusingStore()
    state = session_state(store, records=[CaseRecord(case="suites/s.py::test_k[1]", median_s=1e-3)])
    record_session(types.SimpleNamespace(_benchmarksession=object()), state)
    assert state.findings.problems == ["history store: this run was not recorded: disk full"]
    assert state.findings.notices == [] and store.closed


def test_the_references_line_counts_own_history_baseline_and_none_apart():
    from kernelwatch.report.markdown import references_line
    from kernelwatch.verdict.labels import HISTORY_REFERENCE

    def judged(reference):
        return Verdict("c", "same", 1e-3, 1e-3, 1.0, 0.02, "", reference=reference)

    verdicts = [judged(f"{HISTORY_REFERENCE}GPU-a")] * 3 + [judged("baseline 0005")] * 2 + [judged(None)]
    assert references_line(verdicts) == ("References: 3 cases against this GPU's history, 2 against the baseline, "
                                         "1 without a reference")


@pytest.mark.parametrize(("gpu", "workers", "lines"), [
    (None, 2, []),  # no GPU: nothing is timed, whatever -n says
    (fake_info("GPU-test"), 2, ["kernelwatch: timer: chosen by each xdist worker (each result's 'timer' says which)"]),
    (fake_info("GPU-test"), None, []),  # one process and no timed case collected: no timer was made
])
def test_the_collection_line_names_the_timer_only_where_one_times(monkeypatch, gpu, workers, lines):
    import kernelwatch.plugin as plugin

    monkeypatch.setattr(plugin, "worker_id", lambda: None)  # the controller, also where these tests run under -n

    state = suite_state(gpu=gpu)
    config = types.SimpleNamespace(stash={plugin.STATE: state}, option=types.SimpleNamespace(numprocesses=workers))
    assert plugin.pytest_report_collectionfinish(config, items=[]) == lines


def test_the_stored_report_names_how_many_baseline_cases_did_not_run_and_the_first_of_them(tmp_path):
    from kernelwatch.plugin.reporting import write_stored_report
    from kernelwatch.verdict.against_baseline import Baseline

    ran = Verdict("suites/s.py::test_k[b]", "same", 1e-3, 1e-3, 1.0, 0.02, "")
    baseline = Baseline(tmp_path / "0005.json", None, dict.fromkeys(
        ["suites/s.py::test_k[a]", "suites/s.py::test_k[b]", "suites/s.py::test_k[c]", "suites/s.py::test_k[d]"]))
    state = suite_state(report_path=tmp_path / "report.md", baseline=baseline, verdicts=[ran])
    write_stored_report(state)
    assert state.findings.notices[0] == "3 case(s) of the baseline did not run in this session, e.g. suites/s.py::test_k[a]"


def test_history_reads_the_newest_20_reference_runs_of_the_gpu_oldest_first_without_throttled_ones(tmp_path):
    # through the real store and the plugin's own reading (read_history), not a copy of its line
    from kernelwatch.plugin.recording import read_history
    from kernelwatch.storage.history import open_store
    from maintainers.support.synthetic_history import GPU_A, case_name, make_document

    store = open_store(f"sqlite:///{tmp_path / 'h.sqlite'}")
    for index in range(23):
        store.record_run(make_document(index, throttled=index == 21), outcome="passed", profile="nightly")
    state = suite_state(profile=types.SimpleNamespace(name="nightly"), store=store,
                        gpu=fake_info(GPU_A))
    read_history(state)
    names = [result.run for result in state.stored.own_history[case_name(0)]]
    # the newest 20 of 23 (runs 4-23), oldest first, the throttled run 22 left out
    assert names == [f"history run {n}" for n in range(4, 24) if n != 22]
    assert state.findings.problems == []
    store.close()


@pytest.mark.parametrize(("uuid", "named"), [("GPU-test", "GPU-test"), (None, "(no UUID: NVML missing)")])
def test_the_report_header_names_the_gpu_and_its_baselines_folder(uuid, named):
    import dataclasses

    import kernelwatch.plugin as plugin
    gpu = dataclasses.replace(fake_info("GPU-test"), uuid=uuid)
    state = suite_state(gpu=gpu)
    config = types.SimpleNamespace(stash={plugin.STATE: state}, getoption=lambda name: "nightly",
                                   rootpath=Path("/project"), getini=lambda name: "")
    first, second, third = plugin.pytest_report_header(config)
    assert first.startswith(f"kernelwatch: Fake GPU 9000 {named} on fakehost (CUDA device 0, 0000:00:00.0, sm_90, ")
    assert second == f"kernelwatch: profile nightly, baselines in {Path('/project/baselines/Fake_GPU_9000')}"
    # the project names no kernel library: the header says what goes without it, before anything is timed
    assert third == ("kernelwatch: the project names no kernel library (the ini key kernelwatch_kernels; "
                     "docs/kernel-library.md): no machine-code identity, cause cards nor --kernelwatch-compare-ref; "
                     "timing, verdicts and energy as ever")


def test_the_report_header_names_the_kernel_library_and_where_it_lies():
    import kernels
    import kernelwatch.plugin as plugin
    from kernelwatch.ab.library import Library

    config = types.SimpleNamespace(getoption=lambda name: "nightly", rootpath=Path("/project"), getini=lambda name: "")
    for library, said in ((Library("kernels", kernels, "kernels"), "kernels (kernels)"),
                          (Library("kernels", kernels, None, "/project is in no git repository: ..."),
                           "kernels (/project is in no git repository: ...)")):
        config.stash = {plugin.STATE: suite_state(library=library)}
        assert plugin.pytest_report_header(config)[2] == f"kernelwatch: kernel library {said}"


def test_a_store_that_fails_to_read_the_history_is_a_problem_of_the_run_and_is_let_go(tmp_path):
    # a real store that breaks between configure (opened) and session start (read): its runs table gone
    import sqlite3

    from kernelwatch.plugin.recording import read_history
    from kernelwatch.storage.history import open_store
    from maintainers.support.synthetic_history import GPU_A

    path = tmp_path / "h.sqlite"
    store = open_store(f"sqlite:///{path}")
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE runs")
    state = suite_state(profile=types.SimpleNamespace(name="nightly"), store=store, gpu=fake_info(GPU_A))
    read_history(state)  # no exception: the run goes on without the store
    assert state.stored.store is None and state.stored.own_history == {}
    assert state.findings.problems == [f"history store: cannot read the history store sqlite:///{path}: no such table: runs"]


def test_the_stored_report_prints_a_slower_cases_cause_card_under_its_window(tmp_path):
    from kernelwatch.plugin.reporting import write_stored_report

    case = "suites/s.py::test_k[a]"
    slow = Verdict(case, "slower", 1e-3, 1.1e-3, 1.1, 0.015, "10% slower")
    record = CaseRecord(case=case, median_s=1.1e-3, verdict="slower", ratio=1.1, window={"unknown": "no git"})
    card = [f"#### Why `{case}` is slower", "", "1. **barriers**: BAR in the code 2 -> 34", ""]
    state = suite_state(report_path=tmp_path / "report.md", verdicts=[slow], records=[record], cards={case: card},
                        profile=types.SimpleNamespace(name="nightly"))
    write_stored_report(state)
    text = (tmp_path / "report.md").read_text()
    window_at, card_at = text.index(f"### `{case}`: slower"), text.index(f"#### Why `{case}` is slower")
    assert window_at < card_at and "1. **barriers**: BAR in the code 2 -> 34" in text


def test_the_collection_line_names_cupti_or_held_events_and_a_gpuless_header_why(monkeypatch):
    import kernelwatch.plugin as plugin

    cupti = types.SimpleNamespace(uses_cupti=True, note="")
    events = types.SimpleNamespace(uses_cupti=False, note="CUPTI is not available")
    state = suite_state(gpu=fake_info("GPU-test"))
    config = types.SimpleNamespace(stash={plugin.STATE: state}, option=types.SimpleNamespace(numprocesses=2))
    state.measuring.timer = cupti
    assert plugin.pytest_report_collectionfinish(config, items=[]) == [
        "kernelwatch: timer: kernel time from CUPTI activity records (first activity start to last activity end of "
        "a run; kernels of 20 µs or more that run one at a time recorded with the KERNEL kind, the rest with "
        "CONCURRENT_KERNEL)"]
    state.measuring.timer = events
    assert plugin.pytest_report_collectionfinish(config, items=[]) == [
        "kernelwatch: timer: held CUDA events: CUPTI is not available"]
    gpuless = suite_state(gpu=None)
    gpuless.device = types.SimpleNamespace(why_not="no CUDA driver")
    assert plugin.pytest_report_header(types.SimpleNamespace(stash={plugin.STATE: gpuless})) == [
        "kernelwatch: GPU tests will be skipped: no CUDA driver"]


def _followed(case: str, label: str) -> CaseRecord:
    return CaseRecord(case=case, median_s=1.1e-3, verdict=label, ratio=1.1, window={"unknown": "no git"})


def test_the_followed_cases_are_the_slower_and_accepted_ones_the_failing_first_then_by_name():
    from kernelwatch.report.session_report import followed_records

    records = [_followed("s.py::a", "accepted"), _followed("s.py::d", "slower"), _followed("s.py::c", "same"),
               _followed("s.py::b", "slower")]
    state = suite_state(records=records)
    assert [r.case for r in followed_records(state.findings)] == ["s.py::b", "s.py::d", "s.py::a"]


class RecordingTerminal:
    """pytest's terminal reporter as terminal_summary uses it: each section and line with its colour."""

    def __init__(self):
        self.lines = []

    def section(self, title, **markup):
        self.lines.append((f"== {title}", markup))

    def write_line(self, line, **markup):
        self.lines.append((line, markup))


def test_the_terminal_summary_says_skipped_gpu_tests_in_yellow_and_the_runs_errors_in_red():
    state = suite_state(skipped_gpu_tests=3, notices=["saved"], problems=["disk full"])
    state.device = types.SimpleNamespace(why_not="no CUDA driver")
    terminal = RecordingTerminal()
    terminal_summary(terminal, state)
    assert terminal.lines == [
        ("kernelwatch: 3 GPU tests skipped: needs a CUDA GPU: no CUDA driver. --kernelwatch-require-gpu (or "
         "KERNELWATCH_REQUIRE_GPU=1) makes that an error", {"yellow": True}),
        ("== kernelwatch", {}), ("saved", {}),
        ("== kernelwatch: errors", {"red": True}), ("ERROR: disk full", {"red": True})]


def test_the_terminal_summary_prints_the_slower_cases_windows_as_plain_text_and_each_measured_energy():
    block = {"joules_per_launch": 2.0, "joules_per_launch_low": 1.9, "joules_per_launch_high": 2.1,
             "confidence": 0.95, "active_watts_mean": 300.4}
    listed = {"base": "a" * 40, "head": "b" * 40, "commits": [["c" * 40, "tiles"]], "acceptances": []}
    more = dataclasses.replace(_followed("s.py::b", "slower"), energy=block, window=listed,
                               energy_verdict={"label": "more energy", "fails": True, "reason": "1.05x"})
    plain = CaseRecord(case="s.py::a", median_s=1e-3, energy=block)
    state = suite_state(records=[more, plain], comparing=True, profile=types.SimpleNamespace(name="nightly"),
                        energy_meter=types.SimpleNamespace(seconds=6.0))
    terminal = RecordingTerminal()
    terminal_summary(terminal, state)
    lines = [line for line, markup in terminal.lines]
    window = lines[lines.index("== kernelwatch: slower cases, their reference runs and the commits since") + 1:
                   lines.index("== kernelwatch: energy per launch")]
    assert window[0] == "s.py::b: slower x1.100" and not any("`" in line for line in window)  # no markdown
    # the window's bisect line, for the run's profile
    assert f"  bisect: python -m kernelwatch.history bisect s.py::b {'a' * 12}..{'b' * 12} --profile nightly" in window
    assert terminal.lines[-3:] == [
        ("s.py::a: 2 J (95% 1.9-2.1, ±5.0% this run), 300 W", {}),
        ("s.py::b: 2 J (95% 1.9-2.1, ±5.0% this run), 300 W, more energy", {"red": True}),
        ("energy of 2 case(s) measured in 6.0 s of this run (idle power included)", {})]


def test_a_ref_report_notes_a_slowdown_accepted_under_a_label_equal_to_the_vocabularys(tmp_path):
    # a label equal to, not the object of, the vocabulary's "accepted": the note must not hang on which object
    state = ref_state(tmp_path, [], "the new tile")
    state.code.ref.verdicts = [Verdict("suites/s.py::test_k[0]", "".join(["accep", "ted"]), 1e-3, 1.1e-3, 1.1, 0.02, "")]
    write_ref_report(state)
    assert "**Slowdown accepted**: the new tile" in (tmp_path / "report.md").read_text()

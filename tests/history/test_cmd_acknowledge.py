"""`acknowledge` refuses a case and run where nothing changed (no step starts there, the case did not fail there),
on each backend."""

from __future__ import annotations

from kernelwatch.history.cli import main
from kernelwatch.storage.history import open_store
from maintainers.support.synthetic_history import STEP_AT, STEPPED_CASE, case_name, make_document
from maintainers.support.synthetic_history import record_stepped_history as record_history
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)


def _failed_run(index: int) -> dict:
    """A run the nightly failed: case 1 judged slower, cases 0 and 2 the same as their references."""
    doc = make_document(index)
    for number, bench in enumerate(doc["benchmarks"]):
        bench["extra_info"]["verdict"] = "slower" if number == 1 else "same"
    return doc


def _acknowledge(url: str, case: str, run_id: int) -> int:
    return main(["acknowledge", case, str(run_id), "--reason", "intended", "--history", url])


def test_acknowledge_refuses_a_run_where_the_case_neither_failed_nor_starts_a_step(history_url, capsys):
    ids = record_history(history_url)
    stepped = case_name(STEPPED_CASE)
    for case, run_id, where in ((stepped, ids[3], f"its steps start at runs {ids[STEP_AT]}"),
                                (case_name(0), ids[STEP_AT], "it has no step and never failed")):
        assert _acknowledge(history_url, case, run_id) == 1
        err = capsys.readouterr().err
        assert err == (f"error: run {run_id} holds {case}, but the case neither failed there nor does a step of it "
                       f"start there: nothing to acknowledge ({where}; `changes` lists them)\n")
    with open_store(history_url) as store:
        assert store.acknowledgements() == {}
    assert _acknowledge(history_url, stepped, ids[STEP_AT]) == 0  # the first run after the step


def test_acknowledge_takes_a_run_where_the_case_failed_and_names_the_failures_elsewhere(history_url, capsys):
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(3)]
        ids.append(store.record_run(_failed_run(3), outcome="failed", profile="nightly", other_failures=0))
    assert _acknowledge(history_url, case_name(1), ids[2]) == 1
    assert f"(it failed at runs {ids[3]}; `changes` lists them)" in capsys.readouterr().err
    assert _acknowledge(history_url, case_name(1), ids[3]) == 0


def test_the_refusal_lists_six_failed_runs_and_counts_the_rest(history_url, capsys):
    for failures, listed in ((6, "{0}, {1}, {2}, {3}, {4}, {5}"), (8, "{0}, {1}, {2}, {3}, {4}, {5} and 2 more")):
        with open_store(history_url) as store:
            for run in store.runs():
                store.remove_run(run.id, reason="the next story")
            start = 100 * failures
            failed = [store.record_run(_failed_run(start + i), outcome="failed", profile="nightly", other_failures=0)
                      for i in range(failures)]
            passed = store.record_run(make_document(start + failures), outcome="passed", profile="nightly")
        assert _acknowledge(history_url, case_name(1), passed) == 1
        assert f"(it failed at runs {listed.format(*failed)}; `changes` lists them)" in capsys.readouterr().err

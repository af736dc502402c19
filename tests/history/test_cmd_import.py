"""`import` of a failed run keeps each case's own outcome as the plugin records it (where it is told the run's other
failures), on each backend."""

from __future__ import annotations

import pytest

from kernelwatch.history.cli import main
from kernelwatch.storage.history import open_store
from maintainers.support.synthetic_history import GPU_A, case_name, make_document, write_document
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)


def _failed_run(index: int = 1) -> dict:
    """A run the nightly failed: case 1 judged slower, cases 0 and 2 the same as their references."""
    doc = make_document(index)
    for number, bench in enumerate(doc["benchmarks"]):
        bench["extra_info"]["verdict"] = "slower" if number == 1 else "same"
    return doc


def _references(url: str) -> dict[str, list[int]]:
    with open_store(url) as store:
        found = store.reference_history([GPU_A], profile="nightly", limit_runs=5)
    return {case: [entry.run_id for entry in entries] for case, entries in sorted(found.items())}


@pytest.mark.parametrize("other_failures, references", [
    (["--other-failures", "0"], {case_name(0): [1], case_name(2): [1]}),  # the plugin's own record of such a run
    (["--other-failures", "2"], {}),  # a correctness test failed too: no case is a reference
    ([], {}),  # not known: none either, and the import says how to tell it
])
def test_a_failed_run_imported_keeps_its_cases_own_outcomes(history_url, tmp_path, capsys, other_failures,
                                                            references):
    write_document(tmp_path / "runs", 1, _failed_run())
    assert main(["import", str(tmp_path / "runs"), "--outcome", "failed", *other_failures,
                 "--history", history_url]) == 0
    assert _references(history_url) == references
    out = capsys.readouterr().out
    assert ("its other failures unknown: none of its cases is a reference (--other-failures 0" in out) == (
        not other_failures)


def test_an_import_with_no_other_failure_reads_back_as_the_plugins_record_of_the_same_run(tmp_path, capsys):
    write_document(tmp_path / "runs", 1, _failed_run())
    imported, recorded = f"sqlite:///{tmp_path / 'imported.sqlite'}", f"sqlite:///{tmp_path / 'recorded.sqlite'}"
    assert main(["import", str(tmp_path / "runs"), "--outcome", "failed", "--other-failures", "0",
                 "--history", imported]) == 0
    with open_store(recorded) as store:
        store.record_run(_failed_run(), outcome="failed", profile="nightly", other_failures=0)
    with open_store(imported) as one, open_store(recorded) as other:
        assert one.case_series() == other.case_series()
    assert _references(imported) == _references(recorded)


def test_a_failed_run_that_no_case_failed_cannot_have_no_other_failure(history_url, tmp_path, capsys):
    write_document(tmp_path / "runs", 1, make_document(1))  # no verdict failed it
    assert main(["import", str(tmp_path / "runs"), "--outcome", "failed", "--other-failures", "0",
                 "--history", history_url]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none of this run's cases failed on one" in err
    assert _references(history_url) == {}


@pytest.mark.parametrize("argv", [["--outcome", "passed", "--other-failures", "1"], ["--other-failures", "-1"],
                                  ["--outcome", "failed", "--other-failures", "some"]])
def test_other_failures_of_a_passed_run_or_no_count_is_a_usage_error_before_any_store_is_made(argv, tmp_path,
                                                                                              capsys):
    write_document(tmp_path / "runs", 1, make_document(1))
    with pytest.raises(SystemExit) as exited:
        main(["import", str(tmp_path / "runs"), *argv, "--history", str(tmp_path / "h.sqlite")])
    assert exited.value.code == 2 and capsys.readouterr().err.startswith("usage: ")
    assert not (tmp_path / "h.sqlite").exists()

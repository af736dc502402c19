"""`remove-run RUN --reason TEXT`: a run that should not be there taken out, with its cases and acknowledgements,
its removal logged in the store (`runs --removed`), on each backend."""

from __future__ import annotations

import sqlite3

import pytest
import sqlalchemy as sa

from kernelwatch.history.cli import main
from kernelwatch.storage.history import HistoryError, open_store
from kernelwatch.storage.history.documents import case_rows, run_row
from kernelwatch.storage.history.schema import CASES, RUNS
from maintainers.support.synthetic_history import GPU_A, case_name, make_document
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)


def test_a_removed_run_is_gone_with_its_cases_and_acknowledgements_and_its_removal_is_logged(history_url, capsys):
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(3)]
        store.acknowledge(case_name(1), ids[1], reason="meant")
    assert main(["remove-run", str(ids[1]), "--reason", "  the timer was broken  ", "--who", "alice",
                 "--history", history_url]) == 0
    out, commit = capsys.readouterr().out, f"{1:040x}"
    assert out.startswith(f"removed run {ids[1]} (2026-12-01 01:00:00 UTC, commit {commit[:10]}, NVIDIA H200, "
                          f"3 cases, 1 acknowledgement) from ")
    assert out.rstrip().endswith(": the timer was broken; logged as removal 1 (`runs --removed`)")
    with open_store(history_url) as store:
        assert [run.id for run in store.runs()] == [ids[2], ids[0]]
        assert store.acknowledgements() == {}
        assert all(point.run_id != str(ids[1]) for points in store.case_series().values() for point in points)
        with store.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(CASES)).scalar() == 6
        (removal,) = store.removals()
        assert (removal.run_id, removal.reason, removal.who) == (ids[1], "the timer was broken", "alice")
        assert removal.run["case_count"] == 3 and removal.run["commit"] == commit
        assert store.record_run(make_document(3), outcome="passed", profile="nightly") == ids[2] + 1  # never reused
        assert store.record_run(make_document(1), outcome="passed", profile="nightly") == ids[2] + 2  # again
    assert main(["runs", "--removed", "--history", history_url]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["removal", "removed", "(UTC)"]
    assert row.split()[0] == "1" and "alice" in row and row.endswith("the timer was broken")


def test_a_run_that_broke_changes_and_site_before_runs_were_checked_is_removed_and_they_work_again(history_url,
                                                                                                   tmp_path, capsys):
    # a run of samples of 1e308 s, stored as the store took it before issue 45: its median is infinite
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(2)]
        broken = make_document(2)
        broken["benchmarks"][0]["stats"]["data"] = [1e308] * 4
        with store.engine.begin() as conn:
            run_id = conn.execute(sa.insert(RUNS).values(run_row(broken, outcome="passed", profile="nightly",
                                                                 label=None, source=None))).inserted_primary_key[0]
            conn.execute(sa.insert(CASES), [{**case, "run_id": run_id} for case in case_rows(broken)])
    with pytest.raises(ValueError, match="median_s must be a positive number of seconds, got inf"):
        main(["changes", "--history", history_url])
    assert main(["remove-run", str(run_id), "--reason", "samples of 1e308 s", "--history", history_url]) == 0
    assert main(["changes", "--history", history_url]) == 0
    assert main(["site", str(tmp_path / "site"), "--history", history_url]) == 0
    assert f"removed run {run_id} " in capsys.readouterr().out and run_id == ids[-1] + 1


@pytest.mark.parametrize("argv, words", [
    (["remove-run", "9", "--reason", "x"], "error: there is no run 9 in the history store"),
    (["remove-run", "1", "--reason", "   "], "error: a removal needs a reason: say why the run should not be there"),
])
def test_removing_what_is_not_there_or_without_a_reason_is_one_sentence_and_removes_nothing(history_url, capsys,
                                                                                            argv, words):
    with open_store(history_url) as store:
        store.record_run(make_document(1), outcome="passed", profile="nightly")
    assert main([*argv, "--history", history_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith(words) and err.count("\n") == 1
    with open_store(history_url) as store:
        assert len(store.runs()) == 1 and store.removals() == []


def test_a_removal_without_its_reason_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["remove-run", "1"])
    assert exited.value.code == 2 and "--reason" in capsys.readouterr().err


def test_a_store_with_no_removal_says_so(history_url, capsys):
    with open_store(history_url) as store:
        store.record_run(make_document(1), outcome="passed", profile="nightly")
    assert main(["runs", "--removed", "--history", history_url]) == 0
    assert capsys.readouterr().out.startswith("no run was removed from ")


def test_a_removal_is_refused_on_a_store_that_does_not_exist(tmp_path, capsys):
    with pytest.raises(HistoryError, match="there is no history store"):
        open_store(str(tmp_path / "none.sqlite"), create=False)
    assert main(["remove-run", "1", "--reason", "x", "--history", str(tmp_path / "none.sqlite")]) == 1
    assert not (tmp_path / "none.sqlite").exists()


def test_a_removal_counts_the_acknowledgements_at_its_run_alone_and_keeps_the_others(history_url):
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(3)]
        store.acknowledge(case_name(1), ids[1], reason="meant")
        store.acknowledge(case_name(1), ids[1], reason="meant, said again")  # every acknowledgement is kept
        store.acknowledge(case_name(0), ids[2], reason="another run's")
        removal = store.remove_run(ids[1], reason="broken timer", who="alice")
        assert removal.run == {"started_at": "2026-12-01 01:00:00", "commit": f"{1:040x}", "branch": "main",
                               "profile": "nightly", "gpu_model": "NVIDIA H200", "gpu_uuids": [GPU_A],
                               "host": "synthetic-host", "outcome": "passed", "label": None, "source": None,
                               "case_count": 3, "acknowledgements": 2}
        assert store.acknowledgements() == {(case_name(0), ids[2]): "another run's"}
        assert store.remove_run(ids[0], reason="unacknowledged", who="bob").run["acknowledgements"] == 0
        assert [run.id for run in store.runs()] == [ids[2]]
        assert [(r.run_id, r.who) for r in store.removals()] == [(ids[0], "bob"), (ids[1], "alice")]


@pytest.mark.parametrize("amend", ["remove_run", "acknowledge"])
def test_an_amendment_is_in_the_sqlite_file_alone_once_the_store_closes_while_another_reader_holds_it(tmp_path, amend):
    # a cache step keeps history.sqlite alone: the amendment must not stay behind in history.sqlite-wal, which
    # SQLite itself folds into the file only when its last connection closes (here a reader still holds it)
    path = tmp_path / "history.sqlite"
    with open_store(f"sqlite:///{path}") as store:
        ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(2)]
    reader = sqlite3.connect(path)
    try:
        assert reader.execute("SELECT count(*) FROM runs").fetchone() == (2,)
        with open_store(f"sqlite:///{path}") as store:
            if amend == "remove_run":
                store.remove_run(ids[0], reason="broken timer")
            else:
                store.acknowledge(case_name(0), ids[1], reason="meant")
        assert path.with_name("history.sqlite-wal").stat().st_size == 0
        copy = tmp_path / "copy.sqlite"
        copy.write_bytes(path.read_bytes())
    finally:
        reader.close()
    with open_store(f"sqlite:///{copy}") as again:
        if amend == "remove_run":
            assert [run.id for run in again.runs()] == [ids[1]] and len(again.removals()) == 1
        else:
            assert again.acknowledgements() == {(case_name(0), ids[1]): "meant"}


def test_the_removal_asked_for_by_its_id_is_that_one_alone(history_url):
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(3)]
        first, second = (store.remove_run(run_id, reason=f"removed {run_id}", who="t") for run_id in ids[:2])
        assert [r.id for r in store.removals(removal_id=first.id)] == [first.id]
        assert [r.id for r in store.removals(removal_id=second.id)] == [second.id]
        assert store.removals(removal_id=second.id + 1) == []
        assert [r.id for r in store.removals()] == [second.id, first.id]  # newest first

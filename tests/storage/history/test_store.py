"""The history store's own API (src/kernelwatch/storage/history/store.py): opening and closing a store, what a
SQLite writer leaves in the file when it closes, what record_run, acknowledge and case_record take and
refuse, on both backends where they differ."""

from __future__ import annotations

import inspect
import re
import shutil
import sqlite3

import pytest
import sqlalchemy as sa

from kernelwatch.storage.history import HistoryError, HistoryStore, open_store
from kernelwatch.storage.history.schema import RUNS
from maintainers.support.synthetic_history import GPU_A, case_name, make_document
from tests.support.backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)


def _sqlite_url(path, form: str) -> str:
    return str(path) if form == "path" else f"sqlite:///{path}"


def _first_run(path) -> int:
    with open_store(str(path)) as store:
        return store.record_run(make_document(1), outcome="passed", profile="nightly")


@pytest.mark.parametrize("form", ["path", "sqlite:///"])
@pytest.mark.parametrize("write", ["record", "acknowledge"])
def test_a_writer_checkpoints_its_log_into_the_file_while_another_store_holds_it_open(tmp_path, form, write):
    """A cache step copies history.sqlite alone: whatever a writer wrote is in that file once it closed, even
    where another process (a reader) still holds the store open, so that SQLite leaves the log to it."""
    path = tmp_path / "history.sqlite"
    run_id = _first_run(path)
    with open_store(str(path), create=False) as reader:
        reader.runs()  # holds its connection (and so the file) open until it closes
        with open_store(_sqlite_url(path, form)) as writer:
            if write == "record":
                writer.record_run(make_document(2), outcome="passed", profile="nightly")
            else:
                writer.acknowledge(case_name(0), run_id, reason="intended")
        copy = tmp_path / "copy.sqlite"
        shutil.copyfile(path, copy)
    with open_store(str(copy), create=False) as cached:
        if write == "record":
            assert len(cached.runs()) == 2
        else:
            assert cached.acknowledgements() == {(case_name(0), run_id): "intended"}


def test_a_store_that_only_read_leaves_the_file_as_it_found_it(tmp_path):
    """A command that only reads does not write another process's logged runs into history.sqlite."""
    path = tmp_path / "history.sqlite"
    _first_run(path)
    with open_store(str(path)) as writer:
        writer.record_run(make_document(2), outcome="passed", profile="nightly")  # in the log while it is open
        before = path.read_bytes()
        with open_store(str(path), create=False) as reader:
            assert len(reader.runs()) == 2
        assert path.read_bytes() == before


def test_a_store_closes_without_an_error_after_its_file_went_away(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    store = open_store(str(folder / "history.sqlite"))
    store.record_run(make_document(1), outcome="passed", profile="nightly")
    store.close()
    shutil.rmtree(folder)  # a cache step removed it: a second close cannot reach the file to checkpoint it
    store.close()


def test_an_acknowledgement_holds_the_write_lock_from_its_check_of_the_run_to_its_insert(tmp_path):
    """A writer that comes while an acknowledgement checks its run waits (here: is refused at once) instead of
    making the acknowledgement fail on a stale read."""
    path = tmp_path / "history.sqlite"
    run_id = _first_run(path)
    came: list[str] = []

    def another_writer_meanwhile(conn, cursor, statement, parameters, context, executemany):
        if came or not statement.lstrip().upper().startswith("SELECT"):
            return
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("UPDATE runs SET label = 'meanwhile'")
            other.execute("COMMIT")
            came.append("wrote")
        except sqlite3.OperationalError as exc:
            came.append(str(exc))
        finally:
            other.close()

    with open_store(str(path)) as store:
        sa.event.listen(store.engine, "after_cursor_execute", another_writer_meanwhile)
        store.acknowledge(case_name(0), run_id, reason="intended")
        sa.event.remove(store.engine, "after_cursor_execute", another_writer_meanwhile)
        assert came == ["database is locked"]
        assert store.acknowledgements() == {(case_name(0), run_id): "intended"}


# keyword-only options are the API's contract: a call cannot give a profile as the outcome or a label as the
# profile by its place; each of these calls is refused before it reaches the store
@pytest.mark.parametrize("call", [
    lambda store: store.record_run(make_document(1), "passed", "nightly"),
    lambda store: store.acknowledge(case_name(0), 1, "intended"),
    lambda store: store.runs(GPU_A),
    lambda store: store.reference_history([GPU_A], "nightly", 1),
    lambda store: store.case_series("gpu_model"),
    lambda store: open_store(store.url.database, False),
], ids=["record_run", "acknowledge", "runs", "reference_history", "case_series", "open_store"])
def test_the_stores_options_are_taken_by_keyword_only(tmp_path, call):
    with open_store(str(tmp_path / "history.sqlite")) as store:
        with pytest.raises(TypeError):
            call(store)


def test_the_stores_methods_show_their_own_signature_and_documentation():
    # each method runs under the store's deadline wrapper; help() and editors still see the method itself
    signature = inspect.signature(HistoryStore.record_run)
    keyword_only = [p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keyword_only[:2] == ["outcome", "profile"]
    assert HistoryStore.record_run.__name__ == "record_run"
    assert HistoryStore.record_run.__doc__.startswith("Store one run")


@pytest.mark.parametrize("count", [-1, True, 1.5, "2"])
def test_other_failures_that_is_no_count_of_tests_is_refused(store, count):
    with pytest.raises(HistoryError, match=re.escape(f"other_failures must be a count of tests, 0 or more, "
                                                     f"not {count!r}")):
        store.record_run(make_document(1), outcome="failed", profile="nightly", other_failures=count)
    assert store.runs() == []


@pytest.mark.parametrize("other_failures", [None, 2])
def test_a_passed_run_is_stored_with_no_other_failure(store, other_failures):
    outcome = "".join(["pass", "ed"])  # as a command line gives it: a string made at run time, not the literal
    run_id = store.record_run(make_document(1), outcome=outcome, profile="nightly", other_failures=other_failures)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(RUNS.c.other_failures).where(RUNS.c.id == run_id)).scalar() == 0


@pytest.mark.parametrize("source, named", [("runs/0001.json", "runs/0001.json"), (None, "the run")])
def test_a_document_that_is_no_run_is_refused_naming_its_source(store, source, named):
    doc = make_document(1)
    doc["benchmarks"] = []
    with pytest.raises(HistoryError, match=f"^cannot record {re.escape(named)}: "):
        store.record_run(doc, outcome="passed", profile="nightly", source=source)


def test_an_acknowledgement_of_a_run_below_the_first_is_refused(store):
    store.record_run(make_document(1), outcome="passed", profile="nightly")
    with pytest.raises(HistoryError, match="there is no run 0 in the history store"):
        store.acknowledge(case_name(0), 0, reason="intended")
    assert store.acknowledgements() == {}


def test_an_acknowledgement_of_a_case_its_run_lacks_names_that_runs_three_nearest_cases(store):
    first = store.record_run(make_document(1, cases=5), outcome="passed", profile="nightly")
    store.record_run(make_document(2, cases=2), outcome="passed", profile="nightly")
    missing = case_name(9)
    nearest = ", ".join(case_name(n) for n in (4, 3, 2))
    with pytest.raises(HistoryError) as refused:
        store.acknowledge(missing, first, reason="intended")
    assert str(refused.value) == f"run {first} holds no case {missing!r}; it holds 5 cases, the nearest: {nearest}"


def test_a_case_record_is_of_that_case_at_that_run_only(store):
    without_it = make_document(1, cases=3)
    without_it["benchmarks"] = [b for b in without_it["benchmarks"] if b["fullname"] != case_name(1)]
    first = store.record_run(without_it, outcome="passed", profile="nightly")
    second = store.record_run(make_document(2, cases=3), outcome="passed", profile="nightly")
    assert store.case_record(case_name(1), first) is None  # run 2 holds it, and run 1 a case named after it
    assert store.case_record(case_name(1), second)["number"] == 1


def test_a_store_opened_to_read_is_opened_on_either_backend(history_url):
    with open_store(history_url) as made:
        made.record_run(make_document(1), outcome="passed", profile="nightly")
    with open_store(history_url, create=False) as read:
        assert len(read.runs()) == 1


@pytest.mark.parametrize("form", ["path", "sqlite:///"])
def test_opening_to_read_a_sqlite_store_that_is_not_there_makes_no_file(tmp_path, form):
    path = tmp_path / "none.sqlite"
    with pytest.raises(HistoryError, match=re.escape(f"there is no history store at sqlite:///{path}: ")):
        open_store(_sqlite_url(path, form), create=False)
    assert not path.exists()


def test_opening_to_read_an_empty_database_says_it_holds_no_store_and_makes_none(history_url):
    if history_url.startswith("sqlite"):
        open(history_url.removeprefix("sqlite:///"), "wb").close()  # an empty file: a database of no table
    with pytest.raises(HistoryError, match="holds no history store: a nightly with --history makes it"):
        open_store(history_url, create=False)
    engine = sa.create_engine(history_url)
    try:
        with engine.connect() as conn:
            assert sa.inspect(conn).get_table_names() == []
    finally:
        engine.dispose()


def test_a_default_folder_that_cannot_be_made_is_one_error_with_the_systems_reason(tmp_path, monkeypatch):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.delenv("KERNELWATCH_HISTORY", raising=False)
    monkeypatch.setenv("RUNNER_TOOL_CACHE", str(blocker))
    with pytest.raises(HistoryError) as refused:
        open_store(None)
    assert str(refused.value) == "cannot create the folder of the default history store: Not a directory"

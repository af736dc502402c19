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


# ---- every field each query reads, from its own column ---------------------------------------------------------------

def _marked_run() -> dict:
    """A run of two cases whose every stored field differs from every other: case 0 accepted, throttled, with
    energies and phases; case 1 slower, with none of them."""
    doc = make_document(1, cases=2, samples=3, timer="cupti kernel", sass="sass-7")
    doc["machine_info"]["gpu"]["host"] = "gpu-host"
    doc["commit_info"]["branch"] = "topic"
    first, second = (bench["extra_info"] for bench in doc["benchmarks"])
    first.update(verdict="accepted", accepted_reason="faster kernel", throttle_reasons=["power"],
                 phases={"copy": [1e-5, 2e-5], "none": []},
                 energy={"window_joules_per_launch": [0.5, 0.25], "joules_per_launch": 0.375})
    second.update(verdict="slower", sass="sass-8")
    doc["kernelwatch_accuracy"] = [{"case": "suites/a.py::t", "max_error": 0.5, "avg_error": 0.25,
                                    "accepted_reason": "new inputs", "verdict": "accepted"}]
    return doc


def test_every_field_of_a_reference_is_read_from_its_own_column(store):
    from kernelwatch.verdict.noise import StoredResult

    doc = _marked_run()
    run_id = store.record_run(doc, outcome="failed", profile="nightly", other_failures=0)
    store.acknowledge(case_name(1), run_id, reason="intended")  # a slower case is a reference once acknowledged
    history = store.reference_history([GPU_A, GPU_A], profile="nightly", limit_runs=1)
    common = {"gpu_uuid": GPU_A, "run": f"history run {run_id}", "started_at": "2026-12-01T01:00:00+00:00",
              "commit": doc["commit_info"]["id"], "run_id": run_id, "host": "gpu-host", "timer": "cupti kernel"}
    bench = doc["benchmarks"]
    assert history == {
        case_name(0): [StoredResult(**common, median=bench[0]["stats"]["median"], sass="sass-7",
                                    samples=tuple(bench[0]["stats"]["data"]), accepted_reason="faster kernel",
                                    throttled=True, outcome="accepted", energy=(0.5, 0.25),
                                    phases=(("copy", (1e-5, 2e-5)),))],
        case_name(1): [StoredResult(**common, median=bench[1]["stats"]["median"], sass="sass-8",
                                    samples=tuple(bench[1]["stats"]["data"]), accepted_reason="intended",
                                    outcome="failed")],
    }


def test_every_field_of_a_point_is_read_from_its_own_column(store):
    from kernelwatch.storage.history.rows import Point, SeriesKey

    doc = _marked_run()
    run_id = store.record_run(doc, outcome="failed", profile="nightly", other_failures=1)
    stats = [bench["stats"] for bench in doc["benchmarks"]]
    started = store.runs()[0].started_at
    common = {"run_id": str(run_id), "started_at": started, "commit": doc["commit_info"]["id"], "branch": "topic",
              "sample_count": 3, "gpu_uuid": GPU_A, "run_failed": True}
    points = store.case_series()
    assert set(points) == {SeriesKey(GPU_A, case_name(n), "cupti kernel", "nightly") for n in (0, 1)}
    first, = points[SeriesKey(GPU_A, case_name(0), "cupti kernel", "nightly")]
    second, = points[SeriesKey(GPU_A, case_name(1), "cupti kernel", "nightly")]
    # the band is the quartiles stored with the case, widened to take its median in
    assert (first.low_s, first.high_s) == (min(stats[0]["q1"], stats[0]["median"]),
                                           max(stats[0]["q3"], stats[0]["median"]))
    assert first == Point(**common, median_s=stats[0]["median"], low_s=first.low_s, high_s=first.high_s,
                          outcome="accepted", verdict="accepted", accepted_reason="faster kernel", sass="sass-7",
                          throttled=True, energy_j=0.375)
    assert second == Point(**common, median_s=stats[1]["median"], low_s=second.low_s, high_s=second.high_s,
                           outcome="failed", verdict="slower", sass="sass-8")
    assert first.low_s < first.median_s < first.high_s and second.low_s < second.median_s < second.high_s
    by_model = store.case_series(by="gpu_model")
    assert set(by_model) == {SeriesKey("NVIDIA H200", case_name(n), "cupti kernel", "nightly") for n in (0, 1)}


def test_every_field_of_a_stored_check_is_read_from_its_own_column(store):
    doc = _marked_run()
    run_id = store.record_run(doc, outcome="passed", profile="nightly")
    history = store.accuracy_history(None, any_profile=True)
    assert list(history) == ["suites/a.py::t"]
    check, = history["suites/a.py::t"]
    assert (check.run_id, check.commit, check.started_at, check.outcome, check.accepted_reason, check.profile,
            check.branch, check.gpu_model) == (run_id, doc["commit_info"]["id"], "2026-12-01T01:00:00+00:00",
                                               "accepted", "new inputs", "nightly", "topic", "NVIDIA H200")
    assert (check.record.case, check.record.max_error, check.record.avg_error, check.record.gpu_uuid) == \
        ("suites/a.py::t", 0.5, 0.25, GPU_A)  # the run's GPU where the check names none


@pytest.mark.parametrize("limit_runs, kept", [(-1, 0), (0, 0), (1, 1), (2, 2), (3, 2)])
def test_a_reference_history_keeps_the_newest_limit_runs_of_each_case(store, limit_runs, kept):
    for index in (1, 2):
        store.record_run(make_document(index, cases=1), outcome="passed", profile="nightly")
    asked: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda _conn, _cursor, statement, *_: asked.append(statement))
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=limit_runs)
    assert [result.run_id for result in history.get(case_name(0), [])] == [2, 1][:kept]
    assert bool(asked) is (limit_runs >= 1)  # no query at all for a limit below one run
    asked.clear()
    assert store.reference_history([], profile="nightly", limit_runs=5) == {} and asked == []


# ---- what record_run takes, and where it stops ---------------------------------------------------------------

@pytest.mark.parametrize("count, stored", [(None, None), (0, 0), (1, 1), (2**31 - 1, 2**31 - 1)])
def test_a_failed_run_keeps_its_count_of_other_failures_up_to_the_columns_largest(store, count, stored):
    run_id = store.record_run(make_document(1), outcome="failed", profile="nightly", other_failures=count)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(RUNS.c.other_failures).where(RUNS.c.id == run_id)).scalar() == stored


@pytest.mark.parametrize("count", [2**31, 2**40, -(2**31), False, [1], 3.0])
def test_other_failures_beyond_the_column_or_of_another_type_is_refused(store, count):
    with pytest.raises(HistoryError) as refused:
        store.record_run(make_document(1), outcome="failed", profile="nightly", other_failures=count)
    assert str(refused.value) == f"other_failures must be a count of tests, 0 or more, not {count!r}"
    assert store.runs() == []


@pytest.mark.parametrize("outcome", ["Passed", "", None, "accepted"])
def test_an_outcome_other_than_passed_or_failed_is_refused(store, outcome):
    with pytest.raises(HistoryError) as refused:
        store.record_run(make_document(1), outcome=outcome, profile="nightly")
    assert str(refused.value) == f"outcome must be one of passed, failed, not {outcome!r}"


def test_a_refused_document_names_its_source_and_its_problem_in_one_sentence(store):
    doc = make_document(1)
    doc["commit_info"]["dirty"] = "yes"
    with pytest.raises(HistoryError) as refused:
        store.record_run(doc, outcome="passed", profile="nightly", source="runs/0001.json")
    assert str(refused.value) == "cannot record runs/0001.json: commit_info.dirty is 'yes', not true or false"
    assert type(refused.value).__name__ == "RefusedRun"


def test_only_a_write_takes_sqlites_write_lock_when_it_begins(tmp_path):
    begun: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("BEGIN"):
            begun.append(statement)

    with open_store(str(tmp_path / "history.sqlite")) as store:
        sa.event.listen(store.engine, "before_cursor_execute", seen)
        store.runs()
        assert begun == ["BEGIN"]
        store.record_run(make_document(1), outcome="passed", profile="nightly")
        assert begun == ["BEGIN", "BEGIN IMMEDIATE"]


def _hash_order(count: int) -> list[dict]:
    """`count` documents, ordered by the content hash the store gives them (smallest first)."""
    from kernelwatch.storage.history.documents import run_row

    docs = [make_document(index) for index in range(1, count + 1)]
    return sorted(docs, key=lambda doc: run_row(doc, outcome="passed", profile="nightly", label=None,
                                                 source=None)["content_hash"])


def test_a_run_is_already_recorded_only_by_its_own_hash(store):
    smallest, *others = _hash_order(4)
    ids = [store.record_run(doc, outcome="passed", profile="nightly") for doc in others]
    new = store.record_run(smallest, outcome="passed", profile="nightly")  # every stored hash above its own
    assert new not in ids and len(store.runs()) == 4
    with pytest.raises(HistoryError) as again:
        store.record_run(others[1], outcome="passed", profile="nightly", source="runs/0002.json")
    assert again.value.run_id == ids[1]
    assert str(again.value) == f"runs/0002.json is already recorded as run {ids[1]} in {store.safe_url}"


def _failing_first_lookup(store):
    """Makes the store's first look for a run's hash fail as a lost connection would (a HistoryError)."""
    failed: list[str] = []

    def fail(conn, cursor, statement, parameters, context, executemany):
        if not failed and "content_hash" in statement and statement.lstrip().startswith("SELECT"):
            failed.append(statement)
            raise HistoryError("cannot write to the history store: the connection was lost")

    sa.event.listen(store.engine, "before_cursor_execute", fail)
    return failed


def test_a_write_that_failed_is_already_recorded_where_another_writer_stored_the_run_meanwhile(store):
    smallest, *others = _hash_order(4)
    ids = [store.record_run(doc, outcome="passed", profile="nightly") for doc in others]
    _failing_first_lookup(store)
    with pytest.raises(HistoryError) as again:
        store.record_run(others[0], outcome="passed", profile="nightly")
    assert type(again.value).__name__ == "AlreadyRecorded" and again.value.run_id == ids[0]
    assert str(again.value) == f"this run is already recorded as run {ids[0]} in {store.safe_url}"


def test_a_write_that_failed_is_that_failure_where_no_writer_stored_the_run(store):
    smallest, *others = _hash_order(4)
    for doc in others:  # each stored hash above the failed run's own
        store.record_run(doc, outcome="passed", profile="nightly")
    _failing_first_lookup(store)
    with pytest.raises(HistoryError) as failed:
        store.record_run(smallest, outcome="passed", profile="nightly")
    assert type(failed.value) is HistoryError
    assert str(failed.value) == "cannot write to the history store: the connection was lost"
    assert len(store.runs()) == 3


# ---- what the reads select ---------------------------------------------------------------------------------------

def test_runs_on_a_gpu_are_those_of_its_model_or_of_a_case_on_that_uuid(store):
    models = {1: "NVIDIA A100", 2: "NVIDIA H200", 3: "NVIDIA L4"}
    for index, model in models.items():
        doc = make_document(index, gpu_uuid=f"GPU-{index}")
        doc["machine_info"]["gpu"]["name"] = model
        store.record_run(doc, outcome="passed" if index != 2 else "failed", profile="nightly", other_failures=0)
    assert [run.id for run in store.runs()] == [3, 2, 1]
    assert [run.id for run in store.runs(gpu="NVIDIA H200")] == [2]
    assert [run.id for run in store.runs(gpu="GPU-3")] == [3]
    assert store.runs(gpu="NVIDIA") == []
    assert [run.id for run in store.runs(outcome="failed")] == [2]
    assert [run.id for run in store.runs(outcome="passed", limit=1)] == [3]


def test_a_runs_export_holds_only_its_own_cases_and_checks(store):
    docs = [_marked_run() for _ in range(3)]
    for index, doc in enumerate(docs):
        doc["datetime"] = f"2026-12-0{index + 1}T00:00:00+00:00"
        doc["kernelwatch_accuracy"][0]["max_error"] = float(index)
    ids = [store.record_run(doc, outcome="passed", profile="nightly") for doc in docs]
    for run_id, doc in zip(ids, docs, strict=True):
        assert store.export_run(run_id) == doc


@pytest.mark.parametrize("run", [0, 1, 2, 3])
def test_a_case_record_is_read_only_at_its_own_run_and_of_its_own_name(store, run):
    for index in (1, 2, 3):
        doc = make_document(index, cases=2)
        for bench in doc["benchmarks"]:
            bench["extra_info"]["number"] = index * 10 + bench["params"]["number"]
        store.record_run(doc, outcome="passed", profile="nightly")
    record = store.case_record(case_name(1), run)
    assert (record and record["number"]) == (run * 10 + 1 if run else None)
    assert store.case_record("suites/none.py::t", run) is None


# ---- each read and write of a PostgreSQL store runs under its deadline -------------------------------------------

@pytest.mark.parametrize("call", [
    lambda store: store.schema_version(),
    lambda store: store.record_run(make_document(2), outcome="passed", profile="nightly"),
    lambda store: store.runs(),
    lambda store: store.export_run(1),
    lambda store: store.reference_history([GPU_A], profile="nightly", limit_runs=5),
    lambda store: store.case_series(),
    lambda store: store.accuracy_history(None, any_profile=True),
    lambda store: store.case_record(case_name(0), 1),
], ids=["schema_version", "record_run", "runs", "export_run", "reference_history", "case_series",
        "accuracy_history", "case_record"])
def test_every_read_and_write_of_a_postgresql_store_runs_in_the_deadlines_own_thread(tmp_path, call):
    """connection.deadline runs a PostgreSQL store's work in a thread it can give up on; here the store's URL
    says PostgreSQL and its engine is a SQLite file, so that the thread each statement runs in is seen."""
    import threading

    from sqlalchemy.engine import make_url

    path = tmp_path / "history.sqlite"
    _first_run(path)
    threads: set[str] = set()
    with open_store(str(path)) as local:
        store = HistoryStore(make_url("postgresql+psycopg://u@127.0.0.1:9/h"), local.engine)
        sa.event.listen(local.engine, "before_cursor_execute",
                        lambda *_: threads.add(threading.current_thread().name))
        call(store)
    assert threads == {"kernelwatch-history"}


def test_opening_a_postgresql_store_to_read_connects_and_never_looks_for_a_file(tmp_path, monkeypatch):
    import socket

    monkeypatch.chdir(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once closed
    with pytest.raises(HistoryError) as refused:
        open_store(f"postgresql://u@127.0.0.1:{port}/history", create=False)
    assert "Connection refused" in str(refused.value) and "there is no history store" not in str(refused.value)


def _newer_store(path) -> None:
    from kernelwatch.storage.history.schema import CURRENT_VERSION, SCHEMA_VERSION

    with open_store(str(path)) as store, store.engine.begin() as conn:
        conn.execute(sa.insert(SCHEMA_VERSION).values(version=CURRENT_VERSION + 1, summary="from the future"))


@pytest.mark.parametrize("make, words", [
    (lambda path: open(path, "wb").close(), "holds no history store"),  # an empty file: a database of no table
    (lambda path: path.write_bytes(b"not a database" * 100), "the file is not a SQLite database"),
    (lambda path: _newer_store(path), "cannot be used: its schema is version"),
], ids=["empty", "no database", "newer"])
def test_a_store_that_cannot_be_opened_lets_its_connections_go(tmp_path, monkeypatch, make, words):
    from kernelwatch.storage.history import store as store_module

    disposed: list[sa.Engine] = []
    real = store_module.create_engine

    def spied(url):
        engine = real(url)
        original = engine.dispose
        engine.dispose = lambda *args, **kwargs: (disposed.append(engine), original(*args, **kwargs))[1]
        return engine

    path = tmp_path / "history.sqlite"
    make(path)
    monkeypatch.setattr(store_module, "create_engine", spied)
    with pytest.raises(HistoryError, match=words):
        open_store(str(path), create=False)
    assert len(disposed) == 1

"""The store's schema: built by its ordered migrations from empty and from version 1, refused when newer or foreign."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import threading

import pytest
import sqlalchemy as sa

from kernelwatch.storage.history import CURRENT_VERSION, HistoryError, HistoryStore, open_store, safe_url
from kernelwatch.storage.history.connection import create_engine, resolve_url
from kernelwatch.storage.history.documents import case_rows, run_row
from kernelwatch.storage.history.schema import (
    ACKNOWLEDGEMENTS,
    CASES,
    META,
    MIGRATIONS,
    RUNS,
    SCHEMA_VERSION,
    migrate,
    stored_version,
    tables,
)
from maintainers.support.synthetic_history import GPU_A, case_name, make_document
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)


def _columns(engine: sa.Engine) -> dict[str, set[str]]:
    inspector = sa.inspect(engine)
    return {name: {column["name"] for column in inspector.get_columns(name)} for name in inspector.get_table_names()}


def test_an_empty_store_is_migrated_to_exactly_the_tables_the_code_queries(history_url):
    with open_store(history_url) as store:
        assert store.schema_version() == CURRENT_VERSION == 6
        assert _columns(store.engine) == {name: {c.name for c in table.columns} for name, table in META.tables.items()}
        with store.engine.connect() as conn:
            assert conn.execute(sa.select(SCHEMA_VERSION.c.version).order_by("version")).scalars().all() == [1, 2, 3, 4, 5, 6]


def record_as_version(engine: sa.Engine, version: int, doc: dict, outcome: str) -> int:
    """Record `doc` as the code of schema `version` did: only the columns its tables had."""
    meta = tables(version)
    runs, cases = meta.tables["runs"], meta.tables["cases"]
    run = {k: v for k, v in run_row(doc, outcome=outcome, profile="nightly", label=None, source=None).items()
           if k in runs.c}
    with engine.begin() as conn:
        run_id = conn.execute(sa.insert(runs).values(run)).inserted_primary_key[0]
        conn.execute(sa.insert(cases), [{**{k: v for k, v in case.items() if k in cases.c}, "run_id": run_id}
                                        for case in case_rows(doc)])
    return run_id


def test_a_version_1_store_with_runs_is_migrated_keeping_them(history_url):
    url = resolve_url(history_url)
    engine = create_engine(url)
    migrate(engine, target=1)
    old = HistoryStore(url, engine)
    docs = [make_document(i) for i in range(3)]
    ids = [record_as_version(engine, 1, doc, "passed") for doc in docs]
    assert old.schema_version() == 1 and "acknowledgements" not in _columns(engine)
    engine.dispose()

    with open_store(history_url) as store:
        assert store.schema_version() == CURRENT_VERSION
        assert "acknowledgements" in _columns(store.engine)
        assert [run.id for run in store.runs()] == ids[::-1]
        assert [store.export_run(run_id) for run_id in ids] == docs
        assert store.record_run(make_document(3), outcome="passed", profile="nightly") not in ids


def test_a_schema_newer_than_the_code_is_an_error_naming_the_store(history_url):
    with open_store(history_url) as store, store.engine.begin() as conn:
        conn.execute(sa.insert(SCHEMA_VERSION).values(version=CURRENT_VERSION + 1, summary="from the future"))
    with pytest.raises(HistoryError) as raised:
        open_store(history_url)
    message = str(raised.value)
    assert safe_url(resolve_url(history_url)) in message
    assert f"version {CURRENT_VERSION + 1}, newer than this code's {CURRENT_VERSION}" in message


def test_a_database_with_our_table_names_but_no_schema_version_is_not_taken_for_a_store(history_url):
    engine = create_engine(resolve_url(history_url))
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE runs (id INTEGER)"))
    engine.dispose()
    with pytest.raises(HistoryError, match="holds tables .*runs.* but no schema_version"):
        open_store(history_url)


def test_a_version_2_store_keeps_its_failed_runs_out_of_every_reference_and_marks_its_slower_cases_alone_failed(
        history_url):
    url = resolve_url(history_url)
    engine = create_engine(url)
    migrate(engine, target=2)
    passed = [record_as_version(engine, 2, make_document(i), "passed") for i in range(3)]
    failed_doc = make_document(3, case_slower={1: 1.05})
    # only the slower case fails: not one whose verdict sorts before "slower" (faster), nor after it (throttled)
    for number, verdict in enumerate(("faster", "slower", "throttled")):
        failed_doc["benchmarks"][number]["extra_info"]["verdict"] = verdict
    failed = record_as_version(engine, 2, failed_doc, "failed")
    engine.dispose()

    with open_store(history_url) as store:
        history = store.reference_history([GPU_A], profile="nightly", limit_runs=10)
        # a failed run of version 2 failed whole (its failures besides its cases are not known)
        assert {entry.run_id for entries in history.values() for entry in entries} == set(passed)
        series = store.case_series(case=case_name(1))
        [(_, points)] = series.items()
        assert [(p.run_id, p.outcome, p.run_failed) for p in points] == [
            *((str(run_id), "passed", False) for run_id in passed), (str(failed), "failed", True)]
        for other in (0, 2):
            [(_, others)] = store.case_series(case=case_name(other)).items()
            assert (others[-1].outcome, others[-1].run_failed) == ("passed", True)


def test_the_hash_and_commit_columns_hold_sha256_names():
    """A content hash is a SHA-256 hex digest, and a git commit may be one (SHA-256 repositories):
    PostgreSQL enforces the length of a varchar, so both columns must hold 64 characters."""
    digest = len(hashlib.sha256().hexdigest())
    assert RUNS.c.content_hash.type.length >= digest and RUNS.c.commit.type.length >= digest


@pytest.mark.parametrize("column", [RUNS.c.document_rest, CASES.c.benchmark, ACKNOWLEDGEMENTS.c.who],
                         ids=["document_rest", "benchmark", "who"])
def test_what_an_export_or_an_acknowledgement_needs_is_never_null(column):
    """export_run rebuilds the document from document_rest and each case's benchmark; an acknowledgement
    always names who made it (the login name by default)."""
    assert column.nullable is False


def test_a_schema_version_table_without_a_row_reads_as_an_empty_store(history_url):
    """No applied migration is version 0, as for a database without the table, not 1 nor any other number."""
    engine = create_engine(resolve_url(history_url))
    with engine.begin() as conn:
        SCHEMA_VERSION.create(conn)
        assert stored_version(conn) == 0
    engine.dispose()


def test_a_migration_is_frozen():
    """The migrations are the history of every store's schema: none can be renumbered in place."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        MIGRATIONS[0].version = 2


def test_a_schema_version_is_the_number_of_its_migration_never_one_the_database_counts(history_url):
    """Its column has no default on either backend (no sequence on PostgreSQL): each row names its migration."""
    with open_store(history_url) as store:
        [version] = [c for c in sa.inspect(store.engine).get_columns("schema_version") if c["name"] == "version"]
        assert version["default"] is None


def test_a_migration_is_recorded_once_in_the_schema_version_table(history_url):
    """The version is the table's key: a second row for an applied migration is refused, so `stored_version`
    never reads a migration twice."""
    with open_store(history_url) as store, pytest.raises(sa.exc.IntegrityError), store.engine.begin() as conn:
        conn.execute(sa.insert(SCHEMA_VERSION).values(version=CURRENT_VERSION, summary="applied again"))


@pytest.mark.parametrize("target", [CURRENT_VERSION, 1], ids=["at its version", "asked for an older one"])
def test_a_store_at_or_past_the_version_asked_for_is_opened_without_a_write_lock(history_url, target):
    """Migrating takes the store's write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock); a
    store with nothing to migrate is only read, so opening it never waits for a writer."""
    with open_store(history_url):
        pass
    engine = create_engine(resolve_url(history_url))
    statements = []
    sa.event.listen(engine, "before_cursor_execute", lambda _c, _k, statement, *_: statements.append(statement))
    assert migrate(engine, target=target) == CURRENT_VERSION
    engine.dispose()
    assert statements and not [s for s in statements if "IMMEDIATE" in s or "advisory" in s]


def test_two_processes_making_one_store_at_once_both_open_it(tmp_path):
    """Both read "no store yet" before either writes: the worst order for two nightlies' first runs on one new
    SQLite file. Each reading of the tables waits (up to a second) for the other's, so both read before either
    writes, unless one already holds the write lock. A migration that took its lock only at its first write (a
    plain BEGIN) would then write on a stale snapshot, which SQLite refuses at once ("database is locked"), not
    after its busy timeout; BEGIN IMMEDIATE makes the second wait and then find the store made."""
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    both_read = threading.Barrier(2, timeout=1.0)

    def meet_the_other(_conn, _cursor, statement, *_):
        if "sqlite_master" in statement:
            with contextlib.suppress(threading.BrokenBarrierError):  # the other holds the write lock: go on
                both_read.wait()

    outcomes = [None, None]

    def open_new(side: int) -> None:
        engine = create_engine(resolve_url(url))
        sa.event.listen(engine, "after_cursor_execute", meet_the_other)
        try:
            outcomes[side] = migrate(engine)
        except sa.exc.OperationalError as error:
            outcomes[side] = error.orig
        finally:
            engine.dispose()

    threads = [threading.Thread(target=open_new, args=(side,)) for side in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes, key=str) == [0, CURRENT_VERSION], outcomes  # one made it, the other found it made
    with open_store(url) as store:
        assert store.schema_version() == CURRENT_VERSION


def test_a_version_3_store_gains_the_energy_columns_and_its_runs_read_as_having_no_energy(history_url):
    url = resolve_url(history_url)
    engine = create_engine(url)
    migrate(engine, target=3)
    old = record_as_version(engine, 3, make_document(0), "passed")
    assert "energy_j" not in _columns(engine)["cases"]
    engine.dispose()
    doc = make_document(1)
    energy = {"joules_per_launch": 2e-3, "window_joules_per_launch": [1.9e-3, 2.0e-3, 2.1e-3]}
    doc["benchmarks"][0]["extra_info"]["energy"] = energy
    with open_store(history_url) as store:
        assert store.schema_version() == CURRENT_VERSION and {"energy_j", "energy_windows"} <= _columns(store.engine)["cases"]
        new = store.record_run(doc, outcome="passed", profile="nightly")
        history = store.reference_history([GPU_A], profile="nightly", limit_runs=10)
        assert {(r.run_id, r.energy) for r in history[case_name(0)]} == {(old, ()), (new, (1.9e-3, 2.0e-3, 2.1e-3))}
        assert all(r.energy == () for r in history[case_name(1)])
        assert store.case_record(case_name(0), new)["energy"] == energy  # the record keeps the whole block

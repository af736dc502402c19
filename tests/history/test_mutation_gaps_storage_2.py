"""What mutation testing of harness/storage/history/ found no test pinning (NOTES.md, eighth session)."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sqlite3
import time

import pytest
import sqlalchemy as sa
from backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)
from synthetic import GPU_A, case_name, make_document

from harness.storage.history import HistoryError, connection, documents, open_store
from harness.storage.history.samples import SamplesError, decode_samples
from harness.verdict.record import CaseRecord

# the columns that every stored run and case has; a store with one of them empty is corrupt
NOT_NULL = {
    "runs": {"id", "content_hash", "started_at", "recorded_at", "outcome", "gpu_uuids", "case_count",
             "document_rest"},
    "cases": {"id", "run_id", "position", "node_id", "median_s", "q25_s", "q75_s", "sample_count", "throttled",
              "record", "benchmark", "stats", "samples", "outcome"},
}


def test_the_created_tables_refuse_an_empty_value_where_every_run_has_one(history_url):
    with open_store(history_url) as store:
        inspector = sa.inspect(store.engine)
        for table, expected in NOT_NULL.items():
            not_null = {c["name"] for c in inspector.get_columns(table) if not c["nullable"]}
            assert not_null == expected, table


def test_an_unknown_samples_format_names_its_first_byte_only():
    with pytest.raises(SamplesError, match=r"unknown stored-samples format 07$"):
        decode_samples(bytes([7, 8, 9]))


@pytest.mark.parametrize("runs, text", [(None, "baseline 0005"), (1, "baseline 0005"),
                                        (2, "baseline 0005, pooled with 1 more stored runs"),
                                        (4, "baseline 0005, pooled with 3 more stored runs")])
def test_the_reference_names_the_runs_pooled_into_it(runs, text):
    record = CaseRecord(case="c", median_s=1e-3, samples=[1e-3], timer="t", reference="baseline 0005",
                        reference_runs=runs)
    assert documents._reference_text(record) == text


def test_a_drivers_error_is_told_in_its_first_two_lines():
    class Driver(Exception):
        pass

    wrapped = type("Wrapped", (Exception,), {})("outer words")
    wrapped.orig = Driver("first line\nsecond line\nthird line")
    url = sa.engine.make_url("postgresql://u:secret@host/db")
    assert connection._reason(wrapped, url) == "first line; second line"


def test_only_sqlite_words_a_non_database_file_as_such():
    class NotADatabase(sa.exc.DBAPIError):
        def __init__(self):
            Exception.__init__(self, "file is not a database")
            self.orig = Exception("file is not a database")

    for url, sqlite_words in (("sqlite:///x.sqlite", True), ("postgresql://u@h/db", False)):
        with pytest.raises(HistoryError) as raised, connection.translated_errors(sa.engine.make_url(url), "read"):
            raise NotADatabase()
        assert ("the file is not a SQLite database" in str(raised.value)) is sqlite_words


def test_an_acknowledgement_names_a_run_that_is_not_there_and_a_case_its_run_does_not_hold(history_url, tmp_path):
    from synthetic import write_document

    from harness.history.cli import main

    for number in (1, 2):
        write_document(tmp_path / "runs", number, make_document(number))
    assert main(["import", str(tmp_path / "runs"), "--history", history_url]) == 0
    with open_store(history_url) as store:
        with pytest.raises(HistoryError, match="there is no run 3 in"):
            store.acknowledge(case_name(0), 3, reason="why")
        with pytest.raises(HistoryError, match=r"run 1 holds no case 'suites/none.py::test'"):
            store.acknowledge("suites/none.py::test", 1, reason="why")
        store.acknowledge(case_name(0), 1, reason="intended")  # run 2 exists too: the check is for run 1 only
        store.acknowledge(case_name(0), 2, reason="intended")


# the sample after the tests above


def test_a_stored_case_cannot_be_changed_after_it_was_read(store):
    store.record_run(make_document(0), outcome="passed", profile="nightly")
    [one] = store.reference_history([GPU_A], profile="nightly", limit_runs=1)[case_name(0)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.median = 2e-3  # a reference pooled from it must stay what the store holds


def test_samples_written_by_earlier_versions_still_read():
    import zlib

    import numpy as np

    blob = bytes([1]) + zlib.compress(np.array([1e-3, 2e-3], np.float64).tobytes())  # format 1, as on disk
    assert decode_samples(blob) == (1e-3, 2e-3)
    with pytest.raises(SamplesError, match=r"format 00$"):
        decode_samples(bytes([0]) + blob[1:])


def test_the_newest_run_alone_is_a_reference_history(store):
    from synthetic import GPU_A

    ids = [store.record_run(make_document(i, gpu_uuid=GPU_A), outcome="passed", profile="nightly") for i in range(3)]
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=1)
    assert [entry.run_id for entry in history[case_name(0)]] == [ids[-1]]
    assert isinstance(store.safe_url, str) and store.safe_url in repr(store)


def test_an_acknowledgement_keeps_who_made_it(store):
    store.record_run(make_document(1), outcome="passed", profile="nightly")
    store.acknowledge(case_name(0), 1, reason="intended", who="alice")
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("select who from acknowledgements")).scalar() == "alice"


def test_the_default_store_opens_again_in_its_existing_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(connection.ENV_URL, raising=False)
    monkeypatch.setattr(connection, "default_path", lambda: tmp_path / "cache" / "history.sqlite")
    first = connection.resolve_url(None)
    assert connection.resolve_url(None) == first and (tmp_path / "cache").is_dir()


@pytest.mark.parametrize("text, stored", [("2026-11-01T12:00:00+02:00", "2026-11-01 10:00:00"),
                                          ("2026-11-01T12:00:00", "2026-11-01 12:00:00")])
def test_a_runs_time_is_stored_in_utc(text, stored):
    assert str(documents._started_at({"datetime": text})) == stored


def test_a_nightly_reference_reads_no_run_of_another_profile(store):
    from synthetic import GPU_A

    nightly = store.record_run(make_document(1, gpu_uuid=GPU_A), outcome="passed", profile="nightly")
    store.record_run(make_document(2, gpu_uuid=GPU_A), outcome="passed", profile="full")  # "full" < "nightly"
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=5)
    assert [entry.run_id for entry in history[case_name(0)]] == [nightly]


@pytest.mark.parametrize("samples", [[[1e-3, 2e-3]], 1e-3])
def test_samples_are_a_flat_list(samples):
    from harness.storage.history.samples import encode_samples

    with pytest.raises(SamplesError, match="at least one sample"):
        encode_samples(samples)


# the full run of the remaining storage mutants (on the lent machine's cores)


@pytest.mark.parametrize("count", [1, 2, 5])
def test_a_cases_band_is_its_quartiles_and_one_sample_is_its_own_band(count):
    import statistics

    doc = make_document(1, cases=1, samples=count)
    row = documents.case_rows(doc)[0]
    samples = doc["benchmarks"][0]["stats"]["data"]
    q25, _, q75 = statistics.quantiles(samples, n=4) if count > 1 else [samples[0]] * 3
    assert (row["q25_s"], row["q75_s"], row["sample_count"]) == (q25, q75, count)


def test_sqlite_writers_wait_sixty_seconds_for_each_other(tmp_path):
    with open_store(str(tmp_path / "h.sqlite")) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60_000


def test_a_runs_content_hash_ignores_key_order_and_keeps_its_text_as_written():
    import hashlib

    assert documents.content_hash({"a": 1, "b": "é"}) == documents.content_hash({"b": "é", "a": 1})
    assert documents.content_hash({"a": "é"}) == hashlib.sha256('{"a":"é"}'.encode()).hexdigest()


def test_two_benchmarks_of_one_name_are_refused():
    doc = make_document(1, cases=2)
    doc["benchmarks"][1]["fullname"] = doc["benchmarks"][0]["fullname"]
    with pytest.raises(documents.DocumentError, match="its own \"fullname\""):
        documents.case_rows(doc)


def test_a_run_without_a_gpu_host_takes_the_machines_name():
    doc = make_document(1)
    doc["machine_info"]["gpu"].pop("host", None)
    doc["machine_info"]["node"] = "node-7"
    assert documents.run_row(doc, outcome="passed", profile=None, label=None, source=None)["host"] == "node-7"


def test_a_new_store_opens_while_another_process_is_still_creating_it(tmp_path):
    # SQLite refuses the switch to WAL at once while another connection writes to a file not yet in
    # WAL (two nightly jobs opening a new store together failed so in CI); the open must wait instead
    import sqlite3
    import threading

    path = tmp_path / "history.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("create table being_written (x)")
    releaser = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    releaser.start()
    try:
        with open_store(str(path)) as store, store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        releaser.join()
        other.close()


def test_a_sha256_commit_and_a_profile_of_32_characters_fit_their_columns(store):
    # PostgreSQL holds varchar columns to their width (SQLite does not): the widths are the store's promise
    doc = make_document(1)
    doc["commit_info"]["id"] = "f" * 64  # a commit of a SHA-256 repository
    run_id = store.record_run(doc, outcome="passed", profile="p" * 32)
    (run,) = store.runs()
    assert (run.id, run.commit, run.profile) == (run_id, "f" * 64, "p" * 32)


def test_a_postgresql_engine_gives_up_connecting_after_ten_seconds_and_checks_pooled_connections(monkeypatch):
    made = {}
    monkeypatch.setattr(connection.sa, "create_engine", lambda url, **kwargs: made.update(kwargs))
    connection.create_engine(sa.engine.make_url("postgresql+psycopg://u:secret@127.0.0.1/db"))
    # the 10 s, the 60 s statement timeout and the pre-ping are docs/method.md's promise ("The history store")
    assert made == {"pool_pre_ping": True, "pool_timeout": 60, "connect_args": {
        "connect_timeout": 10, "application_name": "kernel-suite", "options": "-c statement_timeout=60000",
        "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}}


@pytest.mark.parametrize("url", ["postgresql+nosuchdriver://u:secret@h/db",  # no such dialect (NoSuchModuleError)
                                 "postgresql+pg8000://u:secret@h/db"])  # a dialect whose driver is not installed
def test_a_missing_database_driver_is_one_history_error_without_the_password(url):
    if "pg8000" in url and importlib.util.find_spec("pg8000") is not None:
        pytest.skip("pg8000 is installed here")
    with pytest.raises(HistoryError, match="its database driver is not installed") as raised:
        connection.create_engine(sa.engine.make_url(url))
    assert "secret" not in str(raised.value)


class SwitchingCursor:
    """A cursor whose file is not in WAL and whose switch to WAL fails with `errors`, in turn, then works."""

    def __init__(self, errors):
        self.errors, self.switches = list(errors), 0

    def execute(self, statement):
        if statement == "PRAGMA journal_mode":
            return type("Row", (), {"fetchone": lambda _: ("delete",)})()
        self.switches += 1
        if self.switches > 200:  # the test's guard against a retry that never gives up
            raise sqlite3.OperationalError("gave up: the switch was retried 200 times")
        if self.errors:
            raise sqlite3.OperationalError(self.errors.pop(0))
        return self


def test_the_switch_to_wal_is_retried_while_the_file_is_locked_and_then_made():
    cursor = SwitchingCursor(["database is locked"] * 3)
    connection._use_wal(cursor)
    assert cursor.switches == 4


def test_the_switch_to_wal_gives_up_after_the_busy_timeout(monkeypatch):
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.1)
    cursor = SwitchingCursor(["database is locked"] * 1000)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        connection._use_wal(cursor)
    assert 3 <= cursor.switches < 200 and time.monotonic() - started < 0.9  # retried in short steps, then gave up


def test_another_error_of_the_switch_to_wal_is_raised_at_once():
    cursor = SwitchingCursor(["disk I/O error"])
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        connection._use_wal(cursor)
    assert cursor.switches == 1


def test_a_run_of_300_cases_has_300_names():
    # more cases than CPython keeps one int object for: their count is compared by value
    doc = make_document(1, cases=300, samples=2)
    assert len(documents._checked(doc)) == 300


@pytest.mark.parametrize(("change", "message"), [
    ({"datetime": "yesterday"}, "the run has no valid \"datetime\" ('yesterday')"),
    ({"machine_info": {"kernel_suite_schema": 99}}, "schema version 99 by a newer version of the suite"),
])
def test_a_document_that_is_no_run_is_one_document_error(change, message):
    doc = make_document(1) | change
    with pytest.raises(documents.DocumentError, match=re.escape(message)):
        documents.run_row(documents.current(doc), outcome="passed", profile="nightly", label=None, source=None)


def test_a_document_stored_twice_names_its_own_run_among_others(store):
    from harness.storage.history.store import AlreadyRecorded

    # stored before the repeated run: one whose hash sorts after its hash, and one before: only an
    # exact match of the hash may name the run
    smallest, middle, largest = sorted((make_document(i) for i in range(1, 4)), key=documents.content_hash)
    ids = [store.record_run(doc, outcome="passed", profile="nightly") for doc in (largest, smallest, middle)]
    with pytest.raises(AlreadyRecorded) as again:
        store.record_run(middle, outcome="passed", profile="nightly")
    assert again.value.run_id == ids[-1]


@pytest.mark.parametrize("error", [KeyError("getpwuid(): uid not found: 1000"), OSError("no login name")])
def test_a_machine_without_a_login_name_acknowledges_as_unknown(monkeypatch, error):
    import getpass

    from harness.storage.history import store as store_module

    def nobody():
        raise error

    monkeypatch.setattr(getpass, "getuser", nobody)
    assert store_module._login_name() == "unknown"


def test_a_run_id_is_never_given_again_after_the_newest_run_is_deleted_by_hand(store):
    # an operator removing a bad run with sqlite3 or psql must not make a later run take its id (and its
    # acknowledgements)
    first = store.record_run(make_document(1), outcome="passed", profile="nightly")
    second = store.record_run(make_document(2), outcome="passed", profile="nightly")
    with store.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM cases WHERE run_id = :id"), {"id": second})
        conn.execute(sa.text("DELETE FROM runs WHERE id = :id"), {"id": second})
    third = store.record_run(make_document(3), outcome="passed", profile="nightly")
    assert first < second < third


def test_a_case_is_acknowledged_only_at_a_run_that_holds_it(store):
    # the run without the case lies between two runs with it and holds a case named after it: only
    # equality of run and of name may match
    gap = make_document(2, cases=3)
    gap["benchmarks"] = [b for b in gap["benchmarks"] if b["fullname"] != case_name(1)]
    store.record_run(make_document(1, cases=3), outcome="passed", profile="nightly")
    without_it = store.record_run(gap, outcome="passed", profile="nightly")
    with_it = store.record_run(make_document(3, cases=3), outcome="passed", profile="nightly")
    with pytest.raises(HistoryError, match=re.escape(f"run {without_it} holds no case {case_name(1)!r}")):
        store.acknowledge(case_name(1), without_it, reason="accepted")
    store.acknowledge(case_name(1), with_it, reason="accepted")
    assert store.acknowledgements() == {(case_name(1), with_it): "accepted"}

"""A lock that another session holds is told as such, naming that session, never as a server that did not answer;
and a failed write on PostgreSQL prints nothing beside its one sentence."""

from __future__ import annotations

import logging
import sqlite3
import time

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from kernelwatch.history.cli import main
from kernelwatch.storage.history import HistoryError, connection, open_store
from kernelwatch.storage.history.schema import CASES
from maintainers.support.synthetic_history import make_document
from tests.support.backends import postgres_url_fixture  # noqa: F401 (pytest fixtures)

# real sessions held open for a second or more each: CI's second pass (tox -e unit -- -m slow)
pytestmark = pytest.mark.slow


@pytest.fixture(name="holder")
def holder_fixture(postgres_url):
    """Another session on the store's database, as psql would be: its application named, its transaction open."""
    engine = sa.create_engine(make_url(postgres_url).set(drivername="postgresql+psycopg"),
                              connect_args={"application_name": "psql by hand"})
    with engine.connect() as conn:
        yield conn
    engine.dispose()


@pytest.mark.parametrize("call", [lambda store: store.runs(),
                                  lambda store: store.record_run(make_document(2), outcome="passed", profile="nightly")],
                         ids=["read", "write"])
def test_a_table_another_session_locked_is_a_lock_wait_naming_that_session(postgres_url, holder, monkeypatch, call):
    monkeypatch.setenv(connection.TIMEOUT_ENV, "1")
    with open_store(postgres_url) as store:
        store.record_run(make_document(1), outcome="passed", profile="nightly")
        holder.execute(sa.text("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE"))
        pid = holder.execute(sa.text("SELECT pg_backend_pid()")).scalar()
        started = time.monotonic()
        with pytest.raises(HistoryError) as raised:
            call(store)
        message = str(raised.value)
        assert time.monotonic() - started < 4
        assert f"waited 1 s for a lock that another session holds (pid {pid}, user " in message, message
        assert "application 'psql by hand', idle in transaction for " in message
        assert "did not answer" not in message and len(message.splitlines()) == 1
        holder.rollback()
        assert [run.id for run in store.runs()] == [1]  # the lock gone, the store reads again


def test_work_given_up_never_commits_once_it_ends(postgres_url, monkeypatch):
    # told it failed, a write must not land later: a lock released, a server that answers again
    monkeypatch.setenv(connection.TIMEOUT_ENV, "1")

    def late_write(store):
        with store.engine.begin() as conn:
            time.sleep(1.5)
            conn.execute(sa.text("CREATE TABLE written_late (x int)"))

    with open_store(postgres_url) as store:
        with pytest.raises(HistoryError, match="did not answer for 1 s"):
            connection.deadline(store.url, "write to", lambda: late_write(store))
        time.sleep(1.5)
        assert "written_late" not in sa.inspect(store.engine).get_table_names()


def test_a_store_whose_migration_lock_is_held_says_so_when_opened(postgres_url, holder, monkeypatch, capsys):
    monkeypatch.setenv(connection.TIMEOUT_ENV, "1")
    holder.execute(sa.text("SELECT pg_advisory_xact_lock(2020120120)"))  # as a migrating process holds it
    assert main(["import", "none.json", "--history", postgres_url]) == 1
    err = capsys.readouterr().err
    assert "cannot open the history store" in err and "waited 1 s for a lock that another session holds" in err
    assert err.count("\n") == 1


def test_a_server_that_answers_while_nothing_is_locked_is_not_said_to_wait_for_a_lock(postgres_url, monkeypatch):
    # a statement that runs past the limit (no lock) is ended by the server: its own words, not a lock
    monkeypatch.setenv(connection.TIMEOUT_ENV, "1")
    with open_store(postgres_url) as store, pytest.raises(HistoryError) as raised:
        connection.deadline(store.url, "read", lambda: _sleep(store, 3))
    assert "lock" not in str(raised.value)


def _sleep(store, seconds: float):
    with store._errors("read"), store.engine.connect() as conn:
        conn.execute(sa.text(f"SELECT pg_sleep({seconds})"))


def test_a_sqlite_writer_held_up_by_another_is_told_it_waited_for_the_write_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "h.sqlite"
    with open_store(str(path)) as store:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(HistoryError, match=r"another connection held its write lock for more than 0.2 s "
                                                   r"\(database is locked\)"):
                store.record_run(make_document(1), outcome="passed", profile="nightly")
        finally:
            other.close()


def test_a_write_that_fails_in_a_pipeline_on_postgresql_leaves_no_line_beside_its_error(postgres_url, caplog, capfd):
    # psycopg logs "error ignored terminating <psycopg.Pipeline [INERROR] ...>" where a batch fails twice: a row
    # the server refuses, then one the driver cannot send (rows the store's own checks would never let through)
    with open_store(postgres_url) as store:
        run_id = store.record_run(make_document(1), outcome="passed", profile="nightly")
        rows = [{"run_id": run_id, "position": 9, "node_id": f"x{i}", "median_s": 1.0, "q25_s": 1.0, "q75_s": 1.0,
                 "sample_count": 1, "throttled": False, "record": {}, "benchmark": {}, "stats": {}, "samples": b"\x01",
                 "sm_clock_mhz_min": 2**40 if i == 0 else 1} for i in range(3)]
        rows[2]["node_id"] = "x\x00"
        with caplog.at_level(logging.DEBUG), pytest.raises(HistoryError, match="integer out of range|NUL"):
            with store._errors("write to"), store.engine.begin() as conn:
                conn.execute(sa.insert(CASES), rows)
    assert "error ignored terminating" not in caplog.text + "".join(capfd.readouterr())


def test_every_sqlite_write_takes_the_write_lock_before_it_reads(tmp_path):
    """A write that read under a shared lock first could not upgrade it while another writer waits (SQLITE_BUSY at
    once, not after the busy timeout): recording, acknowledging and removing each begin IMMEDIATE."""
    begun = []
    with open_store(f"sqlite:///{tmp_path / 'h.sqlite'}") as store:
        sa.event.listen(store.engine, "before_cursor_execute",
                        lambda conn, cursor, statement, *rest: begun.append(statement) if statement.startswith("BEGIN")
                        else None)
        run_id = store.record_run(make_document(1), outcome="passed", profile="nightly")
        case = store.export_run(run_id)["benchmarks"][0]["fullname"]
        writes = {"record": lambda: store.record_run(make_document(2), outcome="passed", profile="nightly"),
                  "acknowledge": lambda: store.acknowledge(case, run_id, reason="meant"),
                  "remove": lambda: store.remove_run(run_id, reason="recorded by mistake")}
        for name, write in writes.items():
            begun.clear()
            write()
            assert "BEGIN IMMEDIATE" in begun, f"{name} began {begun}"

"""A run is one transaction: a writer killed, or failing, midway leaves no part of its run."""

from __future__ import annotations

import os
import signal

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from kernelwatch.storage.history import open_store
from kernelwatch.storage.history.schema import CASES, RUNS
from maintainers.support.synthetic_history import make_document
from tests.support.backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)
from tests.support.store_writer import writer

pytestmark = pytest.mark.slow  # writer processes killed mid-write: run by CI's second pass (tox -e unit -- -m slow)


def _counts(store) -> tuple[int, int]:
    with store.engine.connect() as conn:
        return tuple(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() for table in (RUNS, CASES))


def test_a_writer_killed_inside_its_transaction_leaves_no_partial_run(history_url):
    with open_store(history_url) as store:
        kept = store.record_run(make_document(1), outcome="passed", profile="nightly")
    process = writer(history_url, "hang", "2")
    try:
        assert process.stdout.readline().strip() == "inside"  # its run and cases are inserted, not committed
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    with open_store(history_url) as store:
        assert [run.id for run in store.runs()] == [kept]
        assert _counts(store) == (1, 3)
        assert store.record_run(make_document(2), outcome="passed", profile="nightly") > kept  # nothing is left locked


def test_an_error_inside_the_transaction_leaves_no_partial_run(store):
    @event.listens_for(store.engine, "after_cursor_execute")
    def _fail_after_cases(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO CASES"):
            raise RuntimeError("injected failure after the cases were inserted")

    with pytest.raises(RuntimeError, match="injected failure"):
        store.record_run(make_document(1), outcome="passed", profile="nightly")
    event.remove(store.engine, "after_cursor_execute", _fail_after_cases)
    assert _counts(store) == (0, 0)
    assert store.record_run(make_document(1), outcome="passed", profile="nightly")

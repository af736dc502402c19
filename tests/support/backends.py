"""Fixtures of the history store's tests: every store test runs on SQLite and on a real PostgreSQL server.

A module the test modules import the fixtures from (each defined as NAME_fixture, so that a test's
NAME argument shadows no import), so that a reader sees where each fixture comes from.

PostgreSQL: the server named by $KERNELWATCH_TEST_POSTGRES (`eval "$(.ci/postgres.sh start)"`), one
fresh database per test.  Without it the PostgreSQL tests skip, saying so, except in CI ($CI set),
where a missing server fails them: CI must not pass by skipping them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from kernelwatch.storage.history import open_store

POSTGRES_ENV = "KERNELWATCH_TEST_POSTGRES"
BACKENDS = ("sqlite", "postgresql")


def postgres_admin_url() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if url:
        return url
    if os.environ.get("CI"):
        pytest.fail(f"${POSTGRES_ENV} is not set, and in CI the history store must be tested on PostgreSQL: "
                    f"start a server first (eval \"$(.ci/postgres.sh start)\")", pytrace=False)
    pytest.skip(f"no PostgreSQL server for the history store's tests: set ${POSTGRES_ENV} "
                f"(eval \"$(.ci/postgres.sh start)\") to run them")


@functools.cache
def _admin_engine(url: str) -> sa.Engine:
    """One connection pool per process to the server's own database, for creating and dropping test databases."""
    return sa.create_engine(make_url(url), isolation_level="AUTOCOMMIT")


@contextlib.contextmanager
def fresh_postgres_database():
    """The URL (password included) of a new, empty database on the test server, dropped afterwards.

    FILE_COPY copies the template's files rather than writing them through the WAL: with the test server's
    fsync off, it makes a database in about 24 ms instead of 33 and drops it in 4 instead of 10."""
    url = postgres_admin_url()
    engine = _admin_engine(url)
    name = f"history_test_{uuid.uuid4().hex[:12]}"
    with engine.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}" STRATEGY = FILE_COPY'))
    try:
        yield make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        _drop(engine, name)


def _drop(engine: sa.Engine, name: str) -> None:
    """Drop a test database. FORCE ends the test's own sessions; one of another role (an autovacuum
    worker that just started on it) makes PostgreSQL refuse, so the drop is tried again, then left:
    the server is a throwaway (.ci/postgres.sh stops and removes it)."""
    for attempt in range(5):
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            return
        except sa.exc.ProgrammingError:
            time.sleep(0.2 * (attempt + 1))


@pytest.fixture(name="history_url", params=BACKENDS)
def history_url_fixture(request, tmp_path):
    """The URL of an empty store, on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'history.sqlite'}"
        return
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture(name="postgres_url")
def postgres_url_fixture():
    """The URL of an empty store on the PostgreSQL server."""
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture(name="store")
def store_fixture(history_url):
    with open_store(history_url) as opened:
        yield opened


@contextlib.contextmanager
def sqlite_file(folder):
    """The URL of a SQLite store in `folder`: the SQLite side of a test that runs on either backend."""
    yield f"sqlite:///{folder / 'history.sqlite'}"

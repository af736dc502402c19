"""Fixtures of the history store's tests: every store test runs on SQLite and on a real PostgreSQL server.

A module the test modules import the fixtures from (each defined as NAME_fixture, so that a test's
NAME argument shadows no import), so that a reader sees where each fixture comes from.

PostgreSQL: the server named by $KERNELWATCH_TEST_POSTGRES (`eval "$(.ci/postgres.sh start)"`), one
fresh database per test.  Without it the PostgreSQL tests skip, saying so, except in CI ($CI set),
where a missing server fails them: CI must not pass by skipping them.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path

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
def fresh_postgres_database(template: str | None = None):
    """The URL (password included) of a new database on the test server, dropped afterwards: empty, or a copy
    of the database `template`."""
    url = postgres_admin_url()
    engine = _admin_engine(url)
    name = _create_database(engine, "history_test", template)
    try:
        yield _database_url(url, name)
    finally:
        _drop(engine, name)


def _database_url(url: str, name: str) -> str:
    """The server's URL with database `name`, its password kept (the store connects with it)."""
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def _create_database(engine: sa.Engine, prefix: str, template: str | None = None) -> str:
    """The name of a new database, `prefix` and a random part: empty, or a copy of the database `template`.

    FILE_COPY copies the template's files rather than writing them through the WAL: with the test server's
    fsync off, it makes a database in about 24 ms instead of 33 and drops it in 4 instead of 10."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    copied = f' TEMPLATE "{template}"' if template else ""
    with engine.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"{copied} STRATEGY = FILE_COPY'))
    return name


@functools.cache
def _migrated_postgres(url: str) -> str:
    """The name of a database this process made a store in with open_store, for the `store` fixture to copy."""
    engine = _admin_engine(url)
    name = _create_database(engine, "history_template")
    atexit.register(_drop_at_exit, engine, name)
    open_store(_database_url(url, name)).close()
    return name


@functools.cache
def _migrated_sqlite() -> Path:
    """A SQLite file this process made a store in with open_store, for the `store` fixture to copy."""
    folder = Path(tempfile.mkdtemp(prefix="history-template-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "history.sqlite"
    open_store(f"sqlite:///{path}").close()
    return path


def _copy_sqlite(source: Path, target: Path) -> None:
    """SQLite's own backup: the pages of the file and of its write-ahead log, whatever was checkpointed."""
    with contextlib.closing(sqlite3.connect(source)) as read, contextlib.closing(sqlite3.connect(target)) as write:
        read.backup(write)


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


def _drop_at_exit(engine: sa.Engine, name: str) -> None:
    """A process's template database, dropped as it ends; a server already stopped has nothing left to drop."""
    with contextlib.suppress(sa.exc.SQLAlchemyError):
        _drop(engine, name)


@pytest.fixture(name="history_url", params=BACKENDS)
def history_url_fixture(request, tmp_path):
    """The URL of an empty database, on each backend; where the test asks for `store` as well, a copy of a store
    open_store made earlier in this process, so that `store` only checks its version (on PostgreSQL, open_store
    takes about 50 ms to make a store and 15 to open one; the unit pass makes 262 such stores)."""
    migrated = "store" in request.fixturenames
    if request.param == "sqlite":
        path = tmp_path / "history.sqlite"
        if migrated:
            _copy_sqlite(_migrated_sqlite(), path)
        yield f"sqlite:///{path}"
        return
    with fresh_postgres_database(_migrated_postgres(postgres_admin_url()) if migrated else None) as url:
        yield url


@pytest.fixture(name="postgres_url")
def postgres_url_fixture():
    """The URL of an empty store on the PostgreSQL server."""
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture(name="store")
def store_fixture(history_url):
    """The store at `history_url`, opened (history_url made it a copy of a new store: open_store checks its version)."""
    with open_store(history_url) as opened:
        yield opened


@contextlib.contextmanager
def sqlite_file(folder):
    """The URL of a SQLite store in `folder`: the SQLite side of a test that runs on either backend."""
    yield f"sqlite:///{folder / 'history.sqlite'}"

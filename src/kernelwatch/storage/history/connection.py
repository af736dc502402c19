"""Where the store is, and the engine that reaches it, with its errors in one sentence.

The URL is ``--history URL`` when given, else ``$KERNELWATCH_HISTORY``, else
the default SQLite file: ``$RUNNER_TOOL_CACHE/kernelwatch/history.sqlite`` on
a GitHub runner (its tool cache survives between jobs on a self-hosted
runner), else ``$XDG_CACHE_HOME/kernelwatch/history.sqlite``, else
``~/.cache/kernelwatch/history.sqlite``.  A path names a SQLite file (it has a
``/`` or ends in .sqlite, .sqlite3 or .db, and its folder exists);
``postgresql://`` means psycopg 3 (``postgresql+psycopg://``). Anything else
(a word, a libpq ``key=value`` string) is refused with the forms taken.

A URL is parsed before anything connects, and shown, and every message
scrubbed of its secrets, as src/kernelwatch/storage/history/urls.py says.

PostgreSQL gives up connecting after CONNECT_TIMEOUT_S, ends a statement after
STATEMENT_TIMEOUT_S, and, where the server stops answering a connection it
holds (no error, no reply), `deadline` gives up after the same time, so that no
command and no nightly waits for ever. Shortly before that limit (PROBE_S, or
half the limit where that is shorter), it asks the server, on a new connection,
what the command's session waits for: a lock that another session holds is
told as such, naming that session, and only a server that answers neither is
said not to answer.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from .urls import port_problem, raw_port_problem, safe_url, scrub

__all__ = ["ENV_URL", "FORMS", "HistoryError", "check_folder", "create_engine", "deadline", "default_path",
           "resolve_url", "safe_url", "scrub", "timeout_s", "translated_errors"]

ENV_URL = "KERNELWATCH_HISTORY"
FILE_NAME = Path("kernelwatch") / "history.sqlite"
BUSY_TIMEOUT_S = 60  # a writer waits this long for another one (SQLite)
CONNECT_TIMEOUT_S = 10  # PostgreSQL
# PostgreSQL: a statement (the server ends it) and a whole operation (this process gives up) may take this
# long; $KERNELWATCH_HISTORY_TIMEOUT sets it (seconds). The largest write, a nightly's 90 cases, takes 0.05 s.
STATEMENT_TIMEOUT_S = 60
TIMEOUT_ENV = "KERNELWATCH_HISTORY_TIMEOUT"
# the timeout must be below this (11.6 days): PostgreSQL's statement_timeout holds at most 2,147,483 s
TIMEOUT_LIMIT_S = 1e6
PROBE_S = 2.0  # how long `deadline` asks the server what a session that did not answer waits for
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
FORMS = ("a SQLite file (/path/history.sqlite, ./history.db) or a URL (sqlite:///PATH, "
         "postgresql://USER@HOST:PORT/DB, the password in ~/.pgpass or $PGPASSWORD)")


class HistoryError(Exception):
    """The history store cannot be used: unreachable, refused, corrupt, of a newer schema, or a bad request."""


def default_path() -> Path:
    """The default SQLite file (see the module docstring)."""
    for variable in ("RUNNER_TOOL_CACHE", "XDG_CACHE_HOME"):
        if os.environ.get(variable):
            return Path(os.environ[variable]) / FILE_NAME
    return Path.home() / ".cache" / FILE_NAME


def timeout_s() -> float:
    """STATEMENT_TIMEOUT_S, or $KERNELWATCH_HISTORY_TIMEOUT; HistoryError for a value that is no positive number
    below TIMEOUT_LIMIT_S."""
    raw = os.environ.get(TIMEOUT_ENV)
    if not raw:
        return STATEMENT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not (value > 0 and value < TIMEOUT_LIMIT_S):
        raise HistoryError(f"${TIMEOUT_ENV}={raw!r} is not a number of seconds")
    return value


def resolve_url(url: str | None = None) -> URL:
    """The SQLAlchemy URL the store uses for ``url`` (see the module docstring)."""
    text = url or os.environ.get(ENV_URL) or ""
    if not text:
        path = default_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        return URL.create("sqlite", database=str(path))
    if "://" not in text:
        if "=" in text and not text.strip().startswith(("/", ".", "~")):
            raise HistoryError(f"{scrub(text)!r} looks like a libpq connection string, which is not taken "
                               f"(it would be read as a file name); give {FORMS}")
        path = Path(text).expanduser()
        if "/" not in text and not text.endswith(SQLITE_SUFFIXES):
            raise HistoryError(f"{scrub(text)!r} is neither a path nor a URL; give {FORMS}")
        return URL.create("sqlite", database=str(path))
    try:
        parsed = make_url(text)
    except (ArgumentError, ValueError):  # ValueError: a port that int() does not read
        problem = raw_port_problem(text)
        raise HistoryError(f"{scrub(text)!r} is not a database URL" + (f": {problem}" if problem else "")
                           + f"; give {FORMS}") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise HistoryError(f"{safe_url(parsed)}: the history store runs on SQLite or PostgreSQL only")
    problem = port_problem(parsed)
    if problem:
        raise HistoryError(f"{safe_url(parsed)}: {problem}; give {FORMS}")
    return parsed


def check_folder(url: URL) -> None:
    """A SQLite store's folder must exist (a mistyped path is not a new store somewhere unexpected)."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return
    folder = Path(url.database).expanduser().resolve().parent
    if not folder.is_dir():
        raise HistoryError(f"the folder of the history store {safe_url(url)} does not exist ({folder}): "
                           f"create it, or give {FORMS}")


def _sqlite_setup(engine: sa.Engine) -> None:
    """WAL (readers never wait for a writer), a busy timeout, foreign keys, and BEGIN IMMEDIATE
    for writes: a writer takes the lock when its transaction starts, so two writers queue
    instead of one failing on a lock it could not upgrade."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # transactions begin in _begin, not in the driver
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
        _use_wal(cursor)
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("history_write") else "BEGIN")


def _use_wal(cursor) -> None:
    """Switch the file to WAL, once: the mode is stored in the file, so a file already in WAL is left alone.

    SQLite refuses the switch at once ("database is locked"), without its busy timeout, while
    another connection writes to a file not yet in WAL: two processes opening a new store at the
    same moment. The switch is then retried for up to BUSY_TIMEOUT_S, as a write would wait.
    """
    import sqlite3

    if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
        return
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def create_engine(url: URL) -> sa.Engine:
    """An engine for ``url``: SQLite set up for concurrent writers, PostgreSQL with a connect timeout."""
    try:
        if url.get_backend_name() == "sqlite":
            engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_S})
            _sqlite_setup(engine)
            return engine
        limit = timeout_s()
        statement_ms = max(1, round(limit * 1000))  # PostgreSQL reads 0 as no limit at all
        engine = sa.create_engine(url, pool_pre_ping=True, pool_timeout=limit,
                                  connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "kernelwatch",
                                                "options": f"-c statement_timeout={statement_ms}",
                                                "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5,
                                                "keepalives_count": 3})
        _track_sessions(engine)
        _quiet_pipeline_warning()
        return engine
    except (NoSuchModuleError, ImportError) as exc:
        hint = " (pip install 'kernelwatch[postgresql]')" if url.get_backend_name() == "postgresql" else ""
        raise HistoryError(f"{safe_url(url)}: its database driver is not installed ({exc}){hint}") from None


# thread -> the PostgreSQL session (its server process id) of the connection it took last: what `deadline`
# asks the server about when that thread's work did not answer
_SESSIONS: dict[int, int] = {}
# the threads whose work `deadline` gave up: told it failed, it must not commit later (a lock released after)
_ABANDONED: set[int] = set()
_ABANDONING = threading.Lock()  # a thread is marked abandoned only while its work has not ended


def _track_sessions(engine: sa.Engine) -> None:
    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection, _record, _proxy):
        pid = getattr(getattr(dbapi_connection, "info", None), "backend_pid", None)
        if pid:
            _SESSIONS[threading.get_ident()] = pid

    @event.listens_for(engine, "commit")
    def _commit(_conn):
        if threading.get_ident() in _ABANDONED:
            raise HistoryError("given up after the time limit: this work is not committed")


class _NoTerminatingNoise(logging.Filter):
    """psycopg logs "error ignored terminating <psycopg.Pipeline [INERROR] ...>" where a statement of a pipeline
    failed and closing the pipeline failed again: the first error is raised (and told in one sentence), so
    this second line only repeats it, with the server's address, outside that sentence."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored terminating")


_NOISE_FILTER = _NoTerminatingNoise()


def _quiet_pipeline_warning() -> None:
    logger = logging.getLogger("psycopg")
    if _NOISE_FILTER not in logger.filters:
        logger.addFilter(_NOISE_FILTER)


def _reason(exc: BaseException, url: URL) -> str:
    """The driver's own words, on one line, without a password."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    text = "; ".join(lines[:2]) or type(orig).__name__
    return scrub(text, url).rstrip(".")


def deadline(url: URL, doing: str, work):
    """`work()`, given up (HistoryError) where a PostgreSQL server stops answering for longer than
    `timeout_s()`. SQLite (a local file, with its busy timeout) runs as called.

    The work runs in a daemon thread: a connection the server holds but never answers blocks its
    thread in the driver, with no error and no way to interrupt it; the caller stops waiting and
    says so, and the thread goes with the process (or, where the server answers again, ends without
    committing: a write told it failed never lands later). Before it says so, it asks the server what
    the work's session waits for (`_blocking_sessions`): a lock another session holds is told as such."""
    if url.get_backend_name() != "postgresql":
        return work()
    outcome: dict = {}

    def run():
        _SESSIONS.pop(threading.get_ident(), None)
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
        finally:
            with _ABANDONING:
                outcome["done"] = True
                _SESSIONS.pop(threading.get_ident(), None)
                _ABANDONED.discard(threading.get_ident())

    worker = threading.Thread(target=run, name="kernelwatch-history", daemon=True)
    started = time.monotonic()
    worker.start()
    limit = timeout_s()
    # the server ends a statement after the same limit: what it waits for is asked while it still waits
    ask = min(PROBE_S, limit / 2)
    worker.join(limit - ask)
    session = _SESSIONS.get(worker.ident) if worker.is_alive() else None
    blockers = _blocking_sessions(url, session, ask) if session else None
    worker.join(max(0.0, limit - (time.monotonic() - started)))
    with _ABANDONING:
        if "done" not in outcome:
            _ABANDONED.add(worker.ident)
    waited_for_lock = blockers and (worker.is_alive() or getattr(outcome.get("error"), "sqlstate", None) == "57014")
    if waited_for_lock:
        raise HistoryError(f"cannot {doing} the history store {safe_url(url)}: waited {limit:g} s for a lock "
                           f"that another session holds ({'; '.join(blockers)}): end that session, or try "
                           f"again once it is done (${TIMEOUT_ENV} sets how long to wait)")
    if worker.is_alive():
        raise HistoryError(f"cannot {doing} the history store {safe_url(url)}: the server did not answer for "
                           f"{limit:g} s (${TIMEOUT_ENV} sets the limit)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


_BLOCKERS = sa.text(
    "SELECT pid, usename, application_name, state, extract(epoch FROM now() - xact_start) AS held_s "
    "FROM pg_stat_activity WHERE pid = ANY(pg_blocking_pids(:pid)) ORDER BY pid")


def _blocking_sessions(url: URL, pid: int, within: float) -> list[str] | None:
    """The sessions that hold the lock session `pid` waits for, in words ("pid 123, user u, application 'a', idle in
    transaction for 75 s in its transaction"); [] where it waits for no lock, None where the server does not
    answer within `within` seconds (a new connection of the same URL)."""
    found: dict = {}

    def probe():
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool, connect_args={
            "connect_timeout": max(2, round(within)), "application_name": "kernelwatch",
            "options": f"-c statement_timeout={max(1, round(within * 1000))}"})
        try:
            with engine.connect() as conn:
                found["rows"] = conn.execute(_BLOCKERS, {"pid": pid}).all()
        except Exception:  # noqa: BLE001 (a server that cannot be asked is one that did not answer)
            pass
        finally:
            engine.dispose()

    prober = threading.Thread(target=probe, name="kernel-suite-history-probe", daemon=True)
    prober.start()
    prober.join(within)
    if "rows" not in found:
        return None
    return [f"pid {row.pid}, user {row.usename or '?'}, application {row.application_name or '(none)'!r}, "
            f"{row.state or 'state unknown'}" + (f" for {float(row.held_s):.0f} s in its transaction"
                                                 if row.held_s is not None else "")
            for row in found["rows"]]


@contextlib.contextmanager
def translated_errors(url: URL, doing: str):
    """Re-raise a database error as one HistoryError sentence naming the store (password hidden)."""
    try:
        yield
    except HistoryError:
        raise
    except DBAPIError as exc:
        reason = _reason(exc, url)
        sqlstate = getattr(exc.orig, "sqlstate", None)
        if url.get_backend_name() == "sqlite" and "not a database" in reason:
            reason = f"the file is not a SQLite database ({reason})"
        elif url.get_backend_name() == "sqlite" and "database is locked" in reason:
            reason = (f"another connection held its write lock for more than {BUSY_TIMEOUT_S} s ({reason}): "
                      f"try again once it is done")
        error = HistoryError(f"cannot {doing} the history store {safe_url(url)}: {reason}")
        error.sqlstate = sqlstate  # 57014: a statement the server ended (deadline tells a lock wait so)
        raise error from None
    except SQLAlchemyError as exc:
        raise HistoryError(f"cannot {doing} the history store {safe_url(url)}: {_reason(exc, url)}") from None

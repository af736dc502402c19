"""A store that cannot be used is one HistoryError sentence naming it, never showing a password."""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from kernelwatch.history.cli import main
from kernelwatch.storage.history import HistoryError, connection, default_path, open_store, resolve_url
from maintainers.support.synthetic_history import GPU_A, case_name, make_document
from tests.support.backends import (  # noqa: F401 (pytest fixtures)
    history_url_fixture,
    postgres_url_fixture,  # noqa: F401 (pytest fixtures)
    store_fixture,
)

SECRET = "s3cret-Passw0rd"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once closed


def test_a_refused_connection_is_one_error_with_the_password_hidden(capsys):
    url = f"postgresql://kernel:{SECRET}@127.0.0.1:{_closed_port()}/history"
    with pytest.raises(HistoryError) as raised:
        open_store(url)
    message = str(raised.value)
    assert SECRET not in message and "kernel:***@127.0.0.1" in message
    assert "Connection refused" in message

    assert main(["runs", "--history", url]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert SECRET not in captured.err and "Traceback" not in captured.err


def test_a_wrong_password_is_refused_without_showing_it(postgres_url):
    history_url = postgres_url
    wrong = make_url(history_url).set(password=SECRET).render_as_string(hide_password=False)
    with pytest.raises(HistoryError) as raised:
        open_store(wrong)
    assert SECRET not in str(raised.value) and "***" in str(raised.value)
    with open_store(history_url) as store:
        assert SECRET not in repr(store) and make_url(history_url).password not in repr(store)


def test_a_corrupt_sqlite_file_is_an_error_naming_it(tmp_path, capsys):
    corrupt = tmp_path / "history.sqlite"
    corrupt.write_bytes(b"this is not a database\n" * 200)
    with pytest.raises(HistoryError, match=f"{corrupt}: the file is not a SQLite database"):
        open_store(str(corrupt))
    assert main(["import", "nothing.json", "--history", str(corrupt)]) == 1
    assert "not a SQLite database" in capsys.readouterr().err


def test_a_url_of_another_database_or_no_url_at_all_is_refused():
    with pytest.raises(HistoryError, match="SQLite or PostgreSQL only"):
        open_store("mysql://user:pw@host/db")
    with pytest.raises(HistoryError, match="is not a database URL") as raised:
        open_store(f"post gres://user:{SECRET}@host/db")
    assert SECRET not in str(raised.value)


def test_the_default_store_is_in_the_runner_tool_cache_else_the_user_cache(monkeypatch, tmp_path):
    for variable in ("RUNNER_TOOL_CACHE", "XDG_CACHE_HOME", "KERNELWATCH_HISTORY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".cache" / "kernelwatch" / "history.sqlite"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "kernelwatch" / "history.sqlite"
    monkeypatch.setenv("RUNNER_TOOL_CACHE", str(tmp_path / "toolcache"))
    assert Path(resolve_url(None).database) == tmp_path / "toolcache" / "kernelwatch" / "history.sqlite"
    assert (tmp_path / "toolcache" / "kernelwatch").is_dir()
    monkeypatch.setenv("KERNELWATCH_HISTORY", "postgresql://fleet@db.example/history")
    assert resolve_url(None).render_as_string() == "postgresql+psycopg://fleet@db.example/history"


@pytest.mark.parametrize("command", [["runs"], ["export", "1"], ["changes"], ["site", "SITE"],
                                     ["acknowledge", "c", "1", "--reason", "x"], ["remove-run", "1", "--reason", "x"]])
def test_a_command_that_reads_never_makes_a_store_that_is_not_there(tmp_path, capsys, command):
    path = tmp_path / "none.sqlite"
    argv = [str(tmp_path / "site") if word == "SITE" else word for word in command]
    assert main([*argv, "--history", str(path)]) == 1
    assert capsys.readouterr().err.strip() == (f"error: there is no history store at sqlite:///{path}: a nightly "
                                               f"with --history makes it, or `import`")
    assert not path.exists()


def test_a_command_that_reads_an_empty_postgresql_database_says_it_holds_no_store(postgres_url, capsys):
    assert main(["runs", "--history", postgres_url]) == 1
    err = capsys.readouterr().err
    assert "holds no history store" in err and "***" in err


@pytest.mark.parametrize("value", ["history.sqlite", "history.sqlite3", "history.db", "stores/history",
                                   "~/history"])
def test_a_file_name_with_a_sqlite_suffix_or_any_path_names_a_sqlite_file(value):
    url = resolve_url(value)
    assert url.get_backend_name() == "sqlite" and url.database == str(Path(value).expanduser())


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_store_opens_from_any_working_directory_even_a_removed_one(url, monkeypatch, tmp_path):
    (tmp_path / "gone").mkdir()
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()  # a nightly's workspace cleaned away under it: an in-memory store has no folder
    with open_store(url) as store:
        assert store.runs() == []


def test_a_postgresql_database_name_is_never_taken_for_a_file_in_a_folder(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no folder "nightly" here
    with pytest.raises(HistoryError) as raised:
        open_store(f"postgresql://kernel:{SECRET}@127.0.0.1:{_closed_port()}/nightly/history")
    assert "Connection refused" in str(raised.value) and "does not exist" not in str(raised.value)


@pytest.mark.parametrize("value, words", [
    ("notaurl", "is neither a path nor a URL; give a SQLite file"),
    ("host=127.0.0.1 dbname=h user=u password=hunter2", "looks like a libpq connection string"),
    ("/nonexistent/dir/h.sqlite", "does not exist (/nonexistent/dir)"),
    ("sqlite:////nonexistent/dir/h.sqlite", "does not exist (/nonexistent/dir)"),
    ("nonexistent-dir/h.sqlite", "nonexistent-dir/h.sqlite does not exist ("),  # relative to the working directory
])
def test_a_history_value_that_is_no_store_is_refused_naming_the_forms_and_no_password(value, words, capsys,
                                                                                      monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert main(["runs", "--history", value]) == 1
    err = capsys.readouterr().err
    assert words in err and "hunter2" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("url", ["postgresql://suite@127.0.0.1:9/h?password=hunter2",
                                 "postgresql://suite:hunter2@127.0.0.1:9/h"])
def test_a_password_in_either_url_form_is_never_shown(url, capsys):
    assert main(["runs", "--history", url]) == 1
    err = capsys.readouterr().err
    assert "hunter2" not in err and "***" in err and "127.0.0.1:9" in err


def test_names_from_the_store_reach_the_terminal_with_their_control_characters_escaped(tmp_path, capsys):
    doc = make_document(0)
    doc["commit_info"]["branch"] = "main\x1b[2J\x1b[31mred"
    with open_store(f"sqlite:///{tmp_path / 'h.sqlite'}") as store:
        store.record_run(doc, outcome="passed", profile="nightly")
    assert main(["runs", "--history", str(tmp_path / "h.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "main\\x1b[2J\\x1b[31mred" in out


def test_a_run_limit_below_one_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["runs", "--limit", "-1"])
    assert exited.value.code == 2 and "not a whole number of runs, 1 or more" in capsys.readouterr().err


class FreezingProxy:
    """A TCP relay to the test server that, once frozen, passes nothing either way: a server that holds
    its connections and stops answering (no error, no reply), without stopping the real server."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.frozen = target, threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._relay, args=(source, sink), daemon=True).start()

    def _relay(self, source, sink):
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data:
                return
            while self.frozen.is_set():
                time.sleep(0.05)  # hold what came, send nothing
            try:
                sink.sendall(data)
            except OSError:
                return


def _within(seconds: float, work) -> BaseException | None:
    """What `work()` raised (None: it returned) where it ended within ``seconds``; fails the test where it hangs
    (its thread is left blocked in the driver, a daemon)."""
    ended: list = []

    def run():
        try:
            work()
            ended.append(None)
        except BaseException as exc:  # handed to the test's thread
            ended.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert ended, f"still waiting after {seconds} s for a server that stopped answering"
    return ended[0]


@contextlib.contextmanager
def _store_that_freezes(postgres_url, monkeypatch, timeout_s: int):
    """A PostgreSQL store of one run (id 1), whose server stops answering (FreezingProxy) once that run is in;
    the store gives up after `timeout_s` ($KERNELWATCH_HISTORY_TIMEOUT)."""
    open_store(postgres_url).close()  # migrated first, outside the timeout: six steps on a loaded runner take a while
    url = make_url(postgres_url)
    proxy = FreezingProxy((url.host, url.port))
    through = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    monkeypatch.setenv("KERNELWATCH_HISTORY_TIMEOUT", str(timeout_s))
    with open_store(through) as store:
        store.record_run(make_document(0), outcome="passed", profile="nightly")
        proxy.frozen.set()
        yield store


@pytest.fixture(name="frozen_store")
def frozen_store_fixture(postgres_url, monkeypatch):
    with _store_that_freezes(postgres_url, monkeypatch, 1) as store:
        yield store


@pytest.mark.slow
@pytest.mark.parametrize("call", [
    lambda store: store.schema_version(),
    lambda store: store.record_run(make_document(1), outcome="passed", profile="nightly"),
    lambda store: store.runs(),
    lambda store: store.acknowledge(case_name(0), 1, reason="intended"),
    lambda store: store.acknowledgements(),
    lambda store: store.export_run(1),
    lambda store: store.reference_history([GPU_A], profile="nightly", limit_runs=5),
    lambda store: store.case_series(),
    lambda store: store.case_record(case_name(0), 1),
    lambda store: store.accuracy_history(None, any_profile=True),
], ids=["schema_version", "record_run", "runs", "acknowledge", "acknowledgements", "export_run",
        "reference_history", "case_series", "case_record", "accuracy_history"])
def test_every_read_and_write_gives_up_on_a_server_that_stops_answering(frozen_store, call):
    raised = _within(5, lambda: call(frozen_store))
    assert isinstance(raised, HistoryError) and "the server did not answer for 1 s" in str(raised)


@pytest.mark.slow
def test_a_postgresql_store_that_wrote_closes_at_once_when_its_server_stops_answering(frozen_store):
    # only SQLite checkpoints a log at close; a PostgreSQL store just lets its connections go
    assert _within(5, frozen_store.close) is None


@pytest.mark.slow
def test_a_server_that_stops_answering_is_given_up_after_the_timeout_not_waited_for(postgres_url, monkeypatch):
    with _store_that_freezes(postgres_url, monkeypatch, 2) as store:
        started = time.monotonic()
        with pytest.raises(HistoryError, match=r"the server did not answer for 2 s \(\$KERNELWATCH_HISTORY_TIMEOUT"):
            store.runs()
        assert time.monotonic() - started < 5
        with pytest.raises(HistoryError, match="did not answer"):
            store.record_run(make_document(1), outcome="passed", profile="nightly")
    assert SECRET not in postgres_url  # (the message names the store with its password hidden, as every one)


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan", "inf", "1e9", "1000000"])
def test_a_timeout_that_is_no_number_of_seconds_is_refused(monkeypatch, value):
    # refused before any connection is tried: the store's server is never reached
    monkeypatch.setenv("KERNELWATCH_HISTORY_TIMEOUT", value)
    with pytest.raises(HistoryError, match=rf"KERNELWATCH_HISTORY_TIMEOUT='{value}' is not a number of seconds"):
        open_store(f"postgresql://kernel:{SECRET}@127.0.0.1:{_closed_port()}/history")


def test_a_timeout_just_under_the_limit_postgresql_can_hold_is_taken(monkeypatch):
    # TIMEOUT_LIMIT_S, 1e6 s, is refused (above); just under it is a timeout
    monkeypatch.setenv("KERNELWATCH_HISTORY_TIMEOUT", "999999.5")
    assert connection.timeout_s() == 999999.5


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


def test_the_default_store_opens_again_in_its_existing_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(connection.ENV_URL, raising=False)
    monkeypatch.setattr(connection, "default_path", lambda: tmp_path / "cache" / "history.sqlite")
    first = connection.resolve_url(None)
    assert connection.resolve_url(None) == first and (tmp_path / "cache").is_dir()


def test_a_postgresql_engine_gives_up_connecting_after_ten_seconds_and_checks_pooled_connections(monkeypatch):
    made = {}
    real = sa.create_engine
    monkeypatch.setattr(connection.sa, "create_engine", lambda url, **kwargs: made.update(kwargs) or real("sqlite://"))
    connection.create_engine(sa.engine.make_url("postgresql+psycopg://u:secret@127.0.0.1/db"))
    # the 10 s, the 60 s statement timeout and the pre-ping are docs/method.md's promise ("The history store")
    assert made == {"pool_pre_ping": True, "pool_timeout": 60, "connect_args": {
        "connect_timeout": 10, "application_name": "kernelwatch", "options": "-c statement_timeout=60000",
        "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}}


def test_a_timeout_under_a_millisecond_still_limits_each_statement_on_the_server(monkeypatch, postgres_url):
    # PostgreSQL reads a statement_timeout of 0 as none at all: 0.4 ms must not round down to it
    monkeypatch.setenv(connection.TIMEOUT_ENV, "0.0004")
    engine = connection.create_engine(make_url(postgres_url))
    try:
        with pytest.raises(sa.exc.OperationalError) as raised, engine.connect() as conn:
            conn.execute(sa.text("SELECT pg_sleep(0.2)"))
    finally:
        engine.dispose()
    # 57014 is query_canceled. Its text is "due to statement timeout", or "due to user request" when the
    # 1 ms timer fired as an earlier statement of the connection ended: the server then reports the
    # pending cancel at the next statement without its reason (seen in CI under load, on SQLAlchemy's
    # first-connect query). Nothing else in this test cancels a statement.
    assert raised.value.orig.sqlstate == "57014", raised.value


@pytest.mark.parametrize("url", ["postgresql+nosuchdriver://u:secret@h/db",  # no such dialect (NoSuchModuleError)
                                 "postgresql+pg8000://u:secret@h/db"])  # a dialect whose driver is not installed
def test_a_missing_database_driver_is_one_history_error_without_the_password(url):
    if "pg8000" in url and importlib.util.find_spec("pg8000") is not None:
        pytest.skip("pg8000 is installed here")
    with pytest.raises(HistoryError, match="its database driver is not installed") as raised:
        connection.create_engine(sa.engine.make_url(url))
    assert "secret" not in str(raised.value)
    assert str(raised.value).endswith("(pip install 'kernelwatch[postgresql]')")  # the extra that brings psycopg


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


def test_a_sqlite_store_is_worked_in_the_callers_own_thread():
    # only a PostgreSQL server can stop answering; SQLite's connections belong to the thread that made them
    assert connection.deadline(make_url("sqlite:///h.sqlite"), "read", threading.current_thread) is \
        threading.current_thread()
    assert connection.deadline(make_url("postgresql://u@127.0.0.1/db"), "read", threading.current_thread) is not \
        threading.current_thread()


def test_a_query_password_echoed_alone_in_a_drivers_message_is_hidden_and_nothing_else_is():
    from sqlalchemy.engine import make_url

    from kernelwatch.storage.history.connection import scrub

    message = 'FATAL: password "hunter2" rejected for 127.0.0.1:9'
    url = make_url("postgresql://suite@127.0.0.1:9/h?password=hunter2")
    assert scrub(message, url) == 'FATAL: password "***" rejected for 127.0.0.1:9'
    # a key given twice is a tuple of values: each one hidden
    twice = make_url("postgresql://suite@127.0.0.1:9/h?password=hunter2&password=swordfish")
    assert scrub("tried hunter2, then swordfish", twice) == "tried ***, then ***"


# ---- the URL, word for word ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, message", [
    ("post gres://u@h/db", "'post gres://u@h/db' is not a database URL; give {forms}"),
    ("postgresql://u@h:port/db",
     "'postgresql://u@h:port/db' is not a database URL: its port 'port' is not a number from 1 to 65535; give {forms}"),
    ("postgresql://u@h:99999/db",
     "postgresql+psycopg://u@h:99999/db: its port '99999' is not a number from 1 to 65535; give {forms}"),
    ("mysql://u:pw@h/db", "mysql://u:***@h/db: the history store runs on SQLite or PostgreSQL only"),
    ("history", "'history' is neither a path nor a URL; give {forms}"),
    ("user=u password=pw", "'user=u password=***' looks like a libpq connection string, which is not taken "
                           "(it would be read as a file name); give {forms}"),
])
def test_a_history_value_that_is_no_store_is_refused_word_for_word(value, message):
    with pytest.raises(HistoryError) as refused:
        resolve_url(value)
    assert str(refused.value) == message.format(forms=connection.FORMS)


@pytest.mark.parametrize("value", ["/tmp/a=b/history.sqlite", "./a=b.sqlite", "~/a=b.db", " /a=b"])
def test_a_path_holding_an_equals_sign_is_a_path_not_a_libpq_string(value):
    url = resolve_url(value)
    assert url.get_backend_name() == "sqlite" and url.database == str(Path(value).expanduser())


@pytest.mark.parametrize("value, url", [
    ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
    ("postgres://u@h:5433/db", "postgresql+psycopg://u@h:5433/db"),
    ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
    ("sqlite:///h.sqlite", "sqlite:///h.sqlite"),
])
def test_a_postgresql_url_is_read_with_psycopg_3(value, url):
    assert resolve_url(value).render_as_string() == url


@pytest.mark.parametrize("url", ["postgresql://u@h/nightly/history", "sqlite://", "sqlite:///:memory:"])
def test_only_a_sqlite_file_has_a_folder_that_must_exist(url, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no folder "nightly" here
    connection.check_folder(make_url(url))


# ---- the timeout ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, seconds", [(None, 60), ("", 60), ("0.001", 0.001), ("1e-9", 1e-9), ("90", 90.0),
                                            ("999999.99", 999999.99)])
def test_the_timeout_is_sixty_seconds_or_any_positive_number_below_a_million(monkeypatch, value, seconds):
    if value is None:
        monkeypatch.delenv(connection.TIMEOUT_ENV, raising=False)
    else:
        monkeypatch.setenv(connection.TIMEOUT_ENV, value)
    assert connection.timeout_s() == seconds


# ---- a SQLite engine ----------------------------------------------------------------------------------------------

def test_a_sqlite_connection_is_in_wal_with_foreign_keys_and_a_minute_of_busy_timeout(tmp_path):
    engine = connection.create_engine(make_url(f"sqlite:///{tmp_path / 'h.sqlite'}"))
    try:
        with engine.connect() as conn:
            pragmas = {name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()
                       for name in ("journal_mode", "foreign_keys", "busy_timeout")}
    finally:
        engine.dispose()
    assert pragmas == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 60_000}


def test_a_file_already_in_wal_is_not_switched_again():
    class InWal(SwitchingCursor):
        def execute(self, statement):
            if statement == "PRAGMA journal_mode":
                return type("Row", (), {"fetchone": lambda _: ("WAL",)})()
            return super().execute(statement)

    cursor = InWal([])
    connection._use_wal(cursor)
    assert cursor.switches == 0


def _database_error(text: str) -> sa.exc.DBAPIError:
    return sa.exc.OperationalError("SELECT 1", {}, sqlite3.OperationalError(text))


@pytest.mark.parametrize("url, text, message", [
    ("sqlite:///h.sqlite", "database is locked",
     "cannot write to the history store sqlite:///h.sqlite: another connection held its write lock for more than "
     "60 s (database is locked): try again once it is done"),
    ("sqlite:///h.sqlite", "file is not a database",
     "cannot write to the history store sqlite:///h.sqlite: the file is not a SQLite database (file is not a "
     "database)"),
    ("sqlite:///h.sqlite", "disk I/O error.", "cannot write to the history store sqlite:///h.sqlite: disk I/O error"),
    ("postgresql+psycopg://u:pw@h/db", "database is locked",
     "cannot write to the history store postgresql+psycopg://u:***@h/db: database is locked"),
    ("postgresql+psycopg://u:pw@h/db", "FATAL: password pw rejected\nDETAIL: for u\nHINT: more",
     "cannot write to the history store postgresql+psycopg://u:***@h/db: FATAL: password *** rejected; DETAIL: for u"),
])
def test_a_database_error_is_one_sentence_worded_for_its_backend(url, text, message):
    with pytest.raises(HistoryError) as raised, connection.translated_errors(make_url(url), "write to"):
        raise _database_error(text)
    assert str(raised.value) == message and raised.value.sqlstate is None


def test_another_error_of_sqlalchemy_is_one_sentence_too():
    with pytest.raises(HistoryError) as raised, connection.translated_errors(make_url("sqlite:///h.sqlite"), "read"):
        raise sa.exc.ArgumentError("no such option\n")
    assert str(raised.value) == "cannot read the history store sqlite:///h.sqlite: no such option"


def test_a_history_error_passes_through_as_it_is():
    original = HistoryError("given up")
    with pytest.raises(HistoryError) as raised, connection.translated_errors(make_url("sqlite:///h.sqlite"), "read"):
        raise original
    assert raised.value is original


# ---- a PostgreSQL engine's sessions, and the deadline -------------------------------------------------------------

def test_a_postgresql_engine_remembers_each_threads_session_and_refuses_a_commit_given_up():
    engine = sa.create_engine("sqlite://")
    connection._track_sessions(engine)
    dbapi = type("Connection", (), {"info": type("Info", (), {"backend_pid": 4242})()})()
    me = threading.get_ident()
    try:
        engine.pool.dispatch.checkout(dbapi, None, None)
        assert connection._SESSIONS[me] == 4242
        engine.dispatch.commit(None)  # work not given up commits
        connection._ABANDONED.add(me)
        with pytest.raises(HistoryError) as refused:
            engine.dispatch.commit(None)
        assert str(refused.value) == "given up after the time limit: this work is not committed"
    finally:
        connection._SESSIONS.pop(me, None)
        connection._ABANDONED.discard(me)
        engine.dispose()


PG = make_url("postgresql+psycopg://u:pw@127.0.0.1:9/h")


def test_the_deadline_hands_the_works_value_or_its_error_to_the_caller():
    assert connection.deadline(PG, "read", lambda: 7) == 7

    def fails():
        raise KeyboardInterrupt("stopped")  # even what is no Exception

    with pytest.raises(KeyboardInterrupt, match="stopped"):
        connection.deadline(PG, "read", fails)


@pytest.mark.slow  # sleeps of 0.3-0.8 s against the deadline: CI's second pass (tox -e unit -- -m slow)
def test_work_that_ends_after_the_probe_but_within_the_limit_is_waited_for(monkeypatch):
    monkeypatch.setenv(connection.TIMEOUT_ENV, "0.8")  # probed at 0.4 s (half the limit), given up at 0.8 s
    assert connection.deadline(PG, "read", lambda: time.sleep(0.5) or "done") == "done"


def _session_waiting(seconds: float, ident: list | None = None, error: BaseException | None = None):
    """Work whose PostgreSQL session (pid 77) waits `seconds`, then fails with `error` (or returns)."""
    def work():
        connection._SESSIONS[threading.get_ident()] = 77
        if ident is not None:
            ident.append(threading.get_ident())
        time.sleep(seconds)
        if error is not None:
            raise error
        return "late"
    return work


def test_the_server_is_asked_what_the_work_waits_for_at_half_a_short_limit(monkeypatch):
    asked = []
    monkeypatch.setenv(connection.TIMEOUT_ENV, "0.2")
    monkeypatch.setattr(connection, "_blocking_sessions", lambda url, pid, within: asked.append((url, pid, within)))
    started = time.monotonic()
    with pytest.raises(HistoryError) as raised:
        connection.deadline(PG, "read", _session_waiting(0.5))
    assert asked == [(PG, 77, 0.1)] and 0.2 <= time.monotonic() - started < 0.6
    assert str(raised.value) == ("cannot read the history store postgresql+psycopg://u:***@127.0.0.1:9/h: the server "
                                 "did not answer for 0.2 s ($KERNELWATCH_HISTORY_TIMEOUT sets the limit)")


@pytest.mark.slow  # sleeps of 0.3-0.8 s against the deadline: CI's second pass (tox -e unit -- -m slow)
def test_the_server_is_asked_at_most_probe_s_before_the_limit(monkeypatch):
    asked = []
    monkeypatch.setenv(connection.TIMEOUT_ENV, "0.3")
    monkeypatch.setattr(connection, "PROBE_S", 0.05)
    monkeypatch.setattr(connection, "_blocking_sessions",
                        lambda url, pid, within: asked.append((pid, within, time.monotonic())) or [])
    started = time.monotonic()
    with pytest.raises(HistoryError, match="the server did not answer for 0.3 s"):
        connection.deadline(PG, "write to", _session_waiting(0.5))
    (pid, within, at), = asked
    assert (pid, within) == (77, 0.05) and at - started >= 0.25  # not at half the limit (0.15 s)


@pytest.mark.slow  # sleeps of 0.3-0.8 s against the deadline: CI's second pass (tox -e unit -- -m slow)
def test_work_given_up_may_not_commit_until_it_ends(monkeypatch):
    monkeypatch.setenv(connection.TIMEOUT_ENV, "0.1")
    ident: list[int] = []
    with pytest.raises(HistoryError, match="did not answer"):
        connection.deadline(PG, "read", _session_waiting(0.3, ident))
    assert ident[0] in connection._ABANDONED and connection._SESSIONS[ident[0]] == 77
    deadline = time.monotonic() + 2
    while ident[0] in connection._ABANDONED and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ident[0] not in connection._ABANDONED and ident[0] not in connection._SESSIONS


BLOCKER = "pid 5, user u, application 'psql', idle in transaction for 75 s in its transaction"


@pytest.mark.slow  # sleeps of 0.3-0.8 s against the deadline: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("seconds, error, outcome", [
    (0.8, None, "lock"),  # still waiting at the limit
    # ended after the probe (at 0.25 s) and before the limit (0.5 s): a statement the server ended is a lock wait
    (0.33, type("Canceled", (Exception,), {"sqlstate": "57014"})("statement timeout"), "lock"),
    (0.33, ValueError("another error"), "another error"),
    (0.33, None, "late"),
])
def test_a_session_that_waited_for_a_lock_is_told_as_such(monkeypatch, seconds, error, outcome):
    monkeypatch.setenv(connection.TIMEOUT_ENV, "0.5")
    monkeypatch.setattr(connection, "_blocking_sessions", lambda url, pid, within: [BLOCKER, "pid 6, user v"])
    if outcome == "late":
        assert connection.deadline(PG, "read", _session_waiting(seconds, error=error)) == "late"
        return
    with pytest.raises(Exception) as raised:
        connection.deadline(PG, "read", _session_waiting(seconds, error=error))
    if outcome == "lock":
        assert str(raised.value) == (
            f"cannot read the history store postgresql+psycopg://u:***@127.0.0.1:9/h: waited 0.5 s for a lock "
            f"that another session holds ({BLOCKER}; pid 6, user v): end that session, or try again once it is "
            f"done ($KERNELWATCH_HISTORY_TIMEOUT sets how long to wait)")
    else:
        assert raised.value is error


class _Rows:
    def __init__(self, rows):
        self.rows = rows

    def all(self):
        return self.rows


def _row(pid, usename, application_name, state, held_s):
    return type("Row", (), {"pid": pid, "usename": usename, "application_name": application_name, "state": state,
                            "held_s": held_s})()


def test_the_sessions_holding_a_lock_are_told_each_in_words(monkeypatch):
    made, seen = [], []

    class Engine:
        def connect(self):
            seen.append((threading.current_thread().name, threading.current_thread().daemon))
            return contextlib.nullcontext(self)

        def execute(self, statement, parameters):
            seen.append(parameters)
            return _Rows([_row(5, "u", "psql", "idle in transaction", 74.6), _row(6, None, None, None, None)])

        def dispose(self):
            seen.append("disposed")

    monkeypatch.setattr(connection.sa, "create_engine", lambda url, **kwargs: made.append((url, kwargs)) or Engine())
    assert connection._blocking_sessions(PG, 42, 0.4) == [
        "pid 5, user u, application 'psql', idle in transaction for 75 s in its transaction",
        "pid 6, user ?, application '(none)', state unknown"]
    (url, kwargs), = made
    assert url == PG and kwargs["poolclass"] is sa.pool.NullPool
    assert kwargs["connect_args"] == {"connect_timeout": 2, "application_name": "kernelwatch",
                                      "options": "-c statement_timeout=400"}
    assert seen == [("kernel-suite-history-probe", True), {"pid": 42}, "disposed"]


def test_a_server_that_cannot_be_asked_is_none_without_an_error_of_its_thread(monkeypatch):
    failed = []
    monkeypatch.setattr(threading, "excepthook", failed.append)
    assert connection._blocking_sessions(make_url(f"postgresql+psycopg://u@127.0.0.1:{_closed_port()}/h"), 1,
                                         1.0) is None
    assert failed == []

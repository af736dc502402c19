"""A store that cannot be used is one HistoryError sentence naming it, never showing a password."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from backends import postgres_url_fixture  # noqa: F401 (pytest fixtures)
from sqlalchemy.engine import make_url

from harness.history.cli import main
from harness.storage.history import HistoryError, default_path, open_store, resolve_url

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
    for variable in ("RUNNER_TOOL_CACHE", "XDG_CACHE_HOME", "KERNEL_SUITE_HISTORY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".cache" / "kernel-suite" / "history.sqlite"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "kernel-suite" / "history.sqlite"
    monkeypatch.setenv("RUNNER_TOOL_CACHE", str(tmp_path / "toolcache"))
    assert Path(resolve_url(None).database) == tmp_path / "toolcache" / "kernel-suite" / "history.sqlite"
    assert (tmp_path / "toolcache" / "kernel-suite").is_dir()
    monkeypatch.setenv("KERNEL_SUITE_HISTORY", "postgresql://fleet@db.example/history")
    assert resolve_url(None).render_as_string() == "postgresql+psycopg://fleet@db.example/history"

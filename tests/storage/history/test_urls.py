"""A store's URL read before anything connects: a port that is none is one sentence, and no secret of it (libpq's
every form) is ever shown: not in a URL as shown, an error, nor `import`'s summary."""

from __future__ import annotations

import socket

import pytest
from sqlalchemy.engine import make_url

from kernelwatch.history.cli import main
from kernelwatch.storage.history import HistoryError, open_store, resolve_url, safe_url
from kernelwatch.storage.history.urls import scrub
from maintainers.support.synthetic_history import make_document, write_document
from tests.support.backends import postgres_url_fixture  # noqa: F401 (pytest fixtures)

SECRET = "Sw0rdf1sh-secret"
COMMANDS = (["import", "run.json"], ["runs"], ["export", "1"], ["changes"], ["acknowledge", "c", "1", "--reason", "x"],
            ["site", "out"], ["remove-run", "1", "--reason", "x"])


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


BAD_PORTS = {
    "postgresql://suite@127.0.0.1:xx/h": "'xx'",
    f"postgresql://suite:{SECRET}@127.0.0.1:5432x/h": "'5432x'",
    "postgresql://suite@127.0.0.1:99999/h": "'99999'",
    "postgresql://suite@127.0.0.1:0/h": "'0'",
    "postgresql://suite@h1:5432,h2:five/h": "'five'",
    "postgresql://suite@127.0.0.1/h?port=abc": "'abc'",
    "postgresql://suite@/h?host=a:5432&host=b:zz": "'zz'",
    "postgresql://suite@[::1]:-1/h": "'-1'",
    f"postgresql://suite@127.0.0.1:{'9' * 60}/h": f"'{'9' * 40}'",  # a long one is quoted by its first 40 characters
}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command[0])
@pytest.mark.parametrize("url, port", list(BAD_PORTS.items()), ids=list(BAD_PORTS.values()))
def test_a_port_that_is_no_port_is_one_sentence_in_every_store_command(url, port, command, capsys):
    assert main([*command, "--history", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"its port {port} is not a number from 1 to 65535" in err and SECRET not in err


@pytest.mark.parametrize("url", ["postgresql://suite@/h?host=a:5432&host=b:5433", "postgresql://suite@h:5432/h?port=",
                                 "postgresql://suite@[::1]:5432/h", "postgresql://suite@/h?host=/var/run/postgresql",
                                 "postgresql://suite@/h?host=[::1]:5432,[fe80::2]", "postgresql://suite@/h?host=[::1]:5",
                                 "postgresql://suite@[::1]:5432,[::2]:6/h"])
def test_every_form_of_host_and_port_libpq_takes_is_taken(url):
    assert resolve_url(url).get_backend_name() == "postgresql"


@pytest.mark.parametrize("url, port", [
    ("postgresql://suite@/h?host=[::1]:zz", "'zz'"), ("postgresql://suite@/h?host=[::1]:0", "'0'"),
    ("postgresql://suite@/h?host=a:1,[::1]:65536", "'65536'"), ("postgresql://suite@/h?host=[::1],[::2]:99999", "'99999'"),
    ("postgresql://suite@[::1]:5x/h", "'5x'"), ("postgresql://suite@[::1]:5432,[::2]:7x/h", "'7x'")])
def test_the_port_of_an_ipv6_host_is_all_that_follows_its_bracket_and_colon(url, port):
    with pytest.raises(HistoryError) as refused:
        resolve_url(url)
    assert f": its port {port} is not a number from 1 to 65535; " in str(refused.value)


# every secret a PostgreSQL URL can carry (libpq's PQconndefaults: password, sslpassword and oauth_client_secret
# hidden, the SCRAM keys debug only; passfile says where passwords are), in every way it can be written
SECRET_URLS = {
    "the authority": f"postgresql://suite:{SECRET}@127.0.0.1:{{port}}/h",
    "an @ in the authority's password": f"postgresql://suite:{SECRET}@x@127.0.0.1:{{port}}/h",
    "password": f"postgresql://suite@127.0.0.1:{{port}}/h?password={SECRET}",
    "sslpassword": f"postgresql://suite@127.0.0.1:{{port}}/h?sslmode=prefer&sslpassword={SECRET}",
    "SSLPassword": f"postgresql://suite@127.0.0.1:{{port}}/h?SSLPassword={SECRET}",
    "oauth_client_secret": f"postgresql://suite@127.0.0.1:{{port}}/h?oauth_client_secret={SECRET}",
    "scram_client_key": f"postgresql://suite@127.0.0.1:{{port}}/h?scram_client_key={SECRET}",
    "scram_server_key": f"postgresql://suite@127.0.0.1:{{port}}/h?scram_server_key={SECRET}",
    "passfile": f"postgresql://suite@127.0.0.1:{{port}}/h?passfile=/home/{SECRET}/.pgpass",
    "percent-encoded": f"postgresql://suite@127.0.0.1:{{port}}/h?sslpassword={SECRET}%26more",
    "twice": f"postgresql://suite@127.0.0.1:{{port}}/h?sslpassword={SECRET}&sslpassword=other-{SECRET}",
}


@pytest.mark.parametrize("url", list(SECRET_URLS.values()), ids=list(SECRET_URLS))
def test_no_secret_of_a_url_is_shown_as_the_url_nor_in_an_error(url, capsys):
    url = url.format(port=_closed_port())
    assert SECRET not in safe_url(resolve_url(url))
    with pytest.raises(HistoryError) as raised:
        open_store(url)
    assert SECRET not in str(raised.value) and "***" in str(raised.value)
    assert main(["runs", "--history", url]) == 1
    err = capsys.readouterr().err
    assert SECRET not in err and err.count("\n") == 1


@pytest.mark.parametrize("text", [
    f"host=127.0.0.1 dbname=h sslpassword={SECRET}",
    f"host=127.0.0.1 password='{SECRET} with spaces'",
    f"host=127.0.0.1 password='it\\'s {SECRET}'",
    f"PGPASSWORD={SECRET} psql",
    f'oauth_client_secret = "{SECRET}"',
])
def test_no_secret_of_libpqs_key_value_form_is_shown(text, capsys):
    assert SECRET not in scrub(text)
    assert main(["runs", "--history", text]) == 1
    assert SECRET not in capsys.readouterr().err


def test_a_secret_of_the_query_echoed_alone_by_the_driver_is_hidden():
    url = make_url(f"postgresql://suite@127.0.0.1/h?sslpassword={SECRET}")
    assert scrub(f'could not decrypt the key with "{SECRET}"', url) == 'could not decrypt the key with "***"'


def test_imports_summary_names_a_store_of_an_sslpassword_without_it(postgres_url, tmp_path, capsys):
    url = f"{postgres_url}?sslpassword={SECRET}&passfile=/nonexistent/{SECRET}"
    write_document(tmp_path / "runs", 1, make_document(1))
    assert main(["import", str(tmp_path / "runs"), "--history", url]) == 0
    assert main(["import", str(tmp_path / "runs"), "--history", url]) == 0
    captured = capsys.readouterr()
    assert "1 imported" in captured.out and "0 imported, 1 skipped" in captured.out
    assert SECRET not in captured.out + captured.err and "sslpassword=***" in captured.out

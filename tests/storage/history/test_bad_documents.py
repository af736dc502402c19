"""maintainers/checks/bad_documents.py: the corpus of bad documents leaves both backends agreeing and unbroken, with
no traceback and no secret shown; and the check fails where any of that does not hold."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelwatch.storage.history import store as store_module
from kernelwatch.storage.history import urls
from kernelwatch.storage.history.validation import current
from maintainers.checks import bad_documents
from tests.support.backends import POSTGRES_ENV, postgres_admin_url

ROOT = Path(__file__).resolve().parents[3]

# the corpus fed to a store on both backends, in subprocesses (about 15 s): CI's second pass (-m slow)
pytestmark = pytest.mark.slow


def _counts(out: str) -> dict[str, int]:
    return {what: int(count) for what, count in re.findall(r"^([a-z][a-z ]+): (\d+)$", out, re.MULTILINE)}


def test_the_corpus_leaves_sqlite_and_postgresql_agreeing_and_unbroken():
    env = {**os.environ, POSTGRES_ENV: postgres_admin_url()}  # CI fails without a server; elsewhere it skips
    done = subprocess.run([sys.executable, "-m", "maintainers.checks.bad_documents"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert f"{len(bad_documents.CORPUS)} documents on sqlite and postgresql" in done.stdout
    assert len(bad_documents.CORPUS) >= 30 and set(_counts(done.stdout).values()) == {0}
    assert bad_documents.SECRET not in done.stdout + done.stderr


def test_the_check_fails_where_the_store_takes_what_it_should_not(monkeypatch, capsys):
    # the store as it was before issue 45: no document checked, so samples of 1e308 s break `changes` and `site`
    monkeypatch.setattr(store_module, "checked_run", lambda doc, **_: current(doc))
    assert bad_documents.main(["--sqlite-only"]) == 1
    counts = _counts(capsys.readouterr().out)
    assert counts["stores broken for a later command"] > 0 and counts["verdicts other than the corpus expects"] > 0
    assert counts["tracebacks"] > 0


def test_the_check_fails_where_a_secret_is_shown(monkeypatch, capsys):
    # the mask as it was before issue 45, for a URL's query: no parameter named a secret is hidden
    monkeypatch.setattr(urls, "_PASSWORD_PAIRS", re.compile(r"(?!)(key)(=)(value)"))
    monkeypatch.setattr(urls, "_SECRET_NAME", re.compile(r"(?!)"))
    assert bad_documents.main(["--sqlite-only"]) == 1
    counts = _counts(capsys.readouterr().out)
    assert counts["outputs holding a secret"] > 0 and counts["tracebacks"] == 0


def test_the_check_fails_where_the_backends_disagree(capsys):
    verdicts = {backend: {bad.name: bad.expected for bad in bad_documents.CORPUS} for backend in ("sqlite", "pg")}
    verdicts["pg"][bad_documents.CORPUS[0].name] = bad_documents.ACCEPTED
    assert bad_documents.report(bad_documents.Findings(), verdicts, 0) == 1
    counts = _counts(capsys.readouterr().out)
    assert counts["verdicts that differ between the backends"] == 1
    assert bad_documents.report(bad_documents.Findings(), {"sqlite": verdicts["sqlite"]}, 0) == 0


def test_a_postgresql_server_that_cannot_be_used_is_one_sentence(capsys):
    assert bad_documents.main(["--postgres", "postgresql://suite:s3cret-pw@127.0.0.1:9/h"]) == bad_documents.NO_SERVER
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot create a database on the PostgreSQL server" in err
    assert "s3cret-pw" not in err

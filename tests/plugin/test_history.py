"""`--kernelwatch-history`: every run recorded, and a case judged against its own GPU's history (fake GPU, CPU only)."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from kernelwatch.storage.history import open_store
from tests.support.fake_suite import FAILING, output, run

OTHER_HOST = "--fake-gpu-uuid=GPU-another-host-of-the-model"


def recorded(url: str) -> list:
    with open_store(url) as store:
        return store.runs()


@pytest.mark.slow  # several plugin runs: CI's second pass (tox -e unit -- -m slow)
def test_on_another_host_a_two_percent_slowdown_is_seen_against_its_own_history_not_the_baseline(suite, tmp_path):
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    assert run(suite, "--benchmark-save=first").returncode == 0  # the model's baseline, from another GPU
    for seed in (1, 2, 3):
        result = run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", f"--fake-gpu-seed={seed}", OTHER_HOST)
        assert result.returncode == 0, output(result)
    assert [run_.outcome for run_ in recorded(url)] == ["passed"] * 3

    slowed = ["--benchmark-compare", "--fake-gpu-seed=9", "--fake-gpu-slowdown=*beta*:1.02", OTHER_HOST]
    against_baseline = run(suite, *slowed)
    assert against_baseline.returncode == 0, output(against_baseline)  # the 5% floor of another GPU hides it
    against_history = run(suite, *slowed, f"--kernelwatch-history={url}")
    assert against_history.returncode == 1, output(against_history)
    assert "1 failed, 2 passed" in output(against_history) and "test_time[beta]" in output(against_history)
    report = (suite / "report.md").read_text()
    assert "(history, 3 runs)" in report and "3 runs of this GPU's history" in report
    assert "3 cases against this GPU's history" in report
    # the slowed run is recorded too: a failed run, never a reference
    assert [run_.outcome for run_ in recorded(url)] == ["failed"] + ["passed"] * 3  # newest first


@pytest.mark.slow  # two plugin runs on the fake GPU: `tox -e unit` leaves it out, CI's slow pass runs it
def test_a_run_with_a_failed_test_is_recorded_as_failed_and_never_used_as_a_reference(suite, tmp_path):
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    (suite / "test_failing.py").write_text(FAILING)
    for seed in (1, 2, 3):
        run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", f"--fake-gpu-seed={seed}",
            "--fake-gpu-slowdown=*alpha*:1.5")
    (suite / "test_failing.py").unlink()
    assert [run_.outcome for run_ in recorded(url)] == ["failed"] * 3
    result = run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", "--fake-gpu-seed=4")
    assert result.returncode == 0, output(result)
    assert "history of" not in (suite / "report.md").read_text()


@pytest.mark.parametrize("url", ["postgresql://suite:s3cret-pw@127.0.0.1:9/history",  # port 9: nothing listens
                                 "postgresql://suite@127.0.0.1:9/history?password=s3cret-pw"])
def test_an_unreachable_store_is_refused_before_anything_is_timed_with_no_password(suite, url):
    result = run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", f"--benchmark-json={suite / 'run.json'}")
    assert result.returncode == 4, output(result)
    assert "--kernelwatch-history: cannot open the history store postgresql+psycopg://suite" in output(result)
    assert "s3cret-pw" not in output(result) and "passed" not in output(result)  # nothing ran


@pytest.mark.parametrize("url", ["postgresql://suite:s3cret-pw@127.0.0.1:54x2/history",
                                 "postgresql://suite@127.0.0.1:99999/history?sslpassword=s3cret-pw"])
def test_a_port_that_is_no_port_is_a_usage_error_naming_it_not_an_internal_error(suite, url):
    result = run(suite, "--benchmark-compare", f"--kernelwatch-history={url}")
    assert result.returncode == 4, output(result)
    assert "--kernelwatch-history: " in output(result) and "is not a number from 1 to 65535" in output(result)
    assert "INTERNALERROR" not in output(result) and "s3cret-pw" not in output(result)


def test_the_recorded_run_line_names_a_store_of_an_sslpassword_without_it(suite):
    from tests.support.backends import fresh_postgres_database

    with fresh_postgres_database() as url:
        secret = f"{url}?sslpassword=s3cret-pw"
        result = run(suite, "--benchmark-compare", f"--kernelwatch-history={secret}")
        assert result.returncode == 0, output(result)
        assert "recorded this run (passed) as history run 1 in postgresql+psycopg://" in output(result)
        assert "sslpassword=***" in output(result) and "s3cret-pw" not in output(result)
        assert make_url(url).password not in output(result)


def test_a_store_that_fails_during_the_run_is_an_error_at_the_end_and_the_report_is_still_written(suite, tmp_path):
    # the store opens at configure and is then taken away: its failure is the run's, reported at its end
    (suite / "conftest.py").write_text((suite / "conftest.py").read_text() + FAILING_STORE)
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    result = run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", f"--benchmark-json={suite / 'run.json'}")
    assert result.returncode == 1, output(result)
    assert "history store: this run was not recorded: disk full" in output(result)
    assert (suite / "report.md").exists() and (suite / "run.json").exists()
    assert "3 passed" in output(result)


FAILING_STORE = """

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    from kernelwatch.plugin.state import STATE
    from kernelwatch.storage.history import HistoryError

    store = session.config.stash[STATE].stored.store

    def refuse(*args, **kwargs):
        raise HistoryError("disk full")

    store.record_run = refuse
"""

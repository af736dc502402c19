"""Two processes writing to one store at once (a new store: they migrate it at once too) lose nothing."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from kernelwatch.storage.history import open_store
from kernelwatch.storage.history.schema import CASES, CURRENT_VERSION, SCHEMA_VERSION
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)
from tests.support.store_writer import writer

RUNS_EACH = 8


pytestmark = pytest.mark.slow  # processes writing at once: run by CI's second pass (tox -e unit -- -m slow)


def test_two_processes_recording_at_once_both_succeed_with_distinct_ids(history_url, tmp_path):
    go = tmp_path / "go"
    writers = [writer(history_url, "record", str(first), str(RUNS_EACH), str(go)) for first in (0, 100)]
    for process in writers:
        assert process.stdout.readline().strip() == "ready"
    go.touch()
    outputs = [process.communicate(timeout=120)[0] for process in writers]
    assert [process.returncode for process in writers] == [0, 0], outputs
    ids = [json.loads(output.splitlines()[-1]) for output in outputs]
    assert len(set(ids[0]) | set(ids[1])) == 2 * RUNS_EACH

    with open_store(history_url) as store, store.engine.connect() as conn:
        assert sorted(run.id for run in store.runs()) == sorted(ids[0] + ids[1])
        assert conn.execute(sa.select(sa.func.count()).select_from(CASES)).scalar() == 2 * RUNS_EACH * 20
        versions = conn.execute(sa.select(SCHEMA_VERSION.c.version).order_by("version")).scalars().all()
        assert versions == list(range(1, CURRENT_VERSION + 1))

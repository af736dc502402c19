"""Every committed H200 run goes into the store and comes back out the same, by the suite's own comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelwatch.compare import compare_runs
from kernelwatch.history.cli import main
from kernelwatch.storage.runs import load_run, stored_runs
from kernelwatch.verdict.labels import FEW_RUNS, OTHER_GPU, OTHER_HOST, SAME
from kernelwatch.verdict.record import TIMER_WALL, records_of
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)

COMMITTED = Path(__file__).resolve().parents[3] / "baselines" / "NVIDIA_H200"


pytestmark = pytest.mark.slow  # every committed H200 run, through both backends: run by CI's second pass (tox -e unit -- -m slow)


def test_every_committed_h200_run_is_imported_in_order_and_exported_the_same(history_url, tmp_path, capsys):
    originals = stored_runs(COMMITTED)
    assert len(originals) >= 5
    assert main(["import", str(COMMITTED), "--history", history_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:len(originals)] == [f"imported {path} as run {number} (86 cases)"
                                     for number, path in enumerate(originals, start=1)]

    assert main(["import", str(COMMITTED), "--history", history_url]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"0 imported, {len(originals)} skipped")

    for number, original in enumerate(originals, start=1):
        exported = tmp_path / f"exported-{number}.json"
        assert main(["export", str(number), "-o", str(exported), "--history", history_url]) == 0
        assert json.loads(exported.read_text()) == load_run(original)
        verdicts, _ = compare_runs(original, exported)
        assert len(verdicts) == 86
        # the export reads exactly as the original does against itself: its GPU-timed cases same, its wall-clock
        # host routines not judged (one run of their machine is too few: few runs; 0001 names no GPU UUID, so
        # there they are "other GPU" or "other host")
        itself, _ = compare_runs(original, original)
        assert [(v.case, v.label) for v in verdicts] == [(v.case, v.label) for v in itself], original.name
        wall = {r.case for r in records_of(load_run(original)) if r.timer == TIMER_WALL}
        assert {v.label for v in verdicts if v.case not in wall} == {SAME}, original.name
        assert {v.label for v in verdicts if v.case in wall} <= {FEW_RUNS, OTHER_HOST, OTHER_GPU}, original.name

"""The plugin's choice of the baseline's history (src/kernelwatch/plugin/__init__.py `_load_baseline`): the
noise model sees the newest NOISE_HISTORY_RUNS stored runs of the GPU model, the baseline among them once,
whichever run --benchmark-compare names. Called directly: a pytest run per case would take a minute."""

from __future__ import annotations

import types

import pytest

import kernelwatch.plugin as plugin
from kernelwatch.timing.profile import PROFILES
from tests.support.sensitivity_runs import QUIET, write_run
from tests.support.suite_states import state_with


@pytest.fixture
def folder(tmp_path):
    gpu_folder = tmp_path / "baselines" / "NVIDIA_H200"
    gpu_folder.mkdir(parents=True)
    for number in range(1, 26):
        write_run(gpu_folder, f"{number:04d}_run", {QUIET: 448e-6}, seed=number)
    return gpu_folder


def load(folder, spec):
    state = state_with(profile=PROFILES["nightly"], report_path=folder / "r.md", compare_spec=spec,
                        gpu=types.SimpleNamespace(slug="NVIDIA_H200", name="NVIDIA H200"))
    bs = types.SimpleNamespace(storage=types.SimpleNamespace(path=str(folder.parent)), compared_mapping=None)
    plugin._load_baseline(state, bs)
    return state


def test_the_history_is_the_newest_twenty_runs_with_the_newest_as_the_baseline(folder):
    state = load(folder, True)
    assert state.stored.baseline.path.name == "0025_run.json"
    names = [result.run for result in state.stored.baseline_runs[QUIET]]
    assert sorted(names) == [f"{n:04d}_run.json" for n in range(6, 26)]  # NOISE_HISTORY_RUNS = 20, no run twice


def test_an_older_baseline_keeps_the_newest_runs_as_its_history(folder):
    state = load(folder, "0010")
    assert state.stored.baseline.path.name == "0010_run.json"
    names = sorted(result.run for result in state.stored.baseline_runs[QUIET])
    assert names == [f"{n:04d}_run.json" for n in range(6, 26)]

"""Host routines by phase (src/kernelwatch/timing/phases.py, src/kernelwatch/verdict/phases.py), end to end on the fake GPU:
recorded in the store, judged against its runs, a slower kernel phase failing the routine, the report's section."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from kernelwatch.storage.history import open_store
from tests.support.fake_suite import output, run

HOST_SUITE = '''
import time

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.perf]


def test_routine(kernelwatch_bench):
    kernelwatch_bench.time(lambda: time.sleep(0.0004), wall=True, kernel="alpha", shape="1x1")
'''
CASE = "test_host_suite.py::test_routine"


def nightly(folder, url, seed, *extra):
    return run(folder, "--benchmark-compare", f"--kernelwatch-history={url}", f"--fake-gpu-seed={seed}",
               f"--benchmark-json={folder / 'run.json'}", *extra)


def routine(folder) -> dict:
    doc = json.loads((folder / "run.json").read_text())
    return next(b["extra_info"] for b in doc["benchmarks"] if b["fullname"] == CASE)


@pytest.mark.slow  # five plugin runs: CI's second pass (tox -e unit -- -m slow)
def test_a_host_routines_phases_are_stored_judged_and_a_slower_kernel_phase_fails_it(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (tmp_path / "test_host_suite.py").write_text(HOST_SUITE)
    (tmp_path / "baselines").mkdir()
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    for seed in (1, 2, 3):  # three runs: the GPU phases' history
        result = nightly(tmp_path, url, seed)
        assert result.returncode == 0, output(result)
    first = routine(tmp_path)
    assert list(first["phases"]) == ["HtoD", "kernel", "DtoH", "host"]
    assert len(first["phases"]["kernel"]) == first["sample_count"]
    with open_store(url) as store:  # the store gives each stored run's phases back to the verdict
        stored = store.reference_history([first["gpu_uuid"]], profile="nightly", limit_runs=5)[CASE]
    assert len(stored) == 3 and [name for name, _ in stored[0].phases] == ["HtoD", "kernel", "DtoH", "host"]

    clean = nightly(tmp_path, url, 4)
    assert clean.returncode == 0, output(clean)
    verdicts = {v["phase"]: v for v in routine(tmp_path)["phase_verdicts"]}
    assert {phase: v["label"] for phase, v in verdicts.items()} == {"HtoD": "same", "kernel": "same", "DtoH": "same",
                                                                    "host": "new"}  # the host phase needs 8 runs
    assert verdicts["kernel"]["detectable"] <= 0.03 and verdicts["kernel"]["reference_runs"] == 3
    report = (tmp_path / "report.md").read_text()
    assert "## Host routines by phase" in report and f"`{CASE}`" in report

    slowed = nightly(tmp_path, url, 5, "--fake-gpu-kernel-phase=*test_routine*:1.10")
    assert slowed.returncode == 1, output(slowed)
    assert "performance regression in its phases: kernel 110" in output(slowed)
    verdicts = {v["phase"]: v for v in routine(tmp_path)["phase_verdicts"]}
    assert verdicts["kernel"]["label"] == "slower" and verdicts["kernel"]["ratio"] > 1.08
    assert verdicts["HtoD"]["label"] == "same" and verdicts["DtoH"]["label"] == "same"
    report = (tmp_path / "report.md").read_text()
    assert re.search(r"\*\*slower\*\* x1\.(099|10\d)", report)  # noisy fake samples: x1.099 or x1.10x
    # the card under the routine's block: the kernel phase first, with the time it gained
    card = report[report.index(f"#### Why `{CASE}` is slower"):]
    # the fake GPU's samples carry noise: the ratio reads x1.099-x1.101 (x1.101 failed this line one run in five)
    assert re.search(r"1\. \*\*kernel phase\*\*: 100 µs -> 110 µs \(x1\.(099|100|101), slower; detectable 1\.5%\)",
                     card), card
    assert "| kernel median (µs) |" in card
    # the store keeps the routine failed, as a slower case (never a reference), and the run usable for the rest
    with open_store(url) as store:
        stored = store.reference_history([first["gpu_uuid"]], profile="nightly", limit_runs=10)[CASE]
        assert store.runs(limit=1)[0].outcome == "failed"
    assert len(stored) == 4  # runs 1-4: the slowed run 5 is no reference
    with sqlite3.connect(tmp_path / "history.sqlite") as db:
        assert db.execute("SELECT other_failures FROM runs ORDER BY id DESC LIMIT 1").fetchone() == (0,)
        assert db.execute("SELECT outcome FROM cases ORDER BY id DESC LIMIT 1").fetchone() == ("failed",)


@pytest.mark.slow  # seven plugin runs and a git repository: CI's second pass (tox -e unit -- -m slow)
def test_a_slower_phase_names_its_window_and_a_trailer_naming_the_routine_accepts_it_from_then_on(tmp_path):
    from tests.support.fake_suite import suite_repository
    from tests.support.git_repos import commit

    suite_repository(tmp_path, "test_host_suite.py", HOST_SUITE, "run.json")
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    for seed in (1, 2, 3):
        commit(tmp_path, seed)
        assert nightly(tmp_path, url, seed).returncode == 0
    slow = "--fake-gpu-kernel-phase=*test_routine*:1.10"

    commit(tmp_path, 4)  # a commit without a trailer: the slower phase fails and says how to accept it
    failing = nightly(tmp_path, url, 4, slow)
    assert failing.returncode == 1, output(failing)
    assert "(1 commit, no Accept-Slowdown trailer in it): if the slowdown is meant" in output(failing)
    assert "against history run 1, history run 2, history run 3 (newest: " in output(failing)
    assert "if the slowdown is meant, land a commit with the trailer 'Accept-Slowdown: REASON'" in output(failing)
    assert "kernel phase slower x1.1" in output(failing)  # the terminal's block of slower cases names the phase
    assert routine(tmp_path)["accepted_reason"] is None

    commit(tmp_path, 5, "faster staging\n\nAccept-Slowdown: cases=*test_routine* the kernel now checks its bounds")
    accepted = nightly(tmp_path, url, 5, slow)
    assert accepted.returncode == 0, output(accepted)
    record = routine(tmp_path)
    kernel = next(v for v in record["phase_verdicts"] if v["phase"] == "kernel")
    assert (kernel["label"], kernel["fails"]) == ("accepted", False)
    assert "accepted: the kernel now checks its bounds (cases *test_routine*), by the Accept-Slowdown trailer of" \
        in kernel["reason"]
    assert record["accepted_reason"].startswith("the kernel now checks its bounds")
    assert "accepted: the kernel now checks its bounds" in (tmp_path / "report.md").read_text()

    commit(tmp_path, 6)  # the accepted run is the routine's new level: the same slowness is the same again
    after = nightly(tmp_path, url, 6, slow)
    assert after.returncode == 0, output(after)
    kernel = next(v for v in routine(tmp_path)["phase_verdicts"] if v["phase"] == "kernel")
    assert kernel["label"] == "same" and kernel["reference_runs"] == 1, kernel

"""The plugin's energy (harness/plugin/energy.py), end to end on the fake GPU: measured, recorded, judged, refused."""

from __future__ import annotations

import json
import re
import types

import pytest

from harness.plugin.energy import energy_wanted, with_paired_energy
from harness.storage.history import open_store
from harness.timing.profile import PROFILES
from harness.verdict.record import CaseRecord
from tests.plugins.fake_gpu import FakeEnergyMeter
from tests.test_plugin_end_to_end import output, run

MORE = "--fake-gpu-energy=*beta*:1.05"


def energies(folder) -> dict:
    doc = json.loads((folder / "run.json").read_text())
    return {b["fullname"].rsplit("[", 1)[-1].rstrip("]"): b["extra_info"].get("energy") for b in doc["benchmarks"]}


def test_energy_alone_records_each_cases_joules_per_launch_in_the_run(suite):
    result = run(suite, "--energy", f"--benchmark-json={suite / 'run.json'}")
    assert result.returncode == 0, output(result)
    found = energies(suite)
    assert set(found) == {"alpha", "beta", "gamma"}
    for block in found.values():
        assert block["joules_per_launch_low"] < block["joules_per_launch"] < block["joules_per_launch_high"]
        assert block["active_watts_mean"] == pytest.approx(FakeEnergyMeter.WATTS, rel=0.01)
        assert block["work_per_joule_unit"] == "GFLOP/J" and len(block["window_joules_per_launch"]) == 6
        assert block["between_runs_low"] < block["joules_per_launch_low"] < block["joules_per_launch_high"] \
            < block["between_runs_high"]
    assert "energy per launch" in output(result)
    # the run says what its energy cost: the fake meter counts half a second a window, 3 cases x 6
    assert "energy of 3 case(s) measured in 9.0 s of this run" in output(result)


def test_a_case_whose_windows_are_too_noisy_for_1_percent_is_given_more_windows(suite):
    # 5% spread a window: six give about ±5%, so the plugin's precision rule asks for the 18 more
    result = run(suite, "--energy", "--fake-gpu-energy-noise=0.05", f"--benchmark-json={suite / 'run.json'}")
    assert result.returncode == 0, output(result)
    for block in energies(suite).values():
        assert len(block["window_joules_per_launch"]) == 24 and block["windows_added"] == 18
    quiet = run(suite, "--energy", f"--benchmark-json={suite / 'run.json'}")
    assert quiet.returncode == 0 and {b["windows_added"] for b in energies(suite).values()} == {0}


def test_no_energy_is_measured_where_none_is_asked_for(suite):
    # the fake suite's names are none of the nightly's energy cases; --energy=none measures none at all
    for args in ([], ["--energy=none"]):
        assert run(suite, *args, f"--benchmark-json={suite / 'run.json'}").returncode == 0
        assert set(energies(suite).values()) == {None}


def test_the_profiles_energy_cases_are_matched_by_test_name():
    state = types.SimpleNamespace(energy="profile", profile=PROFILES["nightly"])
    assert energy_wanted(state, "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]")
    assert not energy_wanted(state, "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-cublas]")
    assert not energy_wanted(types.SimpleNamespace(energy="profile", profile=PROFILES["quick"]),
                             "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]")


def test_more_energy_at_the_same_time_fails_its_case_only_and_the_store_keeps_the_rest(suite):
    url = f"sqlite:///{suite / 'h.sqlite'}"
    for seed in (1, 2, 3):
        assert run(suite, "--benchmark-compare", f"--history={url}", "--energy", f"--fake-gpu-seed={seed}").returncode == 0
    result = run(suite, "--benchmark-compare", f"--history={url}", "--energy", "--fake-gpu-seed=4", MORE)
    assert result.returncode == 1, output(result)
    assert "FAILED test_fake_suite.py::test_time[beta] - Failed: energy regression" in output(result)
    failure = output(result).split(" test_time[beta] ")[1].splitlines()
    assert failure[1].startswith("energy regression: ")  # the message alone, no traceback of the plugin's
    report = (suite / "report.md").read_text()
    assert "| **more energy** |" in report and report.count("| same |") >= 5  # 3 times, 2 energies
    assert "1.05" in report.split("## Energy")[1]
    with open_store(url) as store:
        [newest] = store.runs(limit=1)
        history = store.reference_history([newest.gpu_uuids[0]], profile="nightly", limit_runs=10)
    # beta's slowdown in energy failed beta alone: alpha and gamma of run 4 are references
    assert {r.run_id for r in history["test_fake_suite.py::test_time[alpha]"]} == {1, 2, 3, 4}
    assert {r.run_id for r in history["test_fake_suite.py::test_time[beta]"]} == {1, 2, 3}
    assert all(len(r.energy) == 6 for r in history["test_fake_suite.py::test_time[alpha]"])
    result = run(suite, "--benchmark-compare", f"--history={url}", "--energy", "--fake-gpu-seed=5", MORE,
                 "--energy-verdict=report")
    assert result.returncode == 0, output(result)
    assert "more energy" in (suite / "report.md").read_text()


def test_energy_asked_for_where_it_cannot_be_measured_is_refused_before_anything_runs(suite):
    result = run(suite, "--energy", "--fake-gpu-no-energy")
    assert result.returncode == 4 and "--energy: the fake GPU has no energy counter" in output(result)
    # the profile's energy cases on such a GPU are a notice, not an error
    assert run(suite, "--fake-gpu-no-energy").returncode == 0


def test_energy_all_spelled_out_asks_for_what_energy_alone_does(suite):
    # "all" here is argparse's cut of the argument, another string than the option's constant
    result = run(suite, "--energy=all", "--fake-gpu-no-energy")
    assert result.returncode == 4 and "--energy: the fake GPU has no energy counter" in output(result)


def test_energy_asked_for_without_a_gpu_is_refused(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["harness.plugin"]\n')
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    result = run(tmp_path, "--energy")
    assert result.returncode == 4 and "--energy asks for what only a GPU can give" in output(result)


def test_an_energy_ab_records_heads_energy_and_the_paired_verdict(pytestconfig):
    config = types.SimpleNamespace(getoption=lambda name: {"fake_gpu_energy": ["*head*:1.05"],
                                                           "fake_gpu_seed": 0, "fake_gpu_energy_noise": 0.002}[name])
    state = types.SimpleNamespace(energy="all", energy_meter=FakeEnergyMeter(config), energy_fails=True,
                                  ref=types.SimpleNamespace(ref="origin/main"), problems=[])
    record = CaseRecord(case="s.py::test_k[head]", median_s=1e-3, flops=1e9)
    judged = with_paired_energy(state, record, lambda s: None, lambda s: None, None, 1e-3)
    assert judged.energy_verdict["label"] == "more energy" and judged.energy_verdict["fails"]
    assert judged.energy_verdict["reference"] == "origin/main" and judged.energy["joules_per_launch"] > 0


def test_every_energy_case_of_the_nightly_is_a_case_the_nightly_times():
    """A renamed kernel or size must not leave the nightly measuring no energy without a word."""
    from kernels import ELEMENTWISE_KERNELS, MATMUL_KERNELS
    from suites.perf_cases import ADD_SIDES, matmul_cases

    timed = {f"test_matmul_time[{n}x{n}x{n}-{name}]" for n, name in matmul_cases("nightly", MATMUL_KERNELS)}
    timed |= {f"test_add_time[{s}x{s}-{name}]" for s in ADD_SIDES["nightly"] for name in ELEMENTWISE_KERNELS}
    assert set(PROFILES["nightly"].energy_cases) <= timed


def test_the_dashboard_draws_the_energy_the_store_kept(suite, tmp_path):
    # through the real paths: the plugin records energy into the store, `site` reads it back
    from harness.history.cli import main

    url = f"sqlite:///{suite / 'h.sqlite'}"
    for seed in (1, 2):
        assert run(suite, f"--history={url}", "--energy", f"--fake-gpu-seed={seed}").returncode == 0
    assert main(["site", str(tmp_path / "site"), "--history", url]) == 0
    index = (tmp_path / "site" / "index.html").read_text()
    assert len(re.findall(r'<td class="nowrap">\d+(\.\d+)? (mJ|µJ|J)</td>', index)) == 3  # alpha, beta, gamma
    pages = list((tmp_path / "site" / "cases").glob("*.html"))
    assert len(pages) == 3 and all("<h2>Energy per launch</h2>" in page.read_text() for page in pages)

"""The plugin's energy (src/kernelwatch/plugin/energy.py), end to end on the fake GPU: measured, recorded, judged, refused."""

from __future__ import annotations

import json
import re
import types

import pytest

from kernelwatch.plugin.energy import energy_wanted, with_paired_energy
from kernelwatch.storage.history import open_store
from kernelwatch.timing.measuring import Measuring
from kernelwatch.timing.profile import PROFILES
from kernelwatch.verdict.record import CaseRecord
from tests.plugins.fake_gpu import FakeEnergyMeter
from tests.support.fake_suite import output, run
from tests.support.pytest_runs import no_gpu_conftest
from tests.support.suite_states import state_with

MORE = "--fake-gpu-energy=*beta*:1.05"


def energies(folder) -> dict:
    doc = json.loads((folder / "run.json").read_text())
    return {b["fullname"].rsplit("[", 1)[-1].rstrip("]"): b["extra_info"].get("energy") for b in doc["benchmarks"]}


def test_energy_alone_records_each_cases_joules_per_launch_in_the_run(suite):
    result = run(suite, "--kernelwatch-energy", f"--benchmark-json={suite / 'run.json'}")
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
    result = run(suite, "--kernelwatch-energy", "--fake-gpu-energy-noise=0.05", f"--benchmark-json={suite / 'run.json'}")
    assert result.returncode == 0, output(result)
    for block in energies(suite).values():
        assert len(block["window_joules_per_launch"]) == 24 and block["windows_added"] == 18
    quiet = run(suite, "--kernelwatch-energy", f"--benchmark-json={suite / 'run.json'}")
    assert quiet.returncode == 0 and {b["windows_added"] for b in energies(suite).values()} == {0}


def test_no_energy_is_measured_where_none_is_asked_for(suite):
    # the fake suite's names are none of the nightly's energy cases; --kernelwatch-energy=none measures none at all
    for args in ([], ["--kernelwatch-energy=none"]):
        assert run(suite, *args, f"--benchmark-json={suite / 'run.json'}").returncode == 0
        assert set(energies(suite).values()) == {None}


NIGHTLY = PROFILES["nightly"].with_energy_cases(["test_matmul_time[4096x4096x4096-cublas]", "test_add_time[*_vec4]",
                                                  "suites/test_host.py::test_host_time[?]"])


@pytest.mark.parametrize("node_id, wanted", [
    ("suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]", True),  # by its test name
    ("suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-cublas]", False),
    ("suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas2]", False),  # a name is whole, no prefix
    ("suites/test_perf_elementwise.py::test_add_time[8192x8192-matrix_add_2d_vec4]", True),  # a pattern: * is wild
    ("suites/test_perf_elementwise.py::test_add_time[8192x8192-matrix_add_2d]", False),
    ("suites/test_perf_elementwise.py::test_add_timex8192x8192-matrix_add_2d_vec4]", False),  # [ is itself, no class
    ("suites/test_host.py::test_host_time[a]", True),  # by its node id; ? is one character
    ("other/test_host.py::test_host_time[a]", False),
    ("suites/test_host.py::test_host_time[ab]", False),
])
def test_the_profiles_energy_cases_are_matched_by_test_name_node_id_or_pattern(node_id, wanted):
    assert energy_wanted(Measuring(energy_cases="profile", profile=NIGHTLY), node_id) is wanted


def test_the_quick_profile_measures_none_of_the_energy_cases_and_a_project_without_any_none_at_all():
    quick = PROFILES["quick"].with_energy_cases(["test_matmul_time[4096x4096x4096-cublas]"])
    case = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]"
    assert not energy_wanted(Measuring(energy_cases="profile", profile=quick), case)
    assert not energy_wanted(Measuring(energy_cases="profile", profile=PROFILES["nightly"]), case)
    assert energy_wanted(Measuring(energy_cases="all", profile=quick), case)


@pytest.mark.parametrize("profile, measured", [("nightly", {"beta", "gamma"}), ("full", {"beta", "gamma"}), ("quick", set())])
def test_the_energy_cases_are_the_ini_keys(suite, profile, measured):
    (suite / "pytest.ini").write_text("[pytest]\nkernelwatch_energy_cases =\n    test_time[beta]\n"
                                      "    test_fake_suite.py::test_time[g*]\n")
    result = run(suite, f"--kernelwatch-profile={profile}", f"--benchmark-json={suite / 'run.json'}")
    assert result.returncode == 0, output(result)
    assert {case for case, block in energies(suite).items() if block} == measured


@pytest.mark.slow  # two plugin runs on the fake GPU: `tox -e unit` leaves it out, CI's slow pass runs it
def test_more_energy_at_the_same_time_fails_its_case_only_and_the_store_keeps_the_rest(suite):
    url = f"sqlite:///{suite / 'h.sqlite'}"
    for seed in (1, 2, 3):
        assert run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", "--kernelwatch-energy", f"--fake-gpu-seed={seed}").returncode == 0
    result = run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", "--kernelwatch-energy", "--fake-gpu-seed=4", MORE)
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
    result = run(suite, "--benchmark-compare", f"--kernelwatch-history={url}", "--kernelwatch-energy", "--fake-gpu-seed=5", MORE,
                 "--kernelwatch-energy-verdict=report")
    assert result.returncode == 0, output(result)
    assert "more energy" in (suite / "report.md").read_text()


def test_energy_asked_for_where_it_cannot_be_measured_is_refused_before_anything_runs(suite):
    result = run(suite, "--kernelwatch-energy", "--fake-gpu-no-energy")
    assert result.returncode == 4 and "--kernelwatch-energy: the fake GPU has no energy counter" in output(result)
    # the profile's energy cases on such a GPU are a notice, not an error
    assert run(suite, "--fake-gpu-no-energy").returncode == 0


def test_energy_all_spelled_out_asks_for_what_energy_alone_does(suite):
    # "all" here is argparse's cut of the argument, another string than the option's constant
    result = run(suite, "--kernelwatch-energy=all", "--fake-gpu-no-energy")
    assert result.returncode == 4 and "--kernelwatch-energy: the fake GPU has no energy counter" in output(result)


def test_energy_verdict_fail_spelled_out_fails_a_case_of_more_energy_as_the_default_does(suite):
    # "fail" here is argparse's cut of the argument, another string than the option's constant
    assert run(suite, "--kernelwatch-energy", "--benchmark-save=first").returncode == 0
    result = run(suite, "--benchmark-compare", "--kernelwatch-energy", "--fake-gpu-seed=1", MORE, "--kernelwatch-energy-verdict=fail")
    assert result.returncode == 1, output(result)
    assert "FAILED test_fake_suite.py::test_time[beta] - Failed: energy regression" in output(result)
    assert "1 failed, 2 passed" in output(result)


def test_energy_asked_for_without_a_gpu_is_refused(tmp_path):
    # a device layer without a GPU, so that the refusal is tested on a machine with one too
    (tmp_path / "conftest.py").write_text(no_gpu_conftest("no GPU in this folder"))
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    result = run(tmp_path, "--kernelwatch-energy")
    assert result.returncode == 4 and "--kernelwatch-energy asks for what only a GPU can give" in output(result)


def test_an_energy_ab_records_heads_energy_and_the_paired_verdict(pytestconfig):
    config = types.SimpleNamespace(getoption=lambda name: {"fake_gpu_energy": ["*head*:1.05"],
                                                           "fake_gpu_seed": 0, "fake_gpu_energy_noise": 0.002}[name])
    state = state_with(energy_cases="all", energy_meter=FakeEnergyMeter(config), energy_fails=True,
                       ref=types.SimpleNamespace(ref="origin/main"), problems=[])
    record = CaseRecord(case="s.py::test_k[head]", median_s=1e-3, flops=1e9)
    judged = with_paired_energy(state, record, lambda s: None, lambda s: None, None, 1e-3)
    assert judged.energy_verdict["label"] == "more energy" and judged.energy_verdict["fails"]
    assert judged.energy_verdict["reference"] == "origin/main" and judged.energy["joules_per_launch"] > 0


def test_every_energy_case_of_the_nightly_is_a_case_the_nightly_times():
    """A renamed kernel or size must not leave the nightly measuring no energy without a word: each entry of this
    repository's kernelwatch_energy_cases (pyproject.toml) names a case the nightly times."""
    import tomllib
    from pathlib import Path

    from kernels import ELEMENTWISE_KERNELS, MATMUL_KERNELS
    from suites.perf_cases import ADD_SIDES, matmul_cases

    ini = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["tool"]["pytest"]
    nightly = PROFILES["nightly"].with_energy_cases(ini["ini_options"]["kernelwatch_energy_cases"])
    timed = {f"test_matmul_time[{n}x{n}x{n}-{name}]" for n, name in matmul_cases("nightly", MATMUL_KERNELS)}
    timed |= {f"test_add_time[{s}x{s}-{name}]" for s in ADD_SIDES["nightly"] for name in ELEMENTWISE_KERNELS}
    assert len(nightly.energy_cases) == 4
    for entry in nightly.energy_cases:
        assert any(nightly.with_energy_cases([entry]).is_energy_case(f"suites/test_perf.py::{case}") for case in timed), entry


def test_the_dashboard_draws_the_energy_the_store_kept(suite, tmp_path):
    # through the real paths: the plugin records energy into the store, `site` reads it back
    from kernelwatch.history.cli import main

    url = f"sqlite:///{suite / 'h.sqlite'}"
    for seed in (1, 2):
        assert run(suite, f"--kernelwatch-history={url}", "--kernelwatch-energy", f"--fake-gpu-seed={seed}").returncode == 0
    assert main(["site", str(tmp_path / "site"), "--history", url]) == 0
    index = (tmp_path / "site" / "index.html").read_text()
    assert len(re.findall(r'<td class="nowrap">\d+(\.\d+)? (mJ|µJ|J)</td>', index)) == 3  # alpha, beta, gamma
    pages = list((tmp_path / "site" / "cases").glob("*.html"))
    assert len(pages) == 3 and all("<h2>Energy per launch</h2>" in page.read_text() for page in pages)


def _block(**changes) -> dict:
    block = {"joules_per_launch": 2.0, "joules_per_launch_low": 1.9, "joules_per_launch_high": 2.1,
             "confidence": 0.95, "active_watts_mean": 300.4, "idle_baseline_watts": 80.6, "work_per_joule": 12.345,
             "work_per_joule_unit": "GFLOP/J", "sm_clock_mhz_min": 1975, "sm_clock_mhz_max": 1980,
             "temperature_c_before": 40.0, "temperature_c_after": 43.0}
    return block | changes


def test_the_energy_section_gives_each_measured_case_a_row_and_the_reasons_of_the_verdicts_not_same():
    from kernelwatch.report.energy import energy_lines, energy_section

    more = CaseRecord(case="s.py::a", median_s=1e-3, energy=_block(),
                      energy_verdict={"label": "more energy", "fails": True, "reason": "1.05x"})
    bare = CaseRecord(case="s.py::b", median_s=1e-3, energy=_block(
        idle_baseline_watts=None, work_per_joule=None, sm_clock_mhz_min=None, temperature_c_before=None,
        temperature_c_after=None))
    same = CaseRecord(case="s.py::c", median_s=1e-3, energy=_block(work_per_joule=3.0, work_per_joule_unit="GB/J"),
                      energy_verdict={"label": "same", "fails": False, "reason": "within"})
    lines = energy_lines([same, CaseRecord(case="s.py::z", median_s=1e-3), bare, more])
    assert lines[:4] == ["", "## Energy", "", (
        "Joules per launch over windows cut at NVML's energy counter updates, launches replayed back to back "
        "(docs/method.md); W: mean power in the windows, idle: the GPU with nothing queued, this run.")]
    assert lines[5:8] == ["| case | per launch | W | idle W | work per joule | SM MHz | °C | energy verdict |",
                          "|---|---|---|---|---|---|---|---|",
                          "| `s.py::a` | 2 J (95% 1.9-2.1, ±5.0% this run) | 300 | 81 | 12.3 GFLOP/J | 1975-1980 | "
                          "40.0-43.0 | **more energy** |"]
    assert lines[8] == "| `s.py::b` | 2 J (95% 1.9-2.1, ±5.0% this run) | 300 | — | — | — | —-— | — |"
    assert lines[9] == ("| `s.py::c` | 2 J (95% 1.9-2.1, ±5.0% this run) | 300 | 81 | 3.0 GB/J | 1975-1980 | "
                        "40.0-43.0 | same |")
    assert lines[10:] == ["", "- `s.py::a`: 1.05x"]
    assert energy_section([bare]).endswith("| — |\n") and energy_section([CaseRecord(case="x", median_s=1.0)]) == ""
    cold = CaseRecord(case="s.py::d", median_s=1e-3, energy=_block(temperature_c_before=0.0))
    assert "| 0.0-43.0 |" in energy_lines([cold])[-1]  # 0 °C is a reading, not a missing one


def test_an_energy_failure_names_the_interval_and_the_reason_and_a_passing_verdict_none():
    from kernelwatch.plugin.energy import energy_failure

    failing = CaseRecord(case="a", median_s=1e-3, energy=_block(), energy_verdict={"fails": True, "reason": "why"})
    assert energy_failure(failing) == "energy regression: 2 J (95% 1.9-2.1, ±5.0% this run) per launch: why"
    assert energy_failure(CaseRecord(case="a", median_s=1e-3, energy=_block(),
                                     energy_verdict={"fails": False, "reason": "why"})) is None
    assert energy_failure(CaseRecord(case="a", median_s=1e-3)) is None


def test_energy_none_measures_nothing_and_all_everything():
    assert not energy_wanted(Measuring(energy_cases="none", profile=PROFILES["nightly"]),
                             "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]")
    assert energy_wanted(Measuring(energy_cases="all", profile=PROFILES["quick"]), "s.py::anything")


class _Meter:
    def __init__(self, error=None):
        self.error, self.calls = error, []

    def measure(self, run, stream, launch_s, case="", enough=None):
        from kernelwatch.timing.energy import EnergyMeasurement
        from kernelwatch.timing.power_trace import PowerWindow

        self.calls.append((launch_s, case, enough))
        if self.error:
            raise self.error
        windows = tuple(PowerWindow(i, i + 0.5, 150.0 * (1 + 0.01 * i), 500.0) for i in range(4))
        return EnergyMeasurement(windows, "r", None, (None, None), None)

    def measure_interleaved(self, *args, **kwargs):
        self.calls.append(("interleaved", kwargs.get("case")))
        raise self.error


def _energy_state(meter, **changes):
    values = dict(energy_cases="all", energy_meter=meter, energy_fails=True, problems=[], own_history={},
                  baseline_runs={}, gpu=types.SimpleNamespace(uuid="GPU-x"), comparing=False, store=None,
                  ref=types.SimpleNamespace(ref="origin/main"))
    return state_with(**(values | changes))


def test_a_replay_without_a_window_is_a_problem_of_the_run_and_leaves_the_record_as_it_was():
    from kernelwatch.plugin.energy import with_energy
    from kernelwatch.timing.energy import EnergyError

    record = CaseRecord(case="s.py::k", median_s=2e-3)
    state = _energy_state(_Meter(EnergyError("s.py::k: no energy window")))
    assert with_energy(state, record, None, None, wall=False) is record
    assert with_paired_energy(state, record, None, None, None, 1e-3) is record
    assert state.findings.problems == ["energy not measured: s.py::k: no energy window"] * 2
    assert state.measuring.energy_meter.calls[1] == ("interleaved", "s.py::k")


def test_a_wall_clock_case_a_host_copying_one_and_a_run_without_a_meter_are_not_measured():
    from kernelwatch.plugin.energy import with_energy

    meter = _Meter()
    record = CaseRecord(case="s.py::k", median_s=2e-3)
    assert with_energy(_energy_state(meter), record, None, None, wall=True) is record
    copying = CaseRecord(case="s.py::k", median_s=2e-3, host_copies=True)
    assert with_energy(_energy_state(meter), copying, None, None, wall=False) is copying
    assert with_paired_energy(_energy_state(meter), copying, None, None, None, 1e-3) is copying
    assert with_energy(_energy_state(None), record, None, None, wall=False) is record
    assert meter.calls == []


def test_a_measured_case_is_judged_only_where_the_run_compares_or_stores_and_fails_on_more_energy_alone():
    from kernelwatch.plugin.energy import with_energy
    from kernelwatch.verdict.energy import precise_enough

    meter = _Meter()
    record = CaseRecord(case="s.py::k", median_s=2e-3, flops=1e9)
    measured = with_energy(_energy_state(meter), record, None, None, wall=False)
    assert meter.calls == [(2e-3, "s.py::k", precise_enough)]
    assert measured.energy["work_per_joule_unit"] == "GFLOP/J" and measured.energy_verdict is None
    judged = with_energy(_energy_state(meter, store=object()), record, None, None, wall=False)
    assert judged.energy_verdict["label"] == "new" and judged.energy_verdict["fails"] is False
    assert "references" not in judged.energy_verdict
    assert with_energy(_energy_state(meter, comparing=True), record, None, None, wall=False).energy_verdict
    # this GPU's stored runs at 0.25 J a launch, the case now about 0.3045: more energy, failing where the run says
    from kernelwatch.verdict.noise import StoredResult

    runs = [StoredResult(gpu_uuid="GPU-x", timer="cupti kernel", median=2e-3, run=f"history run {i}",
                         started_at=f"2026-12-0{i}T00:00:00", energy=(0.249, 0.25, 0.251)) for i in range(1, 4)]
    more = with_energy(_energy_state(meter, store=object(), own_history={"s.py::k": runs}), record, None, None,
                       wall=False).energy_verdict
    assert (more["label"], more["fails"], more["reference"], more["reference_runs"]) == (
        "more energy", True, "history of GPU-x", 3)
    allowed = with_energy(_energy_state(meter, store=object(), energy_fails=False, baseline_runs={"s.py::k": runs}),
                          record, None, None, wall=False).energy_verdict
    assert (allowed["label"], allowed["fails"]) == ("more energy", False)
    other_gpu = with_energy(_energy_state(meter, store=object(), gpu=types.SimpleNamespace(uuid="GPU-y"),
                                          own_history={"s.py::k": runs}), record, None, None, wall=False)
    assert other_gpu.energy_verdict["label"] == "new"


def _items(*nodes):
    return [types.SimpleNamespace(nodeid=node, keywords={"perf": True} if perf else {}) for node, perf in nodes]


def test_the_energy_meter_is_opened_only_where_a_case_that_runs_wants_energy():
    from kernelwatch.plugin import _open_energy_meter

    opened = []

    def state(energy, meter="meter", why="no counter"):
        device = types.SimpleNamespace(make_energy_meter=lambda: opened.append(energy) or (meter, why))
        return state_with(energy_cases=energy, profile=NIGHTLY, device=device, energy_meter=None, notices=[])

    big = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]"
    small = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-cublas]"
    for energy, items in (("none", _items((big, True))), ("profile", _items((small, True))),
                          ("profile", _items((big, False)))):  # an energy case that does not time: no meter
        _open_energy_meter(chosen := state(energy), items)
        assert chosen.measuring.energy_meter is None
    assert opened == []
    _open_energy_meter(profiled := state("profile"), _items((small, True), (big, True)))
    _open_energy_meter(every := state("all"), [])
    assert (profiled.measuring.energy_meter, every.measuring.energy_meter, opened) == ("meter", "meter", ["profile", "all"])
    _open_energy_meter(noticed := state("profile", None), _items((big, True)))
    assert noticed.findings.notices == ["energy of the profile's energy cases not measured: no counter"]
    with pytest.raises(pytest.UsageError, match=r"^--kernelwatch-energy: no counter$"):
        _open_energy_meter(state("all", None), [])


def test_energy_options_as_argparse_gives_them_measure_all_or_none():
    # argparse's strings are equal to, not the objects of, the words the plugin compares with
    big = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]"
    assert not energy_wanted(Measuring(energy_cases="".join("none"), profile=PROFILES["nightly"]), big)
    assert energy_wanted(Measuring(energy_cases="".join("all"), profile=PROFILES["quick"]), "s.py::anything")


def test_a_profiles_energy_case_is_matched_by_its_test_name_under_a_class_or_without_a_file():
    state = Measuring(energy_cases="profile", profile=NIGHTLY)
    assert energy_wanted(state, "suites/test_perf_matmul.py::TestTimes::test_matmul_time[4096x4096x4096-cublas]")
    assert energy_wanted(state, "test_matmul_time[4096x4096x4096-cublas]")
    assert not energy_wanted(state, "test_matmul_time[1024x1024x1024-cublas]")


def _paired_state(factor: float, energy_fails: bool = True):
    config = types.SimpleNamespace(getoption=lambda name: {"fake_gpu_energy": [f"*head*:{factor}"],
                                                           "fake_gpu_seed": 0, "fake_gpu_energy_noise": 0.002}[name])
    return state_with(energy_cases="all", energy_meter=FakeEnergyMeter(config), energy_fails=energy_fails,
                      ref=types.SimpleNamespace(ref="origin/main"), problems=[])


@pytest.mark.parametrize("factor, energy_fails, label, fails", [
    (1.05, True, "more energy", True),
    (1.05, False, "more energy", False),  # --kernelwatch-energy-verdict report: said, not failed
    (1.0, True, "same", False),
    (0.95, True, "less energy", False),
])
def test_an_energy_ab_fails_its_case_only_on_more_energy_where_the_run_says_so(factor, energy_fails, label, fails):
    state = _paired_state(factor, energy_fails)
    record = CaseRecord(case="s.py::test_k[head]", median_s=1e-3, flops=1e9)
    judged = with_paired_energy(state, record, lambda s: None, lambda s: None, None, 1e-3)
    assert (judged.energy_verdict["label"], judged.energy_verdict["fails"]) == (label, fails)
    # five interleaved periods of each side: the fake meter gives one window a period
    assert f"the base over {5} interleaved pairs" in judged.energy_verdict["reason"]
    assert len(judged.energy["window_joules_per_launch"]) == 5


def test_less_energy_against_the_stored_runs_passes_where_more_would_fail():
    from kernelwatch.plugin.energy import with_energy
    from kernelwatch.verdict.noise import StoredResult

    # the case now about 0.3045 J a launch (_Meter), this GPU's stored runs at 0.4: less energy
    runs = [StoredResult(gpu_uuid="GPU-x", timer="cupti kernel", median=2e-3, run=f"history run {i}",
                         started_at=f"2026-12-0{i}T00:00:00", energy=(0.399, 0.4, 0.401)) for i in range(1, 4)]
    record = CaseRecord(case="s.py::k", median_s=2e-3, flops=1e9)
    less = with_energy(_energy_state(_Meter(), store=object(), own_history={"s.py::k": runs}), record, None, None,
                       wall=False).energy_verdict
    assert (less["label"], less["fails"]) == ("less energy", False)


def test_whether_a_case_is_a_wall_clock_one_is_given_by_name():
    from kernelwatch.plugin.energy import with_energy

    record = CaseRecord(case="s.py::k", median_s=2e-3)
    with pytest.raises(TypeError):
        with_energy(_energy_state(_Meter()), record, None, None, True)


@pytest.mark.parametrize("paired", [False, True])
def test_more_energy_fails_its_case_under_a_label_equal_to_the_vocabularys(monkeypatch, paired):
    # a label equal to, not the object of, "more energy" (one read back from JSON, say): whether the case fails
    # must not hang on which object the verdict holds
    import kernelwatch.plugin.energy as plugin_energy
    from kernelwatch.plugin.energy import with_energy
    from kernelwatch.verdict.labels import Verdict

    def judged_more(case, *args, **kwargs):
        return Verdict(case, "".join(["more ", "energy"]), 0.25, 0.3, 1.2, 0.01, "more energy: 1.200x")

    monkeypatch.setattr(plugin_energy, "judge_energy_paired" if paired else "judge_energy", judged_more)
    record = CaseRecord(case="s.py::test_k[head]", median_s=1e-3, flops=1e9)
    if paired:
        judged = with_paired_energy(_paired_state(1.0), record, lambda s: None, lambda s: None, None, 1e-3)
    else:
        judged = with_energy(_energy_state(_Meter(), store=object()), record, None, None, wall=False)
    assert (judged.energy_verdict["label"], judged.energy_verdict["fails"]) == ("more energy", True)

"""TimedCase (the kernelwatch_bench fixture) on the CPU: a host routine timed by wall clock, a case skipped
under --kernelwatch-compare-ref, and the record fields taken from a measurement."""

from __future__ import annotations

import contextlib
import dataclasses
import types

import pytest

import kernelwatch.plugin.timed_case as timed_case_module
from kernelwatch.plugin.timed_case import TimedCase, measured_fields
from kernelwatch.plugin.xdist import worker_id
from kernelwatch.timing.profile import Profile
from kernelwatch.timing.timer import Measurement
from kernelwatch.verdict.labels import Verdict
from kernelwatch.verdict.noise import NoiseFloors
from tests.plugins.fake_gpu import fake_info
from tests.support.suite_states import state_with

SHORT = Profile("t", min_samples=3, min_time=0, target_rsd=1.0, time_cap=0.05, warmup=1)


def timed_case(ref=None) -> TimedCase:
    benchmark = types.SimpleNamespace(fullname="suites/s.py::test_host[k]", extra_info={}, disabled=True)
    state = state_with(profile=SHORT, floors=NoiseFloors(), ref=ref, gpu=fake_info("GPU-test"))
    return TimedCase(benchmark, timer=types.SimpleNamespace(note=""), state=state)


def test_a_function_among_params_is_called_once_after_the_case_is_timed():
    events = []

    def routine():
        events.append("routine")

    def kernel_median_s():
        events.append("kernel_median_s")
        return 1.5e-3

    case = timed_case()
    case.time(routine, wall=True, kernel="k", params={"memory": "pinned", "kernel_median_s": kernel_median_s})
    assert events.count("kernel_median_s") == 1 and events[-1] == "kernel_median_s" and "routine" in events
    info = case.benchmark.extra_info
    assert (info["memory"], info["kernel_median_s"], info["timer"]) == ("pinned", 1.5e-3, "wall clock")


def test_a_host_routine_under_compare_ref_is_skipped_before_any_param_function_runs():
    def not_to_be_called():
        raise AssertionError("measured for a case that is skipped")

    case = timed_case(ref=object())
    with pytest.raises(pytest.skip.Exception, match="timed by wall clock"):
        case.time(lambda: None, wall=True, params={"kernel_median_s": not_to_be_called})
    assert case.benchmark.extra_info == {}


def test_the_record_takes_clocks_throttling_and_the_event_median_from_the_measurement():
    measurement = Measurement([3e-3, 1e-3, 2e-3], "time cap", throttle=["HW slowdown", "SW power cap", "HW slowdown"],
                              sm_clock_mhz=[1980, 1755, 1830], retaken=True, timer="cupti concurrent kernel",
                              event_samples=[4e-3, 2e-3, 3e-3], launched_kernels=("gemm", "reduce"))
    fields = measured_fields(measurement)
    assert fields["launched_kernels"] == ["gemm", "reduce"]  # a list: what JSON gives back
    assert (fields["median_s"], fields["samples"], fields["rsd"]) == (2e-3, [3e-3, 1e-3, 2e-3], 0.5)
    assert (fields["timer"], fields["event_median_s"], fields["stopped_by"]) == ("cupti concurrent kernel", 3e-3, "time cap")
    assert (fields["sm_clock_mhz_min"], fields["sm_clock_mhz_max"]) == (1755, 1980)
    assert fields["throttle_reasons"] == ["HW slowdown", "SW power cap"] and fields["retaken_for_throttle"]


def test_a_measurement_without_clocks_or_event_times_leaves_those_fields_empty():
    fields = measured_fields(Measurement([1e-3], "noise", timer="wall clock"))
    assert (fields["event_median_s"], fields["sm_clock_mhz_min"], fields["sm_clock_mhz_max"]) == (None, None, None)
    assert fields["throttle_reasons"] == [] and not fields["retaken_for_throttle"] and fields["launched_kernels"] == []


def test_a_case_compared_with_a_ref_records_where_it_ran_beside_the_paired_verdict(monkeypatch):
    monkeypatch.setattr(timed_case_module, "sass_of", lambda library, prepared, gpu: "sass-of-head")
    head = Measurement([2.0e-3, 2.1e-3, 1.9e-3], "noise", timer="cupti concurrent kernel")
    verdict = Verdict("suites/s.py::test_host[k]", "same", 1.99e-3, 2.0e-3, 1.004, 0.02, "within 2%", ci_low=0.998, ci_high=1.01,
                      reference="origin/main (abcdef1234)")
    ref = types.SimpleNamespace(ref="origin/main", tree=types.SimpleNamespace(sha="abcdef123456789"),
                                compare=lambda *args, **kwargs: (verdict, head), timed_base={})
    case = timed_case(ref=ref)
    case.time(types.SimpleNamespace(run=lambda stream: None), kernel="k", shape="1x1")
    info = case.benchmark.extra_info
    assert (info["gpu_uuid"], info["pci_bus_id"], info["worker"], info["sass"]) == (
        "GPU-test", "0000:00:00.0", worker_id() or "main", "sass-of-head")  # gw0.. under xdist
    assert info["timing_started"] <= info["timing_ended"] and info["timer"] == "cupti concurrent kernel"
    assert (info["verdict"], info["reference"], info["ci_low"], info["ci_high"]) == (
        "same", "origin/main (abcdef1234)", 0.998, 1.01)
    assert case.state.findings.records[0].verdict == "same" and case.state.findings.verdicts == []  # A/B verdicts stay with the ref


def slower(reference_runs: int) -> Verdict:
    return Verdict("suites/s.py::test_host[k]", "slower", 1.0e-3, 1.2e-3, 1.2, 0.02, "20% slower (p=0.001)",
                   reference="history of GPU-test", reference_runs=reference_runs)


@pytest.mark.parametrize(("reference_runs", "pooled"), [(1, ""), (2, ", pooled with 1 more stored runs"),
                                                      (3, ", pooled with 2 more stored runs")])
def test_a_slower_case_fails_naming_its_reference_and_how_many_stored_runs_it_pooled(monkeypatch, reference_runs,
                                                                                      pooled):
    monkeypatch.setattr(timed_case_module, "judge_against_stored", lambda record, **kwargs: slower(reference_runs))
    case = timed_case()
    case.state.judging.comparing = True
    with pytest.raises(pytest.fail.Exception) as failed:
        case.time(lambda: None, wall=True, kernel="k")
    message = str(failed.value)
    assert message.startswith("performance regression: ") and " now against 1.00 ms in history of GPU-test" in message
    assert f"in history of GPU-test{pooled} (1.200x): 20% slower (p=0.001)" in message
    assert failed.value.pytrace is False  # one line in pytest's report, no traceback of the harness
    assert case.state.findings.verdicts == [slower(reference_runs)]


def test_compare_ref_judges_each_case_against_the_change_its_own_time_can_show():
    floors = NoiseFloors()
    asked = {}

    def compare(name, prepared, timer, profile, flush, detectable):
        # a long case: the relative floor; a 1 µs case: the absolute floor over its time
        asked.update(long=detectable(1.0), short=detectable(1e-6))
        return None, None

    case = timed_case(ref=types.SimpleNamespace(compare=compare))
    case.time(types.SimpleNamespace(run=lambda stream: None), kernel="k", shape="1x1")
    assert asked == {"long": floors.same_gpu, "short": floors.absolute_s / 1e-6}
    assert floors.absolute_s / 1e-6 > floors.same_gpu  # so that the short case tells the two apart
    assert case.benchmark._mode == "not timed: the same SASS and launch as the ref" and case.state.findings.records == []


@pytest.mark.parametrize("rate", [4.4e12, lambda: 4.4e12])  # a rate, or a function measuring it when timed
def test_the_record_names_its_ceiling_and_takes_its_rate(rate):
    case = timed_case()
    case.time(lambda: None, wall=True, kernel="k", bytes_moved=1e6, ceiling=("device copy", rate))
    record = case.state.findings.records[0]
    assert (record.ceiling, record.ceiling_rate) == ("device copy", 4.4e12)


def test_the_machine_code_identity_is_taken_by_the_projects_kernel_library(monkeypatch):
    from kernelwatch.ab.library import Library

    library = Library("mylib", types.ModuleType("mylib"), "mylib")
    prepared = types.SimpleNamespace(build=lambda: "built")
    asked = {}
    monkeypatch.setattr(timed_case_module, "case_identity",
                        lambda package, built, arch: asked.update(package=package, built=built, arch=arch) or "sass")
    assert timed_case_module.sass_of(library, prepared, fake_info("GPU-test")) == "sass"
    assert asked == {"package": library.package, "built": "built", "arch": "sm_90"}


def test_without_a_kernel_library_or_a_build_a_case_records_no_machine_code(monkeypatch):
    from kernelwatch.ab.library import Library

    monkeypatch.setattr(timed_case_module, "case_identity", lambda *args: pytest.fail("no identity is taken"))
    assert timed_case_module.sass_of(None, types.SimpleNamespace(build=lambda: "built"), fake_info("GPU-test")) is None
    library = Library("mylib", types.ModuleType("mylib"), "mylib")
    assert timed_case_module.sass_of(library, types.SimpleNamespace(run=None), fake_info("GPU-test")) is None


def test_under_compare_ref_more_energy_fails_the_case_with_its_message_alone(monkeypatch):
    monkeypatch.setattr(timed_case_module, "sass_of", lambda library, prepared, gpu: "sass-of-head")
    block = {"joules_per_launch": 2e-3, "joules_per_launch_low": 1.99e-3, "joules_per_launch_high": 2.01e-3,
             "confidence": 0.95}
    monkeypatch.setattr(timed_case_module, "with_paired_energy", lambda state, record, *args: dataclasses.replace(
        record, energy=block, energy_verdict={"fails": True, "reason": "more energy: 1.040x"}))
    head = Measurement([2.0e-3, 2.1e-3, 1.9e-3], "noise", timer="cupti concurrent kernel")
    verdict = Verdict("suites/s.py::test_host[k]", "same", 1.99e-3, 2.0e-3, 1.004, 0.02, "within 2%")
    ref = types.SimpleNamespace(ref="origin/main", tree=types.SimpleNamespace(sha="abcdef123456789"),
                                compare=lambda *args, **kwargs: (verdict, head),
                                timed_base={"suites/s.py::test_host[k]": (lambda stream: None, 1.9e-3)})
    with pytest.raises(pytest.fail.Exception) as failed:
        timed_case(ref=ref).time(types.SimpleNamespace(run=lambda stream: None), kernel="k", shape="1x1")
    assert str(failed.value).startswith("energy regression: 2 mJ (95% 1.99-2.01, ±0.5% this run) per launch: more")
    assert failed.value.pytrace is False  # a verdict, not a crash: no traceback of the plugin


def test_what_describes_a_case_is_given_by_name():
    # keyword-only: a kernel name given in the place of `wall`'s or a shape's is refused, not taken for them
    with pytest.raises(TypeError):
        timed_case().time(lambda stream: None, "k")


class RecordingTimer:
    """A GPU timer that times nothing and keeps how it was asked to measure."""

    note = ""

    def __init__(self):
        self.asked = []

    def measure(self, run, profile, flush=None, case=""):
        self.asked.append({"flush": flush, "case": case})
        return Measurement([1e-3, 1.1e-3, 0.9e-3], "noise", timer="cupti concurrent kernel")


@pytest.mark.parametrize(("given", "flush"), [({}, True), ({"flush": False}, False)])
def test_a_gpu_case_flushes_the_l2_before_each_sample_unless_told_not_to(given, flush):
    case = timed_case()
    case.timer = RecordingTimer()
    case.time(lambda stream: None, kernel="k", **given)
    assert case.timer.asked == [{"flush": flush, "case": "suites/s.py::test_host[k]"}]


@pytest.mark.parametrize(("label", "carded"), [("same", False), ("slower", True), ("accepted", True)])
def test_only_a_slower_or_accepted_case_gets_a_cause_card(monkeypatch, label, carded):
    verdict = dataclasses.replace(slower(1), label=label)
    monkeypatch.setattr(timed_case_module, "judge_against_stored", lambda record, **kwargs: verdict)
    carded_cases = []
    monkeypatch.setattr(timed_case_module, "card_against_stored",
                        lambda state, record, verdict, prepared: carded_cases.append(record.case))
    case = timed_case()
    case.state.judging.comparing = True
    with pytest.raises(pytest.fail.Exception) if verdict.fails else contextlib.nullcontext():
        case.time(lambda: None, wall=True, kernel="k")
    assert carded_cases == (["suites/s.py::test_host[k]"] if carded else [])


class KernelPhase:
    """A phase recorder that cuts every wall-clock sample into a 100 µs kernel phase."""

    def start(self):
        pass

    def mark(self):
        pass

    def phases(self, samples, case):
        return {"kernel": [100e-6] * len(samples)}

    def stop(self):
        pass


@pytest.mark.parametrize(("comparing", "store", "judged"), [(False, None, False), (True, None, True),
                                                            (False, object(), True)])
def test_a_host_routines_phases_are_judged_where_the_run_compares_or_stores_and_only_there(comparing, store, judged):
    case = timed_case()
    case.timer = types.SimpleNamespace(note="", phase_recorder=KernelPhase)
    case.state.judging.comparing, case.state.stored.store = comparing, store
    case.time(lambda: None, wall=True, kernel="k")
    record = case.state.findings.records[0]
    assert list(record.phases) == ["kernel"]  # cut in every run ...
    # ... judged (here: new, no stored run holds it) only where a verdict is asked for
    assert [(v["phase"], v["label"]) for v in record.phase_verdicts] == ([("kernel", "new")] if judged else [])


def test_a_routine_without_phases_has_no_phase_verdicts_in_a_run_that_stores():
    case = timed_case()
    case.state.stored.store = object()
    case.time(lambda: None, wall=True, kernel="k")
    assert case.state.findings.records[0].phase_verdicts == []


def test_a_slower_phase_fails_its_routine_with_one_line_naming_the_phase_and_no_traceback(monkeypatch):
    phase = Verdict("suites/s.py::test_host[k] kernel", "slower", 1.0e-4, 1.2e-4, 1.2, 0.02, "20% slower (p=0.001)",
                    reference_runs=3)
    monkeypatch.setattr(timed_case_module, "phase_verdicts", lambda record, history, **kwargs: {"kernel": phase})
    case = timed_case()
    case.timer = types.SimpleNamespace(note="", phase_recorder=KernelPhase)
    case.state.stored.store = object()
    with pytest.raises(pytest.fail.Exception) as failed:
        case.time(lambda: None, wall=True, kernel="k")
    assert str(failed.value) == ("performance regression in its phases: kernel 120 µs against 100 µs (1.200x): "
                                 "20% slower (p=0.001)")
    assert failed.value.pytrace is False  # a verdict, not a crash of the plugin


def compared_case(monkeypatch, label: str, note: str = "") -> TimedCase:
    """A prepared case under --kernelwatch-compare-ref whose paired verdict is `label`, timed by a timer with `note`."""

    monkeypatch.setattr(timed_case_module, "sass_of", lambda library, prepared, gpu: "sass-of-head")
    head = Measurement([2.0e-3, 2.1e-3, 1.9e-3], "noise", timer="cuda events")
    verdict = Verdict("suites/s.py::test_host[k]", label, 1.8e-3, 2.0e-3, 1.11, 0.02, "11% slower (p=0.001)")
    case = timed_case(ref=types.SimpleNamespace(ref="origin/main", compare=lambda *args: (verdict, head), timed_base={}))
    case.timer = types.SimpleNamespace(note=note)
    return case


def test_a_case_compared_with_a_ref_keeps_the_note_of_the_timer_that_timed_it(monkeypatch):
    case = compared_case(monkeypatch, "same", note="CUPTI is not available")
    case.time(types.SimpleNamespace(run=lambda stream: None), kernel="k", shape="1x1")
    assert case.state.findings.records[0].timer_note == "CUPTI is not available"


@pytest.mark.parametrize(("wall", "note"), [(False, "CUPTI is not available"), (True, "")])
def test_a_gpu_timed_case_keeps_the_timers_note_and_a_wall_clock_one_none(wall, note):
    case = timed_case()
    case.timer = RecordingTimer()
    case.timer.note = "CUPTI is not available"  # said of the GPU timer: the wall clock is not it
    case.time((lambda: None) if wall else (lambda stream: None), kernel="k", wall=wall)
    assert case.state.findings.records[0].timer_note == note


def test_a_case_slower_than_the_ref_fails_with_one_line_naming_the_ref_after_its_card(monkeypatch):
    explained = []
    monkeypatch.setattr(timed_case_module, "explain_slower", lambda state, name, prepared: explained.append(name))
    case = compared_case(monkeypatch, "slower")
    with pytest.raises(pytest.fail.Exception) as failed:
        case.time(types.SimpleNamespace(run=lambda stream: None), kernel="k", shape="1x1")
    assert str(failed.value) == "slower than origin/main: 11% slower (p=0.001)"
    assert failed.value.pytrace is False  # a verdict, not a crash of the plugin
    assert explained == ["suites/s.py::test_host[k]"] and case.state.findings.records[0].verdict == "slower"

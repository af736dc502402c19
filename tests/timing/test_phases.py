"""kernelwatch.timing.phases and the wall-clock sampling that uses it: a host routine's samples cut into phases
by CUPTI's records (marks, copy directions, the host's rest) without a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwatch.timing.phases import (
    HOST_PHASE,
    MARK_KERNEL,
    PhaseRecorder,
    busy_ns,
    by_sample,
    phase_of,
    phases_of,
)
from kernelwatch.timing.profile import Profile
from kernelwatch.timing.spans import Activity, TimingError, activities_from_json
from kernelwatch.timing.wall import measure_wall


def mark(at: int) -> Activity:
    return Activity("kernel", MARK_KERNEL, at, at + 2_000)


def routine(at: int, kernel_ns: int = 100_000) -> list[Activity]:
    """A pinned routine's records from `at` on: two copies in, the kernel, one copy out."""
    return [Activity("memcpy", "memcpy HTOD", at + 10_000, at + 60_000),
            Activity("memcpy", "memcpy HTOD", at + 70_000, at + 120_000),
            Activity("kernel", "matmul_tiled", at + 130_000, at + 130_000 + kernel_ns),
            Activity("memcpy", "memcpy DTOH", at + 140_000 + kernel_ns, at + 190_000 + kernel_ns)]


def test_each_activity_belongs_to_the_phase_of_its_kind_and_direction():
    assert [phase_of(a) for a in routine(0)] == ["HtoD", "HtoD", "kernel", "DtoH"]
    assert phase_of(Activity("memcpy", "memcpy DTOD", 0, 1)) == "DtoD"
    assert phase_of(Activity("memset", "memset", 0, 1)) == "memset"


def test_records_read_back_from_json_belong_to_the_same_phases():
    # the stored form of tests/data/cupti/*.json: the kinds are strings json made, equal to but not the
    # same objects as the words the recorder writes
    import json

    stored = json.loads(json.dumps([list(a) for a in routine(0)]))
    assert [phase_of(a) for a in activities_from_json(stored)] == ["HtoD", "HtoD", "kernel", "DtoH"]


def test_records_are_cut_at_the_marks_in_any_order_and_the_marks_left_out():
    records = [mark(0), *routine(5_000), mark(1_000_000), *routine(1_005_000, kernel_ns=200_000)]
    cut = by_sample(list(reversed(records)), 2, "r")
    assert [len(sample) for sample in cut] == [4, 4]
    assert cut[1][2].end_ns - cut[1][2].start_ns == 200_000 and all(a.name != MARK_KERNEL for s in cut for a in s)


@pytest.mark.parametrize("records, samples, dropped, words", [
    ([mark(0), *routine(5_000)], 2, 0, "1 sample marks in CUPTI's records for 2 samples"),
    ([mark(0), *routine(5_000), mark(500_000)], 1, 0, "2 sample marks in CUPTI's records for 1 samples"),
    ([*routine(0), mark(500_000)], 1, 0, "ran before the first sample's mark"),
    ([mark(0), *routine(5_000)], 1, 3, "CUPTI dropped 3 activity records"),
])
def test_records_that_cannot_be_cut_are_a_timing_error_naming_the_routine(records, samples, dropped, words):
    with pytest.raises(TimingError, match=rf"^r\[pinned\]: .*{words}"):
        by_sample(records, samples, "r[pinned]", dropped)


def test_busy_time_is_the_union_of_the_spans():
    assert busy_ns([Activity("kernel", "a", 0, 10), Activity("memcpy", "b", 5, 20), Activity("kernel", "c", 30, 40),
                    Activity("kernel", "d", 32, 35)]) == 30
    assert busy_ns([]) == 0


def test_phases_sum_each_kind_per_sample_and_the_host_is_the_wall_clock_less_the_gpus_work():
    cut = [routine(0), routine(0, kernel_ns=300_000)]
    phases = phases_of(cut, [0.5e-3, 0.9e-3])
    assert list(phases) == ["HtoD", "kernel", "DtoH", HOST_PHASE]
    assert phases["HtoD"] == pytest.approx([100e-6, 100e-6]) and phases["DtoH"] == pytest.approx([50e-6] * 2)
    assert phases["kernel"] == pytest.approx([100e-6, 300e-6])
    assert phases[HOST_PHASE] == pytest.approx([0.5e-3 - 250e-6, 0.9e-3 - 450e-6])
    # a sample without a phase counts 0 there; a wall clock shorter than the GPU's work leaves no host time
    phases = phases_of([routine(0), [Activity("kernel", "k", 0, 50_000)]], [0.5e-3, 10e-6])
    assert phases["HtoD"][1] == 0.0 and phases[HOST_PHASE][1] == 0.0
    with pytest.raises(ValueError, match="2 samples of activities for 1 wall-clock samples"):
        phases_of(cut, [0.5e-3])
    with pytest.raises(ValueError, match="^2 samples of activities for 3 wall-clock samples$"):
        phases_of(cut, [0.5e-3] * 3)


class Recorder:
    """The parts of the timer's ActivityRecorder a PhaseRecorder calls, answering with a routine per mark."""

    def __init__(self):
        self.calls, self.marks = [], 0

    def start(self, serial_kernels=False):
        self.calls.append(("start", serial_kernels))

    def mark(self):
        self.marks += 1

    def collect(self):
        self.calls.append("collect")
        records = []
        for i in range(self.marks):
            records += [mark(i * 1_000_000), *routine(i * 1_000_000 + 5_000)]
        return records, 0

    def stop(self):
        self.calls.append("stop")


QUICK = Profile("t", min_samples=5, min_time=0, target_rsd=0.5, time_cap=1, warmup=2)


def test_wall_sampling_marks_every_sample_and_cuts_the_phases_once_after_the_last():
    recorder = Recorder()
    runs = []
    measured = measure_wall(lambda: runs.append(recorder.marks), QUICK, PhaseRecorder(recorder, recorder.mark),
                            case="r")
    samples = len(measured.samples)
    assert recorder.calls == [("start", True), "collect", "stop"]  # CUPTI's KERNEL kind; one read of the records
    assert runs[:2] == [0, 0] and runs[2:] == list(range(1, samples + 1))  # warm-up unmarked; each sample marked first
    assert set(measured.phases) == {"HtoD", "kernel", "DtoH", HOST_PHASE}
    assert measured.phases["kernel"] == pytest.approx([100e-6] * samples)
    assert measure_wall(lambda: None, QUICK).phases == {}  # no CUPTI: no phases


def test_a_routine_that_raises_still_stops_the_recording():
    recorder = Recorder()
    calls = []

    def fails_on_the_third_call():
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        measure_wall(fails_on_the_third_call, QUICK, PhaseRecorder(recorder, recorder.mark), case="r")
    assert recorder.calls == [("start", True), "stop"]


def test_the_host_kernel_slowdown_plugin_picks_the_first_pattern_that_matches_and_imports_on_a_cpu():
    from tests.plugins.host_kernel_slowdown import percent_for

    specs = ["*pinned-tiled*:10", "*pinned*:5"]
    assert percent_for("s.py::test_matmul_host_routine_time[pinned-tiled32]", specs) == 10.0
    assert percent_for("s.py::test_matmul_host_routine_time[pinned-cublas]", specs) == 5.0
    assert percent_for("s.py::test_matmul_host_routine_time[pageable-cublas]", specs) is None


def test_a_copy_of_an_unknown_or_no_direction_keeps_its_words_or_is_a_copy():
    assert phase_of(Activity("memcpy", "memcpy PTOP", 0, 1)) == "PTOP"
    assert phase_of(Activity("memcpy", "memcpy ", 0, 1)) == "copy"
    assert [phase_of(Activity("memcpy", f"memcpy {d}", 0, 1)) for d in ("HTOH", "HTOA", "ATOH")] == [
        "HtoH", "HtoA", "AtoH"]
    assert phase_of(Activity("kernel", MARK_KERNEL, 0, 1)) == "kernel"


def test_other_phases_come_after_the_routines_own_by_name_and_the_host_last():
    sample = [Activity("memset", "memset", 0, 1_000), Activity("memcpy", "memcpy DTOD", 2_000, 5_000),
              Activity("memcpy", "memcpy DTOH", 6_000, 7_000), Activity("memcpy", "memcpy HTOD", 8_000, 9_000)]
    phases = phases_of([sample], [1e-3])
    assert list(phases) == ["HtoD", "DtoH", "DtoD", "memset", HOST_PHASE]
    assert phases["DtoD"] == pytest.approx([3e-6], rel=1e-12) and phases["memset"] == pytest.approx([1e-6], rel=1e-12)
    assert phases[HOST_PHASE] == pytest.approx([1e-3 - 6e-6], rel=1e-12)


def test_spans_that_touch_count_once_each_and_a_span_inside_another_adds_nothing():
    assert busy_ns([Activity("kernel", "a", 0, 10), Activity("kernel", "b", 10, 25)]) == 25
    assert busy_ns([Activity("kernel", "a", 0, 10), Activity("kernel", "b", 11, 25)]) == 24
    assert busy_ns([Activity("kernel", "a", 0, 30), Activity("kernel", "b", 5, 30)]) == 30
    assert busy_ns([Activity("kernel", "b", 5, 40), Activity("kernel", "a", 0, 30)]) == 40


def test_an_activity_starting_at_a_marks_end_belongs_to_that_sample_and_errors_name_a_routine_without_a_case():
    cut = by_sample([mark(0), Activity("kernel", "k", 2_000, 3_000), mark(10_000),
                     Activity("kernel", "k", 11_999, 12_500), Activity("kernel", "k", 12_000, 13_000)], 2, "r")
    assert [[a.start_ns for a in sample] for sample in cut] == [[2_000, 11_999], [12_000]]
    with pytest.raises(TimingError, match=r"^a host routine: CUPTI dropped 1 activity records, so its phases cannot "
                                          r"be cut$"):
        by_sample([mark(0)], 1, "", 1)
    with pytest.raises(TimingError, match=r"^a host routine: 0 sample marks in CUPTI's records for 1 samples$"):
        by_sample([], 1, "")
    with pytest.raises(TimingError, match=r"^a host routine: k ran before the first sample's mark$"):
        by_sample([Activity("kernel", "k", 0, 1), mark(10)], 1, "")


@pytest.mark.slow  # a pytest process per spec: `tox -e unit` leaves it out, CI's slow pass runs it
@pytest.mark.parametrize("spec", ["*pinned*", "*pinned*:ten", "*pinned*:0", ":10"])
def test_the_host_kernel_slowdown_plugin_refuses_a_spec_that_is_no_pattern_and_positive_percent(spec, tmp_path):
    import subprocess
    import sys

    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                             "tests.plugins.host_kernel_slowdown", f"--slow-host-kernel={spec}", str(tmp_path)],
                            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert result.returncode == 4 and "give PATTERN:PERCENT, PERCENT a positive number" in result.stderr


def test_marks_and_kinds_are_matched_by_their_text_not_by_the_string_object():
    # CUPTI's records and JSON give new string objects: a mark or a kind equal in text is the same mark or kind
    fresh = "".join  # a string equal to, but not the object of, the one given
    marks = [Activity("kernel", fresh(list(MARK_KERNEL)), at, at + 2_000) for at in (0, 1_000_000)]
    records = [marks[0], *routine(5_000), marks[1], *routine(1_005_000)]
    cut = by_sample(records, 2, "r")
    assert [len(sample) for sample in cut] == [4, 4] and all(a.name != MARK_KERNEL for s in cut for a in s)
    sets = [Activity(fresh(["mem", "set"]), "memset", at, at + 1_000) for at in (10_000, 20_000)]
    assert phases_of([sets], [1e-3])["memset"] == [pytest.approx(2e-6)]


def test_records_read_back_from_json_are_cut_at_their_marks():
    # a stored routine's records (tests/data/cupti/*.json): every kind and name is a string json made
    import json

    records = [mark(0), *routine(5_000), mark(1_000_000), *routine(1_005_000, kernel_ns=200_000)]
    stored = activities_from_json(json.loads(json.dumps([list(a) for a in records])))
    cut = by_sample(stored, 2, "r")
    assert [[a.name for a in sample] for sample in cut] == [["memcpy HTOD", "memcpy HTOD", "matmul_tiled",
                                                             "memcpy DTOH"]] * 2
    assert phases_of(cut, [1e-3, 1e-3])["kernel"] == pytest.approx([100e-6, 200e-6], rel=1e-12)


def test_a_routine_timed_hundreds_of_times_is_cut_into_as_many_samples():
    samples = 300  # past the integers Python keeps one object of
    records = [a for i in range(samples) for a in (mark(i * 1_000_000), *routine(i * 1_000_000 + 5_000))]
    cut = by_sample(records, samples, "r")
    assert len(cut) == samples and {len(sample) for sample in cut} == {4}
    phases = phases_of(cut, [0.5e-3] * samples)
    assert {name: len(values) for name, values in phases.items()} == dict.fromkeys(
        ["HtoD", "kernel", "DtoH", HOST_PHASE], samples)
    assert phases[HOST_PHASE][-1] == pytest.approx(0.5e-3 - 250e-6, rel=1e-12)
    with pytest.raises(TimingError, match=f"^r: {samples - 1} sample marks in CUPTI's records for {samples} samples$"):
        by_sample(records[5:], samples, "r")

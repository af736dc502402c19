"""kernelwatch.timing.spans: CUPTI activity records turned into per-launch spans, on a fake cupti."""

import json
import random
from pathlib import Path

import pytest

from kernelwatch.timing.spans import (
    FLUSH_KERNEL,
    HOLD_KERNEL,
    Activity,
    TimingError,
    activities_from_json,
    crosses_to_the_host,
    runs_one_at_a_time,
    sample_activities,
    span,
)

RECORDED = Path(__file__).parents[1] / "data" / "cupti" / "h200_records.json"


def sample_spans(records, samples, case, dropped=0):
    """Each sample's span, as the timer takes it from the sample's activities."""
    return [span(activities) for activities in sample_activities(records, samples, case, dropped)]


def kernel(name, start, end):
    return Activity("kernel", name, start, end)


def two_samples():
    """flush, hold, the case's kernel; twice. Kernel times 1000 and 1500 ns."""
    return [
        kernel(FLUSH_KERNEL, 0, 900), kernel(HOLD_KERNEL, 1000, 5000), kernel("k", 5100, 6100),
        kernel(FLUSH_KERNEL, 7000, 7900), kernel(HOLD_KERNEL, 8000, 9000), kernel("k", 9050, 10550),
    ]


def recorded_cases():
    data = json.loads(RECORDED.read_text())
    assert data["cases"], "the recorded file holds no case"
    return data["cases"]


def case_samples(case):
    """The recorded records of one case, split per sample by hand (the hold kernels' ends)."""
    records = activities_from_json(case["records"])
    holds = sorted((r for r in records if r.name == HOLD_KERNEL), key=lambda r: r.start_ns)
    bounds = [h.end_ns for h in holds] + [float("inf")]
    return [[r for r in records if r.name not in (HOLD_KERNEL, FLUSH_KERNEL) and bounds[i] <= r.start_ns < bounds[i + 1]]
            for i in range(len(holds))]


def test_span_of_each_sample_excludes_the_flush_and_hold_kernels():
    assert sample_spans(two_samples(), 2, "case") == pytest.approx([1000e-9, 1500e-9])


def test_span_runs_from_first_start_to_last_end_of_a_samples_activities():
    records = [kernel(HOLD_KERNEL, 0, 100), Activity("memcpy", "memcpy HTOD", 150, 400),
               kernel("k", 300, 700), Activity("memcpy", "memcpy DTOH", 650, 900)]
    assert sample_spans(records, 1, "case") == pytest.approx([750e-9])


def test_records_in_any_order_give_the_same_spans():
    records = two_samples()
    random.Random(0).shuffle(records)
    assert sample_spans(records, 2, "case") == pytest.approx([1000e-9, 1500e-9])


def test_an_activity_belongs_to_the_last_hold_that_ended_before_it_started():
    # the second sample's kernel starts exactly as its hold ends: it is that sample's, not the first's
    records = [kernel(HOLD_KERNEL, 0, 100), kernel("k", 200, 300), kernel(HOLD_KERNEL, 400, 500), kernel("k", 500, 900)]
    assert sample_spans(records, 2, "case") == pytest.approx([100e-9, 400e-9])


def test_too_few_markers_for_the_samples_taken_is_an_error_naming_the_case():
    with pytest.raises(TimingError, match=r"matmul 1024: 2 hold_stream records for 3 samples"):
        sample_spans(two_samples(), 3, "matmul 1024")


def test_more_markers_than_samples_taken_is_an_error():
    with pytest.raises(TimingError, match=r"add: 2 hold_stream records for 1 samples"):
        sample_spans(two_samples(), 1, "add")


def test_a_sample_without_activity_is_an_error():
    records = [r for r in two_samples() if r.start_ns < 7000]  # the second sample's kernel is lost
    records.append(kernel(HOLD_KERNEL, 8000, 9000))
    with pytest.raises(TimingError, match=r"copy: sample 2 of 2 has no activity record"):
        sample_spans(records, 2, "copy")


def test_dropped_records_are_an_error():
    with pytest.raises(TimingError, match=r"cublas 4096: CUPTI dropped 3 activity records"):
        sample_spans(two_samples(), 2, "cublas 4096", dropped=3)


def test_a_record_ending_before_it_starts_is_an_error():
    records = two_samples() + [kernel("k", 10600, 10500)]
    with pytest.raises(TimingError, match=r"naive 1000: activity record 'k' ends \(10500 ns\) before it starts"):
        sample_spans(records, 2, "naive 1000")


def test_an_activity_before_the_first_marker_is_an_error():
    records = [kernel("stray", 0, 50)] + two_samples()
    with pytest.raises(TimingError, match=r"case: activity 'stray' starts before the first sample"):
        sample_spans(records, 2, "case")


def test_an_unnamed_case_is_still_named_in_the_error():
    with pytest.raises(TimingError, match=r"an unnamed case: 2 hold_stream"):
        sample_spans(two_samples(), 3, "")


def test_recorded_h200_records_give_the_spans_the_timer_took():
    for case in recorded_cases():
        spans = sample_spans(activities_from_json(case["records"]), case["samples"], case["case"], case["dropped"])
        assert spans == pytest.approx(case["spans_s"], abs=1e-12), case["case"]


def test_recorded_single_kernel_spans_equal_their_kernels_durations():
    checked = 0
    for case in recorded_cases():
        per_sample = case_samples(case)
        if not all(len(s) == 1 and s[0].kind == "kernel" for s in per_sample):
            continue
        durations = [(s[0].end_ns - s[0].start_ns) * 1e-9 for s in per_sample]
        assert case["spans_s"] == pytest.approx(durations, abs=1e-12), case["case"]
        checked += 1
    assert checked >= 3, "the recorded data should hold at least three single-kernel cases"


def test_recorded_memcpy_case_is_timed_by_its_copy_records():
    copies = [c for c in recorded_cases() if c["case"].startswith("memcpy")]
    assert copies, "the recorded data holds no memcpy case"
    for case in copies:
        per_sample = case_samples(case)
        assert all(s and all(r.kind == "memcpy" for r in s) for s in per_sample)
        durations = [(max(r.end_ns for r in s) - min(r.start_ns for r in s)) * 1e-9 for s in per_sample]
        assert case["spans_s"] == pytest.approx(durations, abs=1e-12)


def test_recorded_spans_are_shorter_than_the_held_event_times_of_the_same_samples():
    for case in recorded_cases():
        assert len(case["spans_s"]) == len(case["event_samples_s"]) == case["samples"]
        for recorded_span, event in zip(case["spans_s"], case["event_samples_s"], strict=True):
            assert 0 < recorded_span < event, case["case"]


def test_recorded_spans_do_not_change_without_the_flush_kernel_records():
    for case in recorded_cases():
        records = activities_from_json(case["records"])
        assert any(r.name == FLUSH_KERNEL for r in records), case["case"]
        without_flush = [r for r in records if r.name != FLUSH_KERNEL]
        assert sample_spans(without_flush, case["samples"], case["case"]) == pytest.approx(case["spans_s"], abs=1e-12)


def test_recorded_records_missing_one_marker_are_an_error():
    case = recorded_cases()[0]
    records = activities_from_json(case["records"])
    first_hold = next(r for r in records if r.name == HOLD_KERNEL)
    records.remove(first_hold)
    with pytest.raises(TimingError, match=case["case"]):
        sample_spans(records, case["samples"], case["case"])


def copy(direction, start, end):
    return Activity("memcpy", f"memcpy {direction}", start, end)


def test_kernels_one_after_another_run_one_at_a_time_and_touching_ends_do_not_overlap():
    assert runs_one_at_a_time([kernel("gemm", 0, 100), kernel("reduce", 100, 150)])
    assert runs_one_at_a_time([kernel("reduce", 120, 150), kernel("gemm", 0, 100)])  # any order
    assert runs_one_at_a_time([kernel("k", 0, 100)])


def test_a_copy_stamped_a_few_tens_of_ns_before_the_kernel_it_follows_ended_is_still_one_at_a_time():
    # recorded on an H200: a device-to-host copy after its kernel, 64 ns "before" the kernel's end
    assert runs_one_at_a_time([kernel("vector_add", 1_452_387, 1_488_131), copy("DTOH", 1_488_067, 2_211_493)])
    assert not runs_one_at_a_time([kernel("k", 0, 100_000), copy("DTOH", 98_000, 200_000)])  # 2 µs: overlap


def test_a_copy_beside_a_kernel_overlaps():
    assert not runs_one_at_a_time([copy("HTOD", 0, 100_000), kernel("k", 50_000, 120_000),
                                   copy("DTOH", 120_000, 200_000)])


@pytest.mark.parametrize("activities, crosses", [
    ([copy("HTOD", 0, 10), kernel("k", 10, 20)], True),
    ([kernel("k", 0, 10), copy("DTOH", 10, 20)], True),
    ([copy("DTOD", 0, 10)], False),  # device to device: no host memory
    ([kernel("HTOD_named_kernel", 0, 10)], False),  # a kernel is no copy, whatever its name
    ([Activity("memset", "memset HTOD", 0, 10)], False),  # nor a memset (its kind sorts after "memcpy")
])
def test_copies_with_host_memory_on_one_side_cross_to_the_host(activities, crosses):
    assert crosses_to_the_host(activities) is crosses


# ---- recorded by the timer that picks CUPTI's kernel kind per case (maintainers/experiments/cupti_smoke.py, 7a77017) ----

RECORDED_KINDS = Path(__file__).parents[1] / "data" / "cupti" / "h200_records_kinds.json"


def recorded_kinds_cases():
    return {case["case"]: case for case in json.loads(RECORDED_KINDS.read_text())["cases"]}


def launches_of(case):
    from kernelwatch.timing.spans import sample_activities

    return sample_activities(activities_from_json(case["records"]), case["samples"], case["case"], case["dropped"])


def test_recorded_spans_of_both_kinds_are_the_ones_the_timer_took():
    cases = recorded_kinds_cases()
    assert {case["timer"] for case in cases.values()} == {"cupti kernel", "cupti concurrent kernel"}
    for case in cases.values():
        spans = sample_spans(activities_from_json(case["records"]), case["samples"], case["case"], case["dropped"])
        assert spans == pytest.approx(case["spans_s"], abs=1e-12), case["case"]


def test_recorded_streams_pipeline_overlaps_at_four_chunks_and_not_on_one_stream():
    cases = recorded_kinds_cases()
    four, one = launches_of(cases["streams 4 chunk(s)"]), launches_of(cases["streams 1 chunk(s)"])
    assert not any(runs_one_at_a_time(launch) for launch in four)  # copies beside kernels
    assert all(runs_one_at_a_time(launch) for launch in one)  # copy, copy, kernel, copy
    assert all(crosses_to_the_host(launch) for launch in four + one)
    assert cases["streams 4 chunk(s)"]["host_copies"] is cases["streams 1 chunk(s)"]["host_copies"] is True


def test_recorded_gpu_only_cases_run_one_at_a_time_without_host_copies():
    for name, case in recorded_kinds_cases().items():
        if name.startswith("streams"):
            continue
        launches = launches_of(case)
        assert all(runs_one_at_a_time(launch) and not crosses_to_the_host(launch) for launch in launches), name
        assert case["host_copies"] is False, name


def test_recorded_cases_got_the_kind_the_rule_gives_their_timed_samples():
    from kernelwatch.timing.timer import SERIAL_KIND_FROM

    for name, case in recorded_kinds_cases().items():
        launches = launches_of(case)
        serial = all(runs_one_at_a_time(launch) for launch in launches)
        long_enough = sorted(case["spans_s"])[len(case["spans_s"]) // 2] >= SERIAL_KIND_FROM
        assert case["timer"] == ("cupti kernel" if serial and long_enough else "cupti concurrent kernel"), name


def test_a_span_runs_from_the_first_start_to_the_last_end_whatever_the_record_order():
    records = [Activity("kernel", "b", 300, 900), Activity("memcpy", "memcpy HtoD", 100, 400),
               Activity("kernel", "c", 500, 1200), Activity("kernel", "a", 200, 250)]
    assert span(records) == pytest.approx((1200 - 100) * 1e-9)
    assert span(list(reversed(records))) == pytest.approx(1100e-9)


def test_work_that_overlaps_by_up_to_a_microsecond_still_runs_one_at_a_time():
    """CUPTI's timestamps of back-to-back kernels can overlap by a little: 1000 ns is the slack."""
    from kernelwatch.timing.spans import SERIAL_SLACK_NS, Activity, runs_one_at_a_time

    assert SERIAL_SLACK_NS == 1000
    assert runs_one_at_a_time([Activity("kernel", "a", 0, 5000), Activity("kernel", "b", 4000, 9000)])
    assert not runs_one_at_a_time([Activity("kernel", "a", 0, 5000), Activity("kernel", "b", 3999, 9000)])


def test_a_record_of_no_duration_is_a_record_not_an_error():
    from kernelwatch.timing.spans import HOLD_KERNEL, Activity, sample_activities, span

    records = [Activity("kernel", HOLD_KERNEL, 0, 1000), Activity("kernel", "k", 1500, 1500),
               Activity("kernel", "k", 1600, 2600)]
    assert [span(activities) for activities in sample_activities(records, 1, "case")] == [1100e-9]

"""The case record: one set of keys, written once, read back by everything downstream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelwatch.storage.runs import load_run
from kernelwatch.verdict.record import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL, CaseRecord, records_of

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "baselines" / "NVIDIA_H200" / "0001_h200-34b7857.json"
FIRST_CUPTI = ROOT / "baselines" / "NVIDIA_H200" / "0002_h200-f7a0fb6.json"
KERNEL_KIND = ROOT / "baselines" / "NVIDIA_H200" / "0003_h200-83ee3e7.json"


def test_rates_and_fractions_are_derived_from_work_and_median():
    r = CaseRecord(case="c", median_s=2.0e-3, flops=100e12 * 2.0e-3, ceiling="cuBLAS", ceiling_rate=50e12,
                   datasheet_rate=200e12)
    assert r.rate == pytest.approx(100.0) and r.unit == "TFLOP/s"
    assert r.fraction_of_ceiling == pytest.approx(2.0) and r.fraction_of_datasheet == pytest.approx(0.5)
    assert (r.rate_text(), r.ceiling_text(), r.datasheet_text()) == ("100.00 TFLOP/s", "200.0% of cuBLAS", "50.0%")
    b = CaseRecord(case="c", median_s=1e-3, bytes=4.4e9)
    assert b.rate_text() == "4400 GB/s" and b.ceiling_text() == "" and b.datasheet_text() == ""
    assert CaseRecord(case="c", median_s=1.0).rate_text() == ""


def test_a_record_survives_the_round_trip_through_benchmark_json():
    r = CaseRecord(case="s.py::t[a]", median_s=2e-3, samples=[1e-3, 2e-3, 3e-3], kernel="warptile",
                   shape="4x4x4", params={"chunks": 4}, flops=1e9, ceiling="cuBLAS", ceiling_rate=5e13,
                   timer=TIMER_CUPTI, event_median_s=2.1e-3, gpu_uuid="GPU-1", sass="ab12", verdict="same",
                   ratio=1.01, p_value=0.3, detectable=0.02, verdict_reason="within", reference="0001_x.json",
                   launched_kernels=["sm90_xmma_gemm", "splitk_reduce"])
    bench = {"fullname": r.case, "stats": {"data": r.samples}, "extra_info": json.loads(json.dumps(r.to_extra_info()))}
    back = CaseRecord.from_benchmark(bench)
    assert back == r
    assert bench["extra_info"]["rate"] == pytest.approx(r.rate) and bench["extra_info"]["sample_count"] == 3


def test_the_committed_h200_baseline_reads_as_records():
    records = records_of(load_run(COMMITTED))
    assert len(records) == 86
    matmul = next(r for r in records if r.case.endswith("test_matmul_time[4096x4096x4096-warptile_128x256]"))
    assert matmul.timer == TIMER_EVENTS and matmul.kernel == "warptile_128x256"
    assert matmul.rate == pytest.approx(46.88, abs=0.01)
    assert matmul.ceiling_text() == "91.2% of cuBLAS" and matmul.datasheet_text() == "70.1%"
    streams = next(r for r in records if r.case.endswith("[chunks=4]"))
    assert streams.params["chunks"] == 4 and streams.label() == "test_vector_add_streams_time[chunks=4] (chunks 4)"
    host = next(r for r in records if "host_routine" in r.case)
    assert host.timer == TIMER_WALL and "samples" not in host.params


def test_the_cupti_baselines_read_as_the_activity_kinds_that_recorded_them():
    """0002 wrote "cupti" for CUPTI's CONCURRENT_KERNEL kind, today's timer; 0003 was timed with the
    KERNEL kind for every case. Loading migrates the old names (src/kernelwatch/storage/schema.py)."""
    def timers(path):
        return {r.timer for r in records_of(load_run(path)) if r.timer != TIMER_WALL}

    assert timers(FIRST_CUPTI) == {TIMER_CUPTI}
    assert timers(KERNEL_KIND) == {"cupti kernel", "cupti concurrent kernel"}
    assert TIMER_CUPTI == "cupti concurrent kernel"


def test_a_record_without_samples_reads_its_median_from_the_stats_then_extra_info_else_zero():
    from kernelwatch.verdict.record import CaseRecord

    def bench(stats, info):
        return {"fullname": "suites/x.py::test[a]", "stats": stats, "extra_info": info}

    assert CaseRecord.from_benchmark(bench({"median": 2e-3}, {"median_s": 5e-3})).median_s == 2e-3
    assert CaseRecord.from_benchmark(bench({}, {"median_s": 5e-3})).median_s == 5e-3
    assert CaseRecord.from_benchmark(bench({}, {})).median_s == 0.0
    assert CaseRecord.from_benchmark(bench({"data": [3e-3, 1e-3, 2e-3], "median": 9.0}, {})).median_s == 2e-3


def test_a_record_read_back_keeps_every_parameter_but_the_derived_fields_and_median():
    from kernelwatch.verdict.record import CaseRecord

    info = {"median_s": 1e-3, "n": 1024, "size": "1024x1024", "zeta": 1, "alpha_param": 2, "rate": 5.0}
    record = CaseRecord.from_benchmark({"fullname": "suites/x.py::test[a]", "stats": {}, "extra_info": info})
    assert record.params == {"n": 1024, "size": "1024x1024", "zeta": 1, "alpha_param": 2}


def test_a_record_is_not_retaken_for_throttling_unless_it_says_so():
    """retaken_for_throttle defaults to False, also for a file written before the key existed."""
    assert CaseRecord(case="s.py::t", median_s=1e-3).retaken_for_throttle is False
    bench = {"fullname": "s.py::t", "stats": {"data": [1e-3]}, "extra_info": {}}
    assert CaseRecord.from_benchmark(bench).retaken_for_throttle is False


def test_the_unit_is_gb_per_second_for_bytes_and_none_without_work():
    """`unit` (and the rate_unit written beside the fields) follows the kind of work."""
    assert CaseRecord(case="c", median_s=1e-3, bytes=4e9).unit == "GB/s"
    assert CaseRecord(case="c", median_s=1e-3, flops=4e9).unit == "TFLOP/s"
    assert CaseRecord(case="c", median_s=1e-3).unit is None
    assert CaseRecord(case="c", median_s=1e-3, bytes=4e9).to_extra_info()["rate_unit"] == "GB/s"


def test_a_case_id_without_a_test_path_labels_as_itself():
    """label() falls back to the last part of the node id, which is the whole id when it has no '::'."""
    assert CaseRecord(case="vector_add[n=1024]", median_s=1e-3).label() == "vector_add[n=1024]"
    assert CaseRecord(case="suites/a.py::k[x]", median_s=1e-3).label() == "k[x]"


def test_the_rate_is_work_per_second_in_units_of_ten_to_the_twelve_and_nine():
    """TFLOP/s is 1e12 FLOP/s and GB/s 1e9 B/s exactly (round numbers give round rates, no 1e-12 off)."""
    assert CaseRecord(case="c", median_s=0.5, flops=3e12).rate == 6.0
    assert CaseRecord(case="c", median_s=0.5, bytes=3e9).rate == 6.0
    assert CaseRecord(case="c", median_s=0.5, flops=3e12, ceiling="cuBLAS", ceiling_rate=12e12).fraction_of_ceiling == 0.5


def test_a_records_repr_leaves_out_its_samples_and_phases():
    """A case holds hundreds of samples per phase: its record in an assertion message or a log stays readable."""
    text = repr(CaseRecord(case="c", median_s=1e-3, samples=[1e-3] * 500, phases={"kernel": [1e-3] * 500}))
    assert text.startswith("CaseRecord(case='c', median_s=0.001, kernel=None,")
    assert "samples" not in text and "phases" not in text and "0.001, 0.001" not in text

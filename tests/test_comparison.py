"""Judging records against a baseline: which floor applies, and wall-clock cases across machines."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.comparison import Baseline, judge_record
from harness.record import TIMER_CUPTI, TIMER_WALL, CaseRecord
from harness.verdict import OTHER_HOST, REGRESSED, SAME

CASE = "suites/x.py::test_x[a]"


def samples(median, n=40, noise=0.003, seed=0):
    return list(median * (1 + noise * np.random.default_rng(seed).standard_normal(n)))


def baseline(timer, uuid="GPU-A", median=1e-3):
    record = CaseRecord(case=CASE, median_s=median, samples=samples(median), timer=timer)
    return Baseline(Path("0002_x.json"), uuid, {CASE: record})


def judged(timer, factor, current_uuid, baseline_uuid="GPU-A"):
    record = CaseRecord(case=CASE, median_s=factor * 1e-3, samples=samples(factor * 1e-3, seed=1), timer=timer)
    judge_record(record, baseline(timer, baseline_uuid), current_gpu_uuid=current_uuid)
    return record


def test_a_three_percent_slowdown_regresses_on_the_same_gpu_and_not_on_another():
    assert judged(TIMER_CUPTI, 1.03, "GPU-A").verdict == REGRESSED
    other = judged(TIMER_CUPTI, 1.03, "GPU-B")
    assert other.verdict == SAME and other.detectable == 0.05


def test_a_wall_clock_case_is_judged_on_the_same_machine_at_thirty_percent():
    assert judged(TIMER_WALL, 1.25, "GPU-A").verdict == SAME
    slow = judged(TIMER_WALL, 1.40, "GPU-A")
    assert slow.verdict == REGRESSED and slow.detectable == 0.30


def test_a_wall_clock_case_against_another_machine_is_reported_not_judged():
    record = judged(TIMER_WALL, 1.50, "GPU-B")
    assert record.verdict == OTHER_HOST and record.ratio == record.median_s / 1e-3
    assert "same machine" in record.verdict_reason
    assert judged(TIMER_WALL, 1.50, "GPU-B", baseline_uuid=None).verdict == OTHER_HOST  # unknown is not the same

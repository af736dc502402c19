"""kernelwatch.verdict.against_baseline: judging records against a stored baseline or this GPU's history: which floor
applies, which runs are pooled into the reference, and which stored cases are no reference."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kernelwatch.verdict import against_baseline
from kernelwatch.verdict.against_baseline import (
    HISTORY_MIN_RUNS,
    HISTORY_MIN_RUNS_WALL,
    REFERENCE_RUNS,
    Baseline,
    history_of,
    judge_against_history,
    judge_against_stored,
    judge_record,
    reference_samples,
)
from kernelwatch.verdict.labels import (
    FASTER,
    FEW_RUNS,
    NEW,
    OTHER_GPU,
    OTHER_HOST,
    OTHER_TIMER,
    SAME,
    SLOWER,
    THROTTLED,
)
from kernelwatch.verdict.noise import (
    NoiseFloors,
    StoredResult,
    history_spread,
    median_rel_se,
    relevant_history,
)
from kernelwatch.verdict.record import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL, CaseRecord
from tests.support.sample_sets import fresh, noisy, stored

CASE = "suites/x.py::test_x[a]"


def samples(median, n=40, noise=0.003, seed=0):
    return list(median * (1 + noise * np.random.default_rng(seed).standard_normal(n)))


def baseline(timer, uuid="GPU-A", median=1e-3, throttle_reasons=()):
    record = CaseRecord(case=CASE, median_s=median, samples=samples(median), timer=timer,
                        throttle_reasons=list(throttle_reasons))
    return Baseline(Path("0002_x.json"), uuid, {CASE: record})


def judged(timer, factor, current_uuid, baseline_uuid="GPU-A", base_timer=None, throttle_reasons=(), history=()):
    record = CaseRecord(case=CASE, median_s=factor * 1e-3, samples=samples(factor * 1e-3, seed=1), timer=timer)
    base = baseline(base_timer or timer, baseline_uuid, throttle_reasons=throttle_reasons)
    record = record.judged(judge_record(record, base, gpu_uuid=current_uuid, history=history))
    return record


def test_a_three_percent_slowdown_regresses_on_the_same_gpu_and_not_on_another():
    assert judged(TIMER_CUPTI, 1.03, "GPU-A").verdict == SLOWER
    other = judged(TIMER_CUPTI, 1.03, "GPU-B")
    assert other.verdict == SAME and other.detectable == 0.05


def wall_clock_runs(n: int, gpu: str = "GPU-A") -> list[StoredResult]:
    """`n` other runs of the baseline folder, of the baseline's wall-clock case on `gpu`."""
    return stored_runs_of(gpu, n, sass=None, timer=TIMER_WALL)


def test_a_wall_clock_case_is_judged_on_the_same_machine_at_thirty_percent_from_eight_runs():
    enough = wall_clock_runs(HISTORY_MIN_RUNS_WALL - 1)  # with the baseline itself: eight runs of this machine
    assert judged(TIMER_WALL, 1.25, "GPU-A", history=enough).verdict == SAME
    slow = judged(TIMER_WALL, 1.40, "GPU-A", history=enough)
    assert slow.verdict == SLOWER and slow.detectable == 0.30


@pytest.mark.parametrize("others", [0, 1, HISTORY_MIN_RUNS_WALL - 2])
def test_a_wall_clock_case_against_fewer_than_eight_runs_of_its_machine_is_reported_not_judged(others):
    """An H100 read three pageable routines 1.40-1.46x the two baseline runs of its own machine, no code changed:
    the baseline folder's runs need the eight the history store's reference needs before a verdict."""
    history = wall_clock_runs(others) + wall_clock_runs(20, gpu="GPU-B")  # another machine's runs never count
    record = judged(TIMER_WALL, 1.50, "GPU-A", history=history)
    assert record.verdict == FEW_RUNS and record.ratio == pytest.approx(1.5)
    assert f"holds {others + 1}" in record.verdict_reason


def test_a_wall_clock_case_against_another_machine_is_reported_not_judged():
    record = judged(TIMER_WALL, 1.50, "GPU-B")
    assert record.verdict == OTHER_HOST and record.ratio == record.median_s / 1e-3
    assert "same machine" in record.verdict_reason
    assert judged(TIMER_WALL, 1.50, "GPU-B", baseline_uuid=None).verdict == OTHER_HOST  # unknown is not the same


def test_a_case_that_copies_to_the_host_is_judged_only_against_its_own_machine():
    """The streams pipeline's GPU time is the host's PCIe link and memory too: one H200 host read it
    3-6% slower than the baseline's host, an unchanged nightly. Same machine: judged as ever."""
    def streams(factor, current_uuid):
        record = CaseRecord(case=CASE, median_s=factor * 1e-3, samples=samples(factor * 1e-3, seed=1),
                            timer=TIMER_CUPTI, host_copies=True)
        return judge_record(record, baseline(TIMER_CUPTI), gpu_uuid=current_uuid)

    other = streams(1.06, "GPU-B")
    assert other.label == OTHER_HOST and "host and device memory" in other.reason
    assert streams(1.06, "GPU-A").label == SLOWER
    assert streams(1.0, "GPU-A").label == SAME
    # a GPU-only case against another GPU is still judged (at the other-GPU floor)
    assert judged(TIMER_CUPTI, 1.06, "GPU-B").verdict == SLOWER



def test_a_wall_clock_case_on_another_gpu_of_the_baselines_host_is_other_gpu_and_of_another_host_other_host():
    """Two GPUs of one name on one host (as VMs are): the wall clock measured the same machine."""
    record = CaseRecord(case=CASE, median_s=1.5e-3, samples=samples(1.5e-3, seed=1), timer=TIMER_WALL)
    base = dataclasses.replace(baseline(TIMER_WALL), host="".join(["node", "-a"]))  # a name read, not a literal

    def label(host):
        return judge_record(record, base, gpu_uuid="GPU-B", current_host=host).label

    assert label("node-a") == OTHER_GPU
    assert label("node-b") == OTHER_HOST
    assert label(None) == OTHER_HOST and label("") == OTHER_HOST  # no name: not known to be the same host
    assert judge_record(record, dataclasses.replace(base, host=None), gpu_uuid="GPU-B",
                        current_host="node-a").label == OTHER_HOST

@pytest.mark.parametrize("timer, base_timer, factor, as_one_timer", [
    # held events read 2.6-4.2 µs more per sample than CUPTI (docs/method.md#event-timer-cost): 4 µs of a 1 ms case
    (TIMER_CUPTI, TIMER_EVENTS, 0.996, SAME),
    (TIMER_EVENTS, TIMER_CUPTI, 1.004, SAME),
    # a 5 µs add (CUPTI) reads about 9 µs by held events: 0.56x one way, 1.8x the other
    (TIMER_CUPTI, TIMER_EVENTS, 0.56, FASTER),
    (TIMER_EVENTS, TIMER_CUPTI, 1.8, SLOWER),
])
def test_a_baseline_case_of_another_timer_is_reported_not_judged(timer, base_timer, factor, as_one_timer):
    assert judged(timer, factor, "GPU-A").verdict == as_one_timer, "precondition: one timer gets a verdict"
    record = judged(timer, factor, "GPU-A", base_timer=base_timer)
    assert record.verdict == OTHER_TIMER == "other timer"
    assert record.ratio == pytest.approx(factor, rel=0.01)
    assert record.p_value is None and record.detectable is None
    assert f"timed by {base_timer} and this run by {timer}" in record.verdict_reason
    assert "not judged" in record.verdict_reason


def test_a_baseline_case_without_a_timer_is_another_timer():
    record = CaseRecord(case=CASE, median_s=1e-3, samples=samples(1e-3, seed=1), timer=TIMER_CUPTI)
    record = record.judged(judge_record(record, baseline(None), gpu_uuid="GPU-A"))
    assert record.verdict == OTHER_TIMER
    assert "timed by an unknown timer and this run by cupti" in record.verdict_reason


def test_a_baseline_case_recorded_while_throttled_is_no_reference():
    assert judged(TIMER_CUPTI, 1.10, "GPU-A").verdict == SLOWER, "precondition: a fit baseline flags 1.10x"
    record = judged(TIMER_CUPTI, 1.10, "GPU-A", throttle_reasons=["hw_thermal_slowdown"])
    assert record.verdict == THROTTLED
    assert record.ratio == pytest.approx(1.10, rel=0.01) and record.p_value is None
    assert "the baseline was throttled" in record.verdict_reason and "hw_thermal_slowdown" in record.verdict_reason


def stored_run(uuid, timer, median, throttle_reasons=(), sass=None):
    """A saved run's document holding CASE only, with three samples whose median is ``median``."""
    extra = {"timer": timer, "throttle_reasons": list(throttle_reasons), "sass": sass}
    bench = {"fullname": CASE, "stats": {"data": [median * 0.99, median, median * 1.01]}, "extra_info": extra}
    return {"machine_info": {"gpu": {"name": "NVIDIA H200", "uuid": uuid}}, "benchmarks": [bench]}


def numbered(*docs):
    """Stored runs as the plugin reads them: file name to document, oldest first."""
    return {f"{i:04d}_run.json": doc for i, doc in enumerate(docs, 1)}


def runs_of_two_gpus_and_two_timers():
    return numbered(stored_run("GPU-A", TIMER_CUPTI, 1.00e-3), stored_run("GPU-A", TIMER_CUPTI, 1.01e-3),
                    stored_run("GPU-A", TIMER_CUPTI, 0.99e-3), stored_run("GPU-B", TIMER_CUPTI, 1.04e-3),
                    stored_run("GPU-A", TIMER_EVENTS, 1.004e-3),
                    stored_run("GPU-A", TIMER_CUPTI, 1.30e-3, throttle_reasons=["sw_power_cap"]))


def test_history_of_keeps_each_runs_gpu_timer_and_median_but_no_throttled_run():
    history = history_of(runs_of_two_gpus_and_two_timers())
    runs = history[CASE]
    assert [(run.gpu_uuid, run.timer, run.median, run.run) for run in runs] == [
        ("GPU-A", TIMER_CUPTI, 1.00e-3, "0001_run.json"), ("GPU-A", TIMER_CUPTI, 1.01e-3, "0002_run.json"),
        ("GPU-A", TIMER_CUPTI, 0.99e-3, "0003_run.json"), ("GPU-B", TIMER_CUPTI, 1.04e-3, "0004_run.json"),
        ("GPU-A", TIMER_EVENTS, 1.004e-3, "0005_run.json")]
    assert runs[0].samples == pytest.approx((0.99e-3, 1.00e-3, 1.01e-3)) and runs[0].sass is None
    assert relevant_history(runs, "GPU-A", "GPU-A", TIMER_CUPTI) == [1.00e-3, 1.01e-3, 0.99e-3]
    assert relevant_history(runs, "GPU-A", "GPU-B", TIMER_CUPTI) == [1.00e-3, 1.01e-3, 0.99e-3, 1.04e-3]
    assert relevant_history(runs, "GPU-A", "GPU-A", TIMER_EVENTS) == [1.004e-3]


def test_the_history_of_this_gpu_and_timer_sets_the_detectable_change():
    runs = history_of(runs_of_two_gpus_and_two_timers())[CASE]
    record = judged(TIMER_CUPTI, 1.0, "GPU-A", history=runs)
    # spread of 1.00, 1.01 and 0.99 ms is 1.0%; with the 1.30 ms throttled run or GPU-B's it would be larger
    assert "stored runs 1.0%" in record.verdict_reason
    assert record.detectable == pytest.approx(0.042, abs=0.001)  # 3 x sqrt(2) x 1.0%
    assert judged(TIMER_CUPTI, 1.0, "GPU-A").detectable == 0.015, "precondition: without history the floor sets it"


# ---- the reference pooled from stored runs of the same code on the same GPU ---------------------

def stored_case(median, sass="sass-1", uuid="GPU-A", seed=0, timer=TIMER_CUPTI, n=40, case_uuid=None):
    """A saved run holding CASE: ``n`` samples of 0.1% noise around ``median``. ``case_uuid``: the GPU the
    case itself ran on (an xdist worker's), where it differs from the run's."""
    extra = {"timer": timer, "throttle_reasons": [], "sass": sass, "gpu_uuid": case_uuid}
    bench = {"fullname": CASE, "stats": {"data": samples(median, n=n, noise=0.001, seed=seed)}, "extra_info": extra}
    return {"machine_info": {"gpu": {"name": "NVIDIA H200", "uuid": uuid}}, "benchmarks": [bench]}


def judged_against_stored(stored: dict[str, dict], current_median: float, baseline_name: str | None = None):
    """Judge a 40-sample record against the newest stored run (or ``baseline_name``), as the plugin does."""
    name = baseline_name or list(stored)[-1]
    baseline = Baseline.from_doc(Path(name), stored[name])
    record = CaseRecord(case=CASE, median_s=current_median, timer=TIMER_CUPTI,
                        samples=samples(current_median, noise=0.001, seed=99))
    record = record.judged(judge_record(record, baseline, gpu_uuid="GPU-A", history=history_of(stored)[CASE]))
    return record


# four processes near 1.000 ms, then the baseline's, which sat 1.5% slow for its whole life
ONE_SLOW_PROCESS = [1.000e-3, 0.998e-3, 1.002e-3, 1.000e-3, 1.015e-3]


def test_a_baseline_from_one_slow_process_alone_hides_a_three_percent_slowdown():
    # precondition of the tests below: judged against the slow process's samples only, 1.03 reads 1.015
    stored = numbered(*(stored_case(m, sass=f"other-code-{i}", seed=i) for i, m in enumerate(ONE_SLOW_PROCESS)))
    record = judged_against_stored(stored, 1.030e-3)
    assert record.verdict == SAME and record.ratio == pytest.approx(1.030 / 1.015, rel=2e-3)
    assert "pooled" not in record.verdict_reason


def test_runs_of_the_same_code_on_the_same_gpu_pool_into_the_reference():
    stored = numbered(*(stored_case(m, seed=i) for i, m in enumerate(ONE_SLOW_PROCESS)))
    record = judged_against_stored(stored, 1.030e-3)
    assert record.verdict == SLOWER
    assert record.ratio == pytest.approx(1.030, rel=2e-3)  # against the middle of the five processes
    assert "reference pooled from 5 runs of this code" in record.verdict_reason
    # the stored runs' spread counts in full for this run and a fifth of its variance for the pooled reference
    name = list(stored)[-1]
    baseline = Baseline.from_doc(Path(name), stored[name])
    reference, runs = reference_samples(baseline.cases[CASE], baseline, history_of(stored)[CASE])
    sample_se = math.hypot(median_rel_se(reference), median_rel_se(record.samples))
    spread = history_spread([run.median for run in history_of(stored)[CASE]])
    assert record.detectable == pytest.approx(3 * math.hypot(sample_se, math.sqrt(1 + 1 / 5) * spread), rel=1e-9)
    assert "stored runs" in record.verdict_reason
    assert judged_against_stored(stored, 1.005e-3).verdict == SAME, "no change: no alarm"


@pytest.mark.parametrize("what, other_runs", [
    ("other code", {"sass": "sass-0"}),
    ("unknown code", {"sass": None}),
    ("another GPU", {"uuid": "GPU-B"}),
    ("another timer", {"timer": TIMER_EVENTS}),
])
def test_runs_of_other_code_another_gpu_or_unknown_code_are_not_pooled(what, other_runs):
    older = [stored_case(m, seed=i, **other_runs) for i, m in enumerate(ONE_SLOW_PROCESS[:-1])]
    stored = numbered(*older, stored_case(ONE_SLOW_PROCESS[-1], seed=4))
    record = judged_against_stored(stored, 1.030e-3)
    assert "pooled" not in record.verdict_reason, what
    assert record.ratio == pytest.approx(1.030 / 1.015, rel=2e-3), what


def test_a_baseline_of_unknown_code_pools_nothing():
    stored = numbered(*(stored_case(m, sass=None, seed=i) for i, m in enumerate(ONE_SLOW_PROCESS)))
    assert "pooled" not in judged_against_stored(stored, 1.030e-3).verdict_reason


def test_the_pool_takes_the_newest_runs_and_the_chosen_baseline_once():
    # seven runs of one code: the baseline chosen is the third; the pool is it and the four newest others
    medians = [1.10e-3, 1.10e-3, 1.015e-3, 1.000e-3, 0.998e-3, 1.002e-3, 1.000e-3]
    stored = numbered(*(stored_case(m, seed=i) for i, m in enumerate(medians)))
    base_name = list(stored)[2]
    baseline = Baseline.from_doc(Path(base_name), stored[base_name])
    reference, runs = reference_samples(baseline.cases[CASE], baseline, history_of(stored)[CASE])
    assert runs == REFERENCE_RUNS == 5
    assert len(reference) == 5 * 40
    assert float(np.median(reference)) == pytest.approx(1.001e-3, rel=2e-3)  # the 1.10 ms runs are left out


def test_the_record_keeps_how_many_runs_its_reference_pooled():
    stored = numbered(*(stored_case(m, seed=i) for i, m in enumerate(ONE_SLOW_PROCESS)))
    assert judged_against_stored(stored, 1.030e-3).reference_runs == 5
    assert judged(TIMER_CUPTI, 1.0, "GPU-A").reference_runs == 1
    assert judged(TIMER_CUPTI, 1.0, "GPU-A", base_timer=TIMER_EVENTS).reference_runs is None  # not judged


def test_every_pooled_run_weighs_the_same_whatever_its_sample_count():
    # four quiet quick runs of 8 samples, and a baseline that took 62 samples in a slow episode
    runs = [stored_case(1.000e-3, seed=i, n=8) for i in range(4)] + [stored_case(1.020e-3, seed=9, n=62)]
    stored = numbered(*runs)
    name = list(stored)[-1]
    baseline = Baseline.from_doc(Path(name), stored[name])
    reference, runs_pooled = reference_samples(baseline.cases[CASE], baseline, history_of(stored)[CASE])
    assert runs_pooled == 5 and len(reference) == 5 * 8
    assert float(np.median(reference)) == pytest.approx(1.000e-3, rel=2e-3)  # concatenated: 1.019 ms


def test_the_baseline_among_the_newest_is_pooled_once():
    # six runs at 1.0, 1.1, ... 1.5 ms: each pooled value tells its run by its tenth of a millisecond
    stored = numbered(*(stored_case(1.0e-3 * (1 + 0.1 * i), seed=i) for i in range(6)))
    name = list(stored)[-1]  # the newest, 1.5 ms, is the baseline
    baseline = Baseline.from_doc(Path(name), stored[name])
    reference, runs = reference_samples(baseline.cases[CASE], baseline, history_of(stored)[CASE])
    assert runs == 5
    per_run = Counter(round(value * 1e4) for value in reference)
    assert per_run == {11: 40, 12: 40, 13: 40, 14: 40, 15: 40}, "the oldest left out, the baseline once"


def test_a_case_run_on_an_xdist_workers_gpu_is_that_gpus():
    # the run's machine info names GPU-A (the controller's); the case ran on GPU-B
    stored = numbered(*(stored_case(m, seed=i, case_uuid="GPU-B") for i, m in enumerate(ONE_SLOW_PROCESS)))
    assert {run.gpu_uuid for run in history_of(stored)[CASE]} == {"GPU-B"}
    name = list(stored)[-1]
    baseline = Baseline.from_doc(Path(name), stored[name])
    record = CaseRecord(case=CASE, median_s=1.03e-3, timer=TIMER_CUPTI, samples=samples(1.03e-3, noise=0.001))
    record = record.judged(judge_record(record, baseline, gpu_uuid="GPU-B", history=history_of(stored)[CASE]))
    assert record.reference_runs == 5 and record.detectable < 0.05, "judged as the same GPU, not against 5%"
    record = record.judged(judge_record(record, baseline, gpu_uuid="GPU-A", history=history_of(stored)[CASE]))
    assert record.detectable == 0.05, "GPU-A is another GPU for this case"


@pytest.mark.parametrize("host_copies, verdict", [(True, SAME), (False, SLOWER)])
def test_a_1_9_percent_move_of_a_case_with_host_copies_is_within_its_floor(host_copies, verdict):
    # the streams pipeline, 4 chunks, on one H200 against its own baseline of one process: 1.737 -> 1.769 ms
    record = CaseRecord(case=CASE, median_s=1.769e-3, samples=samples(1.769e-3, n=400, seed=1), timer=TIMER_CUPTI,
                        host_copies=host_copies)
    base = Baseline(Path("0005_x.json"), "GPU-A", {CASE: CaseRecord(case=CASE, median_s=1.737e-3,
                                                                     samples=samples(1.737e-3, n=500), timer=TIMER_CUPTI,
                                                                     host_copies=host_copies)})
    record = record.judged(judge_record(record, base, gpu_uuid="GPU-A"))
    assert record.verdict == verdict
    if host_copies:
        assert record.detectable == 0.06 and "6% floor, host copies" in record.verdict_reason


# ---- judged against this GPU's own history (--kernelwatch-history) ------------------------------------------

def stored_runs_of(gpu: str, n: int, median=1e-3, sass="sass-1", timer=TIMER_CUPTI, first_seed=10):
    return [StoredResult(gpu, timer, median, f"history run {i}", sass, tuple(samples(median, seed=first_seed + i)))
            for i in range(n)]


def current(factor: float, sass="sass-1", timer=TIMER_CUPTI) -> CaseRecord:
    return CaseRecord(case=CASE, median_s=factor * 1e-3, samples=samples(factor * 1e-3, seed=1), timer=timer, sass=sass)


def test_fewer_than_the_minimum_runs_of_this_gpu_give_no_history_verdict():
    history = stored_runs_of("GPU-A", HISTORY_MIN_RUNS - 1) + stored_runs_of("GPU-B", 10)
    assert judge_against_history(current(1.03), history, gpu_uuid="GPU-A") is None
    assert judge_against_history(current(1.03), history, gpu_uuid=None) is None


def test_a_two_percent_slowdown_is_slower_against_this_gpus_own_history():
    verdict = judge_against_history(current(1.02), stored_runs_of("GPU-A", 6), gpu_uuid="GPU-A")
    assert verdict.label == SLOWER and verdict.detectable == pytest.approx(0.015)
    assert (verdict.reference, verdict.reference_runs) == ("history of GPU-A", REFERENCE_RUNS)
    assert judge_against_history(current(1.002), stored_runs_of("GPU-A", 6), gpu_uuid="GPU-A").label == SAME


def test_a_run_of_changed_machine_code_is_judged_and_its_reason_says_so():
    verdict = judge_against_history(current(1.03, sass="sass-2"), stored_runs_of("GPU-A", 4), gpu_uuid="GPU-A")
    assert verdict.label == SLOWER and "machine code differs" in verdict.reason


def test_the_reference_pools_only_the_newest_runs_code_and_this_timer():
    old_code = stored_runs_of("GPU-A", 5, median=1.05e-3, sass="sass-0")
    other_timer = stored_runs_of("GPU-A", 5, median=2e-3, timer=TIMER_EVENTS)
    newest = stored_runs_of("GPU-A", 3, sass="sass-1", first_seed=40)
    verdict = judge_against_history(current(1.0), old_code + other_timer + newest, gpu_uuid="GPU-A")
    assert verdict.reference_runs == 3 and verdict.label == SAME
    assert verdict.reference_median == pytest.approx(1e-3, rel=0.002)


def test_a_host_routine_is_judged_against_its_own_machine_at_thirty_percent_once_it_has_eight_runs():
    from kernelwatch.verdict.against_baseline import HISTORY_MIN_RUNS_WALL

    history = stored_runs_of("GPU-A", HISTORY_MIN_RUNS_WALL, sass=None, timer=TIMER_WALL)
    record = current(1.2, sass=None, timer=TIMER_WALL)
    verdict = judge_against_history(record, history, gpu_uuid="GPU-A")
    assert verdict.label == SAME and verdict.detectable == pytest.approx(0.30)
    assert judge_against_history(current(1.4, sass=None, timer=TIMER_WALL), history, gpu_uuid="GPU-A").label == SLOWER
    # seven runs of a wall-clock routine are too few to know its own spread: no verdict against them
    assert HISTORY_MIN_RUNS_WALL == 8
    assert judge_against_history(record, history[1:], gpu_uuid="GPU-A") is None


# ---- a slowdown accepted in the history: the new level is the reference from its run on --------------

def accepted_at(runs: list[StoredResult], index: int, reason: str = "meant") -> list[StoredResult]:
    """`runs` with a slowdown accepted at runs[index]."""
    return [dataclasses.replace(run, accepted_reason=reason) if i == index else run for i, run in enumerate(runs)]


def test_from_an_accepted_run_on_the_reference_is_the_new_level_even_of_one_run():
    history = stored_runs_of("GPU-A", 6) + accepted_at(stored_runs_of("GPU-A", 1, median=1.03e-3, sass="sass-2",
                                                                       first_seed=60), 0, "tiles")
    verdict = judge_against_history(current(1.03, sass="sass-2"), history, gpu_uuid="GPU-A")
    assert verdict.label == SAME and verdict.reference_runs == 1
    assert [run.name for run in verdict.references] == ["history run 0"]  # the accepted run's own name
    assert verdict.references[0].sass == "sass-2"
    assert "where a slowdown was accepted (tiles)" in verdict.reason
    assert "; reference: 1 run of this GPU's history, from history run 0 on" in verdict.reason
    assert verdict.detectable == pytest.approx(0.015)  # the same-GPU floor, as for any history


def test_the_runs_before_an_accepted_run_are_never_pooled_with_those_after_it():
    before = stored_runs_of("GPU-A", 6)
    level = accepted_at(stored_runs_of("GPU-A", 3, median=1.03e-3, sass="sass-2", first_seed=70), 0)
    verdict = judge_against_history(current(1.03, sass="sass-2"), before + level, gpu_uuid="GPU-A")
    assert verdict.label == SAME and verdict.reference_runs == 3
    assert verdict.reference_median == pytest.approx(1.03e-3, rel=0.003)
    # back at the old speed is now faster than the reference, not the same
    assert judge_against_history(current(1.0, sass="sass-2"), before + level, gpu_uuid="GPU-A").label == FASTER


def test_without_an_accepted_run_a_slowdown_fails_against_the_runs_before_it_every_time():
    # the slow runs never become references (the store leaves failed cases out): the old level stays
    verdict = judge_against_history(current(1.03, sass="sass-2"), stored_runs_of("GPU-A", 6), gpu_uuid="GPU-A")
    assert verdict.label == SLOWER
    assert [run.name for run in verdict.references] == [f"history run {i}" for i in range(1, 6)]


def test_a_new_code_within_a_level_needs_its_three_runs_again():
    level = accepted_at(stored_runs_of("GPU-A", 2, sass="sass-2"), 0) + stored_runs_of("GPU-A", 2, sass="sass-3",
                                                                                      first_seed=80)
    assert judge_against_history(current(1.0, sass="sass-3"), stored_runs_of("GPU-A", 6) + level,
                                 gpu_uuid="GPU-A") is None  # two runs of sass-3: the baseline decides


def runs_of_medians(medians_ms, sass: str, first_seed: int) -> list[StoredResult]:
    """Stored runs of GPU-A, one per median, each code name read back as from the store (an equal string, not the
    same object)."""
    return [StoredResult("GPU-A", TIMER_CUPTI, m * 1e-3, f"history run {i}", fresh(sass),
                         tuple(samples(m * 1e-3, seed=first_seed + i))) for i, m in enumerate(medians_ms)]


@pytest.mark.parametrize("level_runs, detectable", [(1, 0.042), (2, 0.037), (3, 0.015), (4, 0.015)])
def test_a_level_of_fewer_than_three_runs_takes_its_spread_from_the_newest_code_before_it(level_runs, detectable):
    # before the accepted slowdown: an old code that moved 5% between processes, then one that moved 1.0%
    # (3 x sqrt(1 + 1/runs pooled) x 1.0%: 4.2% of one run, 3.7% of two); the new level's runs agree exactly: once it holds three, its own spread is
    # none and the same-GPU floor (1.5%) sets the detectable change
    before = runs_of_medians([1.00, 1.05, 0.95], "sass-0", 10) + runs_of_medians([1.00, 1.01, 0.99], "sass-1", 20)
    level = accepted_at(stored_runs_of("GPU-A", level_runs, median=1.03e-3, sass="sass-2", first_seed=60), 0)
    verdict = judge_against_history(current(1.03, sass="sass-2"), before + level, gpu_uuid="GPU-A")
    assert verdict.reference_runs == level_runs and verdict.detectable == pytest.approx(detectable, abs=0.001)


def test_a_level_of_two_runs_pools_both_and_names_the_run_where_it_began():
    level = accepted_at(stored_runs_of("GPU-A", 2, median=1.03e-3, sass="sass-2", first_seed=60), 0, "tiles")
    verdict = judge_against_history(current(1.03, sass="sass-2"), stored_runs_of("GPU-A", 6) + level,
                                    gpu_uuid="GPU-A")
    assert verdict.label == SAME and verdict.reference_runs == 2
    assert ("; reference pooled from 2 runs of this GPU's history, from history run 0 on, where a slowdown was "
            "accepted (tiles)") in verdict.reason


def test_a_case_of_no_known_timer_is_judged_against_its_own_three_runs_as_a_gpu_case():
    # an old document's case without a timer: its runs of no timer are its history, at the same-GPU floor
    history = stored_runs_of("GPU-A", HISTORY_MIN_RUNS, timer=None)
    verdict = judge_against_history(current(1.0, timer=None), history, gpu_uuid="GPU-A")
    assert verdict.label == SAME and verdict.detectable == pytest.approx(0.015)


# the options after the record and its reference (judge_against_stored: after the record) are keyword-only: a
# GPU's UUID, a baseline or a history is never taken by its place
@pytest.mark.parametrize("call", [
    lambda record: judge_record(record, baseline(TIMER_CUPTI), "GPU-A"),
    lambda record: judge_against_history(record, stored_runs_of("GPU-A", 6), "GPU-A"),
    lambda record: judge_against_stored(record, baseline(TIMER_CUPTI), [], stored_runs_of("GPU-A", 6), "GPU-A"),
], ids=["judge_record", "judge_against_history", "judge_against_stored"])
def test_the_judges_options_are_taken_by_keyword_only(call):
    with pytest.raises(TypeError):
        call(current(1.0))


@pytest.mark.parametrize("threshold, same_gpu, other_gpu", [(None, 0.015, 0.05), (0.02, 0.02, 0.05),
                                                             (0.07, 0.07, 0.07)])
def test_the_threshold_sets_the_same_gpu_floor_and_lifts_the_other_gpu_floor_only_above_it(threshold, same_gpu,
                                                                                           other_gpu):
    from kernelwatch.verdict.threshold import floors_with_threshold

    floors = floors_with_threshold(NoiseFloors(), threshold)
    assert (floors.same_gpu, floors.other_gpu) == (same_gpu, other_gpu)
    assert floors.host_copy_floor == 0.06 and floors.absolute_s == 0.3e-6


OTHER_CASE = "suites/x.py::test_x[b]"


BASELINE_FILE = "0002_x.json"


def record_of(median: float, *, timer: str | None = TIMER_CUPTI, seed: int = 1, case: str = CASE,
              sass: str | None = "sass-1", n: int = 40) -> CaseRecord:
    return CaseRecord(case=fresh(case), median_s=median, samples=noisy(median, n=n, seed=seed), timer=fresh(timer),
                      sass=fresh(sass))


def baseline_of(*records: CaseRecord, gpu: str | None = "GPU-A") -> Baseline:
    return Baseline(Path(BASELINE_FILE), fresh(gpu), {record.case: record for record in records})


def history_runs(gpu: str | None, n: int, *, first: int = 0, **kwargs) -> list[StoredResult]:
    return [stored(gpu, i, **kwargs) for i in range(first, first + n)]


def test_the_live_path_judges_at_one_percent_significance():
    # docs/method.md: a slower verdict needs p < 0.01 of the one-sided Mann-Whitney test
    assert against_baseline.ALPHA == 0.01


def test_one_run_pooled_is_its_own_samples_unchanged_and_in_order():
    run = [3e-3, 1e-3, 2e-3, 5e-3, 4e-3]
    assert against_baseline.pooled_samples([run]) == run


@pytest.mark.parametrize("sizes, values", [((2, 2), 6), ((3, 5), 6), ((4, 9), 8)])
def test_each_pooled_run_gives_the_smallest_runs_count_of_values_and_at_least_three(sizes, values):
    runs = [list(np.linspace(1e-3, 2e-3, size)) for size in sizes]
    assert len(against_baseline.pooled_samples(runs)) == values


def test_a_case_missing_from_the_baseline_or_without_samples_there_is_new():
    base = baseline_of(record_of(1e-3, case=OTHER_CASE))
    assert judge_record(record_of(1e-3), base, gpu_uuid=fresh("GPU-A")).label == NEW
    assert judge_record(record_of(1e-3), baseline_of(dataclasses.replace(record_of(1e-3), samples=[])),
                        gpu_uuid=fresh("GPU-A")).label == NEW


def test_a_reference_pooled_from_two_runs_says_so_and_names_the_baseline_file():
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), gpu_uuid=fresh("GPU-A"),
                           history=[stored("GPU-A", 5, run="0001_x.json")])
    assert (verdict.reference, verdict.reference_runs) == (BASELINE_FILE, 2)
    assert "reference pooled from 2 runs of this code" in verdict.reason


@pytest.mark.parametrize("others", [2, 3])
def test_fewer_other_runs_than_the_pool_holds_are_all_pooled(others):
    history = history_runs("GPU-A", others)
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), gpu_uuid=fresh("GPU-A"),
                           history=history)
    assert verdict.reference_runs == 1 + others


def test_the_baseline_file_itself_in_the_history_is_not_pooled_twice():
    history = [stored("GPU-A", 0, run=BASELINE_FILE)]
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), gpu_uuid=fresh("GPU-A"),
                           history=history)
    assert verdict.reference_runs == 1


@pytest.mark.parametrize("what, run", [
    ("a GPU whose UUID sorts first", {"gpu": "GPU-0"}),
    ("a timer whose name sorts last", {"timer": TIMER_WALL}),
    ("other machine code", {"sass": "sass-0"}),
])
def test_only_runs_of_this_gpu_timer_and_code_are_pooled(what, run):
    history = [stored(**{"gpu": "GPU-A", "i": 0, **run})]
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), gpu_uuid=fresh("GPU-A"),
                           history=history)
    assert verdict.reference_runs == 1, what
    pooled = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), gpu_uuid=fresh("GPU-A"),
                          history=[stored("GPU-A", 0)])
    assert pooled.reference_runs == 2


def test_records_of_an_unknown_timer_on_both_sides_are_judged():
    base = baseline_of(record_of(1e-3, timer=None, seed=0))
    assert judge_record(record_of(1.1e-3, timer=None), base, gpu_uuid=fresh("GPU-A")).label == SLOWER


def test_a_wall_clock_case_read_from_files_is_judged_at_thirty_percent_and_only_on_its_machine():
    base = baseline_of(record_of(1e-3, timer=TIMER_WALL, seed=0))
    runs = history_runs("GPU-A", HISTORY_MIN_RUNS_WALL - 1, timer=TIMER_WALL)
    same = judge_record(record_of(1.25e-3, timer=TIMER_WALL), base, gpu_uuid=fresh("GPU-A"), history=runs)
    assert (same.label, same.detectable) == (SAME, pytest.approx(0.30))
    assert judge_record(record_of(1.25e-3, timer=TIMER_WALL), base, gpu_uuid=fresh("GPU-B")).label == OTHER_HOST


def test_one_timer_read_from_two_files_is_one_timer():
    base = baseline_of(record_of(1e-3, timer=TIMER_EVENTS, seed=0))
    assert judge_record(record_of(1.1e-3, timer=TIMER_EVENTS), base, gpu_uuid=fresh("GPU-A")).label == SLOWER


def test_another_gpus_runs_never_make_up_this_gpus_history():
    # GPU-A sorts before GPU-B: an ordering comparison in place of equality would take its runs
    history = history_runs("GPU-A", 3) + history_runs("GPU-B", 2, first=3)
    assert judge_against_history(record_of(1e-3), history, gpu_uuid=fresh("GPU-B")) is None
    assert judge_against_history(record_of(1e-3), history_runs("GPU-B", 3), gpu_uuid=fresh("GPU-B")) is not None


def test_another_timers_runs_never_make_up_this_gpus_history():
    # "cupti concurrent kernel" sorts after "cuda events"
    history = history_runs("GPU-A", 3, timer=TIMER_CUPTI)
    assert judge_against_history(record_of(1e-3, timer=TIMER_EVENTS), history, gpu_uuid=fresh("GPU-A")) is None


def test_runs_without_a_gpu_uuid_or_a_record_without_samples_give_no_history_verdict():
    assert judge_against_history(record_of(1e-3), history_runs(None, 3), gpu_uuid=None) is None
    empty = dataclasses.replace(record_of(1e-3), samples=[])
    assert judge_against_history(empty, history_runs("GPU-A", 3), gpu_uuid=fresh("GPU-A")) is None


def test_the_newest_runs_code_decides_the_history_reference():
    # three runs of the old code, then one of the new: one run of the newest code is too few
    history = history_runs("GPU-A", 3, sass="sass-0") + history_runs("GPU-A", 1, first=3)
    assert judge_against_history(record_of(1e-3), history, gpu_uuid=fresh("GPU-A")) is None


def test_a_run_of_the_same_code_read_from_files_is_not_called_changed_code():
    verdict = judge_against_history(record_of(1e-3), history_runs("GPU-A", 3), gpu_uuid=fresh("GPU-A"))
    assert verdict.reference_runs == 3 and "machine code differs" not in verdict.reason


@pytest.mark.parametrize("timer, floor", [(TIMER_WALL, 0.30), ("zz timer sorting after the wall clock", 0.015)])
def test_only_the_wall_clock_is_judged_at_thirty_percent_against_history(timer, floor):
    history = history_runs("GPU-A", 8, timer=timer)  # eight: a wall-clock routine needs them (HISTORY_MIN_RUNS_WALL)
    verdict = judge_against_history(record_of(1e-3, timer=timer), history, gpu_uuid=fresh("GPU-A"))
    assert verdict.detectable == pytest.approx(floor)


def test_the_nightly_takes_this_gpus_history_when_it_has_enough_runs_else_the_baseline():
    base = baseline_of(record_of(1e-3, seed=0))
    enough = judge_against_stored(record_of(1e-3), baseline=base, baseline_runs=[], own_history=history_runs("GPU-A", 3),
                                  gpu_uuid=fresh("GPU-A"))
    assert enough.reference == "history of GPU-A"
    too_few = judge_against_stored(record_of(1e-3), baseline=base, baseline_runs=[], own_history=history_runs("GPU-A", 2),
                                   gpu_uuid=fresh("GPU-A"))
    assert too_few.reference == BASELINE_FILE


def test_a_young_levels_spread_comes_from_the_runs_before_it_of_the_newest_of_their_codes():
    # before the accepted run: tight runs of sass-1, three far apart of sass-0 among them, the newest sass-1
    tight = stored_runs_of("GPU-A", 4, first_seed=20)
    apart = [dataclasses.replace(run, median=m, sass="sass-0", samples=tuple(samples(m, seed=30 + i)))
             for i, (run, m) in enumerate(zip(stored_runs_of("GPU-A", 3), (0.9e-3, 1.1e-3, 1.0e-3), strict=True))]
    level = accepted_at(stored_runs_of("GPU-A", 1, median=1.03e-3, sass="sass-2", first_seed=60), 0, "tiles")
    verdict = judge_against_history(current(1.03, sass="sass-2"), tight[:3] + apart + tight[3:] + level,
                                    gpu_uuid="GPU-A")
    assert verdict.detectable == pytest.approx(0.015)  # the floor: sass-1's runs agree; sass-0's would not


def test_a_runs_commit_is_its_commit_info_id_where_that_is_a_non_empty_string():
    from kernelwatch.verdict.against_baseline import run_commit

    assert run_commit({"commit_info": {"id": "abc123"}}) == "abc123"
    assert [run_commit(doc) for doc in ({"commit_info": {"id": ""}}, {"commit_info": {"id": 5}}, {})] == [None] * 3


@pytest.mark.parametrize("machine, host", [
    ({"gpu": {"uuid": "GPU-A", "host": "gpu-box-1"}, "node": "login-2"}, "gpu-box-1"),  # the GPU's record first
    ({"gpu": {"uuid": "GPU-A", "host": "gpu-box-1"}}, "gpu-box-1"),
    ({"gpu": {"uuid": "GPU-A"}, "node": "login-2"}, "login-2"),  # else pytest-benchmark's node
    ({"node": "login-2"}, "login-2"),  # a run without a GPU record
    ({}, None),
])
def test_a_stored_run_names_its_machine_by_its_gpus_record_else_by_its_node(machine, host):
    doc = {**stored_case(1e-3), "machine_info": machine}
    assert Baseline.from_doc(Path("0001_run.json"), doc).host == host


@pytest.mark.parametrize("started, started_at", [("2026-11-30T10:00:00.123456", "2026-11-30T10:00:00.123456"),
                                                 (1764496800, None), (None, None)])
def test_a_stored_run_is_dated_by_its_datetime_where_that_is_a_string(started, started_at):
    doc = {**stored_case(1e-3), "datetime": started}
    assert Baseline.from_doc(Path("0001_run.json"), doc).started_at == started_at
    assert [run.started_at for run in history_of({"0001_run.json": doc})[CASE]] == [started_at]


# ---- pinned exactly: which stored runs count, each path's whole verdict ------------------------------------------

def mixed_history(timer: str = TIMER_CUPTI, sass: str | None = "sass-1") -> list[StoredResult]:
    """Stored runs of CASE: three of GPU-A, `timer` and `sass` (runs 1, 4 and 8), among runs that must never count:
    the baseline file itself, one without samples, GPUs and timers and codes sorting before and after the right ones."""
    def one(i, **kwargs):
        return stored(**{"gpu": "GPU-A", "i": i, "timer": timer, "sass": sass, **kwargs})

    return [one(0, run=BASELINE_FILE), one(1), dataclasses.replace(one(2), samples=()), one(3, gpu="GPU-0"), one(4),
            one(5, gpu="GPU-Z"), one(6, timer="aa timer"), one(7, timer="zz timer"), one(8), one(9, sass="sass-0"),
            one(10, sass="sass-9"), one(11, gpu=None)]


def test_the_runs_pooled_with_the_baseline_are_those_of_its_gpu_timer_and_code_only_oldest_first():
    base = record_of(1e-3, seed=0)
    pooled = against_baseline.pooled_with_baseline(base, baseline_of(base), mixed_history())
    assert [run.run for run in pooled] == ["run 1", "run 4", "run 8"]
    reference, runs = reference_samples(base, baseline_of(base), mixed_history())
    assert runs == 4 and len(reference) == 4 * 40
    assert against_baseline.machine_runs(base, baseline_of(base), mixed_history()) == 4


def test_the_pool_holds_the_baseline_and_the_four_newest_of_its_other_runs():
    base = record_of(1e-3, seed=0)
    history = history_runs("GPU-A", 7)
    pooled = against_baseline.pooled_with_baseline(base, baseline_of(base), history)
    assert [run.run for run in pooled] == ["run 3", "run 4", "run 5", "run 6"]
    assert against_baseline.machine_runs(base, baseline_of(base), history) == 8  # all of them count there
    assert [run.run for run in against_baseline.pooled_with_baseline(base, baseline_of(base), history[:4])] == [
        "run 0", "run 1", "run 2", "run 3"]


def test_a_baseline_case_of_unknown_code_or_gpu_pools_nothing_and_its_machine_holds_one_run():
    unknown_code = record_of(1e-3, seed=0, sass=None)
    history = history_runs("GPU-A", 3, sass=None)
    assert against_baseline.pooled_with_baseline(unknown_code, baseline_of(unknown_code), history) == []
    base = record_of(1e-3, seed=0)
    runs_of_no_gpu = history_runs(None, 3)
    assert against_baseline.pooled_with_baseline(base, baseline_of(base, gpu=None), runs_of_no_gpu) == []
    assert against_baseline.machine_runs(base, baseline_of(base, gpu=None), runs_of_no_gpu) == 1
    # the case's own GPU (an xdist worker's) where the run's is unknown
    on_worker = dataclasses.replace(base, gpu_uuid=fresh("GPU-A"))
    assert len(against_baseline.pooled_with_baseline(on_worker, baseline_of(on_worker, gpu=None),
                                                     history_runs("GPU-A", 2))) == 2


def test_a_wall_clock_cases_machine_holds_only_its_runs_of_the_wall_clock():
    base = record_of(1e-3, timer=TIMER_WALL, seed=0, sass=None)
    # "cuda events" and "aa timer" sort before "wall clock", "zz timer" after it
    history = mixed_history(timer=TIMER_WALL, sass=None) + history_runs("GPU-A", 2, first=20, timer=TIMER_EVENTS,
                                                                        sass=None)
    assert against_baseline.machine_runs(base, baseline_of(base), history) == 4


@pytest.mark.parametrize("others, label", [(HISTORY_MIN_RUNS_WALL - 2, FEW_RUNS), (HISTORY_MIN_RUNS_WALL - 1, SAME),
                                           (HISTORY_MIN_RUNS_WALL, SAME), (HISTORY_MIN_RUNS_WALL + 4, SAME)])
def test_a_wall_clock_case_is_judged_from_eight_runs_of_its_machine_on(others, label):
    base = baseline_of(record_of(1e-3, timer=TIMER_WALL, seed=0))
    verdict = judge_record(record_of(1.1e-3, timer=TIMER_WALL), base, gpu_uuid=fresh("GPU-A"),
                           history=history_runs("GPU-A", others, timer=TIMER_WALL))
    assert verdict.label == label
    if label == SAME:
        assert verdict.detectable == pytest.approx(0.30) and verdict.reference_runs == min(others + 1, REFERENCE_RUNS)
    else:
        assert "the baseline folder holds 7" in verdict.reason and verdict.reference_runs is None


def test_a_timer_sorting_after_the_wall_clock_is_judged_at_the_gpu_floors():
    base = baseline_of(record_of(1e-3, timer="zz timer", seed=0))
    verdict = judge_record(record_of(1.03e-3, timer="zz timer"), base, gpu_uuid=fresh("GPU-A"))
    assert (verdict.label, verdict.detectable) == (SLOWER, pytest.approx(0.015))


def test_the_floors_given_are_those_of_a_gpu_case_and_never_of_a_wall_clock_one():
    floors = NoiseFloors(same_gpu=0.04, other_gpu=0.08, absolute_s=0.0)
    base = baseline_of(record_of(1e-3, seed=0))
    assert judge_record(record_of(1.03e-3), base, gpu_uuid=fresh("GPU-A"), floors=floors).detectable == 0.04
    assert judge_record(record_of(1.03e-3), base, gpu_uuid=fresh("GPU-B"), floors=floors).detectable == 0.08
    history = history_runs("GPU-A", 3)
    assert judge_against_history(record_of(1.03e-3), history, gpu_uuid=fresh("GPU-A"),
                                 floors=floors).detectable == 0.04
    wall = history_runs("GPU-A", 8, timer=TIMER_WALL)
    assert judge_against_history(record_of(1.03e-3, timer=TIMER_WALL), wall, gpu_uuid=fresh("GPU-A"),
                                 floors=floors).detectable == pytest.approx(0.30)
    for own, reference in ((history, "history of GPU-A"), ([], BASELINE_FILE)):
        verdict = judge_against_stored(record_of(1.03e-3), baseline=base, baseline_runs=[], own_history=own,
                                       gpu_uuid=fresh("GPU-A"), floors=floors)
        assert (verdict.reference, verdict.detectable) == (reference, 0.04)


def test_the_wall_clock_floors_are_thirty_percent_on_any_gpu_without_an_absolute_floor():
    # history.analysis judges host routines' steps by them too
    assert against_baseline.WALL_CLOCK_FLOORS == NoiseFloors(same_gpu=0.30, other_gpu=0.30, absolute_s=0.0)


def test_the_nightly_passes_the_baseline_folders_runs_and_the_host_to_the_baseline_verdict():
    wall = record_of(1e-3, timer=TIMER_WALL, seed=0)
    base = dataclasses.replace(baseline_of(wall), host=fresh("node-a"))
    record = record_of(1.1e-3, timer=TIMER_WALL)
    assert judge_against_stored(record, baseline=base, baseline_runs=[], own_history=[], gpu_uuid=fresh("GPU-B"),
                                current_host=fresh("node-a")).label == OTHER_GPU
    assert judge_against_stored(record, baseline=base, baseline_runs=[], own_history=[], gpu_uuid=fresh("GPU-B"),
                                current_host=fresh("node-b")).label == OTHER_HOST
    runs = history_runs("GPU-A", 7, timer=TIMER_WALL)
    assert judge_against_stored(record, baseline=base, baseline_runs=runs, own_history=[],
                                gpu_uuid=fresh("GPU-A")).label == SAME
    assert judge_against_stored(record, baseline=base, baseline_runs=runs[1:], own_history=[],
                                gpu_uuid=fresh("GPU-A")).label == FEW_RUNS


def test_runs_of_a_gpu_or_timer_sorting_after_this_ones_never_make_up_its_history():
    assert judge_against_history(record_of(1e-3), history_runs("GPU-C", 3), gpu_uuid=fresh("GPU-B")) is None
    assert judge_against_history(record_of(1e-3, timer=TIMER_EVENTS), history_runs("GPU-A", 3, timer="zz timer"),
                                 gpu_uuid=fresh("GPU-A")) is None
    # a timer sorting before the wall clock needs three runs, not eight
    assert judge_against_history(record_of(1e-3, timer=TIMER_EVENTS), history_runs("GPU-A", 3, timer=TIMER_EVENTS),
                                 gpu_uuid=fresh("GPU-A")) is not None


def test_a_young_levels_spread_never_takes_runs_of_a_code_sorting_after_the_newest_before_it():
    # before the accepted run: three runs far apart of sass-9, then three that agree of sass-0 (the newest code)
    apart = [dataclasses.replace(run, median=m, sass="sass-9", samples=tuple(samples(m, seed=30 + i)))
             for i, (run, m) in enumerate(zip(stored_runs_of("GPU-A", 3), (0.9e-3, 1.1e-3, 1.0e-3), strict=True))]
    tight = stored_runs_of("GPU-A", 3, sass="sass-0", first_seed=20)
    level = accepted_at(stored_runs_of("GPU-A", 1, median=1.03e-3, sass="sass-2", first_seed=60), 0, "tiles")
    verdict = judge_against_history(current(1.03, sass="sass-2"), apart + tight + level, gpu_uuid="GPU-A")
    assert verdict.detectable == pytest.approx(0.015)


def test_a_level_whose_newest_run_alone_was_accepted_needs_three_runs_of_its_code():
    # the accepted run is the newest: the runs before it are of the same code but of the level before
    history = stored_runs_of("GPU-A", 2) + accepted_at(stored_runs_of("GPU-A", 1, first_seed=50), 0)
    verdict = judge_against_history(current(1.0), history, gpu_uuid="GPU-A")
    assert verdict.reference_runs == 1 and "where a slowdown was accepted (meant)" in verdict.reason
    # the accepted run first, then two of another code: that code has two runs, too few
    level = accepted_at(stored_runs_of("GPU-A", 1), 0) + stored_runs_of("GPU-A", 2, sass="sass-2", first_seed=50)
    assert judge_against_history(current(1.0, sass="sass-2"), level, gpu_uuid="GPU-A") is None
    # the accepted run and two more of its code: three runs, named from the accepted one on
    level = accepted_at(stored_runs_of("GPU-A", 3), 0)
    verdict = judge_against_history(current(1.0), stored_runs_of("GPU-A", 4, sass="sass-0") + level, gpu_uuid="GPU-A")
    assert verdict.reference_runs == 3 and "from history run 0 on, where a slowdown was accepted" in verdict.reason


@pytest.mark.parametrize("doc, uuid", [({}, None), ({"machine_info": None}, None), ({"machine_info": {}}, None),
                                       ({"machine_info": {"gpu": None}}, None),
                                       ({"machine_info": {"gpu": {"name": "NVIDIA H200"}}}, None),
                                       ({"machine_info": {"gpu": {"uuid": "GPU-A"}, "node": "n"}}, "GPU-A")])
def test_a_stored_runs_gpu_is_its_gpu_records_uuid(doc, uuid):
    assert against_baseline.run_gpu_uuid(doc) == uuid


@pytest.mark.parametrize("machine_info", [None, {}, {"gpu": None, "node": None}])
def test_a_stored_run_without_a_machine_record_names_no_host(machine_info):
    assert against_baseline.run_host({"machine_info": machine_info}) is None


def test_the_history_of_stored_runs_is_every_timed_unthrottled_case_with_all_it_recorded():
    def bench(case, timer=TIMER_CUPTI, data=(1e-3, 2e-3, 3e-3), **extra):
        return {"fullname": case, "stats": {"data": list(data)}, "extra_info": {"timer": timer, **extra}}

    runs = {"0001_a.json": {"machine_info": {"gpu": {"uuid": "GPU-A"}}, "datetime": "2026-12-01T00:00:00",
                            "commit_info": {"id": "c1"},
                            "benchmarks": [bench(CASE, sass="s1", energy={"window_joules_per_launch": [0.5, 0.25]}),
                                           bench(OTHER_CASE, gpu_uuid="GPU-W"), bench("no timer", timer=None),
                                           bench("no samples", data=()),
                                           bench("throttled", throttle_reasons=["hw_slowdown"])]},
            "0002_b.json": {"benchmarks": [bench(CASE, data=(4e-3,))]}}
    history = history_of(runs)
    assert set(history) == {CASE, OTHER_CASE}
    assert history[CASE] == [
        StoredResult("GPU-A", TIMER_CUPTI, 2e-3, "0001_a.json", "s1", (1e-3, 2e-3, 3e-3), "2026-12-01T00:00:00", "c1",
                     energy=(0.5, 0.25)),
        StoredResult(None, TIMER_CUPTI, 4e-3, "0002_b.json", None, (4e-3,))]
    assert history[OTHER_CASE] == [StoredResult("GPU-W", TIMER_CUPTI, 2e-3, "0001_a.json", None, (1e-3, 2e-3, 3e-3),
                                                "2026-12-01T00:00:00", "c1")]


def test_runs_are_pooled_as_the_same_quantiles_of_each():
    # the smallest run has three samples: each run gives its 1/6, 1/2 and 5/6 quantiles (linear interpolation)
    pooled = against_baseline.pooled_samples([[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0]])
    assert pooled == pytest.approx([1.5, 2.5, 3.5, 10 + 10 / 3, 20.0, 30 - 10 / 3], rel=1e-12)
    # fewer than three samples in a run still give three values of each
    assert against_baseline.pooled_samples([[1.0, 3.0], [5.0]]) == pytest.approx([4 / 3, 2.0, 8 / 3, 5.0, 5.0, 5.0],
                                                                                  rel=1e-12)


def plain(verdict) -> dict:
    """A verdict as a snapshot holds it: every field, its numbers to 12 significant digits."""
    def number(value):
        return float(f"{value:.12g}") if isinstance(value, float) else value

    return {name: number(value) for name, value in dataclasses.asdict(verdict).items()}


def test_each_path_of_a_baseline_verdict_is_its_reviewed_snapshot(snapshot):
    """NEW, other host (wall clock and host copies), other GPU, few runs, other timer, throttled, and judged with a
    pooled reference (one of whose runs has no name): every field of the verdict."""
    def base_of(**kwargs):
        record = dataclasses.replace(record_of(1e-3, seed=0), **kwargs)
        return dataclasses.replace(baseline_of(record), started_at="2026-12-01T00:00:00", commit="c0", host="node-a")

    def record(**kwargs):
        return dataclasses.replace(record_of(1.1e-3), **kwargs)

    pooled = [dataclasses.replace(stored("GPU-A", 1), started_at="2026-12-02T00:00:00", commit="c1"),
              dataclasses.replace(stored("GPU-A", 2), run=None)]
    verdicts = {
        "new": judge_record(record(), None, gpu_uuid="GPU-A"),
        "new in the baseline": judge_record(record(case=OTHER_CASE), base_of(), gpu_uuid="GPU-A"),
        "wall clock, other host": judge_record(record(timer=TIMER_WALL), base_of(timer=TIMER_WALL), gpu_uuid="GPU-B"),
        "wall clock, other gpu": judge_record(record(timer=TIMER_WALL), base_of(timer=TIMER_WALL), gpu_uuid="GPU-B",
                                              current_host="node-a"),
        "wall clock, few runs": judge_record(record(timer=TIMER_WALL), base_of(timer=TIMER_WALL), gpu_uuid="GPU-A",
                                             history=history_runs("GPU-A", 2, timer=TIMER_WALL)),
        "host copies": judge_record(record(host_copies=True), base_of(), gpu_uuid="GPU-B"),
        "other timer": judge_record(record(), base_of(timer=TIMER_EVENTS), gpu_uuid="GPU-A"),
        "unknown timers": judge_record(record(timer=None), base_of(), gpu_uuid="GPU-A"),
        "throttled": judge_record(record(), base_of(throttle_reasons=["hw_thermal_slowdown", "sw_power_cap"]),
                                  gpu_uuid="GPU-A"),
        "judged alone": judge_record(record(), base_of(), gpu_uuid="GPU-A"),
        "judged pooled": judge_record(record(), base_of(), gpu_uuid="GPU-A", history=pooled),
    }
    assert {name: plain(verdict) for name, verdict in verdicts.items()} == snapshot


def test_each_path_of_a_history_verdict_is_its_reviewed_snapshot(snapshot):
    """Pooled from the five newest runs, of one accepted run, and of code that differs from this run's."""
    history = [dataclasses.replace(run, started_at=f"2026-12-0{i + 1}T00:00:00", commit=f"c{i}")
               for i, run in enumerate(history_runs("GPU-A", 6))]
    verdicts = {
        "pooled": judge_against_history(record_of(1.03e-3), history, gpu_uuid="GPU-A"),
        "one accepted run": judge_against_history(
            record_of(1.03e-3), history + accepted_at(history_runs("GPU-A", 1, first=6, median=1.03e-3), 0, "tiles"),
            gpu_uuid="GPU-A"),
        "other code": judge_against_history(record_of(1e-3, sass="sass-2"), history, gpu_uuid="GPU-A"),
        "wall clock": judge_against_history(record_of(1.2e-3, timer=TIMER_WALL),
                                            history_runs("GPU-A", 8, timer=TIMER_WALL), gpu_uuid="GPU-A"),
    }
    assert {name: plain(verdict) for name, verdict in verdicts.items()} == snapshot

"""The accuracy record and verdict (src/kernelwatch/verdict/accuracy.py), its store round trip and its validation."""

from __future__ import annotations

import copy
import math
from types import SimpleNamespace

import pytest

from kernelwatch.history.accuracy import accuracy_series, accuracy_steps
from kernelwatch.storage.history import HistoryError, open_store
from kernelwatch.verdict.accuracy import (
    ACCURACY_KEY,
    LESS_ACCURATE,
    MORE_ACCURATE,
    SLACK,
    UNSEEDED,
    AccuracyRecord,
    StoredAccuracy,
    inputs_text,
    judge_accuracy,
    judge_pair,
    margin_words,
)
from maintainers.support.dashboard_history import ACCURACY_RUN, KAHAN, PLAIN, dashboard_document

CASE = "suites/test_matmul_correctness.py::test_matmul_matches_float64[1000x1000x1000-uniform-naive_kahan]"


def check(max_error, avg_error, **fields) -> AccuracyRecord:
    return AccuracyRecord(case=CASE, max_error=max_error, avg_error=avg_error, tolerance_max=1e-5, tolerance_avg=1e-6,
                          shape="1000x1000x1000", input_kind="uniform", seed=7, measure="relative", **fields)


def history(*pairs, outcome="passed", accepted_at=None) -> list[StoredAccuracy]:
    """Stored checks, newest first: pairs given oldest first (run 1, 2, ...)."""
    stored = [StoredAccuracy(run, f"c{run}", None, check(*pair), "accepted" if run == accepted_at else outcome,
                             "meant" if run == accepted_at else None) for run, pair in enumerate(pairs, 1)]
    return list(reversed(stored))


def test_a_history_that_repeats_bit_for_bit_allows_no_growth_beyond_the_slack():
    past = history(KAHAN, KAHAN, KAHAN)
    assert judge_accuracy(check(*KAHAN), past).label == "same"
    assert judge_accuracy(check(KAHAN[0] * (1 + SLACK / 2), KAHAN[1]), past).label == "same"
    grown = judge_accuracy(check(KAHAN[0] * (1 + 1e-6), KAHAN[1]), past)  # one rounding in one element, say
    assert grown.label == LESS_ACCURATE and "max error" in grown.reason and "bit for bit" in grown.reason
    assert judge_accuracy(check(KAHAN[0], KAHAN[1] * 0.99), past).label == MORE_ACCURATE
    assert judge_accuracy(check(*PLAIN), past).label == LESS_ACCURATE
    assert judge_accuracy(check(*PLAIN), past).reference_max == KAHAN[0]


def test_a_history_that_varies_gets_a_band_of_its_own_width_each_side():
    past = history((1.0e-6, 1e-7), (1.2e-6, 1e-7), (1.1e-6, 1e-7))  # atomics: the order of the sum varies
    assert judge_accuracy(check(1.35e-6, 1e-7), past).label == "same"  # within 1.2 + 0.2
    assert judge_accuracy(check(1.45e-6, 1e-7), past).label == LESS_ACCURATE
    assert judge_accuracy(check(0.85e-6, 1e-7), past).label == "same"
    assert judge_accuracy(check(0.75e-6, 1e-7), past).label == MORE_ACCURATE


def test_an_error_on_either_edge_of_the_band_is_the_same_and_one_just_past_it_is_not():
    past = history((0.375, 0.75), (0.5, 1.0))  # bands (width each side) 0.25..0.625 and 0.5..1.25, exact in binary
    assert judge_accuracy(check(0.25, 0.5), past).label == "same"
    verdict = judge_accuracy(check(0.625, 1.25), past)
    assert (verdict.label, verdict.reason) == ("same", "within the history of 2 run(s)")
    below = judge_accuracy(check(math.nextafter(0.25, 0), math.nextafter(0.5, 0)), past)
    assert below.label == MORE_ACCURATE and below.reason == (
        "max error 0.25 below 2 run(s) from 0.375 to 0.5, band 0.25..0.625; "
        "avg error 0.5 below 2 run(s) from 0.75 to 1, band 0.5..1.25")
    above = judge_accuracy(check(0.25, math.nextafter(1.25, 2)), past)
    assert above.label == LESS_ACCURATE and above.reason == "avg error 1.25 above 2 run(s) from 0.75 to 1, band 0.5..1.25"
    assert (above.reference_max, above.reference_avg) == (0.5, 1.0)  # the newest check's


def test_an_error_at_the_edge_of_a_bit_for_bit_history_is_the_same():
    past = history(KAHAN, KAHAN)
    low, high = KAHAN[0] * (1 - SLACK), KAHAN[0] * (1 + SLACK)
    assert judge_accuracy(check(low, KAHAN[1]), past).label == "same"
    assert judge_accuracy(check(high, KAHAN[1]), past).label == "same"
    assert judge_accuracy(check(math.nextafter(low, 0), KAHAN[1]), past).label == MORE_ACCURATE
    assert judge_accuracy(check(math.nextafter(high, 1), KAHAN[1]), past).label == LESS_ACCURATE


def test_an_exact_result_is_the_same_against_a_history_whose_band_reaches_zero():
    past = history((1e-7, 1e-8), (3e-7, 3e-8))  # the band's low edge, 1e-7 - 2e-7, is clamped at zero
    assert judge_accuracy(check(0.0, 0.0), past).label == "same"


def test_only_checks_of_the_same_inputs_and_from_the_newest_acceptance_on_are_references():
    other_seed = [StoredAccuracy(9, "c9", None, check(*PLAIN, ) , "passed")]
    other_seed[0].record.seed = 8
    assert judge_accuracy(check(*KAHAN), other_seed).label == "new"
    # run 2 was less accurate (failed), run 3 accepted the new level: from then on PLAIN is the reference
    past = history(KAHAN, PLAIN, PLAIN, outcome="passed", accepted_at=3)
    past[1] = StoredAccuracy(2, "c2", None, check(*PLAIN), "failed")
    verdict = judge_accuracy(check(*PLAIN), past)
    assert verdict.label == "same" and [s.run_id for s in verdict.references] == [3]
    # a failed check nobody accepted is no reference: the one before it is
    failed = [StoredAccuracy(2, "c2", None, check(*PLAIN), "failed"), StoredAccuracy(1, "c1", None, check(*KAHAN), "passed")]
    assert judge_accuracy(check(*PLAIN), failed).newest.run_id == 1
    assert judge_accuracy(check(None, None), failed).label == "new"  # a non-finite error is not judged


def test_a_pull_request_pair_is_judged_as_a_history_of_one_run():
    head = judge_pair(check(*PLAIN), check(*KAHAN), "origin/main (0123456789)")
    assert head.verdict == LESS_ACCURATE and head.reference == "origin/main (0123456789)"
    assert head.reference_max == KAHAN[0] and head.ratio == pytest.approx(PLAIN[0] / KAHAN[0])
    assert head.margin == pytest.approx(1 - PLAIN[0] / 1e-5)
    assert judge_pair(check(*KAHAN), check(*KAHAN), "x").verdict == "same"


def test_steps_are_replayed_from_the_store_with_their_commits(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'h.sqlite'}") as store:
        for run in range(1, 13):
            store.record_run(dashboard_document(run, accuracy=True), outcome="passed", profile="quick")
        series = accuracy_series(store.accuracy_history(None, any_profile=True))
    (key, points), = series.items()
    steps = accuracy_steps(points, key)
    assert [(s.direction, s.before.run_id, s.after.run_id) for s in steps] == [(LESS_ACCURATE, ACCURACY_RUN - 1,
                                                                                ACCURACY_RUN)]
    assert [p.state for p in steps[0].level] == ["failed", "accepted"] + ["passed"] * 4
    assert steps[0].acknowledged.startswith("Accept-Slowdown")


def test_a_run_keeps_its_checks_through_the_store_and_back_and_may_hold_only_checks(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'h.sqlite'}") as store:
        doc = dashboard_document(2, accuracy=True)
        run_id = store.record_run(doc, outcome="passed", profile="quick")
        assert store.export_run(run_id) == doc
        only = copy.deepcopy(doc)
        only["benchmarks"], only["datetime"] = [], "2026-12-02T00:00:00+00:00"
        only_id = store.record_run(only, outcome="passed", profile="quick")
        assert store.export_run(only_id) == only
        assert [s.run_id for s in store.accuracy_history(None, profile="quick")[doc[ACCURACY_KEY][0]["case"]]] == [
            only_id, run_id]
        # acknowledge names a check as it names a case
        store.acknowledge(doc[ACCURACY_KEY][0]["case"], only_id, reason="meant")
        newest = store.accuracy_history(None, profile="quick")[doc[ACCURACY_KEY][0]["case"]][0]
        assert newest.accepted_reason == "meant"


@pytest.mark.parametrize(("change", "words"), [
    (lambda c: c.update(max_error=-1.0), "max_error is -1.0, not an error of 0 or more"),
    (lambda c: c.update(case=""), "needs a case name of its own"),
    (lambda c: c.update(seed="seven"), "seed is 'seven', not a whole number"),
    (lambda c: c.update(shape=3), "shape is 3, not text"),
])
def test_a_check_the_store_cannot_keep_is_refused_in_one_sentence(tmp_path, change, words):
    doc = dashboard_document(2, accuracy=True)
    change(doc[ACCURACY_KEY][0])
    with open_store(f"sqlite:///{tmp_path / 'h.sqlite'}") as store, pytest.raises(HistoryError, match=words):
        store.record_run(doc, outcome="passed", profile="quick")


def test_a_margin_needs_both_an_error_and_a_tolerance():
    def check(max_error, tolerance):
        return AccuracyRecord("s.py::k", max_error, None, tolerance_max=tolerance)

    assert check(2.5e-6, 1e-5).margin == pytest.approx(0.75)
    assert check(2.5e-6, None).margin is None and check(None, 1e-5).margin is None and check(2.5e-6, 0.0).margin is None


@pytest.mark.parametrize(("now", "then", "ratio"), [(3e-7, 1e-8, 30.0), (0.0, 0.0, 1.0), (1e-7, 0.0, math.inf),
                                                     (0.0, 1e-8, 0.0), (None, 1e-8, None), (1e-7, None, None)])
def test_the_ratio_to_the_reference_holds_exact_results_on_either_side(now, then, ratio):
    """An exact kernel (matrix add) has a reference error of 0: the same again is 1x, any error an infinite
    ratio, never a division by zero; a ratio needs both errors."""
    check = AccuracyRecord("s.py::k", now, now, reference_max=then, reference_avg=then)
    assert check.ratio == check.avg_ratio == (pytest.approx(ratio) if ratio is not None else None)


def test_a_check_without_a_seed_is_kept_but_not_judged_against_its_history():
    """Inputs drawn afresh each run (examples/triton on an H100, 2026-12-06): two runs repeated their maximum error
    5.9604634117251494e-08 by chance, and the third, 5.960464122267716e-08, read `less accurate` against them."""
    def stored(run_id, max_error, seed):
        record = AccuracyRecord("t.py::test_add", max_error, 2.14e-08, tolerance_max=1e-5, shape="16777216", seed=seed)
        return StoredAccuracy(run_id, None, None, record, "passed")

    for seed, label in ((None, None), (0, LESS_ACCURATE)):
        history = [stored(2, 5.9604634117251494e-08, seed), stored(1, 5.9604634117251494e-08, seed)]
        now = AccuracyRecord("t.py::test_add", 5.960464122267716e-08, 2.14e-08, tolerance_max=1e-5,
                             shape="16777216", seed=seed)
        verdict = judge_accuracy(now, history)
        assert verdict.label == label
        assert (verdict.reason == UNSEEDED) is (seed is None)
    # an A/B checks both sides on the very inputs of this run: judged, seed or none
    assert judge_pair(AccuracyRecord("t.py::test_add", 2e-6, 1e-6), AccuracyRecord("t.py::test_add", 1e-6, 1e-6),
                      "main").verdict == LESS_ACCURATE


@pytest.mark.parametrize("margin, words", [(None, ""), (0.5, ""), (0.1, ""), (0.0999, "under a tenth left"),
                                           (0.0, "under a tenth left"), (-0.01, "past its tolerance")])
def test_a_margin_under_a_tenth_is_flagged_and_one_below_zero_is_past_its_tolerance(margin, words):
    assert margin_words(margin) == words


def test_the_inputs_of_a_check_say_each_part_that_was_not_recorded():
    given = SimpleNamespace(shape="64x64", input_kind="normal", seed=0)
    assert inputs_text(given) == "inputs 64x64, normal, seed 0"  # seed 0 is a seed
    assert inputs_text(SimpleNamespace(shape=None, input_kind=None, seed=None)) == \
        "inputs ?, kind not given, seed not given"

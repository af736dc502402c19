"""The queries of the verdicts and the dashboard: reference_history and case_series."""

from __future__ import annotations

import statistics
import time

import pytest

from maintainers.support.synthetic_history import GPU_A, GPU_B, case_name, make_document
from tests.support.backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)


def test_reference_history_is_the_newest_passed_runs_per_case_and_gpu_with_their_samples(store):
    ids = {}
    for index in range(6):
        ids[index] = store.record_run(make_document(index, gpu_uuid=GPU_A), outcome="passed", profile="nightly")
    failed = store.record_run(make_document(6), outcome="failed", profile="nightly")
    quick = store.record_run(make_document(7), outcome="passed", profile="quick")
    other_gpu = store.record_run(make_document(8, gpu_uuid=GPU_B), outcome="passed", profile="nightly")

    history = store.reference_history([GPU_A], profile="nightly", limit_runs=4)
    assert sorted(history) == [case_name(n) for n in range(3)]
    first = history[case_name(0)]
    assert [entry.run_id for entry in first] == [ids[5], ids[4], ids[3], ids[2]]
    assert not {failed, quick, other_gpu} & {entry.run_id for entry in first}
    newest = first[0]
    stored = make_document(5)["benchmarks"][0]
    assert newest.samples == tuple(stored["stats"]["data"])
    assert newest.median == statistics.median(stored["stats"]["data"])
    assert (newest.gpu_uuid, newest.host, newest.timer, newest.sass, newest.commit, newest.throttled,
            len(newest.samples), newest.run) == (GPU_A, "synthetic-host", "cupti concurrent kernel", "sass-1",
                                                 f"{5:040x}", False, 20, f"history run {ids[5]}")
    assert newest.started_at == "2026-12-01T05:00:00+00:00"  # the verdict's type: ISO 8601, UTC

    both = store.reference_history([GPU_A, GPU_B], profile="nightly", limit_runs=2)
    assert [(e.run_id, e.gpu_uuid) for e in both[case_name(1)]] == [(other_gpu, GPU_B), (ids[5], GPU_A), (ids[4], GPU_A)]
    assert store.reference_history(["GPU-unknown"], profile="nightly", limit_runs=5) == {}


def test_reference_history_gives_a_host_routines_phases_back_in_their_order_and_none_for_other_cases(store):
    doc = make_document(0, cases=2)
    phases = {"HtoD": [8e-5, 8.1e-5], "kernel": [2.5e-4, 2.49e-4], "DtoH": [8e-5, 7.9e-5], "host": [1.5e-4, 1.6e-4]}
    doc["benchmarks"][1]["extra_info"]["phases"] = phases
    store.record_run(doc, outcome="passed", profile="nightly")
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=2)
    routine, kernel_case = history[case_name(1)][0], history[case_name(0)][0]
    assert routine.phases == tuple((name, tuple(values)) for name, values in phases.items())
    assert routine.phase("kernel") == (2.5e-4, 2.49e-4) and kernel_case.phases == ()


def test_case_series_is_oldest_first_with_the_middle_half_of_the_samples(store):
    for index in range(4):
        store.record_run(make_document(index, gpu_uuid=GPU_A if index % 2 else GPU_B, slower=1 + index / 100),
                         outcome="passed", profile="nightly")
    store.record_run(make_document(9), outcome="failed", profile="nightly")
    per_uuid = store.case_series(case=case_name(2))
    assert sorted((key.gpu, key.timer, key.profile) for key in per_uuid) == [
        (GPU_A, "cupti concurrent kernel", "nightly"), (GPU_B, "cupti concurrent kernel", "nightly")]
    per_model = store.case_series(by="gpu_model", case=case_name(2))
    [(key, points)] = per_model.items()
    # every run is a point, the failed one too (run 9: the newest), marked so
    assert key.gpu == "NVIDIA H200" and len(points) == 5
    assert [p.run_failed for p in points] == [False] * 4 + [True]
    points = points[:4]
    assert [p.started_at for p in points] == sorted(p.started_at for p in points)
    data = make_document(3, gpu_uuid=GPU_A, slower=1.03)["benchmarks"][2]["stats"]["data"]
    low, _, high = statistics.quantiles(data, n=4)
    last = points[-1]
    assert (last.low_s, last.median_s, last.high_s, last.sample_count) == (low, statistics.median(data), high, 20)
    assert last.low_s < last.median_s < last.high_s


@pytest.mark.slow  # 3,600 cases on each backend, and a time bar: CI's second pass (tox -e unit -- -m slow)
def test_reference_history_of_40_runs_of_90_cases_is_one_quick_query(store):
    for index in range(40):
        store.record_run(make_document(index, cases=90, samples=30), outcome="passed", profile="nightly")
    started = time.perf_counter()
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=40)
    elapsed = time.perf_counter() - started
    assert len(history) == 90 and {len(entries) for entries in history.values()} == {40}
    assert elapsed < 2.0, f"reference_history took {elapsed:.2f} s"  # ~0.05 s on a laptop: a generous bound


def judged(index: int, verdicts: dict[int, str], **options) -> dict:
    """Run `index` with some of its cases judged: {case number: verdict label}."""
    doc = make_document(index, **options)
    for number, label in verdicts.items():
        doc["benchmarks"][number]["extra_info"]["verdict"] = label
    return doc


def test_a_slower_case_is_no_reference_but_the_other_cases_of_its_run_are(store):
    clean = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(3)]
    slow = store.record_run(judged(3, {1: "slower"}), outcome="failed", profile="nightly", other_failures=0)
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=10)
    assert [e.run_id for e in history[case_name(1)]] == clean[::-1]
    assert [e.run_id for e in history[case_name(0)]] == [slow, *clean[::-1]]
    assert all(e.outcome == "passed" and e.accepted_reason is None for e in history[case_name(0)])


def test_a_run_whose_correctness_failed_is_no_reference_at_all_nor_one_of_unknown_failures(store):
    clean = store.record_run(make_document(0), outcome="passed", profile="nightly")
    store.record_run(make_document(1), outcome="failed", profile="nightly", other_failures=1)
    store.record_run(make_document(2), outcome="failed", profile="nightly")  # failures not counted: failed whole
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=10)
    assert {e.run_id for entries in history.values() for e in entries} == {clean}


def test_an_accepted_case_is_a_reference_that_starts_a_level_and_an_acknowledged_failure_is_one_too(store):
    for i in range(3):
        store.record_run(make_document(i), outcome="passed", profile="nightly")
    doc = judged(3, {0: "accepted", 1: "slower"})
    doc["benchmarks"][0]["extra_info"]["accepted_reason"] = "tiles, by the Accept-Slowdown trailer of 0123"
    accepted = store.record_run(doc, outcome="failed", profile="nightly", other_failures=0)
    newest = store.reference_history([GPU_A], profile="nightly", limit_runs=10)
    assert (newest[case_name(0)][0].run_id, newest[case_name(0)][0].outcome) == (accepted, "accepted")
    assert newest[case_name(0)][0].accepted_reason == "tiles, by the Accept-Slowdown trailer of 0123"
    assert newest[case_name(0)][0].starts_level and not newest[case_name(0)][1].starts_level
    assert accepted not in {e.run_id for e in newest[case_name(1)]}  # slower, not yet acknowledged
    store.acknowledge(case_name(1), accepted, reason="the new level is meant")
    after = store.reference_history([GPU_A], profile="nightly", limit_runs=10)[case_name(1)]
    assert (after[0].run_id, after[0].outcome, after[0].accepted_reason) == (accepted, "failed",
                                                                             "the new level is meant")


def test_an_acknowledgement_makes_its_own_case_a_reference_and_no_case_named_after_it(store):
    for i in range(3):
        store.record_run(make_document(i), outcome="passed", profile="nightly")
    slow = store.record_run(judged(3, {0: "slower", 1: "slower", 2: "slower"}), outcome="failed", profile="nightly",
                            other_failures=0)
    store.acknowledge(case_name(1), slow, reason="meant")  # case 0's name sorts before it, case 2's after
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=10)
    assert [slow in {e.run_id for e in history[case_name(k)]} for k in range(3)] == [False, True, False]
    newest = [list(store.case_series(case=case_name(k)).values())[0][-1] for k in range(3)]
    assert [point.accepted_reason for point in newest] == [None, "meant", None]


def test_a_case_reads_back_the_newest_acknowledgement_at_its_own_run_and_none_made_at_an_earlier_run(store):
    slow = [store.record_run(judged(i, {0: "slower"}), outcome="failed", profile="nightly", other_failures=0)
            for i in range(2)]
    store.acknowledge(case_name(0), slow[0], reason="first reason")
    store.acknowledge(case_name(0), slow[0], reason="second reason")
    [(_, points)] = store.case_series(case=case_name(0)).items()
    assert [p.accepted_reason for p in points] == ["second reason", None]
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=10)[case_name(0)]
    assert [(e.run_id, e.accepted_reason) for e in history] == [(slow[0], "second reason")]


def test_the_window_of_twenty_reference_runs_counts_only_runs_that_may_be_references(store):
    # twenty-five failed nights of case 1 after five clean ones: its five clean runs are still its history,
    # so a slowdown that nobody accepted fails every night and never falls back to the baseline
    clean = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(5)]
    for i in range(5, 30):
        store.record_run(judged(i, {1: "slower"}), outcome="failed", profile="nightly", other_failures=0)
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=20)
    assert [e.run_id for e in history[case_name(1)]] == clean[::-1]
    assert len(history[case_name(0)]) == 20


def test_case_series_marks_each_point_with_its_outcome_verdict_and_acceptance(store):
    ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(2)]
    ids.append(store.record_run(judged(2, {2: "slower"}), outcome="failed", profile="nightly", other_failures=0))
    store.acknowledge(case_name(2), ids[2], reason="meant")
    [(_, points)] = store.case_series(case=case_name(2)).items()
    assert [(p.outcome, p.verdict, p.accepted_reason, p.run_failed) for p in points] == [
        ("passed", None, None, False), ("passed", None, None, False), ("failed", "slower", "meant", False)]
    assert store.case_record(case_name(2), ids[2])["verdict"] == "slower"
    assert store.case_record(case_name(2), 999) is None


def test_series_split_by_a_gpu_uuid_named_at_run_time_are_per_physical_gpu(store):
    by = "".join(["gpu_", "uuid"])  # as `changes --by gpu_uuid` gives it: a string made at run time, not the literal
    for index, uuid in enumerate((GPU_A, GPU_B)):
        store.record_run(make_document(index, gpu_uuid=uuid), outcome="passed", profile="nightly")
    assert {key.gpu for key in store.case_series(by=by, case=case_name(0))} == {GPU_A, GPU_B}


def test_a_series_is_in_the_order_of_its_runs_times_even_when_an_older_run_is_imported_later(store):
    ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(3, 9)]
    older = store.record_run(make_document(1), outcome="passed", profile="nightly")  # imported last, run earliest
    [(_, points)] = store.case_series(case=case_name(0)).items()
    assert [p.run_id for p in points] == [str(run_id) for run_id in (older, *ids)]
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=10)[case_name(0)]
    assert [e.run_id for e in history] == [*ids[::-1], older]  # newest first


def test_the_stores_guarded_methods_keep_their_names_and_help():
    # the deadline guard (amendments.answered) wraps them: help(store) and error names still read the method's own
    from kernelwatch.storage.history.store import HistoryStore

    assert HistoryStore.case_series.__name__ == "case_series"
    assert HistoryStore.case_series.__doc__.startswith("Per (GPU UUID or model, case, timer, profile)")

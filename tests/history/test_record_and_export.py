"""Recording runs, listing them and exporting them as the suite's pytest-benchmark JSON."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)
from synthetic import GPU_A, GPU_B, make_document

from harness.storage.history import AlreadyRecorded, HistoryError
from harness.storage.history.schema import CASES, RUNS


def _count(store, table) -> int:
    with store.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(table)).scalar()


def test_recorded_runs_get_increasing_ids_and_are_listed_newest_first(store):
    ids = [store.record_run(make_document(i), outcome="passed" if i != 1 else "failed", profile="nightly",
                            label=f"run {i}") for i in range(3)]
    assert ids == sorted(set(ids))
    listed = store.runs()
    assert [run.id for run in listed] == ids[::-1]
    newest = listed[0]
    assert (newest.commit, newest.branch, newest.dirty, newest.profile, newest.gpu_model, newest.gpu_uuids,
            newest.host, newest.outcome, newest.label, newest.case_count) == (
        f"{2:040x}", "main", False, "nightly", "NVIDIA H200", (GPU_A,), "synthetic-host", "passed", "run 2", 3)
    assert newest.started_at.isoformat() == make_document(2)["datetime"]
    assert [run.id for run in store.runs(outcome="failed")] == [ids[1]]
    assert [run.id for run in store.runs(limit=1)] == [ids[2]]


def test_an_exported_run_is_the_recorded_document_unchanged(store):
    doc = make_document(7, cases=5, samples=50)
    assert store.export_run(store.record_run(doc, outcome="passed", profile="quick")) == doc


def test_the_same_document_twice_is_reported_as_already_recorded_and_stored_once(store):
    run_id = store.record_run(make_document(1), outcome="passed", profile="nightly")
    with pytest.raises(AlreadyRecorded) as raised:
        store.record_run(make_document(1), outcome="passed", profile="nightly", source="again.json")
    assert raised.value.run_id == run_id
    assert "again.json is already recorded as run" in str(raised.value)
    assert (_count(store, RUNS), _count(store, CASES)) == (1, 3)


def test_a_case_is_stored_on_the_gpu_its_record_names_else_on_the_runs(store):
    doc = make_document(1, gpu_uuid=GPU_A, case_gpus={1: GPU_B})  # an xdist run on two GPUs
    for bench in doc["benchmarks"]:
        if bench["params"]["number"] == 2:
            del bench["extra_info"]["gpu_uuid"]
    run_id = store.record_run(doc, outcome="passed", profile="nightly")
    with store.engine.connect() as conn:
        gpus = conn.execute(sa.select(CASES.c.gpu_uuid).where(CASES.c.run_id == run_id)
                            .order_by(CASES.c.position)).scalars().all()
    assert gpus == [GPU_A, GPU_B, GPU_A]
    assert store.runs()[0].gpu_uuids == (GPU_A, GPU_B)


@pytest.mark.parametrize("spoil", ["no samples", "a negative sample", "no benchmarks"])
def test_a_document_that_is_no_run_is_refused_and_nothing_is_stored(store, spoil):
    doc = make_document(1)
    if spoil == "no samples":
        doc["benchmarks"][2]["stats"]["data"] = []
    elif spoil == "a negative sample":
        doc["benchmarks"][2]["stats"]["data"][0] = -1.0
    else:
        doc["benchmarks"] = []
    with pytest.raises(HistoryError, match="cannot record"):
        store.record_run(doc, outcome="passed", profile="nightly")
    assert (_count(store, RUNS), _count(store, CASES)) == (0, 0)


def test_an_outcome_other_than_passed_or_failed_is_refused(store):
    with pytest.raises(HistoryError, match="outcome must be one of passed, failed"):
        store.record_run(make_document(1), outcome="skipped", profile="nightly")


def test_exporting_a_run_that_does_not_exist_is_an_error(store):
    with pytest.raises(HistoryError, match="there is no run 42 in the history store"):
        store.export_run(42)

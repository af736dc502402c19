"""Recording runs, listing them and exporting them as the suite's pytest-benchmark JSON."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)
from synthetic import GPU_A, GPU_B, make_document

from harness.storage.history import AlreadyRecorded, HistoryError, open_store
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


@pytest.mark.parametrize("spoil, words", [
    (lambda doc: doc["benchmarks"][1]["stats"].update(stddev=float("nan")),
     "case 'suites/test_perf_synthetic.py::test_kernel_time[case001]': benchmark.stats.stddev is nan"),
    (lambda doc: doc["benchmarks"][0].update(fullname="suites/x.py::t[\ud800]"),
     r"case 'suites/x.py::t[\ud800]': benchmark.fullname is text that is no UTF-8"),
    (lambda doc: doc["benchmarks"][0].update(fullname="suites/x.py::t[" + "a" * 2600 + "]"),
     "bytes, more than 2000"),
    (lambda doc: doc["commit_info"].update(id="c" * 65), "commit_info.id is 65 characters, more than 64"),
    (lambda doc: doc["machine_info"].update(cpu={"hz": float("inf")}), "machine_info.cpu.hz is inf"),
])
def test_a_value_neither_backend_can_store_is_refused_naming_its_case_and_field(store, spoil, words):
    doc = make_document(0)
    spoil(doc)
    with pytest.raises(HistoryError) as raised:
        store.record_run(doc, outcome="passed", profile="nightly")
    assert words in str(raised.value) and len(str(raised.value).splitlines()) == 1
    assert store.runs() == []


def test_a_profile_longer_than_both_backends_take_is_refused(store):
    with pytest.raises(HistoryError, match="longer than 32 characters"):
        store.record_run(make_document(0), outcome="passed", profile="p" * 33)


def test_the_longest_values_both_backends_take_round_trip(store):
    doc = make_document(0)
    doc["benchmarks"][0]["fullname"] = "suites/x.py::t[" + "a" * (2000 - 16) + "]"
    doc["commit_info"]["id"] = "c" * 64
    run_id = store.record_run(doc, outcome="passed", profile="p" * 32)
    assert store.export_run(run_id) == doc


def test_a_sqlite_writer_checkpoints_its_log_into_the_file_when_it_closes(tmp_path):
    path = tmp_path / "h.sqlite"
    with open_store(f"sqlite:///{path}") as store:
        store.record_run(make_document(0), outcome="passed", profile="nightly")
    wal = path.with_name("h.sqlite-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(path.read_bytes())  # a cache step that keeps history.sqlite alone
    with open_store(f"sqlite:///{copy}") as again:
        assert len(again.runs()) == 1

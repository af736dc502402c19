"""Recording runs, listing them and exporting them as the suite's pytest-benchmark JSON."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import sqlite3
import statistics
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from kernelwatch.storage.history import AlreadyRecorded, HistoryError, documents, open_store
from kernelwatch.storage.history.schema import CASES, RUNS
from kernelwatch.verdict.record import CaseRecord
from maintainers.support.synthetic_history import GPU_A, GPU_B, case_name, make_document
from tests.support.backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)


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
    assert [run.id for run in store.runs(outcome="passed")] == [ids[2], ids[0]]
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


def test_a_run_stored_before_uses_up_no_run_id(store):
    # PostgreSQL draws an identity for an insert that then fails: a run stored before is looked for first
    first = store.record_run(make_document(1), outcome="passed", profile="nightly")
    for _ in range(3):
        with pytest.raises(AlreadyRecorded):
            store.record_run(make_document(1), outcome="passed", profile="nightly")
    assert store.record_run(make_document(2), outcome="passed", profile="nightly") == first + 1


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
    # every item of a list is looked at, not only its first
    (lambda doc: doc["machine_info"].update(cpu={"hz": [2.0e9, float("inf")]}), "machine_info.cpu.hz[1] is inf"),
    # energy windows are stored as samples: finite, positive joules
    (lambda doc: doc["benchmarks"][1]["extra_info"].update(
        energy={"joules_per_launch": 1.0, "window_joules_per_launch": [1.0, -1.0]}),
     "case 'suites/test_perf_synthetic.py::test_kernel_time[case001]': benchmark.extra_info.energy."
     "window_joules_per_launch[1] is -1.0, not an energy in joules above 0"),
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


OTHER_MODEL = "NVIDIA A100"  # sorts before "NVIDIA H200": a wrong comparison of models lets it in


@pytest.fixture
def store(tmp_path):
    with open_store(str(tmp_path / "history.sqlite")) as opened:
        yield opened


def _other_model_document(index: int) -> dict:
    doc = make_document(index, gpu_uuid=GPU_B)
    doc["machine_info"]["gpu"]["name"] = OTHER_MODEL
    return doc


# the columns that every stored run and case has; a store with one of them empty is corrupt
NOT_NULL = {
    "runs": {"id", "content_hash", "started_at", "recorded_at", "outcome", "gpu_uuids", "case_count",
             "document_rest"},
    "cases": {"id", "run_id", "position", "node_id", "median_s", "q25_s", "q75_s", "sample_count", "throttled",
              "record", "benchmark", "stats", "samples", "outcome"},
    "acknowledgements": {"id", "node_id", "run_id", "reason", "who", "acknowledged_at"},
    "schema_version": {"version", "applied_at", "summary"},
}


def test_recording_a_run_twice_names_the_run_it_is_stored_as(store):
    """AlreadyRecorded carries the id of the stored run with that content hash, not of another run."""
    store.record_run(make_document(1), outcome="passed", profile="nightly")
    second = store.record_run(make_document(2), outcome="passed", profile="nightly")
    with pytest.raises(AlreadyRecorded) as raised:
        store.record_run(make_document(2), outcome="passed", profile="nightly")
    assert raised.value.run_id == second



def test_a_removed_runs_id_is_never_given_to_a_later_run(store):
    """Ids name runs in acknowledgements, windows and notes: the newest run removed, the next run takes a new id."""
    ids = [store.record_run(make_document(i), outcome="passed", profile="nightly") for i in range(3)]
    store.remove_run(ids[-1], reason="recorded by mistake")
    assert store.record_run(make_document(3), outcome="passed", profile="nightly") == ids[-1] + 1

def test_after_a_lost_race_the_run_of_that_content_hash_is_found_and_no_other(store):
    """A writer whose insert lost to another writer's (the unique content hash refused it) looks the run up by its
    hash (`_run_with_hash`) to name it: that run's id, whatever order the hashes were stored in, and None for a
    hash not stored."""
    docs = [make_document(i) for i in range(4)]
    hashes = [documents.run_row(doc, outcome="passed", profile="nightly", label=None, source=None)["content_hash"] for doc in docs]
    order = sorted(range(len(docs)), key=lambda i: hashes[i], reverse=True)  # the greatest hash stored first
    ids = {i: store.record_run(docs[i], outcome="passed", profile="nightly") for i in order}
    assert {i: store._run_with_hash(hashes[i]) for i in ids} == ids
    assert store._run_with_hash("0" * len(hashes[0])) is None

def test_runs_of_a_gpu_model_are_that_models_only(store):
    """`runs(gpu=MODEL)` matches the model (or a UUID) by equality: another model's runs are left out."""
    mine = store.record_run(make_document(1), outcome="passed", profile="nightly")
    store.record_run(_other_model_document(2), outcome="passed", profile="nightly")
    model = make_document(1)["machine_info"]["gpu"]["name"]
    assert [run.id for run in store.runs(gpu=model)] == [mine]
    assert [run.id for run in store.runs(gpu=GPU_A)] == [mine]


def test_series_of_a_gpu_model_are_that_models_only(store):
    """`case_series(by='gpu_model', gpu=MODEL)` holds that model's series only."""
    store.record_run(make_document(1), outcome="passed", profile="nightly")
    store.record_run(_other_model_document(2), outcome="passed", profile="nightly")
    model = make_document(1)["machine_info"]["gpu"]["name"]
    assert {key.gpu for key in store.case_series(by="gpu_model", gpu=model)} == {model}


def test_a_series_point_carries_its_runs_fields_in_their_places(store):
    """Each field of a series key and point comes from its own column (case, timer; run id, commit, samples)."""
    doc = make_document(3, cases=1, samples=9)
    doc["commit_info"]["branch"] = "release/2.1"
    run_id = store.record_run(doc, outcome="passed", profile="nightly")
    ((key, (point,)),) = store.case_series().items()
    bench = doc["benchmarks"][0]
    assert (key.gpu, key.case, key.timer, key.profile) == (GPU_A, case_name(0), bench["extra_info"]["timer"],
                                                           "nightly")
    assert (point.run_id, point.commit, point.gpu_uuid, point.sass) == (str(run_id), doc["commit_info"]["id"], GPU_A,
                                                                       bench["extra_info"]["sass"])
    assert point.branch == "release/2.1"
    assert point.median_s == pytest.approx(statistics.median(bench["stats"]["data"]))
    assert point.low_s <= point.median_s <= point.high_s
    assert (point.sample_count, point.throttled) == (9, False)


def test_a_document_with_nan_has_no_content_hash():
    """The canonical JSON of a run is strict JSON: a NaN is refused, not hashed."""
    with pytest.raises(ValueError):
        documents.content_hash({"benchmarks": [float("nan")]})


def test_a_reference_pooled_from_three_runs_counts_the_two_others():
    """"pooled with N more stored runs": N is the runs besides the one named."""
    record = SimpleNamespace(reference="this GPU's history", reference_runs=3)
    assert documents._reference_text(record) == "this GPU's history, pooled with 2 more stored runs"


@pytest.mark.parametrize("runs", [None, 1])
def test_a_reference_of_one_run_says_nothing_of_pooling(runs):
    """One run (or an unknown count) is no pool: the reference is named alone."""
    record = SimpleNamespace(reference="this GPU's history", reference_runs=runs)
    assert documents._reference_text(record) == "this GPU's history"


def test_exporting_a_run_below_the_first_stored_one_is_an_error(store):
    """export_run finds the run by its id exactly: no run 0 is no licence to export run 1."""
    first = store.record_run(make_document(1), outcome="passed", profile="nightly")
    with pytest.raises(HistoryError, match="no run"):
        store.export_run(first - 1)


def test_a_series_point_is_frozen(store):
    """A point read from the store cannot be changed in place by the analysis that reads it."""
    store.record_run(make_document(1, cases=1), outcome="passed", profile="nightly")
    ((_, (point,)),) = store.case_series().items()
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.median_s = 0.0


def test_the_created_tables_refuse_an_empty_value_where_every_run_has_one(history_url):
    with open_store(history_url) as store:
        inspector = sa.inspect(store.engine)
        for table, expected in NOT_NULL.items():
            not_null = {c["name"] for c in inspector.get_columns(table) if not c["nullable"]}
            assert not_null == expected, table


@pytest.mark.parametrize("runs, text", [(None, "baseline 0005"), (1, "baseline 0005"),
                                        (2, "baseline 0005, pooled with 1 more stored runs"),
                                        (4, "baseline 0005, pooled with 3 more stored runs")])
def test_the_reference_names_the_runs_pooled_into_it(runs, text):
    record = CaseRecord(case="c", median_s=1e-3, samples=[1e-3], timer="t", reference="baseline 0005",
                        reference_runs=runs)
    assert documents._reference_text(record) == text


def test_an_acknowledgement_names_a_run_that_is_not_there_and_a_case_its_run_does_not_hold(history_url, tmp_path):
    from kernelwatch.history.cli import main
    from maintainers.support.synthetic_history import write_document

    for number in (1, 2):
        write_document(tmp_path / "runs", number, make_document(number))
    assert main(["import", str(tmp_path / "runs"), "--history", history_url]) == 0
    with open_store(history_url) as store:
        with pytest.raises(HistoryError, match="there is no run 3 in"):
            store.acknowledge(case_name(0), 3, reason="why")
        with pytest.raises(HistoryError, match=r"run 1 holds no case 'suites/none.py::test'"):
            store.acknowledge("suites/none.py::test", 1, reason="why")
        store.acknowledge(case_name(0), 1, reason="intended")  # run 2 exists too: the check is for run 1 only
        store.acknowledge(case_name(0), 2, reason="intended")


def test_a_stored_case_cannot_be_changed_after_it_was_read(store):
    store.record_run(make_document(0), outcome="passed", profile="nightly")
    [one] = store.reference_history([GPU_A], profile="nightly", limit_runs=1)[case_name(0)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.median = 2e-3  # a reference pooled from it must stay what the store holds


def test_the_newest_run_alone_is_a_reference_history(store):
    from maintainers.support.synthetic_history import GPU_A

    ids = [store.record_run(make_document(i, gpu_uuid=GPU_A), outcome="passed", profile="nightly") for i in range(3)]
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=1)
    assert [entry.run_id for entry in history[case_name(0)]] == [ids[-1]]
    assert isinstance(store.safe_url, str) and store.safe_url in repr(store)


def test_an_acknowledgement_keeps_who_made_it(store):
    store.record_run(make_document(1), outcome="passed", profile="nightly")
    store.acknowledge(case_name(0), 1, reason="intended", who="alice")
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("select who from acknowledgements")).scalar() == "alice"


@pytest.mark.parametrize("text, stored", [("2026-11-01T12:00:00+02:00", "2026-11-01 10:00:00"),
                                          ("2026-11-01T12:00:00", "2026-11-01 12:00:00")])
def test_a_runs_time_is_stored_in_utc(text, stored):
    assert str(documents.started_at({"datetime": text})) == stored


def test_a_nightly_reference_reads_no_run_of_another_profile(store):
    from maintainers.support.synthetic_history import GPU_A

    nightly = store.record_run(make_document(1, gpu_uuid=GPU_A), outcome="passed", profile="nightly")
    store.record_run(make_document(2, gpu_uuid=GPU_A), outcome="passed", profile="full")  # "full" < "nightly"
    history = store.reference_history([GPU_A], profile="nightly", limit_runs=5)
    assert [entry.run_id for entry in history[case_name(0)]] == [nightly]


@pytest.mark.parametrize("count", [1, 2, 5])
def test_a_cases_band_is_its_quartiles_and_one_sample_is_its_own_band(count):
    import statistics

    doc = make_document(1, cases=1, samples=count)
    row = documents.case_rows(doc)[0]
    samples = doc["benchmarks"][0]["stats"]["data"]
    q25, _, q75 = statistics.quantiles(samples, n=4) if count > 1 else [samples[0]] * 3
    assert (row["q25_s"], row["q75_s"], row["sample_count"]) == (q25, q75, count)


def test_sqlite_writers_wait_sixty_seconds_for_each_other(tmp_path):
    with open_store(str(tmp_path / "h.sqlite")) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60_000


def test_a_runs_content_hash_ignores_key_order_and_keeps_its_text_as_written():

    assert documents.content_hash({"a": 1, "b": "é"}) == documents.content_hash({"b": "é", "a": 1})
    assert documents.content_hash({"a": "é"}) == hashlib.sha256('{"a":"é"}'.encode()).hexdigest()


def test_two_benchmarks_of_one_name_are_refused():
    doc = make_document(1, cases=2)
    doc["benchmarks"][1]["fullname"] = doc["benchmarks"][0]["fullname"]
    with pytest.raises(documents.DocumentError, match="its own \"fullname\""):
        documents.checked_run(doc)


def test_a_run_without_a_gpu_host_takes_the_machines_name():
    doc = make_document(1)
    doc["machine_info"]["gpu"].pop("host", None)
    doc["machine_info"]["node"] = "node-7"
    assert documents.run_row(doc, outcome="passed", profile=None, label=None, source=None)["host"] == "node-7"


def test_a_runs_row_takes_its_text_fields_by_name_only():
    # outcome, profile, label and source are all text: passed by position, two could trade places unnoticed
    with pytest.raises(TypeError):
        documents.run_row(make_document(1), "passed", "nightly", None, None)


def test_a_new_store_opens_while_another_process_is_still_creating_it(tmp_path):
    # SQLite refuses the switch to WAL at once while another connection writes to a file not yet in
    # WAL (two nightly jobs opening a new store together failed so in CI); the open must wait instead
    import threading

    path = tmp_path / "history.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("create table being_written (x)")
    releaser = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    releaser.start()
    try:
        with open_store(str(path)) as store, store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        releaser.join()
        other.close()


def test_a_sha256_commit_and_a_profile_of_32_characters_fit_their_columns(store):
    # PostgreSQL holds varchar columns to their width (SQLite does not): the widths are the store's promise
    doc = make_document(1)
    doc["commit_info"]["id"] = "f" * 64  # a commit of a SHA-256 repository
    run_id = store.record_run(doc, outcome="passed", profile="p" * 32)
    (run,) = store.runs()
    assert (run.id, run.commit, run.profile) == (run_id, "f" * 64, "p" * 32)


def test_a_run_of_300_cases_has_300_names():
    # more cases than CPython keeps one int object for: their count is compared by value
    doc = make_document(1, cases=300, samples=2)
    assert len(documents.checked_run(doc)["benchmarks"]) == 300


@pytest.mark.parametrize(("change", "message"), [
    ({"datetime": "yesterday"}, "the run has no valid \"datetime\" ('yesterday')"),
    ({"machine_info": {"kernel_suite_schema": 99}}, "schema version 99 by a newer version of the suite"),
])
def test_a_document_that_is_no_run_is_one_document_error(change, message):
    doc = make_document(1) | change
    with pytest.raises(documents.DocumentError, match=re.escape(message)):
        documents.run_row(documents.current(doc), outcome="passed", profile="nightly", label=None, source=None)


def test_a_document_stored_twice_names_its_own_run_among_others(store):

    # stored before the repeated run: one whose hash sorts after its hash, and one before: only an
    # exact match of the hash may name the run
    smallest, middle, largest = sorted((make_document(i) for i in range(1, 4)), key=documents.content_hash)
    ids = [store.record_run(doc, outcome="passed", profile="nightly") for doc in (largest, smallest, middle)]
    with pytest.raises(AlreadyRecorded) as again:
        store.record_run(middle, outcome="passed", profile="nightly")
    assert again.value.run_id == ids[-1]


@pytest.mark.parametrize("error", [KeyError("getpwuid(): uid not found: 1000"), OSError("no login name")])
def test_a_machine_without_a_login_name_acknowledges_as_unknown(monkeypatch, error):
    import getpass

    from kernelwatch.storage.history import amendments

    def nobody():
        raise error

    monkeypatch.setattr(getpass, "getuser", nobody)
    assert amendments._login_name() == "unknown"


def test_no_run_case_or_acknowledgement_id_is_given_again_after_the_newest_run_is_deleted_by_hand(store):
    # an operator removing a bad run with sqlite3 or psql must not make a later run take its id (and its
    # acknowledgements), nor a later case or acknowledgement the id of one removed with it
    def ids(table: str, run_id: int) -> list[int]:
        with store.engine.connect() as conn:
            return conn.execute(sa.text(f"SELECT id FROM {table} WHERE run_id = :id"), {"id": run_id}).scalars().all()

    first = store.record_run(make_document(1), outcome="passed", profile="nightly")
    second = store.record_run(make_document(2), outcome="passed", profile="nightly")
    store.acknowledge(case_name(0), second, reason="meant")
    deleted = {table: max(ids(table, second)) for table in ("cases", "acknowledgements")}
    with store.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM acknowledgements WHERE run_id = :id"), {"id": second})
        conn.execute(sa.text("DELETE FROM cases WHERE run_id = :id"), {"id": second})
        conn.execute(sa.text("DELETE FROM runs WHERE id = :id"), {"id": second})
    third = store.record_run(make_document(3), outcome="passed", profile="nightly")
    store.acknowledge(case_name(0), third, reason="meant")
    assert first < second < third
    assert all(min(ids(table, third)) > newest for table, newest in deleted.items())


def test_a_case_is_acknowledged_only_at_a_run_that_holds_it(store):
    # the run without the case lies between two runs with it and holds a case named after it: only
    # equality of run and of name may match
    gap = make_document(2, cases=3)
    gap["benchmarks"] = [b for b in gap["benchmarks"] if b["fullname"] != case_name(1)]
    store.record_run(make_document(1, cases=3), outcome="passed", profile="nightly")
    without_it = store.record_run(gap, outcome="passed", profile="nightly")
    with_it = store.record_run(make_document(3, cases=3), outcome="passed", profile="nightly")
    with pytest.raises(HistoryError, match=re.escape(f"run {without_it} holds no case {case_name(1)!r}")):
        store.acknowledge(case_name(1), without_it, reason="accepted")
    store.acknowledge(case_name(1), with_it, reason="accepted")
    assert store.acknowledgements() == {(case_name(1), with_it): "accepted"}

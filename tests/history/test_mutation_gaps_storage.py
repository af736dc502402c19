"""Claims that surviving mutants showed no test pinned (issue 22, third cosmic-ray pass, history store).

Modules: harness/storage/history/ (store.py, documents.py, schema.py; a sample of their mutants).
Each test fails when the part of the product it names is changed by one step (checked against
each mutant), and passes on the product as it is. SQLite only: the mutants were run on it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import statistics
from types import SimpleNamespace

import pytest
from synthetic import GPU_A, GPU_B, case_name, make_document

from harness.storage.history import HistoryError, documents, open_store
from harness.storage.history.schema import ACKNOWLEDGEMENTS, CASES, RUNS
from harness.storage.history.store import AlreadyRecorded

OTHER_MODEL = "NVIDIA A100"  # sorts before "NVIDIA H200": a wrong comparison of models lets it in


@pytest.fixture
def store(tmp_path):
    with open_store(str(tmp_path / "history.sqlite")) as opened:
        yield opened


def _other_model_document(index: int) -> dict:
    doc = make_document(index, gpu_uuid=GPU_B)
    doc["machine_info"]["gpu"]["name"] = OTHER_MODEL
    return doc


def test_recording_a_run_twice_names_the_run_it_is_stored_as(store):
    """AlreadyRecorded carries the id of the stored run with that content hash, not of another run."""
    store.record_run(make_document(1), outcome="passed", profile="nightly")
    second = store.record_run(make_document(2), outcome="passed", profile="nightly")
    with pytest.raises(AlreadyRecorded) as raised:
        store.record_run(make_document(2), outcome="passed", profile="nightly")
    assert raised.value.run_id == second


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
    run_id = store.record_run(doc, outcome="passed", profile="nightly")
    ((key, (point,)),) = store.case_series().items()
    bench = doc["benchmarks"][0]
    assert (key.gpu, key.case, key.timer, key.profile) == (GPU_A, case_name(0), bench["extra_info"]["timer"],
                                                           "nightly")
    assert (point.run_id, point.commit, point.gpu_uuid, point.sass) == (str(run_id), doc["commit_info"]["id"], GPU_A,
                                                                       bench["extra_info"]["sass"])
    assert point.median_s == pytest.approx(statistics.median(bench["stats"]["data"]))
    assert point.low_s <= point.median_s <= point.high_s
    assert (point.sample_count, point.throttled) == (9, False)


def test_a_document_with_nan_has_no_content_hash():
    """The canonical JSON of a run is strict JSON: a NaN is refused, not hashed."""
    with pytest.raises(ValueError):
        documents.content_hash({"benchmarks": [float("nan")]})


def test_the_hash_and_commit_columns_hold_sha256_names():
    """A content hash is a SHA-256 hex digest, and a git commit may be one (SHA-256 repositories):
    PostgreSQL enforces the length of a varchar, so both columns must hold 64 characters."""
    digest = len(hashlib.sha256().hexdigest())
    assert RUNS.c.content_hash.type.length >= digest and RUNS.c.commit.type.length >= digest


@pytest.mark.parametrize("column", [RUNS.c.document_rest, CASES.c.benchmark, ACKNOWLEDGEMENTS.c.who],
                         ids=["document_rest", "benchmark", "who"])
def test_what_an_export_or_an_acknowledgement_needs_is_never_null(column):
    """export_run rebuilds the document from document_rest and each case's benchmark; an acknowledgement
    always names who made it (the login name by default)."""
    assert column.nullable is False


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

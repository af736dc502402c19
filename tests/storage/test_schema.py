"""kernelwatch.storage.schema: stored runs of older schemas brought to the current keys, newer ones refused."""

from __future__ import annotations

import pytest

from kernelwatch.storage.schema import (
    SCHEMA_KEY,
    SCHEMA_VERSION,
    RunSchemaError,
    migrated,
    schema_version,
    short_timer_name,
)
from kernelwatch.verdict.record import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL


def version_doc(version=None, **info):
    machine = {"gpu": {"name": "G"}} if version is None else {"gpu": {"name": "G"}, SCHEMA_KEY: version}
    return {"machine_info": machine, "benchmarks": [{"fullname": "a", "stats": {"data": [1.0]}, "extra_info": info}]}


def test_a_current_document_comes_back_as_it_is():
    doc = version_doc(SCHEMA_VERSION, timer="CUDA events, held stream", tflops=1.0)
    assert SCHEMA_VERSION == 2
    assert migrated(doc) is doc


def test_a_document_of_a_newer_schema_is_refused_naming_both_versions():
    with pytest.raises(RunSchemaError, match="schema version 3 by a newer version.*up to version 2"):
        migrated(version_doc(3))


@pytest.mark.parametrize("version", [0, -1, True, "2", 1.0])
def test_a_schema_version_that_is_not_a_positive_integer_is_refused(version):
    with pytest.raises(RunSchemaError, match="not a schema version"):
        schema_version(version_doc(version))


def test_a_document_without_a_version_is_version_one_and_says_the_current_one_once_migrated():
    doc = version_doc()
    assert schema_version(doc) == 1 and schema_version({"benchmarks": []}) == 1
    assert migrated(doc)["machine_info"] == {"gpu": {"name": "G"}, SCHEMA_KEY: SCHEMA_VERSION}
    assert SCHEMA_KEY not in doc["machine_info"]  # the document read is left as it is


@pytest.mark.parametrize("old, new", [
    ("cupti", TIMER_CUPTI), ("CUPTI", TIMER_CUPTI), ("CUDA events, held stream, L2 flushed", TIMER_EVENTS),
    ("wall clock (perf_counter)", TIMER_WALL), ("Cupti Kernel", "cupti kernel"), (None, None), ("", None),
])
def test_version_one_timer_names_are_shortened(old, new):
    assert short_timer_name(old) == new


def test_a_version_one_record_is_brought_to_the_current_keys():
    """Old labels renamed, `baseline` becomes `reference`, the datasheet in TFLOP/s becomes a rate per
    second, and the retired keys are dropped; other keys are kept."""
    doc = version_doc(verdict="regressed", baseline="0001_x.json", datasheet_tflops=2.0, tflops=1.5, gbps=3.0,
                      median_s=1e-3, samples=[1.0], base_median_s=1e-3, regression_threshold=0.02,
                      verdict_note="n", timer="cupti", chunks=4)
    info = migrated(doc)["benchmarks"][0]["extra_info"]
    assert info == {"verdict": "slower", "reference": "0001_x.json", "datasheet_rate": 2e12, "timer": TIMER_CUPTI,
                    "chunks": 4}
    assert doc["benchmarks"][0]["extra_info"]["verdict"] == "regressed"  # the document read is left as it is


def test_a_version_one_record_keeps_a_rate_and_a_reference_it_already_has():
    info = migrated(version_doc(datasheet_rate=5e12, datasheet_tflops=2.0, reference="r", baseline="b",
                                verdict="no baseline"))["benchmarks"][0]["extra_info"]
    assert (info["datasheet_rate"], info["reference"], info["verdict"]) == (5e12, "r", "new")
    assert "baseline" not in info
    assert migrated(version_doc(verdict="unchanged (same SASS)"))["benchmarks"][0]["extra_info"]["verdict"] == "unchanged"


@pytest.mark.parametrize("benchmarks", [None, {}, {"a": {}}, "ab", [1], [{"fullname": "a"}, ["b"]], [None]],
                         ids=["missing", "empty object", "object", "text", "list of numbers", "one list among objects",
                              "list of null"])
def test_a_version_one_document_whose_benchmarks_are_no_list_of_objects_is_refused(benchmarks):
    doc = {"machine_info": {}, **({} if benchmarks is None else {"benchmarks": benchmarks})}
    with pytest.raises(RunSchemaError, match=r'^its "benchmarks" is not a list of objects$'):
        migrated(doc)


@pytest.mark.parametrize("machine, kind", [([], "list"), ("gpu", "str"), (3, "int")])
def test_a_version_one_document_whose_machine_info_is_no_object_is_refused_naming_what_it_is(machine, kind):
    with pytest.raises(RunSchemaError, match=rf"^its machine_info is a {kind}, not an object$"):
        migrated({"machine_info": machine, "benchmarks": []})


def test_a_version_one_document_without_machine_info_gets_one_saying_the_current_version():
    assert migrated({"benchmarks": []}) == {"benchmarks": [], "machine_info": {SCHEMA_KEY: SCHEMA_VERSION}}
    assert migrated({"benchmarks": [], "machine_info": None})["machine_info"] == {SCHEMA_KEY: SCHEMA_VERSION}
    assert migrated({"benchmarks": [{"fullname": "a"}]})["benchmarks"] == [
        {"fullname": "a", "extra_info": {"timer": None}}]  # no record: an empty one, migrated

"""HistoryStore.acknowledge and .acknowledgements, on each backend; case_series' GPU filter."""

from __future__ import annotations

import pytest

from kernelwatch.storage.history import HistoryError
from maintainers.support.synthetic_history import GPU_A, GPU_B, case_name, make_document
from tests.support.backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)


def _two_runs(store) -> list[int]:
    return [store.record_run(make_document(index), outcome="passed", profile="nightly") for index in range(2)]


def test_a_new_store_has_no_acknowledgement(store):
    assert store.acknowledgements() == {}


def test_acknowledged_changes_read_back_by_case_and_run(store):
    first, second = _two_runs(store)
    store.acknowledge(case_name(1), second, reason="  larger tiles: intended  ", who="alice")
    store.acknowledge(case_name(2), first, reason="driver update")
    assert store.acknowledgements() == {(case_name(1), second): "larger tiles: intended",
                                        (case_name(2), first): "driver update"}


def test_a_second_acknowledgement_replaces_the_reason_read_back(store):
    _, second = _two_runs(store)
    store.acknowledge(case_name(0), second, reason="first reason")
    store.acknowledge(case_name(0), second, reason="second reason")
    assert store.acknowledgements() == {(case_name(0), second): "second reason"}


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_a_blank_reason_is_refused(store, reason):
    _, second = _two_runs(store)
    with pytest.raises(HistoryError, match="needs a reason"):
        store.acknowledge(case_name(0), second, reason=reason)
    assert store.acknowledgements() == {}


def test_an_unknown_run_or_case_is_refused(store):
    _, second = _two_runs(store)
    with pytest.raises(HistoryError, match=f"there is no run {second + 5} in the history store"):
        store.acknowledge(case_name(0), second + 5, reason="x")
    with pytest.raises(HistoryError, match=rf"run {second} holds no case 'suites/nothing.py::test\[x\]'"):
        store.acknowledge("suites/nothing.py::test[x]", second, reason="x")
    assert store.acknowledgements() == {}


def test_an_unknown_run_in_a_store_of_one_run_names_that_run_alone(store):
    only = store.record_run(make_document(0), outcome="passed", profile="nightly")
    with pytest.raises(HistoryError, match=rf"there is no run {only + 1} in the history store .*; it holds run {only} only$"):
        store.acknowledge(case_name(0), only + 1, reason="x")


def test_case_series_gpu_filter_takes_a_model_or_a_uuid(store):
    store.record_run(make_document(0, gpu_uuid=GPU_A), outcome="passed", profile="nightly")
    store.record_run(make_document(1, gpu_uuid=GPU_B), outcome="passed", profile="nightly")
    assert {key.gpu for key in store.case_series(gpu="NVIDIA H200")} == {GPU_A, GPU_B}
    assert {key.gpu for key in store.case_series(gpu=GPU_B)} == {GPU_B}
    [(key, points)] = store.case_series(by="gpu_model", gpu=GPU_A, case=case_name(0)).items()
    assert key.gpu == "NVIDIA H200" and [p.gpu_uuid for p in points] == [GPU_A]
    assert store.case_series(gpu="GPU-unknown") == {}


def test_the_refusal_counts_the_cases_of_that_run_alone(store):
    first, second = _two_runs(store)
    held = len(store.case_series(by="gpu_uuid"))  # one series per case: each run holds every case once
    with pytest.raises(HistoryError, match=rf"run {second} holds no case 'suites/nothing.py::test\[x\]'; it holds "
                                           rf"{held} cases"):
        store.acknowledge("suites/nothing.py::test[x]", second, reason="x")

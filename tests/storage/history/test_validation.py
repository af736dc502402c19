"""Every document is checked once, before either backend sees it (issue 45): the two backends take exactly the same
documents, a refusal is one sentence naming the case and the field, and no accepted run breaks a later command."""

from __future__ import annotations

import json

import pytest

from kernelwatch.history.cli import main
from kernelwatch.storage.history import HistoryError, open_store, validation
from maintainers.support.synthetic_history import make_document, write_document
from tests.support.backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)

NAME = "'suites/test_perf_synthetic.py::test_kernel_time[case001]'"


def _nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def _spoiled(spoil) -> dict:
    doc = make_document(7)
    spoil(doc)
    return doc


def _info(doc: dict, **values) -> None:
    doc["benchmarks"][1]["extra_info"].update(values)


# what a user met on either backend (issue 45), and the sentence that now refuses it on both
REFUSED = {
    "samples of 1e308 s, whose median is infinite": (
        lambda doc: doc["benchmarks"][1]["stats"].update(data=[1e308] * 20),
        f"case {NAME}: benchmark.stats.data[0] is 1e+308, not a time in seconds from 1e-12 to 86400"),
    "a NaN median of a version-1 record (which its migration drops)": (
        lambda doc: (doc["machine_info"].pop("kernel_suite_schema"), _info(doc, median_s=float("nan"))),
        f"case {NAME}: benchmark.extra_info.median_s is nan, not a finite number"),
    "an integer above 2^63 in a record": (
        lambda doc: _info(doc, launches=2**64), f"case {NAME}: benchmark.extra_info.launches is an integer of 65 bits"),
    "a clock above 2^63 (SQLite's OverflowError)": (
        lambda doc: _info(doc, sm_clock_mhz_max=2**64), "benchmark.extra_info.sm_clock_mhz_max is an integer of 65 bits"),
    "a NUL in a case's name": (
        lambda doc: doc["benchmarks"][1].update(fullname="suites/x.py::t[a\x00b]"),
        "case 'suites/x.py::t[a\\x00b]': benchmark.fullname holds a NUL character, which PostgreSQL cannot store"),
    "text in the clock's integer column": (
        lambda doc: _info(doc, sm_clock_mhz_min="fast"),
        f"case {NAME}: benchmark.extra_info.sm_clock_mhz_min is 'fast', not a whole number from 0 to 2147483647"),
    "a clock above 2^31": (
        lambda doc: _info(doc, sm_clock_mhz_min=2**31), "sm_clock_mhz_min is 2147483648, not a whole number"),
    "a record nested deeper than the encoders recurse": (
        lambda doc: _info(doc, deep=_nested(5000)), f"case {NAME}: benchmark.extra_info.deep.a.a"),
    "a record nested 33 levels": (
        lambda doc: _info(doc, deep=_nested(29)), "nests deeper than 32 levels"),
    "a dirty flag that is text": (
        lambda doc: doc["commit_info"].update(dirty="yes"), "commit_info.dirty is 'yes', not true or false"),
    "a GPU UUID longer than the index takes beside the name": (
        lambda doc: _info(doc, gpu_uuid="GPU-" + "f" * 300), "benchmark.extra_info.gpu_uuid is 304 bytes, more than 200"),
    "a time whose zone moves it before year 1": (
        lambda doc: doc.update(datetime="0001-01-01T00:00:00+01:00"), "the run has no valid \"datetime\""),
    "a window whose commits are no pairs (changes prints them)": (
        lambda doc: _info(doc, window={"base": "a", "head": "b", "commits": [1, 2]}),
        "benchmark.extra_info.window.commits is not a list of [commit, subject] pairs of text"),
    "phases that are no times (the next verdict reads them)": (
        lambda doc: _info(doc, phases={"copy": ["slow"]}), "benchmark.extra_info.phases.copy[0] is 'slow', not a time"),
    "an energy of no joules (a counter that did not move)": (
        lambda doc: _info(doc, energy={"window_joules_per_launch": [0.0, 1.0], "joules_per_launch": 0.5}),
        "benchmark.extra_info.energy.window_joules_per_launch[0] is 0.0, not an energy in joules above 0"),
    "an energy below zero": (
        lambda doc: _info(doc, energy={"window_joules_per_launch": [1.0], "joules_per_launch": -0.5}),
        "benchmark.extra_info.energy.joules_per_launch is -0.5, not an energy in joules above 0"),
    "an energy that is a list": (
        lambda doc: _info(doc, energy=[1.0]), "benchmark.extra_info.energy is a list, not an object"),
    "a timer that is a number": (
        lambda doc: _info(doc, timer=5), "benchmark.extra_info.timer is 5, not text"),
    "a sample that is true": (
        lambda doc: doc["benchmarks"][1]["stats"]["data"].__setitem__(3, True), "benchmark.stats.data[3] is True"),
    "a sample below a picosecond": (
        lambda doc: doc["benchmarks"][1]["stats"]["data"].__setitem__(0, 5e-324), "data[0] is 5e-324, not a time"),
    "a set, which is no JSON": (
        lambda doc: _info(doc, tags={"a"}), "benchmark.extra_info.tags is a set, not a JSON value"),
    "a key that is not text": (
        lambda doc: doc["machine_info"].update({7: "x"}), "machine_info has a key 7 that is not text"),
    "a record that is a list (a version-1 run's migration reads it)": (
        lambda doc: (doc["machine_info"].pop("kernel_suite_schema"), doc["benchmarks"][1].update(extra_info=[1])),
        f"case {NAME}: benchmark.extra_info is a list, not an object"),
}


@pytest.mark.parametrize("spoil, words", list(REFUSED.values()), ids=list(REFUSED))
def test_a_document_either_backend_once_took_or_broke_on_is_refused_by_both_in_one_sentence(store, spoil, words):
    kept = store.record_run(make_document(1), outcome="passed", profile="nightly")
    with pytest.raises(HistoryError) as raised:
        store.record_run(_spoiled(spoil), outcome="passed", profile="nightly")
    message = str(raised.value)
    assert words in message and len(message.splitlines()) == 1 and len(message) < 400, message
    assert [run.id for run in store.runs()] == [kept]
    assert all(point.median_s > 0 for points in store.case_series().values() for point in points)


ACCEPTED = {
    "a sample of a day": lambda doc: doc["benchmarks"][1]["stats"]["data"].__setitem__(0, 86_400.0),
    "a sample of a picosecond": lambda doc: doc["benchmarks"][1]["stats"]["data"].__setitem__(0, 1e-12),
    "the largest clock an integer column holds": lambda doc: _info(doc, sm_clock_mhz_max=2**31 - 1),
    "the largest 64-bit integer in a record": lambda doc: _info(doc, launches=2**63 - 1, least=-(2**63)),
    "a record nested 32 levels": lambda doc: _info(doc, deep=_nested(28)),
    "a NUL escaped as text": lambda doc: _info(doc, note="a\\u0000b"),
    "a GPU UUID of 200 bytes": lambda doc: _info(doc, gpu_uuid="GPU-" + "f" * 196),
    "a time of year 1 in UTC": lambda doc: doc.update(datetime="0001-01-01T00:00:00+00:00"),
}


@pytest.mark.parametrize("spoil", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_the_edges_of_what_is_taken_are_taken_by_both_and_read_back(store, spoil, tmp_path):
    doc = _spoiled(spoil)
    run_id = store.record_run(doc, outcome="passed", profile="nightly")
    assert store.export_run(run_id) == json.loads(json.dumps(doc))
    url = store.url.render_as_string(hide_password=False)
    for command in (["changes"], ["site", str(tmp_path / "site")], ["runs"]):
        assert main([*command, "--history", url]) == 0


def test_a_refused_run_is_one_line_of_import_which_goes_on_with_the_other_files(history_url, tmp_path, capsys):
    write_document(tmp_path / "runs", 1, make_document(1))
    write_document(tmp_path / "runs", 2, _spoiled(lambda doc: doc["benchmarks"][1]["stats"].update(data=[1e308] * 3)))
    write_document(tmp_path / "runs", 3, make_document(3))
    assert main(["import", str(tmp_path / "runs"), "--history", history_url]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "0002_synthetic.json: case " in captured.err
    assert captured.out.splitlines()[-1].startswith("2 imported, 0 skipped (already recorded), 1 failed")
    for command in (["changes"], ["site", str(tmp_path / "site")], ["runs"]):
        assert main([*command, "--history", history_url]) == 0


@pytest.mark.parametrize("text, words", [
    ('{"benchmarks": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests its JSON deeper than Python's parser goes"),
    ('{"benchmarks": [{"fullname": "a", "stats": {"data": [1' + "0" * 5000 + "]}}]}", "Exceeds the limit"),
    ('{"benchmarks": [{"fullname": "a", "stats": {"data": [1' + "0" * 400 + "]}}]}",
     "has stored samples that are not finite, positive times"),
])
def test_a_file_the_json_parser_or_the_sample_check_overflows_on_is_one_line(text, words, tmp_path, capsys):
    (tmp_path / "0001_bad.json").write_text(text)
    assert main(["import", str(tmp_path / "0001_bad.json"), "--history", str(tmp_path / "h.sqlite")]) == 1
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_document_is_checked_without_recursion_however_deep():
    assert "nests deeper than 32 levels" in validation.json_problem(_nested(100_000), "x")


def test_a_label_profile_or_source_with_a_nul_is_refused(history_url):
    with open_store(history_url) as store:
        for options, words in (({"label": "a\x00b"}, "the label holds a NUL"),
                               ({"source": "runs/\x00.json"}, "the source holds a NUL"),
                               ({"profile": 5}, "the profile is 5, not text")):
            with pytest.raises(HistoryError, match=words):
                store.record_run(make_document(1), outcome="passed", **{"profile": "nightly", **options})
        assert store.runs() == []


@pytest.mark.parametrize("spoil, words", [
    (lambda doc: doc["benchmarks"][0]["extra_info"].update(median_s=float("nan")),
     "benchmark.extra_info.median_s is nan, not a finite number"),  # the migration would drop it unseen
    (lambda doc: doc.update(machine_info=[1]), "its machine_info is a list, not an object"),
])
def test_an_imported_version_1_file_is_checked_as_written_before_it_is_migrated(history_url, tmp_path, capsys,
                                                                                 spoil, words):
    doc = make_document(1)
    doc["machine_info"].pop("kernel_suite_schema")
    spoil(doc)
    (tmp_path / "0001_old.json").write_text(json.dumps(doc))  # NaN written as JSON writers of Python do
    assert main(["import", str(tmp_path / "0001_old.json"), "--history", history_url]) == 1
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_a_long_field_path_is_named_by_its_first_80_and_last_60_characters():
    from kernelwatch.storage.history.validation import _path

    assert _path("a" * 160) == "a" * 160
    assert _path("a" * 100 + "b" * 100) == "a" * 80 + "..." + "b" * 60

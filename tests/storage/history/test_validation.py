"""Every document is checked once, before either backend sees it (issue 45): the two backends take exactly the same
documents, a refusal is one sentence naming the case and the field, and no accepted run breaks a later command."""

from __future__ import annotations

import json
import re

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


# ---- every refusal, word for word, and the values on either side of each edge --------------------------------------
# Each entry spoils a two-case document (its second case, unless the entry says otherwise); the snapshot holds the one
# sentence checked_run refuses it with, or "accepted": a bound moved by one, a message's wording or the order in which
# problems are found changes the table.

def _case(doc: dict) -> dict:
    return doc["benchmarks"][1]


def _data(doc: dict, index: int, value) -> None:
    _case(doc)["stats"]["data"][index] = value


def _gpu(doc: dict, **values) -> None:
    doc["machine_info"]["gpu"].update(values)


def _energy(windows, joules="absent") -> dict:
    energy = {"window_joules_per_launch": windows}
    if joules != "absent":
        energy["joules_per_launch"] = joules
    return energy


def _setting(where, key: str, value):
    return lambda doc: where(doc, **{key: value})


def _version_1(doc: dict) -> None:
    doc["machine_info"].pop("kernel_suite_schema")


EDGES = {
    # samples: a time in seconds from a picosecond to a day
    "a sample of a picosecond": lambda doc: _data(doc, 0, 1e-12),
    "a sample just below a picosecond": lambda doc: _data(doc, 0, 0.99e-12),
    "a sample of a day": lambda doc: _data(doc, 0, 86_400),
    "a sample just over a day": lambda doc: _data(doc, 0, 86_400.001),
    "a sample of zero": lambda doc: _data(doc, 2, 0.0),
    "a negative sample": lambda doc: _data(doc, 2, -1e-5),
    "a sample that is text": lambda doc: _data(doc, 1, "1e-5"),
    "a sample that is false": lambda doc: _data(doc, 1, False),
    "a sample that is null": lambda doc: _data(doc, 1, None),
    "two bad samples: the first is named": lambda doc: (_data(doc, 4, 0.0), _data(doc, 9, -1.0)),
    "samples that are an object": lambda doc: _case(doc)["stats"].update(data={"a": 1e-5}),
    "samples that are empty": lambda doc: _case(doc)["stats"].update(data=[]),
    "no samples": lambda doc: _case(doc)["stats"].pop("data"),
    "stats that are a list": lambda doc: _case(doc).update(stats=[1e-5]),
    "no stats": lambda doc: _case(doc).pop("stats"),
    # the record's times, phases and spread
    "a median of a picosecond": lambda doc: _info(doc, median_s=1e-12),
    "a median below a picosecond": lambda doc: _info(doc, median_s=0.99e-12),
    "a median of a day": lambda doc: _info(doc, median_s=86_400.0),
    "a median over a day": lambda doc: _info(doc, median_s=86_401),
    "a median of null": lambda doc: _info(doc, median_s=None),
    "an event median of zero": lambda doc: _info(doc, event_median_s=0),
    "an event median of a day": lambda doc: _info(doc, event_median_s=86_400),
    "an event median that is true": lambda doc: _info(doc, event_median_s=True),
    "phases of times at both edges": lambda doc: _info(doc, phases={"copy": [1e-12, 86_400.0], "sum": []}),
    "a phase that is no list": lambda doc: _info(doc, phases={"copy": 0.5}),
    "a phase of a key with a dash": lambda doc: _info(doc, phases={"h2d-copy": [0.0]}),
    "a phase of an empty key": lambda doc: _info(doc, phases={"": [1.0, 86_401]}),
    "phases that are a list": lambda doc: _info(doc, phases=[[1e-5]]),
    "a spread of zero": lambda doc: _info(doc, rsd=0),
    "a spread of a million": lambda doc: _info(doc, rsd=1e6),
    "a spread just over a million": lambda doc: _info(doc, rsd=1_000_000.5),
    "a spread below zero": lambda doc: _info(doc, rsd=-0.001),
    "a spread that is false": lambda doc: _info(doc, rsd=False),
    "a spread that is text": lambda doc: _info(doc, rsd="0.1"),
    # the record's integer columns: 0 .. 2^31 - 1
    "a clock of zero": lambda doc: _info(doc, sm_clock_mhz_min=0, sm_clock_mhz_max=0),
    "a clock of 2^31 - 1": lambda doc: _info(doc, sm_clock_mhz_min=2**31 - 1),
    "a lowest clock of 2^31": lambda doc: _info(doc, sm_clock_mhz_min=2**31),
    "a highest clock of 2^31": lambda doc: _info(doc, sm_clock_mhz_max=2**31),
    "a clock of -1": lambda doc: _info(doc, sm_clock_mhz_max=-1),
    "a clock that is true": lambda doc: _info(doc, sm_clock_mhz_min=True),
    "a clock of a fraction": lambda doc: _info(doc, sm_clock_mhz_min=1980.5),
    "reference runs of 2^31 - 1": lambda doc: _info(doc, reference_runs=2**31 - 1),
    "reference runs of 2^31": lambda doc: _info(doc, reference_runs=2**31),
    "reference runs of -1": lambda doc: _info(doc, reference_runs=-1),
    "reference runs that are text": lambda doc: _info(doc, reference_runs="5"),
    # the record's text columns
    **{f"a {key} that is a number": _setting(_info, key, 5)
       for key in ("timer", "sass", "verdict", "reference", "accepted_reason", "gpu_uuid")},
    "a verdict that is a list": lambda doc: _info(doc, verdict=["slower"]),
    "a GPU UUID of 200 bytes": lambda doc: _info(doc, gpu_uuid="G" * 200),
    "a GPU UUID of 201 bytes": lambda doc: _info(doc, gpu_uuid="G" * 201),
    "a GPU UUID of 100 characters and 201 bytes": lambda doc: _info(doc, gpu_uuid="é" * 100 + "G"),
    "a timer of 300 characters (no width)": lambda doc: _info(doc, timer="t" * 300),
    # the record's lists and objects a later command reads
    "throttle reasons of text": lambda doc: _info(doc, throttle_reasons=["power", "thermal"]),
    "throttle reasons that are text": lambda doc: _info(doc, throttle_reasons="power"),
    "throttle reasons holding a number": lambda doc: _info(doc, throttle_reasons=["power", 3]),
    "throttle reasons long and wrong": lambda doc: _info(doc, throttle_reasons=[f"reason {n}" for n in range(20)] + [1]),
    "an energy verdict that is text": lambda doc: _info(doc, energy_verdict="slower"),
    "an energy verdict that is an object": lambda doc: _info(doc, energy_verdict={"verdict": "slower"}),
    "phase verdicts of objects": lambda doc: _info(doc, phase_verdicts=[{"phase": "copy"}], references=[]),
    "phase verdicts holding text": lambda doc: _info(doc, phase_verdicts=[{"phase": "copy"}, "slower"]),
    "references that are an object": lambda doc: _info(doc, references={"run": 1}),
    "a window of text": lambda doc: _info(doc, window={"base": "a", "head": "b", "link": "l", "commits": [["a", "s"]]}),
    "a window that is text": lambda doc: _info(doc, window="a..b"),
    "a window whose head is a number": lambda doc: _info(doc, window={"base": "a", "head": 7}),
    "a window of a commit of three parts": lambda doc: _info(doc, window={"commits": [["a", "s", "x"]]}),
    # the energy: filled columns only where there are window energies
    "an energy at both edges": lambda doc: _info(doc, energy=_energy([1e-300, 1e6], 1e6)),
    "an energy over a million joules": lambda doc: _info(doc, energy=_energy([1.0, 1_000_000.5], 1.0)),
    "an energy per launch over a million joules": lambda doc: _info(doc, energy=_energy([1.0], 1e6 + 1)),
    "an energy per launch missing": lambda doc: _info(doc, energy=_energy([1.0])),
    "an energy per launch that is true": lambda doc: _info(doc, energy=_energy([1.0], True)),
    "a window energy that is text": lambda doc: _info(doc, energy=_energy(["1.0"], 1.0)),
    "no window energies, and a bad energy per launch": lambda doc: _info(doc, energy=_energy([], -5)),
    "window energies that are text": lambda doc: _info(doc, energy=_energy("1.0", 1.0)),
    "window energies that are an object": lambda doc: _info(doc, energy=_energy({"a": 1.0}, 1.0)),
    "an energy that is text": lambda doc: _info(doc, energy="1 J"),
    "a record that is text": lambda doc: _case(doc).update(extra_info="fast"),
    "no record": lambda doc: _case(doc).pop("extra_info"),
    # JSON values, anywhere in the document
    "an integer of 2^63 - 1 and one of -2^63": lambda doc: _info(doc, big=2**63 - 1, small=-(2**63)),
    "an integer of 2^63": lambda doc: _info(doc, big=2**63),
    "an integer of -2^63 - 1": lambda doc: _info(doc, small=-(2**63) - 1),
    "an integer of 2^100 in the params": lambda doc: _case(doc)["params"].update(number=2**100),
    "infinity": lambda doc: _info(doc, scale=float("inf")),
    "minus infinity in machine_info": lambda doc: doc["machine_info"].update(hz=float("-inf")),
    "a lone surrogate in a record": lambda doc: _info(doc, note="a\ud800b"),
    "a lone surrogate in a key": lambda doc: _info(doc, **{"a\udc00": 1}),
    "a NUL in a key": lambda doc: _info(doc, **{"a\x00b": 1}),
    "a NUL in commit_info": lambda doc: doc["commit_info"].update(project="a\x00"),
    "a key that is a number in a record": lambda doc: _case(doc)["extra_info"].update({5: 1}),
    "a key that is null in a case": lambda doc: _case(doc)["params"].update({None: 1}),
    "bytes in a record": lambda doc: _info(doc, blob=b"x"),
    "a tuple in a record (a list to JSON)": lambda doc: _info(doc, pair=(1, 2)),
    "a tuple holding infinity": lambda doc: _info(doc, pair=(1, float("inf"))),
    "two problems in one list: the first is named": lambda doc: _info(doc, values=[1, float("nan"), 2**64]),
    "two problems in one object: the first is named": lambda doc: _info(doc, first=[float("inf")], second=2**64),
    "a problem in the first case and the second": lambda doc: (doc["benchmarks"][0]["extra_info"].update(a=2**64),
                                                                _info(doc, a=float("nan"))),
    "a key of a dash and one of words": lambda doc: _info(doc, **{"a-b": {"c_d1": float("nan")}}),
    "a key of a dot": lambda doc: _info(doc, **{"a.b": float("nan")}),
    "a run-level key that is not text in a field": lambda doc: doc["commit_info"].update({(1, 2): "x"}),
    "a run-level field that is infinite": lambda doc: doc.update(elapsed=float("inf")),
    "a run-level key with a NUL": lambda doc: doc.update({"a\x00": 1}),
    "a run-level key of a dash holding infinity": lambda doc: doc.update({"a-b": float("inf")}),
    # how deep: the record at level 4, a case's other fields too, the run's own fields at level 2
    "a record nesting 32 levels": lambda doc: _info(doc, deep=_nested(28)),
    "a record nesting 33 levels": lambda doc: _info(doc, deep=_nested(29)),
    "a list nesting 33 levels": lambda doc: _info(doc, deep=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]),
    "a case's params nesting 32 levels": lambda doc: _case(doc)["params"].update(deep=_nested(28)),
    "a case's params nesting 33 levels": lambda doc: _case(doc)["params"].update(deep=_nested(29)),
    "machine_info nesting 32 levels": lambda doc: doc["machine_info"].update(deep=_nested(30)),
    "machine_info nesting 33 levels": lambda doc: doc["machine_info"].update(deep=_nested(31)),
    # the cases
    "no benchmarks": lambda doc: doc.pop("benchmarks"),
    "benchmarks that are empty": lambda doc: doc.update(benchmarks=[]),
    "benchmarks that are an object": lambda doc: doc.update(benchmarks={"a": _case(doc)}),
    "a benchmark that is text": lambda doc: doc["benchmarks"].append("case"),
    "a benchmark without a name": lambda doc: _case(doc).pop("fullname"),
    "a benchmark of an empty name": lambda doc: _case(doc).update(fullname=""),
    "a benchmark whose name is a number": lambda doc: _case(doc).update(fullname=7),
    "two benchmarks of one name": lambda doc: _case(doc).update(fullname=doc["benchmarks"][0]["fullname"]),
    "a case name of 2000 bytes": lambda doc: _case(doc).update(fullname="n" * 2000),
    "a case name of 2001 bytes": lambda doc: _case(doc).update(fullname="n" * 2001),
    "a case name of 1000 characters and 2001 bytes": lambda doc: _case(doc).update(fullname="é" * 1000 + "n"),
    "a case name with a NUL, over 80 characters": lambda doc: _case(doc).update(fullname="x" * 90 + "\x00"),
    "no benchmarks, and correctness checks": lambda doc: doc.update(benchmarks=[], kernelwatch_accuracy=[
        {"case": "suites/a.py::t", "max_error": 0.0}]),
    "a correctness check of a negative error": lambda doc: doc.update(kernelwatch_accuracy=[
        {"case": "suites/a.py::t", "max_error": -1.0}]),
    # the run's own fields
    "machine_info that is a list": lambda doc: doc.update(machine_info=[1]),
    "commit_info that is text": lambda doc: doc.update(commit_info="abc"),
    "no machine_info and no commit_info": lambda doc: (doc.pop("machine_info"), doc.pop("commit_info")),
    "a GPU that is text": lambda doc: doc["machine_info"].update(gpu="H200"),
    "no GPU": lambda doc: doc["machine_info"].pop("gpu"),
    "a node that is a number": lambda doc: doc["machine_info"].update(node=1),
    **{f"a GPU's {key} that is a number": _setting(_gpu, key, 1)
       for key in ("name", "uuid", "host", "driver", "cuda_runtime", "cupy")},
    "a GPU's UUID of 200 bytes": lambda doc: _gpu(doc, uuid="G" * 200),
    "a GPU's UUID of 201 bytes": lambda doc: _gpu(doc, uuid="G" * 201),
    "a GPU's name of 300 bytes (no width)": lambda doc: _gpu(doc, name="N" * 300),
    "a commit that is a number": lambda doc: doc["commit_info"].update(id=7),
    "a branch that is a number": lambda doc: doc["commit_info"].update(branch=7),
    "a commit and a branch that are numbers": lambda doc: doc["commit_info"].update(id=7, branch=8),
    "a commit of 64 characters": lambda doc: doc["commit_info"].update(id="c" * 64),
    "a commit of 65 characters": lambda doc: doc["commit_info"].update(id="c" * 65),
    "a dirty flag of null": lambda doc: doc["commit_info"].update(dirty=None),
    "a dirty flag of true": lambda doc: doc["commit_info"].update(dirty=True),
    "a dirty flag of 0": lambda doc: doc["commit_info"].update(dirty=0),
    "a newer schema": lambda doc: doc["machine_info"].update(kernel_suite_schema=99),
    "a schema of text": lambda doc: doc["machine_info"].update(kernel_suite_schema="2"),
    "no datetime": lambda doc: doc.pop("datetime"),
    "a datetime of a number": lambda doc: doc.update(datetime=20261201),
    "a datetime of no time": lambda doc: doc.update(datetime="yesterday at noon, more or less, " * 4),
    "a datetime without a zone": lambda doc: doc.update(datetime="2026-12-01T07:00:00"),
    "a datetime of year 9999 west of UTC": lambda doc: doc.update(datetime="9999-12-31T23:00:00-05:00"),
    # a version-1 document, checked as written and again as migrated
    "a version-1 record of a NaN median": lambda doc: (_version_1(doc), _info(doc, median_s=float("nan"))),
    "a version-1 record of a median of zero (dropped by its migration)": lambda doc: (_version_1(doc),
                                                                                      _info(doc, median_s=0.0)),
    "a version-1 record that is a list": lambda doc: (_version_1(doc), _case(doc).update(extra_info=[1])),
    "a version-1 record of a sample of zero": lambda doc: (_version_1(doc), _data(doc, 0, 0.0)),
}


def _verdict(spoil, **options) -> str:
    doc = make_document(7, cases=2)
    spoil(doc)
    try:
        validation.checked_run(doc, **options)
    except validation.DocumentError as exc:
        return str(exc)
    return "accepted"


def test_each_document_at_or_beyond_an_edge_is_refused_word_for_word_or_accepted(snapshot):
    assert {name: _verdict(spoil) for name, spoil in EDGES.items()} == snapshot


OPTIONS = {
    "a profile of 32 characters": {"profile": "p" * 32},
    "a profile of 33 characters": {"profile": "p" * 33},
    "a profile of 50 characters": {"profile": "abcdefghij" * 5},
    "a profile that is a number": {"profile": 5},
    "a profile with a NUL": {"profile": "a\x00"},
    "a label that is a list": {"label": ["a"]},
    "a label with a lone surrogate": {"label": "a\ud800"},
    "a label of 300 characters (no width)": {"label": "l" * 300},
    "a source that is bytes": {"source": b"runs/1.json"},
    "a source with a NUL": {"source": "runs/\x00.json"},
    "a bad label and a bad source: the label is named": {"label": 1, "source": 2},
    "a bad profile and a bad label: the profile is named": {"profile": "a\x00", "label": 1},
    "a long profile of a NUL: its NUL is named": {"profile": "a\x00" * 20},
    "none of them": {"profile": None, "label": None, "source": None},
}


def test_each_profile_label_and_source_is_refused_word_for_word_or_accepted(snapshot):
    assert {name: _verdict(lambda doc: None, **options) for name, options in OPTIONS.items()} == snapshot


def test_what_is_not_a_run_at_all_is_named_by_its_type():
    for value, kind in (([], "list"), (None, "NoneType"), ("{}", "str")):
        for check in (validation.checked_run, validation.current):
            with pytest.raises(validation.DocumentError) as raised:
                check(value)
            assert str(raised.value) == f"a run is a JSON object, not a {kind}"


def test_an_accepted_document_is_returned_migrated_and_otherwise_as_it_came():
    doc = make_document(7, cases=2)
    assert validation.checked_run(doc) == make_document(7, cases=2)
    old = make_document(7, cases=2)
    _version_1(old)
    old["benchmarks"][0]["extra_info"].update(timer="cupti", verdict="regressed")
    checked = validation.checked_run(old)
    assert checked["machine_info"]["kernel_suite_schema"] == 2
    assert checked["benchmarks"][0]["extra_info"]["timer"] == "cupti concurrent kernel"
    assert checked["benchmarks"][0]["extra_info"]["verdict"] == "slower"
    assert "median_s" not in checked["benchmarks"][0]["extra_info"]  # a retired key: dropped as it is stored


@pytest.mark.parametrize("text, moment", [
    ("2026-12-01T07:00:00+00:00", (2026, 12, 1, 7)),
    ("2026-12-01T07:00:00+02:00", (2026, 12, 1, 5)),
    ("2026-12-01T01:00:00-03:30", (2026, 12, 1, 4, 30)),
    ("2026-12-01T07:00:00", (2026, 12, 1, 7)),  # a time without a zone is taken as UTC
    ("0001-01-01T00:00:00+00:00", (1, 1, 1)),
    ("9999-12-31T23:59:59+00:00", (9999, 12, 31, 23, 59, 59)),
])
def test_a_runs_time_is_stored_in_utc_without_a_zone(text, moment):
    from datetime import datetime

    started = validation.started_at({"datetime": text})
    assert started == datetime(*moment) and started.tzinfo is None


@pytest.mark.parametrize("text", ["", "now", "2026-13-01T00:00:00", "9999-12-31T23:00:00-05:00",
                                  "0001-01-01T00:30:00+01:00"])
def test_a_time_that_is_none_or_moved_out_of_range_by_its_zone_is_refused(text):
    with pytest.raises(validation.DocumentError) as raised:
        validation.started_at({"datetime": text})
    assert str(raised.value) == f'the run has no valid "datetime" ({text!r})'


def test_the_depth_of_a_value_counts_from_where_it_was_found():
    # the value itself is at `depth`; a container deeper than MAX_DEPTH is refused, a scalar there is not
    assert validation.MAX_DEPTH == 32
    assert validation.json_problem(_nested(32), "x") is None
    assert validation.json_problem(_nested(33), "x") == "x" + ".a" * 32 + " nests deeper than 32 levels"
    assert validation.json_problem(_nested(31), "x", depth=2) is None
    assert validation.json_problem(_nested(32), "x", depth=2) == "x" + ".a" * 31 + " nests deeper than 32 levels"
    assert validation.json_problem([], "x", depth=33) == "x nests deeper than 32 levels"
    assert validation.json_problem((), "x", depth=33) == "x nests deeper than 32 levels"
    assert validation.json_problem({}, "x", depth=32) is None
    assert validation.json_problem(7, "x", depth=1000) is None


def test_a_value_is_walked_in_document_order_and_its_first_problem_named():
    value = {"a": [1, {"b": float("nan")}, float("inf")], "c": 2**64}
    assert validation.json_problem(value, "v") == "v.a[1].b is nan, not a finite number"
    assert validation.json_problem([[], [{}], (2**64, float("nan"))], "v") == \
        "v[2][0] is an integer of 65 bits, beyond the 64 bits a store holds"
    assert validation.json_problem({"ok": [None, True, 1.5, "t", -(2**63)]}, "v") is None


@pytest.mark.parametrize("length, named", [
    (1, "p"),
    (159, "p" * 159),
    (160, "p" * 160),
    (161, "p" * 80 + "..." + "p" * 60),
    (1000, "p" * 80 + "..." + "p" * 60),
])
def test_a_field_path_is_cut_only_beyond_160_characters(length, named):
    assert validation._path("p" * length) == named
    assert validation.json_problem(float("nan"), "p" * length) == f"{named} is nan, not a finite number"


def test_a_long_path_keeps_its_start_and_its_end():
    path = "".join(chr(ord("a") + n % 26) for n in range(200))
    assert validation._path(path) == path[:80] + "..." + path[140:]


@pytest.mark.parametrize("text, problem", [
    ("plain", None),
    ("", None),
    ("é \u2603 \U0001f600", None),
    ("a\x00", "holds a NUL character, which PostgreSQL cannot store"),
    ("\ud800", "is text that is no UTF-8 (a lone surrogate)"),
    ("\x00\udfff", "is text that is no UTF-8 (a lone surrogate)"),  # both: the surrogate is named
])
def test_text_either_backend_cannot_store_is_named_for_why(text, problem):
    assert validation.text_problem(text) == problem


@pytest.mark.parametrize("key", [7, None, 1.5])
def test_a_run_level_key_that_is_not_text_is_refused_in_one_sentence(key):
    """A document built in Python (JSON from a file has text keys only); it once reached str.replace unchecked."""
    doc = make_document(7, cases=2)
    doc[key] = "x"
    with pytest.raises(validation.DocumentError, match=rf"^the run has a key {re.escape(repr(key))} that is not text$"):
        validation.checked_run(doc)

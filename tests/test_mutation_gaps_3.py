"""Claims that surviving mutants showed no test pinned (issue 22, third cosmic-ray pass).

Modules: harness/verdict/record.py, harness/verdict/paired.py, harness/verdict/labels.py,
harness/units.py, harness/metrics.py, harness/compare.py, harness/report/markdown.py (and further
ones where the pass reached them). Each test fails when the part of the product it names is
changed by one step.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import harness.ab.against_ref as ab_compare
from harness import compare
from harness.metrics import product_scale, relative_error, same_nonfinite_pattern, scaled_error
from harness.report.markdown import markdown_report
from harness.storage import runs as stored
from harness.storage.runs import SAVE_LOCK, BaselineError, load_run, resolve_compare, save_run, write_text_atomically
from harness.storage.schema import SCHEMA_KEY, SCHEMA_VERSION, SchemaError, migrated, schema_version, short_timer_name
from harness.timing.ceilings import COPY_BYTES, datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s
from harness.timing.wall import measure_wall
from harness.units import change, format_duration, p_text
from harness.verdict.labels import HISTORY_REFERENCE, REMOVED, SAME, Verdict
from harness.verdict.paired import bootstrap_ratio_interval, judge_paired
from harness.verdict.record import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL, CaseRecord
from tests.test_ab_compare import NAIVE, BaseCompile, BasePackage, FakeCase, FakeRefTree, ReplayTimer, recorded_pairs

RUNS = Path(__file__).resolve().parents[1] / "baselines" / "NVIDIA_H200"

# ---- harness/verdict/record.py ------------------------------------------------------------------


def test_a_record_is_not_retaken_for_throttling_unless_it_says_so():
    """retaken_for_throttle defaults to False, also for a file written before the key existed."""
    assert CaseRecord(case="s.py::t", median_s=1e-3).retaken_for_throttle is False
    bench = {"fullname": "s.py::t", "stats": {"data": [1e-3]}, "extra_info": {}}
    assert CaseRecord.from_benchmark(bench).retaken_for_throttle is False


def test_the_unit_is_gb_per_second_for_bytes_and_none_without_work():
    """`unit` (and the rate_unit written beside the fields) follows the kind of work."""
    assert CaseRecord(case="c", median_s=1e-3, bytes=4e9).unit == "GB/s"
    assert CaseRecord(case="c", median_s=1e-3, flops=4e9).unit == "TFLOP/s"
    assert CaseRecord(case="c", median_s=1e-3).unit is None
    assert CaseRecord(case="c", median_s=1e-3, bytes=4e9).to_extra_info()["rate_unit"] == "GB/s"


def test_a_case_id_without_a_test_path_labels_as_itself():
    """label() falls back to the last part of the node id, which is the whole id when it has no '::'."""
    assert CaseRecord(case="vector_add[n=1024]", median_s=1e-3).label() == "vector_add[n=1024]"
    assert CaseRecord(case="suites/a.py::k[x]", median_s=1e-3).label() == "k[x]"



def test_the_rate_is_work_per_second_in_units_of_ten_to_the_twelve_and_nine():
    """TFLOP/s is 1e12 FLOP/s and GB/s 1e9 B/s exactly (round numbers give round rates, no 1e-12 off)."""
    assert CaseRecord(case="c", median_s=0.5, flops=3e12).rate == 6.0
    assert CaseRecord(case="c", median_s=0.5, bytes=3e9).rate == 6.0
    assert CaseRecord(case="c", median_s=0.5, flops=3e12, ceiling="cuBLAS", ceiling_rate=12e12).fraction_of_ceiling == 0.5

# ---- harness/verdict/paired.py ------------------------------------------------------------------
CASE = "test_matmul_time[warptile-1024x1024x1024]"


def distinct_run(pairs, ratio=1.0, seed=0):
    """Base and head samples with no two values alike (so every median is one sample's own)."""
    rng = np.random.default_rng(seed)
    base = 1e-3 * (1 + 0.01 * rng.standard_normal(pairs))
    head = ratio * 1e-3 * (1 + 0.01 * rng.standard_normal(pairs))
    assert np.unique(base).size == pairs and np.unique(head).size == pairs
    return base, head


@pytest.mark.parametrize("pairs", [5, 31])
def test_the_bootstrap_median_of_an_odd_number_of_pairs_is_the_middle_sample(pairs):
    """The bootstrap's median of an odd count is the middle value, not a mean of it and its neighbour."""
    base, head = distinct_run(pairs, ratio=1.02)
    picks = np.random.default_rng(3).integers(0, pairs, size=(400, pairs))
    ratios = np.median(head[picks], axis=1) / np.median(base[picks], axis=1)
    assert bootstrap_ratio_interval(base, head, 0.9, 400, 3) == tuple(np.quantile(ratios, [0.05, 0.95]))


def test_one_hundred_resamples_are_enough():
    """The documented least resample count, 100, is accepted."""
    verdict = judge_paired(CASE, *distinct_run(30), detectable=0.02, resamples=100)
    assert verdict.ci_low is not None


def test_identical_sides_are_within_the_detectable_change_and_the_interval_is_one():
    """Equal samples give ratio 1 and an interval of exactly 1 to 1: the reason says 'within', not
    that the interval excludes 1."""
    base = 1e-3 * (1 + 0.01 * np.arange(11))
    verdict = judge_paired(CASE, base, base.copy(), detectable=0.02)
    assert (verdict.ratio, verdict.ci_low, verdict.ci_high) == (1.0, 1.0, 1.0)
    assert verdict.label == "same"
    assert verdict.reason.endswith("): within the 2% detectable change")


def test_the_reason_names_the_confidence_in_percent():
    verdict = judge_paired(CASE, *distinct_run(30), detectable=0.02, confidence=0.95)
    assert "; 95% interval " in verdict.reason


def test_the_bootstrap_ranks_more_pairs_than_sixteen_bits_can_count():
    """Over 32767 pairs the ranks need 32 bits: the medians are still numpy's."""
    pairs = 40_000
    base, head = distinct_run(pairs, ratio=1.01, seed=1)
    picks = np.random.default_rng(5).integers(0, pairs, size=(100, pairs))
    ratios = np.median(head[picks], axis=1) / np.median(base[picks], axis=1)
    # an even count's median is a mean of two: numpy's and the bootstrap's may differ in the last bit
    assert bootstrap_ratio_interval(base, head, 0.9, 100, 5) == pytest.approx(np.quantile(ratios, [0.05, 0.95]), rel=1e-12)


def exactly_scaled(factor, pairs=31):
    """Base times whose median is exactly 1.0 s, head times exactly `factor` times as long."""
    base = 1 + 0.001 * np.arange(-(pairs // 2), pairs // 2 + 1)
    return base, base * factor


def test_a_significant_speedup_inside_the_detectable_change_is_same():
    """A 1% speed-up whose interval lies below 1 is SAME under a 2% detectable change."""
    verdict = judge_paired(CASE, *exactly_scaled(0.99), detectable=0.02)
    assert verdict.ci_high < 1
    assert verdict.label == "same"
    assert verdict.reason.endswith("the interval excludes 1, but the change is within the 2% detectable change")


def test_a_large_speedup_whose_interval_includes_one_says_so():
    """Head 0.5 s in most pairs and 1 s in the rest: beyond the detectable change, but not significant."""
    base = np.ones(31)
    head = np.array([1.0] * 14 + [0.5] * 17)
    verdict = judge_paired(CASE, base, head, detectable=0.02)
    assert (verdict.ratio, verdict.ci_high, verdict.label) == (0.5, 1.0, "same")
    assert verdict.reason.endswith("beyond the 2% detectable change, but the interval includes 1")


def test_a_small_change_whose_interval_straddles_one_is_within_the_detectable_change():
    """ratio within the detectable change and the interval across 1: the reason is plain 'within'."""
    verdict = judge_paired(CASE, *distinct_run(30, ratio=1.0, seed=2), detectable=0.02)
    assert verdict.ci_low < 1 < verdict.ci_high
    assert verdict.reason.endswith("): within the 2% detectable change")


def test_the_default_is_four_thousand_resamples():
    """The docstring's default: 4000 resamples (20 beyond each end of a 99% interval)."""
    base, head = distinct_run(30, ratio=1.01, seed=4)
    assert judge_paired(CASE, base, head, detectable=0.02) == judge_paired(CASE, base, head, detectable=0.02,
                                                                           resamples=4000)
    assert judge_paired(CASE, base, head, detectable=0.02) != judge_paired(CASE, base, head, detectable=0.02,
                                                                           resamples=3999)


def test_a_speedup_beyond_the_detectable_change_whose_interval_reaches_above_one_is_same():
    """A 5% speed-up in 10% noise over 8 pairs: beyond the change, but the interval includes 1."""
    rng = np.random.default_rng(11)
    base = 1e-3 * np.exp(0.1 * rng.standard_normal(8))
    head = 0.95e-3 * np.exp(0.1 * rng.standard_normal(8))
    verdict = judge_paired(CASE, base, head, detectable=0.02)
    assert verdict.ratio < 0.98 and verdict.ci_low < 1 < verdict.ci_high
    assert verdict.label == "same"
    assert verdict.reason.endswith("beyond the 2% detectable change, but the interval includes 1")


def test_a_speedup_exactly_at_the_detectable_change_is_within_it():
    """ratio == 1 - detectable (exact in binary) counts as within the detectable change."""
    detectable = 2.0**-5
    verdict = judge_paired(CASE, *exactly_scaled(1 - detectable), detectable=detectable)
    assert verdict.ratio == 1 - detectable and verdict.ci_high < 1
    assert verdict.reason.endswith("the interval excludes 1, but the change is within the 3.125% detectable change")



def test_a_slowdown_exactly_at_the_detectable_change_is_within_it():
    """ratio == 1 + detectable (exact in binary) counts as within the detectable change."""
    detectable = 2.0**-5
    verdict = judge_paired(CASE, *exactly_scaled(1 + detectable), detectable=detectable)
    assert verdict.ratio == 1 + detectable and verdict.ci_low > 1
    assert verdict.reason.endswith("the interval excludes 1, but the change is within the 3.125% detectable change")


# ---- harness/units.py ---------------------------------------------------------------------------


def test_zero_and_one_second_are_written_as_such():
    assert format_duration(0.0) == "0 s"
    assert format_duration(1.0) == "1.00 s"


def test_a_duration_of_a_thousand_seconds_or_more_has_no_decimals():
    """Past 999 s the seconds are written whole ("1234 s"), never with a negative precision."""
    assert format_duration(1234.0) == "1234 s"


def test_a_change_under_one_percent_still_says_slower_or_faster():
    """The direction word follows the sign of the change, whatever its size; no change reads slower."""
    assert change(1.005) == "0.5% slower"
    assert change(0.995) == "0.5% faster"
    assert change(1.0) == "0.0% slower"


def test_p_values_from_one_down_to_ten_to_the_minus_twelve_are_written_out():
    """Two significant figures from 1 down to 1e-12 inclusive; below, "< 1e-12"."""
    assert p_text(0.5) == "0.5"
    assert p_text(0.0123) == "0.012"
    assert p_text(1e-12) == "1e-12"
    assert p_text(1e-13) == "< 1e-12"


def test_a_negative_duration_keeps_its_sign_and_its_unit():
    """The unit is chosen by the magnitude (format_duration takes abs), so -2.5 ms is not "0 s"."""
    assert format_duration(-2.5e-3) == "-2.50 ms"
    assert format_duration(-1.0) == "-1.00 s"


def test_nine_hundred_ninety_nine_microseconds_stay_in_microseconds():
    """A unit holds values below 1000 of it: 999 µs is not written as 0.999 ms."""
    assert format_duration(999e-6) == "999 µs"



# ---- harness/metrics.py -------------------------------------------------------------------------


def test_an_empty_result_has_no_error():
    empty = np.zeros((0, 3), np.float32)
    for stats in (relative_error(empty, empty), scaled_error(empty, empty, empty)):
        assert (stats.max_error, stats.avg_error, stats.worst_index) == (0.0, 0.0, ())


def test_product_scale_ignores_nonfinite_entries_of_either_operand():
    """ignore_nonfinite counts NaN and infinite entries of B as 0 too, not only those of A."""
    a = np.array([[1.0, 2.0]], np.float32)
    b = np.array([[np.inf], [3.0]], np.float32)
    assert product_scale(a, b)[0, 0] == np.inf
    assert product_scale(a, b, ignore_nonfinite=True)[0, 0] == 6.0
    assert product_scale(a, np.array([[np.nan], [-3.0]], np.float32), ignore_nonfinite=True)[0, 0] == 6.0


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_a_nonfinite_result_where_the_reference_is_finite_is_a_mismatch(bad):
    message = same_nonfinite_pattern(np.array([1.0, bad], np.float32), np.array([1.0, 2.0]))
    assert message is not None and "1 element(s) differ" in message and "first at (1,)" in message


def test_a_finite_result_where_the_reference_is_infinite_is_a_mismatch():
    assert same_nonfinite_pattern(np.array([1.0, 3.0], np.float32), np.array([1.0, np.inf])) is not None


def test_plus_infinity_for_minus_infinity_is_a_mismatch_either_way():
    assert same_nonfinite_pattern(np.array([np.inf], np.float32), np.array([-np.inf])) is not None
    assert same_nonfinite_pattern(np.array([-np.inf], np.float32), np.array([np.inf])) is not None


def test_error_stats_are_frozen():
    stats = relative_error(np.ones(2, np.float32), np.ones(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.max_error = 1.0


# ---- harness/compare.py -------------------------------------------------------------------------


def test_the_help_describes_the_command_by_the_first_line_of_its_docstring(capsys):
    with pytest.raises(SystemExit):
        compare.main(["--help"])
    assert "Verdicts and the markdown report from two saved runs, on any machine" in capsys.readouterr().out


def test_two_different_files_are_not_called_a_comparison_with_itself(capsys):
    older, newer = str(RUNS / "0004_h200-46c5004.json"), str(RUNS / "0005_h200-5fcc19b.json")
    for old, new in ((older, newer), (newer, older)):
        compare.main([old, new])
        assert "compared with itself" not in capsys.readouterr().out


def test_the_report_names_the_new_runs_gpu_and_a_run_of_another_gpu_model_is_refused(tmp_path, capsys):
    """The GPU comes from NEW's machine_info: it titles the report and OLD must have been timed on one like it."""
    path = RUNS / "0005_h200-5fcc19b.json"
    gpu = json.loads(path.read_text())["machine_info"]["gpu"]
    _, text = compare.compare_runs(path, path)
    assert text.startswith(f"# Kernel suite on {gpu['name']} ({gpu['uuid']}, host {gpu['host']}) vs ")
    doc = json.loads(path.read_text())
    doc["machine_info"]["gpu"]["name"] = "NVIDIA A100-SXM4-80GB"
    other = tmp_path / "0001_a100.json"
    other.write_text(json.dumps(doc))
    assert compare.main([str(other), str(path)]) == compare.EXIT_UNUSABLE
    assert "comparing across GPU models is refused" in capsys.readouterr().err


def test_a_report_that_cannot_be_written_is_exit_status_two_with_the_reason(tmp_path, capsys):
    """--report naming a folder: the OSError is reported and the exit status is 2, no traceback."""
    status = compare.main([str(RUNS / "0005_h200-5fcc19b.json"), str(RUNS / "0005_h200-5fcc19b.json"),
                           "--report", str(tmp_path)])
    assert status == compare.EXIT_UNUSABLE
    assert "could not write the report" in capsys.readouterr().err


# ---- harness/storage/runs.py --------------------------------------------------------------------


def test_a_saved_run_is_json_indented_by_two_with_a_final_newline(tmp_path):
    doc = a_run([1.0])
    path = save_run(tmp_path / "G", "label", doc)
    assert path.read_text() == json.dumps(doc, indent=2) + "\n"


def test_the_save_lock_is_created_readable_and_writable_by_its_owner_and_readable_by_others(tmp_path):
    """The lock file is made with mode 0o644 (less the umask), like the runs beside it."""
    umask = os.umask(0o022)
    os.umask(umask)
    save_run(tmp_path / "G", "label", {"benchmarks": []})
    assert (tmp_path / "G" / SAVE_LOCK).stat().st_mode & 0o777 == 0o644 & ~umask


def a_run(data):
    return {"machine_info": {"gpu": {"name": "G"}}, "benchmarks": [{"fullname": "a", "stats": {"data": data}}]}


def stored_run(tmp_path, doc) -> Path:
    """`doc` written as the stored run tmp_path/0001_run.json."""
    path = tmp_path / "0001_run.json"
    path.write_text(json.dumps(doc))
    return path


def test_an_error_listing_the_stored_runs_names_the_newest_twelve_and_counts_the_older(tmp_path):
    for number in range(1, 15):
        (tmp_path / f"{number:04d}_run.json").write_text("{}")
    with pytest.raises(BaselineError) as error:
        resolve_compare(tmp_path, "9999")
    message = str(error.value)
    assert "0003_run.json" in message and "0014_run.json" in message
    assert "0002_run.json" not in message and "and 2 older" in message


def test_two_older_runs_sharing_a_number_do_not_hide_the_newest(tmp_path):
    for name in ("0001_a.json", "0001_b.json", "0002_c.json"):
        (tmp_path / name).write_text("{}")
    assert resolve_compare(tmp_path, True) == tmp_path / "0002_c.json"


def test_a_run_file_that_cannot_be_read_is_a_baseline_error_naming_it(tmp_path):
    """Any OSError reading the file (here: a path under a file, not a folder) is a BaselineError."""
    (tmp_path / "not-a-folder").write_text("x")
    path = tmp_path / "not-a-folder" / "0001_run.json"
    with pytest.raises(BaselineError, match="cannot be read: Not a directory$") as error:
        load_run(path)
    assert "[Errno" not in str(error.value)  # the OS's words, not the exception's text


@pytest.mark.parametrize("name", ["", 5, None])
def test_a_run_whose_gpu_name_is_empty_or_not_text_does_not_say_its_gpu(tmp_path, name):
    doc = a_run([1.0])
    doc["machine_info"]["gpu"]["name"] = name
    path = stored_run(tmp_path, doc)
    with pytest.raises(BaselineError, match="does not say which GPU it was recorded on"):
        load_run(path, expected_gpu="NVIDIA H200")


def test_a_stored_sample_that_is_a_boolean_is_refused(tmp_path):
    """true is not a time, though it would pass as 1.0 (JSON booleans are Python bools)."""
    path = stored_run(tmp_path, a_run([1e-3, True, 2e-3]))
    with pytest.raises(BaselineError, match="not finite, positive times"):
        load_run(path)


def test_a_save_never_replaces_a_file_that_took_its_number_behind_the_lock(tmp_path, monkeypatch):
    """A run file that appears under the chosen name (a copy, a git pull) is kept; the save takes the next number."""
    folder = tmp_path / "G"
    folder.mkdir()
    (folder / "0001_label.json").write_text("theirs")
    monkeypatch.setattr(stored, "stored_runs", lambda folder: [])  # the listing missed it
    tries = []
    write = stored.write_text_atomically

    def write_at_most_three_times(*args, **kwargs):
        tries.append(args[0])
        assert len(tries) <= 3, f"save_run keeps trying {tries[-1].name}"
        return write(*args, **kwargs)

    monkeypatch.setattr(stored, "write_text_atomically", write_at_most_three_times)
    path = save_run(folder, "label", a_run([1.0]))
    assert path.name == "0002_label.json"
    assert (folder / "0001_label.json").read_text() == "theirs"


@pytest.mark.parametrize("recorded", ["NVIDIA A100-SXM4-80GB", "NVIDIA L40S"])
def test_a_run_of_another_gpu_model_is_refused_whichever_name_sorts_first(tmp_path, recorded):
    doc = a_run([1.0])
    doc["machine_info"]["gpu"]["name"] = recorded
    path = stored_run(tmp_path, doc)
    with pytest.raises(BaselineError, match="comparing across GPU models is refused"):
        load_run(path, expected_gpu="NVIDIA H200")


def test_two_runs_sharing_a_newest_number_above_256_are_an_error(tmp_path):
    """Run numbers are compared by value: 10000 and 10000 are the same number (not the same int object)."""
    for name in ("9999_a.json", "10000_b.json", "10000_c.json"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(BaselineError, match="share the newest number"):
        resolve_compare(tmp_path, True)


def test_an_atomic_write_creates_the_missing_folders_above_the_file(tmp_path):
    path = tmp_path / "reports" / "2026" / "report.md"
    write_text_atomically(path, "text", replace=True)
    assert path.read_text() == "text"

# ---- harness/report/markdown.py -----------------------------------------------------------------


def one_verdict(case="suites/a.py::t[x]", reference="0001_x.json", reference_runs=None):
    return Verdict(case, SAME, 1e-3, 1e-3, 1.0, 0.02, "within", reference=reference, reference_runs=reference_runs)


@pytest.mark.parametrize("count, words", [(0, "(0 cases)"), (1, "(1 case)"), (2, "(2 cases)")])
def test_the_summary_counts_cases_in_the_singular_for_one_only(count, words):
    verdicts = [one_verdict(case=f"suites/a.py::t[{i}]") for i in range(count)]
    summary = markdown_report("t", verdicts, {}).splitlines()[2]
    assert summary.startswith("Summary: ") and summary.endswith(words)


def test_a_reference_pooling_two_runs_is_explained():
    text = markdown_report("t", [one_verdict(reference_runs=2)], {})
    assert "pools the newest stored runs of the same code" in text and "1.00 ms (2 runs)" in text


def test_a_history_reference_without_a_run_count_is_counted_as_one_run():
    text = markdown_report("t", [one_verdict(reference=HISTORY_REFERENCE + "GPU-1")], {})
    assert "(history, 1 runs)" in text and "0 runs" not in text


def test_each_note_is_a_paragraph_after_the_summary():
    lines = markdown_report("t", [one_verdict()], {}, ["first note", "second note"]).splitlines()
    assert lines[2].startswith("Summary: ")
    assert lines[3:8] == ["", "first note", "", "second note", ""]


# ---- harness/storage/schema.py ------------------------------------------------------------------


def version_doc(version=None, **info):
    machine = {"gpu": {"name": "G"}} if version is None else {"gpu": {"name": "G"}, SCHEMA_KEY: version}
    return {"machine_info": machine, "benchmarks": [{"fullname": "a", "stats": {"data": [1.0]}, "extra_info": info}]}


def test_a_current_document_comes_back_as_it_is():
    doc = version_doc(SCHEMA_VERSION, timer="CUDA events, held stream", tflops=1.0)
    assert SCHEMA_VERSION == 2
    assert migrated(doc) is doc


def test_a_document_of_a_newer_schema_is_refused_naming_both_versions():
    with pytest.raises(SchemaError, match="schema version 3 by a newer version.*up to version 2"):
        migrated(version_doc(3))


@pytest.mark.parametrize("version", [0, -1, True, "2", 1.0])
def test_a_schema_version_that_is_not_a_positive_integer_is_refused(version):
    with pytest.raises(SchemaError, match="not a schema version"):
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


def folder_fd(fd):
    return os.path.isdir(f"/proc/self/fd/{fd}")


@pytest.mark.parametrize("refused", ["open", "fsync"])
def test_a_folder_that_cannot_be_opened_or_synced_does_not_fail_the_save(tmp_path, monkeypatch, refused):
    """Syncing the folder after the link is best effort: an OSError opening or syncing it leaves the saved run."""
    real_open, real_fsync = os.open, os.fsync

    def refusing_open(path, flags, *args, **kwargs):
        if refused == "open" and os.path.isdir(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    def refusing_fsync(fd):
        if refused == "fsync" and folder_fd(fd):
            raise OSError(22, "Invalid argument")
        return real_fsync(fd)

    folder = tmp_path / "G"
    folder.mkdir()
    (folder / SAVE_LOCK).touch()
    monkeypatch.setattr(os, "open", refusing_open)
    monkeypatch.setattr(os, "fsync", refusing_fsync)
    path = save_run(folder, "label", a_run([1.0]))
    monkeypatch.undo()
    assert json.loads(path.read_text()) == a_run([1.0])



# ---- harness/timing/wall.py ---------------------------------------------------------------------


class CountingRule:
    """A stop rule that stops after `samples` samples and keeps the elapsed times it was shown."""

    def __init__(self, samples):
        self.samples, self.elapsed = samples, []

    def stop_reason(self, samples, elapsed):
        self.elapsed.append(elapsed)
        return "enough" if len(samples) >= self.samples else None


@pytest.mark.parametrize("warmup, warm_calls", [(0, 1), (1, 1), (3, 3)])
def test_a_host_routine_is_warmed_up_at_least_once_before_its_samples(warmup, warm_calls):
    rule = CountingRule(4)
    profile = SimpleNamespace(for_wall_clock=lambda: SimpleNamespace(warmup=warmup, stop_rule=rule))
    calls = []
    measurement = measure_wall(lambda: calls.append(1), profile)
    assert len(measurement.samples) == 4 and measurement.stopped_by == "enough"
    assert len(calls) == 4 + warm_calls


def test_the_stop_rule_is_shown_the_wall_clock_time_since_sampling_began():
    rule = CountingRule(5)
    profile = SimpleNamespace(for_wall_clock=lambda: SimpleNamespace(warmup=1, stop_rule=rule))
    started = time.perf_counter()
    measurement = measure_wall(lambda: time.sleep(1e-3), profile)
    outside = time.perf_counter() - started
    for count, elapsed in enumerate(rule.elapsed, start=1):
        assert sum(measurement.samples[:count]) <= elapsed <= outside


# (harness/storage/runs.py, continued)


def test_run_number_one_given_as_an_int_is_that_run_not_the_newest(tmp_path):
    """1 == True in Python: the number 1 must still pick run 0001, not mean "the newest"."""
    for name in ("0001_a.json", "0002_b.json"):
        (tmp_path / name).write_text("{}")
    assert resolve_compare(tmp_path, 1) == tmp_path / "0001_a.json"
    assert resolve_compare(tmp_path, True) == tmp_path / "0002_b.json"


def test_a_stored_run_of_a_newer_schema_is_a_baseline_error_naming_the_file(tmp_path):
    doc = a_run([1.0])
    doc["machine_info"][SCHEMA_KEY] = SCHEMA_VERSION + 1
    path = stored_run(tmp_path, doc)
    with pytest.raises(BaselineError, match=f"^{path}: it was written with schema version"):
        load_run(path)


def test_a_save_creates_the_missing_folders_above_its_own(tmp_path):
    path = save_run(tmp_path / "new" / "store" / "G", "label", a_run([1.0]))
    assert path == tmp_path / "new" / "store" / "G" / "0001_label.json" and path.is_file()



# ---- harness/timing/ceilings.py (the CPU-reachable part: the datasheet figures) -----------------

# FP32 lanes per SM, CUDA C Programming Guide, "Arithmetic Instructions" throughput table
GUIDE_FP32_LANES = {"7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128,
                    "12.0": 128}


@pytest.mark.parametrize("capability, lanes", sorted(GUIDE_FP32_LANES.items()))
def test_the_datasheet_fp32_peak_is_lanes_times_two_flops_times_sms_times_the_clock(capability, lanes):
    assert datasheet_fp32_flops_per_s(capability, 100, 1000) == 2.0 * lanes * 100 * 1000 * 1e6


@pytest.mark.parametrize("capability", ["6.1", "7.2", "7.6", "8.5", "8.8", "9.1", "11.0"])
def test_a_compute_capability_the_guide_table_does_not_list_has_no_datasheet_peak(capability):
    assert datasheet_fp32_flops_per_s(capability, 100, 1000) is None


def test_the_datasheet_memory_peak_is_double_data_rate_over_the_bus_in_bytes():
    """2 transfers per clock x MHz x 1e6 x bus bits / 8: 1000 MHz over 4096 bits is 1.024 TB/s exactly."""
    assert datasheet_memory_bytes_per_s(1000, 4096) == 2.0 * 1000 * 1e6 * 4096 / 8 == 1.024e12


def test_the_device_copy_ceiling_moves_one_gib_each_way():
    assert COPY_BYTES == 2**30



# ---- harness/ab/against_ref.py (with tests/test_ab_compare.py's fakes: no git, no GPU) ---------


def ref_comparison(monkeypatch, package, **options):
    monkeypatch.setattr(ab_compare, "RefTree", lambda repo_root, ref: FakeRefTree(package))
    return ab_compare.RefComparison(Path("/nonexistent/repository"), "main", arch="sm_90", **options)


def changed_naive():
    return BasePackage({"naive": NAIVE}, BaseCompile({"float sum = 0.0f;": "float sum = -0.0f;"}))


def test_an_ab_verdict_names_the_ref_and_its_short_commit(monkeypatch):
    ref = ref_comparison(monkeypatch, changed_naive())
    verdict, _ = ref.compare("c", FakeCase("naive", NAIVE), ReplayTimer(*recorded_pairs()), None, True,
                             lambda median: 0.015)
    assert ref.reference == "main (0123456789)" and verdict.reference == "main (0123456789)"


def test_accepting_slowdowns_leaves_a_case_that_is_not_slower_as_it_is(monkeypatch):
    ref = ref_comparison(monkeypatch, changed_naive(), accepted="label accept-slowdown")
    verdict, _ = ref.compare("c", FakeCase("naive", NAIVE), ReplayTimer(*recorded_pairs()), None, True,
                             lambda median: 0.015)
    assert verdict.label == SAME and "accepted" not in verdict.reason


def test_registry_entries_of_the_ref_that_head_lacks_are_removed(monkeypatch):
    base = changed_naive()
    base.MATMUL_KERNELS = {"naive": None, "gone": None}
    base.ELEMENTWISE_KERNELS = {"add": None}
    ref = ref_comparison(monkeypatch, base)
    head = SimpleNamespace(MATMUL_KERNELS={"naive": None, "added": None}, ELEMENTWISE_KERNELS={"add": None})
    gone = ref.removed_kernels(head)
    assert [(v.case, v.label) for v in gone] == [("MATMUL_KERNELS[gone]", REMOVED)]
    assert ref.verdicts == gone


def test_an_unchanged_case_stays_unchanged_when_slowdowns_are_accepted(monkeypatch):
    ref = ref_comparison(monkeypatch, BasePackage({"naive": NAIVE}), accepted="label accept-slowdown")
    verdict, _ = ref.compare("c", FakeCase("naive", NAIVE), ReplayTimer(*recorded_pairs()), None, True,
                             lambda median: 0.015)
    assert verdict.label == "unchanged" and "accepted" not in verdict.reason


def test_the_launch_part_of_a_case_identity_is_the_one_stored_runs_were_pooled_by(monkeypatch):
    """A record's `sass` is case_identity: machine code, then the first 16 hex digits of the launch
    text's SHA-256. Run 0005 stored it for the naive 1024^3 matmul (32 x 32 blocks of 32 x 32 threads);
    a change of the launch digest splits every stored history."""
    stored_sass = next(bench["extra_info"]["sass"] for bench in json.loads((RUNS / "0005_h200-5fcc19b.json").read_text())
                       ["benchmarks"] if bench["fullname"].endswith("test_matmul_time[1024x1024x1024-naive]"))
    monkeypatch.setattr(ab_compare, "build_identity", lambda *args, **kwargs: "code")
    package = SimpleNamespace(compile=SimpleNamespace(load_source=lambda name: "", BASE_OPTIONS=(),
                                                      define_options=lambda defines: ()))
    build = dataclasses.replace(NAIVE, launch="grid=(32, 32, 1) block=(32, 32) shared=0 pitched=False")
    assert ab_compare.case_identity(package, build, "sm_90") == "code:" + stored_sass.split(":")[1]
    assert ab_compare.case_identity(package, None, "sm_90") == "library"


def test_a_base_package_that_fails_to_load_leaves_no_tree_checked_out(monkeypatch):
    class FailingTree(FakeRefTree):
        def load_package(self, alias):
            raise RuntimeError("the base does not import")

    tree = FailingTree(None)
    monkeypatch.setattr(ab_compare, "RefTree", lambda repo_root, ref: tree)
    with pytest.raises(RuntimeError, match="does not import"):
        ab_compare.RefComparison(Path("/nonexistent/repository"), "main", arch="sm_90")
    assert not tree.open

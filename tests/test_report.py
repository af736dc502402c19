"""CPU tests for harness.report."""

from __future__ import annotations

import os

from harness.report import markdown_report, write_report
from harness.verdict import FASTER, NO_BASELINE, REGRESSED, SAME, THROTTLED, Verdict

GPU = "NVIDIA H200"
BASELINE = "baselines/NVIDIA_H200/0003_tuned.json"


def verdicts():
    return [
        Verdict("suites/test_perf_a.py::test_a[same]", SAME, 1.0e-3, 1.01e-3, 1.01, 0.4,
                "1.0% slower than the baseline (p=0.4), within the 5% threshold"),
        Verdict("suites/test_perf_b.py::test_b[slow]", REGRESSED, 2.0e-6, 2.4e-6, 1.2, 3e-5,
                "20.0% slower than the baseline (p=3e-05), beyond the 5% threshold"),
        Verdict("suites/test_perf_c.py::test_c[new]", NO_BASELINE, None, 5.0e-2, None, None,
                "no baseline for this case"),
        Verdict("suites/test_perf_d.py::test_d[fast]", FASTER, 1.5, 1.2, 0.8, 1e-6,
                "20.0% faster than the baseline (p=1e-06)"),
        Verdict("suites/test_perf_e.py::test_e[hot]", THROTTLED, 1e-3, 1.3e-3, 1.3, None,
                "NVML reported thermal or power throttling"),
        Verdict("suites/test_perf_a.py::test_a[also_same]", SAME, 8.0e-9, 8.0e-9, 1.0, 0.5,
                "0.0% slower than the baseline (p=0.5), within the 5% threshold"),
    ]


def table_rows(text):
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    return rows[1:]


def test_report_has_one_row_per_case_in_verdict_order():
    rows = table_rows(markdown_report(verdicts(), GPU, BASELINE))
    assert len(rows) == 6
    order = [row.split("|")[1].strip().strip("`") for row in rows]
    assert order == [
        "suites/test_perf_b.py::test_b[slow]",
        "suites/test_perf_d.py::test_d[fast]",
        "suites/test_perf_e.py::test_e[hot]",
        "suites/test_perf_c.py::test_c[new]",
        "suites/test_perf_a.py::test_a[also_same]",
        "suites/test_perf_a.py::test_a[same]",
    ]


def test_regressed_row_is_bold_and_no_other_row_is():
    rows = table_rows(markdown_report(verdicts(), GPU, BASELINE))
    bold = [row for row in rows if "**" in row]
    assert bold == [row for row in rows if "test_b[slow]" in row]
    assert bold[0].rstrip().endswith("| **regressed** |")


def test_heading_names_the_gpu_and_the_baseline_file():
    heading = markdown_report(verdicts(), GPU, BASELINE).splitlines()[0]
    assert heading.startswith("# ")
    assert GPU in heading and BASELINE in heading


def test_heading_says_when_there_is_no_baseline_file():
    heading = markdown_report(verdicts()[2:3], GPU, None).splitlines()[0]
    assert "no baseline" in heading


def test_summary_line_counts_each_label():
    text = markdown_report(verdicts(), GPU, BASELINE)
    summary = next(line for line in text.splitlines() if line.startswith("Summary:"))
    assert summary == ("Summary: 1 regressed, 1 faster, 1 throttled, 1 no baseline, "
                       "2 same (6 cases)")


def test_times_and_ratios_are_formatted_with_units():
    rows = table_rows(markdown_report(verdicts(), GPU, BASELINE))
    slow = next(row for row in rows if "test_b[slow]" in row)
    cells = [cell.strip() for cell in slow.split("|")[2:-1]]
    assert cells == ["2.00 µs", "2.40 µs", "1.20×", "**regressed**"]
    new = next(row for row in rows if "test_c[new]" in row)
    assert [cell.strip() for cell in new.split("|")[2:-1]] == ["—", "50.0 ms", "—", "no baseline"]


def test_rate_column_appears_only_with_extra():
    plain = markdown_report(verdicts(), GPU, BASELINE)
    assert "| case | baseline | now | ratio | verdict |" in plain.splitlines()
    extra = {"suites/test_perf_b.py::test_b[slow]": {"rate": "41.2 TFLOP/s"}}
    text = markdown_report(verdicts(), GPU, BASELINE, extra=extra)
    header = next(line for line in text.splitlines() if line.startswith("| case"))
    assert header == "| case | baseline | now | ratio | rate | verdict |"
    slow = next(row for row in table_rows(text) if "test_b[slow]" in row)
    assert "| 41.2 TFLOP/s |" in slow
    same = next(row for row in table_rows(text) if "test_a[same]" in row)
    assert "| — |" in same


def test_pipes_in_case_names_do_not_break_the_table():
    odd = Verdict("suites/t.py::test_x[a|b]", SAME, 1e-3, 1e-3, 1.0, 0.5, "same")
    row = table_rows(markdown_report([odd], GPU, BASELINE))[0]
    assert row.replace("\\|", "").count("|") == 6


def test_reasons_for_non_same_verdicts_are_listed():
    text = markdown_report(verdicts(), GPU, BASELINE)
    assert "beyond the 5% threshold" in text
    assert "within the 5% threshold" not in text


def test_write_report_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "reports" / "perf.md"
    write_report(path, "old\n")
    write_report(path, "new report\n")
    assert path.read_text() == "new report\n"
    assert os.listdir(path.parent) == ["perf.md"]

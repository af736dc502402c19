"""The markdown report of verdicts, rendered from case records."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from harness.report.markdown import markdown_paired_report, markdown_report, verdict_counts, write_report
from harness.verdict.paired import SLOWER, PairedVerdict
from harness.verdict.record import CaseRecord
from harness.verdict.stats import FASTER, NO_BASELINE, OTHER_HOST, OTHER_TIMER, REGRESSED, SAME, THROTTLED

GPU = SimpleNamespace(name="NVIDIA H200", uuid="GPU-1234", host="h200-a")
BASELINE = "baselines/NVIDIA_H200/0003_tuned.json"


def judged(case, label, median, ratio=None, detectable=0.02, reason="", **work):
    return CaseRecord(case=case, median_s=median, verdict=label, ratio=ratio, detectable=detectable,
                      verdict_reason=reason, timer="cupti concurrent kernel", **work)


def records():
    return [
        judged("suites/a.py::test_a[same]", SAME, 1.01e-3, 1.01, reason="1.0% slower"),
        judged("suites/b.py::test_b[slow]", REGRESSED, 2.4e-6, 1.2, 0.125, "20.0% slower; detectable 12.5%",
               flops=2e6),
        judged("suites/c.py::test_c[new]", NO_BASELINE, 5.0e-2, detectable=None, reason="no baseline for this case"),
        judged("suites/d.py::test_d[fast]", FASTER, 1.2, 0.8, reason="20.0% faster", bytes=1.2e9),
        judged("suites/e.py::test_e[hot]", THROTTLED, 1.3e-3, 1.3, reason="NVML reported throttling"),
        judged("suites/a.py::test_a[also_same]", SAME, 8.0e-9, 1.0),
    ]


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("| ")][1:]


def test_report_has_one_row_per_case_regressions_first():
    rows = table_rows(markdown_report(records(), GPU, BASELINE))
    assert len(rows) == 6
    order = [row.split("|")[1].strip().strip("`") for row in rows]
    assert order[:3] == ["suites/b.py::test_b[slow]", "suites/d.py::test_d[fast]", "suites/e.py::test_e[hot]"]
    assert order[3] == "suites/c.py::test_c[new]"


def test_report_names_the_gpu_its_uuid_host_and_baseline():
    text = markdown_report(records(), GPU, BASELINE)
    assert text.splitlines()[0] == f"# Kernel suite on NVIDIA H200 (GPU-1234, host h200-a) vs `{BASELINE}`"
    assert ("Summary: 1 regressed, 1 faster, 1 throttled, 1 no baseline, 0 other host, 0 other timer, 2 same "
            "(6 cases)") in text


def test_paired_report_names_the_gpu_as_the_verdict_report_does():
    slower = PairedVerdict("suites/b.py::test_b[slow]", SLOWER, 1e-3, 1.1e-3, 1.1, 1.08, 1.12, 0.02, "10% slower")
    text = markdown_paired_report([slower], GPU, "main", "0123456789abcdef", None)
    assert text.splitlines()[0] == ("# Kernel suite: this tree against `main` (0123456789) "
                                    "on NVIDIA H200 (GPU-1234, host h200-a)")
    unknown = SimpleNamespace(name="NVIDIA H200", uuid=None, host="h200-b")
    assert "on NVIDIA H200 (UUID unknown, host h200-b) vs no baseline" in markdown_report(records(), unknown, None)


def test_other_timer_is_counted_after_other_host_and_listed_with_its_reason():
    cases = records() + [
        judged("suites/f.py::test_f[wall]", OTHER_HOST, 2e-3, 1.5, None, "timed by wall clock"),
        judged("suites/g.py::test_g[timer]", OTHER_TIMER, 5e-6, 0.56, None, "timed by cuda events and this run by cupti"),
    ]
    text = markdown_report(cases, GPU, BASELINE)
    assert "1 no baseline, 1 other host, 1 other timer, 2 same (8 cases)" in text
    order = [row.split("|")[1].strip().strip("`") for row in table_rows(text)]
    assert order[-4:] == ["suites/f.py::test_f[wall]", "suites/g.py::test_g[timer]",
                          "suites/a.py::test_a[also_same]", "suites/a.py::test_a[same]"]
    assert "- `suites/g.py::test_g[timer]`: timed by cuda events and this run by cupti" in text
    assert list(verdict_counts(cases))[-3:] == [OTHER_HOST, OTHER_TIMER, SAME]


def test_report_row_shows_baseline_now_ratio_detectable_rate_and_bold_regression():
    rows = table_rows(markdown_report(records(), GPU, BASELINE))
    slow = next(r for r in rows if "test_b[slow]" in r)
    cells = [c.strip() for c in slow.split("|")[1:-1]]
    assert cells[1:] == ["2.00 µs", "2.40 µs", "1.200×", "12.5%", "0.83 TFLOP/s", "cupti concurrent kernel", "**regressed**"]


def test_reasons_are_listed_for_every_verdict_but_same():
    text = markdown_report(records(), GPU, BASELINE)
    details = text.split("## Details")[1]
    assert "20.0% slower; detectable 12.5%" in details and "no baseline for this case" in details
    assert "test_a[same]" not in details


def test_verdict_counts_skip_labels_with_no_case():
    assert verdict_counts(records()) == {REGRESSED: 1, FASTER: 1, THROTTLED: 1, NO_BASELINE: 1, SAME: 2}
    assert verdict_counts([judged("x", SAME, 1.0, 1.0)]) == {SAME: 1}


def test_write_report_replaces_an_old_report_atomically(tmp_path):
    path = tmp_path / "reports" / "r.md"
    write_report(path, "old\n")
    write_report(path, "new\n")
    assert path.read_text() == "new\n"
    assert [p.name for p in path.parent.iterdir()] == ["r.md"]
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"


def test_write_report_to_a_folder_is_a_clear_error(tmp_path):
    with pytest.raises(OSError, match=str(tmp_path)):
        write_report(tmp_path, "text\n")


def test_a_pooled_reference_shows_its_median_and_how_many_runs_it_pools():
    pooled = judged("suites/a.py::test_a[pooled]", REGRESSED, 1.03e-3, 1.03, 0.015, "3.0% slower",
                    reference_runs=5)
    alone = judged("suites/a.py::test_a[alone]", SAME, 1.01e-3, 1.01, reference_runs=1)
    text = markdown_report([pooled, alone], GPU, BASELINE)
    rows = {row.split("|")[1].strip().strip("`"): row.split("|")[2].strip() for row in table_rows(text)}
    assert rows == {pooled.case: "1.00 ms (5 runs)", alone.case: "1.00 ms"}
    assert "pools the baseline with the newest other stored runs of the same code" in text


def test_a_report_of_single_run_references_says_nothing_of_pooling():
    assert "pools" not in markdown_report(records(), GPU, BASELINE)

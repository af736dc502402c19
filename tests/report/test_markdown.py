"""The markdown report of verdicts (one builder for stored-reference and same-run A/B runs)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from kernelwatch.report.markdown import markdown_report, verdict_counts, where, write_report
from kernelwatch.verdict.labels import (
    FASTER,
    HISTORY_REFERENCE,
    NEW,
    OTHER_HOST,
    OTHER_TIMER,
    SAME,
    SLOWER,
    THROTTLED,
    Verdict,
)
from kernelwatch.verdict.record import CaseRecord

GPU = SimpleNamespace(name="NVIDIA H200", uuid="GPU-1234", host="h200-a")
BASELINE = "baselines/NVIDIA_H200/0003_tuned.json"


def judged(case, label, median, ratio=None, detectable=0.02, reason="", reference_runs=None, **work):
    verdict = Verdict(case, label, median / ratio if ratio else None, median, ratio, detectable, reason,
                      reference=BASELINE, reference_runs=reference_runs)
    record = CaseRecord(case=case, median_s=median, timer="cupti concurrent kernel", **work).judged(verdict)
    return verdict, record


def report(cases, gpu=GPU, baseline=BASELINE):
    against = f"`{baseline}`" if baseline else "no baseline"
    verdicts = [verdict for verdict, _ in cases]
    return markdown_report(f"kernelwatch on {where(gpu)} vs {against}", verdicts, {r.case: r for _, r in cases})


def labels(cases):
    return [verdict.label for verdict, _ in cases]


def records():
    return [
        judged("suites/a.py::test_a[same]", SAME, 1.01e-3, 1.01, reason="1.0% slower"),
        judged("suites/b.py::test_b[slow]", SLOWER, 2.4e-6, 1.2, 0.125, "20.0% slower; detectable 12.5%",
               flops=2e6),
        judged("suites/c.py::test_c[new]", NEW, 5.0e-2, detectable=None, reason="no reference for this case"),
        judged("suites/d.py::test_d[fast]", FASTER, 1.2, 0.8, reason="20.0% faster", bytes=1.2e9),
        judged("suites/e.py::test_e[hot]", THROTTLED, 1.3e-3, 1.3, reason="NVML reported throttling"),
        judged("suites/a.py::test_a[also_same]", SAME, 8.0e-9, 1.0),
    ]


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("| ")][1:]


def test_report_has_one_row_per_case_regressions_first():
    rows = table_rows(report(records()))
    assert len(rows) == 6
    order = [row.split("|")[1].strip().strip("`") for row in rows]
    assert order[:3] == ["suites/b.py::test_b[slow]", "suites/d.py::test_d[fast]", "suites/e.py::test_e[hot]"]
    assert order[3] == "suites/c.py::test_c[new]"


def test_report_names_the_gpu_its_uuid_host_and_baseline():
    text = report(records())
    assert text.splitlines()[0] == f"# kernelwatch on NVIDIA H200 (GPU-1234, host h200-a) vs `{BASELINE}`"
    assert "Summary: 1 slower, 1 faster, 1 throttled, 1 new, 2 same (6 cases)" in text


def test_an_ab_verdict_shows_its_interval_where_a_stored_one_shows_its_p_value():
    slower = Verdict("suites/b.py::test_b[slow]", SLOWER, 1e-3, 1.1e-3, 1.1, 0.02, "10% slower", ci_low=1.08,
                     ci_high=1.12, reference="main (0123456789)")
    same = Verdict("suites/a.py::test_a[same]", SAME, 1e-3, 1.001e-3, 1.001, 0.02, "0.1% slower", p_value=0.31)
    text = markdown_report("A/B", [slower, same], {})
    cells = {row.split("|")[1].strip().strip("`"): [c.strip() for c in row.split("|")[1:-1]] for row in table_rows(text)}
    assert cells[slower.case][4] == "1.080-1.120" and cells[slower.case][-1] == "**slower**"
    assert cells[same.case][4] == "p=0.31"
    unknown = SimpleNamespace(name="NVIDIA H200", uuid=None, host="h200-b")
    assert "on NVIDIA H200 (UUID unknown, host h200-b) vs no baseline" in report(records(), unknown, None)


def test_other_timer_is_counted_after_other_host_and_listed_with_its_reason():
    cases = records() + [
        judged("suites/f.py::test_f[wall]", OTHER_HOST, 2e-3, 1.5, None, "timed by wall clock"),
        judged("suites/g.py::test_g[timer]", OTHER_TIMER, 5e-6, 0.56, None, "timed by cuda events and this run by cupti"),
    ]
    text = report(cases)
    assert "1 new, 1 other host, 1 other timer, 2 same (8 cases)" in text
    order = [row.split("|")[1].strip().strip("`") for row in table_rows(text)]
    assert order[-4:] == ["suites/f.py::test_f[wall]", "suites/g.py::test_g[timer]",
                          "suites/a.py::test_a[also_same]", "suites/a.py::test_a[same]"]
    assert "- `suites/g.py::test_g[timer]`: timed by cuda events and this run by cupti" in text
    assert list(verdict_counts(labels(cases)))[-3:] == [OTHER_HOST, OTHER_TIMER, SAME]


def test_report_row_shows_baseline_now_ratio_detectable_rate_and_bold_regression():
    rows = table_rows(report(records()))
    slow = next(r for r in rows if "test_b[slow]" in r)
    cells = [c.strip() for c in slow.split("|")[1:-1]]
    assert cells[1:] == ["2.00 µs", "2.40 µs", "1.200×", "—", "12.5%", "0.83 TFLOP/s", "cupti concurrent kernel",
                         "**slower**"]


def test_reasons_are_listed_for_every_verdict_but_same():
    text = report(records())
    details = text.split("## Details")[1]
    assert "20.0% slower; detectable 12.5%" in details and "no reference for this case" in details
    assert "test_a[same]" not in details


def test_verdict_counts_skip_labels_with_no_case():
    assert verdict_counts(labels(records())) == {SLOWER: 1, FASTER: 1, THROTTLED: 1, NEW: 1, SAME: 2}
    assert verdict_counts(labels([judged("x", SAME, 1.0, 1.0)])) == {SAME: 1}


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
    pooled = judged("suites/a.py::test_a[pooled]", SLOWER, 1.03e-3, 1.03, 0.015, "3.0% slower",
                    reference_runs=5)
    alone = judged("suites/a.py::test_a[alone]", SAME, 1.01e-3, 1.01, reference_runs=1)
    text = report([pooled, alone])
    rows = {row.split("|")[1].strip().strip("`"): row.split("|")[2].strip() for row in table_rows(text)}
    assert rows == {pooled[0].case: "1.00 ms (5 runs)", alone[0].case: "1.00 ms"}
    assert "pools the newest stored runs of the same code" in text


def test_a_report_of_single_run_references_says_nothing_of_pooling():
    assert "pools" not in report(records())


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

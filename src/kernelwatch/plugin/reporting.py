"""What the plugin writes at the end of a run: the markdown report and the terminal summary.

Both are built by src/kernelwatch/report/session_report.py from the session's findings
(src/kernelwatch/report/findings.py), for a run judged against stored runs and for a
`--kernelwatch-compare-ref` run alike; this module hands them what the report room may not
reach (the `bisect` command of each slower case's window) and writes what they return.
"""

from __future__ import annotations

from kernelwatch.ab.commits import CommitWindow
from kernelwatch.plugin.regression import bisect_command
from kernelwatch.plugin.state import SuiteState
from kernelwatch.report.accuracy import accuracy_counts
from kernelwatch.report.markdown import write_report
from kernelwatch.report.session_report import (
    Written,
    followed_records,
    ref_report,
    stored_report,
    summary_sections,
)


def bisect_commands(state: SuiteState) -> dict[str, str | None]:
    """Each followed case's `bisect` command line over its window (None: nothing to bisect)."""
    followed = followed_records(state.findings)
    profile = state.measuring.profile.name if followed else None
    return {record.case: bisect_command(record.case, CommitWindow.from_dict(record.window), profile)
            for record in followed}


def write_stored_report(state: SuiteState) -> None:
    """The report of a run judged against the stored baseline (and history)."""
    findings = state.findings
    if not findings.verdicts and not any(record.verdict for record in findings.accuracy):
        return
    publish(state, stored_report(findings, state.measuring.gpu, state.stored.baseline, state.stored.recorded_run,
                                 bisect_commands(state)))


def write_ref_report(state: SuiteState) -> None:
    """The report of a --kernelwatch-compare-ref run: this tree against REF, measured interleaved in one run."""
    from kernelwatch.ab.library import LibraryError

    try:
        state.code.ref.removed_kernels()
    except LibraryError as error:
        state.findings.notices.append(f"removed kernels not looked for: {error}")
    publish(state, ref_report(state.findings, state.code.ref, state.measuring.gpu))


def publish(state: SuiteState, written: Written) -> None:
    """Write the report; the summary line names the counts and the file, or a problem says why not."""
    findings = state.findings
    findings.notices += written.notices
    try:
        write_report(state.report_path, written.text)
    except OSError as error:
        findings.problems.append(f"could not write the report {state.report_path}: {error}")
        return
    findings.notices.append(f"{written.counts}; report: {state.report_path}")
    accuracy = accuracy_counts(findings.accuracy)
    if accuracy and accuracy != written.counts:
        findings.notices.append(f"{accuracy} (the report's Accuracy section)")


def terminal_summary(terminalreporter, state: SuiteState) -> None:
    findings = state.findings
    if findings.skipped_gpu_tests:  # written even under -q: a run without a GPU must not read as a pass
        terminalreporter.write_line(
            f"kernelwatch: {findings.skipped_gpu_tests} GPU tests skipped: needs a CUDA GPU: {state.device.why_not}. "
            f"--kernelwatch-require-gpu (or KERNELWATCH_REQUIRE_GPU=1) makes that an error", yellow=True)
    meter = state.measuring.energy_meter
    for section in summary_sections(findings, followed=state.judging.comparing, run_id=state.stored.recorded_run,
                                    bisect=bisect_commands(state),
                                    energy_seconds=meter.seconds if meter is not None else None):
        terminalreporter.section(section.title, **({"red": True} if section.red else {}))
        for line, red in section.lines:
            terminalreporter.write_line(line, **({"red": True} if red else {}))

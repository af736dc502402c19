"""What the plugin writes at the end of a run: the markdown report and the terminal summary.

The report is built from the session's verdicts and records (src/kernelwatch/plugin/state.py),
by the one report builder of src/kernelwatch/report/markdown.py, for a run judged
against stored runs and for a `--kernelwatch-compare-ref` run alike.
"""

from __future__ import annotations

from kernelwatch.plugin.regression import is_failing_record, is_followed_record, window_lines
from kernelwatch.plugin.state import SuiteState
from kernelwatch.report.accuracy import accuracy_counts, accuracy_section
from kernelwatch.report.energy import energy_section
from kernelwatch.report.markdown import (
    counts_text,
    markdown_report,
    references_line,
    verdict_counts,
    where,
    write_report,
)
from kernelwatch.report.phases import phases_section
from kernelwatch.verdict.accuracy import LESS_ACCURATE, MORE_ACCURATE, row_words
from kernelwatch.verdict.energy import interval_text
from kernelwatch.verdict.labels import ACCEPTED


def write_stored_report(state: SuiteState) -> None:
    """The report of a run judged against the stored baseline (and history)."""
    if not state.verdicts and not any(record.verdict for record in state.accuracy):
        return
    baseline = state.baseline
    if baseline is not None:
        ran = {v.case for v in state.verdicts}
        not_run = sorted(set(baseline.cases) - ran)
        if not_run:  # renamed, removed or deselected cases: their history is not compared
            state.notices.append(f"{len(not_run)} case(s) of the baseline did not run in this session, "
                                 f"e.g. {not_run[0]}")
    against = f"`{baseline.path}`" if baseline is not None else "no baseline"
    title = f"kernelwatch on {where(state.gpu)} vs {against}"
    text = markdown_report(title, state.verdicts, {r.case: r for r in state.records}, [references_line(state.verdicts)])
    followed = followed_records(state)
    if followed:
        text += "\n## Slower cases: their reference runs and the commits since\n"
        for record in followed:
            text += "\n" + "\n".join(window_lines(record, state.profile.name, state.recorded_run, markdown=True)) + "\n"
            if record.case in state.cards:
                text += "\n" + "\n".join(state.cards[record.case])
    text += energy_section(state.records) + phases_section(state.records) + accuracy_section(state.accuracy)
    publish(state, text, counts_text(verdict_counts(v.label for v in state.verdicts))
            or accuracy_counts(state.accuracy))


def followed_records(state: SuiteState) -> list:
    """The records of the slower and accepted cases judged against stored runs (and the host routines with a
    slower or accepted phase), failing ones first."""
    return sorted((r for r in state.records if is_followed_record(r)), key=lambda r: (not is_failing_record(r), r.case))


def write_ref_report(state: SuiteState) -> None:
    """The report of a --kernelwatch-compare-ref run: this tree against REF, measured interleaved in one run."""
    from kernelwatch.ab.library import LibraryError

    ref = state.ref
    try:
        ref.removed_kernels()
    except LibraryError as error:
        state.notices.append(f"removed kernels not looked for: {error}")
    title = f"kernelwatch: this tree against `{ref.ref}` ({ref.tree.sha[:10]}) on {where(state.gpu)}"
    notes = [f"**Slowdown accepted**: {ref.accepted}"] if ref.accepted and any(
        v.label == ACCEPTED for v in ref.verdicts) else []
    text = markdown_report(title, ref.verdicts, {r.case: r for r in state.records}, notes)
    if ref.cards:
        text += "\n## Why the slower cases are slower\n\n" + "\n".join(
            line for case in sorted(ref.cards) for line in ref.cards[case])
    text += (energy_section(state.records) + phases_section(state.records)
             + accuracy_section(state.accuracy, against=f"`{ref.ref}` on the same inputs in this run"))
    counts = counts_text(verdict_counts(v.label for v in ref.verdicts)) or "no cases"
    publish(state, text, f"against {ref.ref} ({ref.tree.sha[:10]}): {counts}")


def publish(state: SuiteState, text: str, counts: str) -> None:
    """Write the report; the summary line names the counts and the file, or a problem says why not."""
    try:
        write_report(state.report_path, text)
    except OSError as error:
        state.problems.append(f"could not write the report {state.report_path}: {error}")
        return
    state.notices.append(f"{counts}; report: {state.report_path}")
    if accuracy_counts(state.accuracy) and accuracy_counts(state.accuracy) != counts:
        state.notices.append(f"{accuracy_counts(state.accuracy)} (the report's Accuracy section)")


def terminal_summary(terminalreporter, state: SuiteState) -> None:
    if state.skipped_gpu_tests:  # written even under -q: a run without a GPU must not read as a pass
        terminalreporter.write_line(
            f"kernelwatch: {state.skipped_gpu_tests} GPU tests skipped: needs a CUDA GPU: {state.device.why_not}. "
            f"--kernelwatch-require-gpu (or KERNELWATCH_REQUIRE_GPU=1) makes that an error", yellow=True)
    followed = followed_records(state) if state.comparing else []
    if followed:
        terminalreporter.section("kernelwatch: slower cases, their reference runs and the commits since")
        for record in followed:
            for line in window_lines(record, state.profile.name, state.recorded_run, markdown=False):
                terminalreporter.write_line(line)
    changed = [r for r in state.accuracy if r.verdict in (LESS_ACCURATE, MORE_ACCURATE, ACCEPTED)]
    if changed:
        terminalreporter.section("kernelwatch: accuracy changes")
        for record in sorted(changed, key=lambda r: (r.verdict != LESS_ACCURATE, r.case)):
            terminalreporter.write_line(f"{record.case}: {record.verdict}: {row_words(record)}",
                                        red=record.verdict == LESS_ACCURATE)
            if record.window is not None:
                from kernelwatch.ab.commits import CommitWindow

                found = CommitWindow.from_dict(record.window)
                terminalreporter.write_line(f"  commits {found.range_text}: {len(found.commits)} commit(s) since "
                                            f"{record.reference}")
                for one in found.commits:
                    terminalreporter.write_line(f"    {one.sha[:12]} {one.subject}")
            if record.verdict == LESS_ACCURATE and state.recorded_run is not None:
                terminalreporter.write_line(f"  if meant: python -m kernelwatch.history acknowledge '{record.case}' "
                                            f"{state.recorded_run} --reason TEXT")
    measured = sorted((r for r in state.records if r.energy), key=lambda r: r.case)
    if measured:
        terminalreporter.section("kernelwatch: energy per launch")
        for record in measured:
            block, verdict = record.energy, record.energy_verdict or {}
            judged = f", {verdict['label']}" if verdict.get("label") else ""
            terminalreporter.write_line(f"{record.case}: {interval_text(block)}, {block['active_watts_mean']:.0f} W"
                                        f"{judged}", red=bool(verdict.get("fails")))
        terminalreporter.write_line(f"energy of {len(measured)} case(s) measured in "
                                    f"{state.energy_meter.seconds:.1f} s of this run (idle power included)")
    if state.notices:
        terminalreporter.section("kernelwatch")
        for line in state.notices:
            terminalreporter.write_line(line)
    if state.problems:
        terminalreporter.section("kernelwatch: errors", red=True)
        for line in state.problems:
            terminalreporter.write_line(f"ERROR: {line}", red=True)

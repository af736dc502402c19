"""The report of one pytest session and its terminal summary, built from its findings alone.

Both read one record, the session's `Findings` (src/kernelwatch/report/findings.py), and what
the plugin hands them beside it: the GPU, the baseline or the git ref judged against, this run's
id in the history store and the `bisect` command of each slower case's window (the history
room makes those; this room may not import it). The plugin only writes what these return
(src/kernelwatch/plugin/reporting.py).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from kernelwatch.ab.commits import CommitWindow
from kernelwatch.report.accuracy import accuracy_counts, accuracy_section
from kernelwatch.report.energy import energy_section
from kernelwatch.report.findings import Findings
from kernelwatch.report.markdown import counts_text, markdown_report, references_line, verdict_counts, where
from kernelwatch.report.phases import phases_section
from kernelwatch.verdict.accuracy import LESS_ACCURATE, MORE_ACCURATE, row_words
from kernelwatch.verdict.energy import interval_text
from kernelwatch.verdict.labels import ACCEPTED, SLOWER, ReferenceRun
from kernelwatch.verdict.record import CaseRecord


def is_followed(verdict_label: str | None) -> bool:
    """The labels whose window the report and summary print."""
    return verdict_label in (SLOWER, ACCEPTED)


def followed_phases(record: CaseRecord) -> list[dict]:
    """A host routine's phase verdicts (`phase_fields`) that are slower or accepted."""
    return [phase for phase in record.phase_verdicts if is_followed(phase["label"])]


def is_followed_record(record: CaseRecord) -> bool:
    """True for a record whose window the report and summary print: a slower or accepted case, or a host
    routine with a slower or accepted phase."""
    return record.window is not None and (is_followed(record.verdict) or bool(followed_phases(record)))


def is_failing_record(record: CaseRecord) -> bool:
    """True for a followed record that fails: a slower case, or a slower phase nobody accepted."""
    return record.verdict == SLOWER or any(phase["fails"] for phase in record.phase_verdicts)


def followed_records(findings: Findings) -> list[CaseRecord]:
    """The records of the slower and accepted cases judged against stored runs (and the host routines with a
    slower or accepted phase), failing ones first."""
    return sorted((r for r in findings.records if is_followed_record(r)),
                  key=lambda r: (not is_failing_record(r), r.case))


def reference_words(references: list[dict]) -> str:
    """"history run 3, history run 5 (newest: 2026-12-01 03:10 UTC, commit 0123456789ab)": the runs judged against."""
    runs = [ReferenceRun.from_dict(run) for run in references]
    if not runs:
        return "no stored run"
    named = ", ".join(run.name for run in runs)
    newest = runs[-1]
    when = f"{newest.started_at[:16].replace('T', ' ')} UTC, " if newest.started_at else ""
    return f"{named} (newest: {when}commit {(newest.commit or 'unknown')[:12]})"


def window_lines(record: CaseRecord, bisect: str | None, run_id: int | None, *, markdown: bool) -> list[str]:
    """A slower (or accepted) case's block: its reference runs, its window's commits, the `bisect` command line
    for the window (None: nothing to bisect), and how to accept it; markdown for the report, plain text for the
    terminal."""
    found = CommitWindow.from_dict(record.window or {})
    code = (lambda text: f"`{text}`") if markdown else (lambda text: text)
    bullet = "- " if markdown else "  "
    if is_followed(record.verdict):
        what = f"{record.verdict} x{record.ratio:.3f}" if record.ratio else str(record.verdict)
        references = record.references
    else:  # a host routine followed for its phases: the references of its first followed one
        phases = followed_phases(record)
        what = "; ".join(f"{phase['phase']} phase {phase['label']} x{phase['ratio']:.3f}" for phase in phases)
        references = phases[0].get("references") or []
    lines = [(f"### {code(record.case)}: {what}" if markdown else f"{record.case}: {what}"),
             f"{bullet}against {reference_words(references)}"]
    lines += [f"{bullet}{line}" if i == 0 else f"{'  ' if markdown else '    '}{line.strip()}"
              for i, line in enumerate(found.lines())]
    if bisect:
        lines.append(f"{bullet}bisect: {code(bisect)}")
    if record.accepted_reason is not None:
        lines.append(f"{bullet}accepted: {record.accepted_reason}")
    else:
        run = str(run_id) if run_id is not None else "RUN"
        lines.append(f"{bullet}if meant: a commit with the trailer {code('Accept-Slowdown: REASON')} (or "
                     f"{code('Accept-Slowdown: cases=PATTERN REASON')}), or "
                     f"{code(f'python -m kernelwatch.history acknowledge {shlex.quote(record.case)} {run} --reason TEXT')}")
    return lines


@dataclass
class Written:
    """A report's text, the summary line's counts, and what the run should say beside them."""

    text: str
    counts: str
    notices: list[str] = field(default_factory=list)


def stored_report(findings: Findings, gpu, baseline, run_id: int | None, bisect: dict[str, str | None]) -> Written:
    """The report of a run judged against the stored baseline (the `Baseline` or None) and this GPU's history;
    `bisect`: each followed case's bisect command line."""
    notices = []
    if baseline is not None:
        not_run = sorted(set(baseline.cases) - {v.case for v in findings.verdicts})
        if not_run:  # renamed, removed or deselected cases: their history is not compared
            notices.append(f"{len(not_run)} case(s) of the baseline did not run in this session, e.g. {not_run[0]}")
    against = f"`{baseline.path}`" if baseline is not None else "no baseline"
    title = f"kernelwatch on {where(gpu)} vs {against}"
    text = markdown_report(title, findings.verdicts, {r.case: r for r in findings.records},
                           [references_line(findings.verdicts)])
    followed = followed_records(findings)
    if followed:
        text += "\n## Slower cases: their reference runs and the commits since\n"
        for record in followed:
            text += "\n" + "\n".join(window_lines(record, bisect.get(record.case), run_id, markdown=True)) + "\n"
            if record.case in findings.cards:
                text += "\n" + "\n".join(findings.cards[record.case])
    text += energy_section(findings.records) + phases_section(findings.records) + accuracy_section(findings.accuracy)
    counts = counts_text(verdict_counts(v.label for v in findings.verdicts)) or accuracy_counts(findings.accuracy)
    return Written(text, counts, notices)


def ref_report(findings: Findings, ref, gpu) -> Written:
    """The report of a --kernelwatch-compare-ref run (`ref`: the RefComparison, with its verdicts and cards):
    this tree against REF, measured interleaved in one run."""
    title = f"kernelwatch: this tree against `{ref.ref}` ({ref.tree.sha[:10]}) on {where(gpu)}"
    notes = [f"**Slowdown accepted**: {ref.accepted}"] if ref.accepted and any(
        v.label == ACCEPTED for v in ref.verdicts) else []
    text = markdown_report(title, ref.verdicts, {r.case: r for r in findings.records}, notes)
    if ref.cards:
        text += "\n## Why the slower cases are slower\n\n" + "\n".join(
            line for case in sorted(ref.cards) for line in ref.cards[case])
    text += (energy_section(findings.records) + phases_section(findings.records)
             + accuracy_section(findings.accuracy, against=f"`{ref.ref}` on the same inputs in this run"))
    counts = counts_text(verdict_counts(v.label for v in ref.verdicts)) or "no cases"
    return Written(text, f"against {ref.ref} ({ref.tree.sha[:10]}): {counts}")


@dataclass
class Section:
    """One section of the terminal summary: its title and its lines, each with whether it is written red."""

    title: str
    lines: list[tuple[str, bool]]
    red: bool = False


def summary_sections(findings: Findings, *, followed: bool, run_id: int | None, bisect: dict[str, str | None],
                     energy_seconds: float | None) -> list[Section]:
    """The terminal summary's sections after the GPU line: slower cases and their windows (`followed`: the run
    was judged against stored runs), accuracy changes, energy per launch, then the notices and the problems."""
    sections = []
    records = followed_records(findings) if followed else []
    if records:
        sections.append(Section("kernelwatch: slower cases, their reference runs and the commits since", [
            (line, False) for record in records
            for line in window_lines(record, bisect.get(record.case), run_id, markdown=False)]))
    changed = sorted((r for r in findings.accuracy if r.verdict in (LESS_ACCURATE, MORE_ACCURATE, ACCEPTED)),
                     key=lambda r: (r.verdict != LESS_ACCURATE, r.case))
    if changed:
        sections.append(Section("kernelwatch: accuracy changes", [
            line for record in changed for line in _accuracy_lines(record, run_id)]))
    measured = sorted((r for r in findings.records if r.energy), key=lambda r: r.case)
    if measured:
        lines = []
        for record in measured:
            block, verdict = record.energy, record.energy_verdict or {}
            judged = f", {verdict['label']}" if verdict.get("label") else ""
            lines.append((f"{record.case}: {interval_text(block)}, {block['active_watts_mean']:.0f} W{judged}",
                          bool(verdict.get("fails"))))
        lines.append((f"energy of {len(measured)} case(s) measured in {energy_seconds or 0:.1f} s of this run "
                      f"(idle power included)", False))
        sections.append(Section("kernelwatch: energy per launch", lines))
    if findings.notices:
        sections.append(Section("kernelwatch", [(line, False) for line in findings.notices]))
    if findings.problems:
        sections.append(Section("kernelwatch: errors", [(f"ERROR: {line}", True) for line in findings.problems],
                                red=True))
    return sections


def _accuracy_lines(record, run_id: int | None) -> list[tuple[str, bool]]:
    lines = [(f"{record.case}: {record.verdict}: {row_words(record)}", record.verdict == LESS_ACCURATE)]
    if record.window is not None:
        found = CommitWindow.from_dict(record.window)
        lines.append((f"  commits {found.range_text}: {len(found.commits)} commit(s) since {record.reference}", False))
        lines += [(f"    {one.sha[:12]} {one.subject}", False) for one in found.commits]
    if record.verdict == LESS_ACCURATE and run_id is not None:
        lines.append((f"  if meant: python -m kernelwatch.history acknowledge '{record.case}' {run_id} --reason TEXT",
                      False))
    return lines

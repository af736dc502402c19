"""Markdown reports of a run's verdicts: one table builder, one report for every path.

A run judged against stored runs (the nightly) and one judged against a git ref
in the same run (a pull request) give the same kind of `Verdict`
(src/kernelwatch/verdict/labels.py); `markdown_report` renders either. The records
(src/kernelwatch/verdict/record.py) add what the verdicts do not carry: rate, ceiling
and timer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from kernelwatch.storage.runs import write_text_atomically
from kernelwatch.units import MISSING, format_duration, percent, ratio_text
from kernelwatch.verdict.labels import LABELS, SAME, UNCHANGED, Verdict
from kernelwatch.verdict.record import CaseRecord


def cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A markdown table's lines: the header, its rule, one line per row (cells as given)."""
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)] + [
        "| " + " | ".join(row) + " |" for row in rows]


def _rank(label: str | None) -> int:
    return LABELS.index(label) if label in LABELS else len(LABELS)


def verdict_counts(labels: Iterable[str | None]) -> dict[str, int]:
    """Cases per verdict label, in the report's order (labels with no case left out)."""
    counts = Counter(labels)
    ordered = list(LABELS) + sorted(set(counts) - set(LABELS), key=str)
    return {label: counts[label] for label in ordered if counts[label]}


def counts_text(counts: dict[str, int]) -> str:
    """"2 slower, 31 unchanged": label counts as the terminal and the reports write them."""
    return ", ".join(f"{n} {label}" for label, n in counts.items())


def where(gpu) -> str:
    """The GPU a report is about, as its heading names it: model, UUID and host."""
    return f"{gpu.name} ({gpu.uuid or 'UUID unknown'}, host {gpu.host})"


def _reference_cell(verdict: Verdict) -> str:
    if verdict.reference_median is None:
        return MISSING
    runs = verdict.reference_runs or 1
    if verdict.against_own_history:
        return f"{format_duration(verdict.reference_median)} (history, {runs} runs)"
    return format_duration(verdict.reference_median) + (f" ({runs} runs)" if runs > 1 else "")


def _test_cell(verdict: Verdict) -> str:
    """The statistic behind the verdict: the A/B interval, or the Mann-Whitney p of a stored reference."""
    if verdict.ci_low is not None:
        return f"{verdict.ci_low:.3f}-{verdict.ci_high:.3f}"
    return MISSING if verdict.p_value is None else f"p={verdict.p_value:.2g}"


def _rate_cell(record: CaseRecord | None) -> str:
    if record is None:
        return MISSING
    ceiling = record.ceiling_text()
    return cell(" ".join(x for x in (record.rate_text(), f"({ceiling})" if ceiling else "") if x)) or MISSING


def markdown_report(title: str, verdicts: list[Verdict], records: dict[str, CaseRecord],
                    notes: Sequence[str] = ()) -> str:
    """Render verdicts as markdown: a heading, a summary line counting every label, `notes`
    (one paragraph each), one table row per case (what needs attention first, slower cases in
    bold) and the reason of every verdict other than `same` and `unchanged` under it.

    The reference column is the median the ratio was taken against, with the number of stored
    runs it pools where that is more than one; the test column is the A/B's interval of the
    ratio or the stored reference's Mann-Whitney p. `records` (by case) gives rate and timer.
    """
    total = len(verdicts)
    summary = counts_text(verdict_counts(v.label for v in verdicts)) or "no cases"
    lines = [f"# {title}", "", f"Summary: {summary} ({total} case{'' if total == 1 else 's'})", ""]
    for note in notes:
        lines += [note, ""]
    if any((v.reference_runs or 1) > 1 for v in verdicts):
        lines += ["A case's reference pools the newest stored runs of the same code on the same GPU; "
                  "\"(k runs)\" beside its median says how many.", ""]
    ordered = sorted(verdicts, key=lambda v: (_rank(v.label), v.case))
    rows = []
    for v in ordered:
        record = records.get(v.case)
        rows.append([f"`{cell(v.case)}`", _reference_cell(v),
                     format_duration(v.current_median) if v.current_median else MISSING, ratio_text(v.ratio),
                     _test_cell(v), percent(v.detectable), _rate_cell(record),
                     (record.timer if record is not None else None) or MISSING,
                     f"**{v.label}**" if v.fails else v.label])
    lines += table(["case", "reference", "now", "ratio", "test", "detectable", "rate", "timer", "verdict"], rows)
    details = [v for v in ordered if v.label not in (SAME, UNCHANGED) and v.reason]
    if details:
        lines += ["", "## Details", ""]
        lines += [f"- `{v.case}`: {v.reason}" for v in details]
    return "\n".join(lines) + "\n"


def write_report(path, text: str) -> None:
    """Write `text` to `path` atomically (temporary file, then rename); an existing report is replaced."""
    write_text_atomically(Path(path), text, replace=True)


def references_line(verdicts) -> str:
    """"References: 62 cases against this GPU's history, 24 against the baseline": which reference each case used."""
    own = sum(v.against_own_history for v in verdicts)
    stored = sum(v.reference is not None for v in verdicts) - own
    return (f"References: {own} cases against this GPU's history, {stored} against the baseline, "
            f"{len(verdicts) - own - stored} without a reference")

"""Markdown report of a run's verdicts against its baseline, from the cases' records."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.storage.runs import write_text_atomically
from harness.verdict.paired import FASTER as FASTER_PAIRED
from harness.verdict.paired import NEW, REMOVED, SLOWER, UNCHANGED, PairedVerdict
from harness.verdict.paired import SAME as SAME_PAIRED
from harness.verdict.record import CaseRecord
from harness.verdict.stats import (
    FASTER,
    NO_BASELINE,
    OTHER_HOST,
    OTHER_TIMER,
    REGRESSED,
    SAME,
    THROTTLED,
    format_duration,
)

LABEL_ORDER = (REGRESSED, FASTER, THROTTLED, NO_BASELINE, OTHER_HOST, OTHER_TIMER, SAME)
_MISSING = "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rank(label: str | None) -> int:
    return LABEL_ORDER.index(label) if label in LABEL_ORDER else len(LABEL_ORDER)


def _counts_in_order(records: list[CaseRecord]) -> dict[str, int]:
    """Cases per label: every label of LABEL_ORDER (0 included), then any other label found."""
    counts = Counter(r.verdict for r in records)
    labels = list(LABEL_ORDER) + sorted(set(counts) - set(LABEL_ORDER), key=str)
    return {label: counts[label] for label in labels}


def verdict_counts(records: list[CaseRecord]) -> dict[str, int]:
    """Cases per verdict label, in the report's order (labels with no case left out)."""
    return {label: n for label, n in _counts_in_order(records).items() if n}


def counts_text(counts: dict[str, int]) -> str:
    """"2 slower, 31 unchanged (same SASS)": label counts as the terminal and the reports write them."""
    return ", ".join(f"{n} {label}" for label, n in counts.items())


def _summary(records: list[CaseRecord]) -> str:
    total = len(records)
    return f"Summary: {counts_text(_counts_in_order(records))} ({total} case{'' if total == 1 else 's'})"


def _percent(fraction: float | None) -> str:
    return _MISSING if fraction is None else f"{100 * fraction:.1f}%"


def _where(gpu) -> str:
    """The GPU a report is about, as its heading names it: model, UUID and host."""
    return f"{gpu.name} ({gpu.uuid or 'UUID unknown'}, host {gpu.host})"


def markdown_report(records: list[CaseRecord], gpu, baseline_file) -> str:
    """Render judged records as markdown.

    A heading names the GPU (model, UUID, host) and the baseline file; a
    summary line counts every label; the table has one row per case (baseline
    and current median, ratio, the case's smallest detectable change, rate,
    timer, verdict), regressions first and in bold. The baseline median is
    the one the ratio was taken against (current median over ratio): for a
    judged case its reference's, with the number of stored runs it pools where
    that is more than one. The reason of every verdict other than `same` is
    listed under the table. `gpu` is a GpuInfo or anything with `name`, `uuid`
    and `host`.
    """
    against = f"`{baseline_file}`" if baseline_file else "no baseline"
    lines = [f"# Kernel suite on {_where(gpu)} vs {against}", "", _summary(records), ""]
    if any((r.reference_runs or 1) > 1 for r in records):
        lines += ["A case's reference pools the baseline with the newest other stored runs of the same code on "
                  "the same GPU; \"(k runs)\" beside its median says how many.", ""]
    lines += ["| case | baseline | now | ratio | detectable | rate | timer | verdict |",
              "|---|---|---|---|---|---|---|---|"]
    ordered = sorted(records, key=lambda r: (_rank(r.verdict), r.case))
    for r in ordered:
        base = format_duration(r.median_s / r.ratio) if r.ratio else _MISSING
        base += f" ({r.reference_runs} runs)" if (r.reference_runs or 1) > 1 else ""
        row = [f"`{_cell(r.case)}`", base, format_duration(r.median_s),
               _MISSING if r.ratio is None else f"{r.ratio:.3f}×", _percent(r.detectable),
               _cell(" ".join(x for x in (r.rate_text(), f"({r.ceiling_text()})" if r.ceiling_text() else "") if x))
               or _MISSING, r.timer or _MISSING, f"**{r.verdict}**" if r.verdict == REGRESSED else str(r.verdict)]
        lines.append("| " + " | ".join(row) + " |")
    notes = [r for r in ordered if r.verdict != SAME and r.verdict_reason]
    if notes:
        lines += ["", "## Details", ""]
        lines += [f"- `{r.case}`: {r.verdict_reason}" for r in notes]
    return "\n".join(lines) + "\n"


PAIRED_ORDER = (SLOWER, FASTER_PAIRED, NEW, REMOVED, SAME_PAIRED, UNCHANGED)


def paired_counts(verdicts: list[PairedVerdict]) -> dict[str, int]:
    """Cases per label of a --compare-ref run, in the report's order."""
    counts = Counter(v.label for v in verdicts)
    return {label: counts[label] for label in PAIRED_ORDER if counts[label]}


def markdown_paired_report(verdicts: list[PairedVerdict], gpu, ref: str, sha: str, accepted: str | None) -> str:
    """The report of a --compare-ref run: head against REF, measured interleaved in one run."""
    counts = paired_counts(verdicts)
    lines = [f"# Kernel suite: this tree against `{ref}` ({sha[:10]}) on {_where(gpu)}", "",
             "Summary: " + (counts_text(counts) or "no cases"), ""]
    if accepted and counts.get(SLOWER):
        lines += [f"**Slowdown accepted**: {_cell(accepted)}", ""]
    lines += ["| case | base | head | ratio | 99% interval | detectable | verdict |", "|---|---|---|---|---|---|---|"]
    ordered = sorted(verdicts, key=lambda v: (PAIRED_ORDER.index(v.label), v.case))
    for v in ordered:
        timed = v.ratio is not None
        row = [f"`{_cell(v.case)}`",
               format_duration(v.base_median) if v.base_median else _MISSING,
               format_duration(v.head_median) if v.head_median else _MISSING,
               f"{v.ratio:.3f}×" if timed else _MISSING,
               f"{v.ci_low:.3f}-{v.ci_high:.3f}" if v.ci_low is not None else _MISSING,
               _percent(v.detectable), f"**{v.label}**" if v.label == SLOWER else v.label]
        lines.append("| " + " | ".join(row) + " |")
    notes = [v for v in ordered if v.label not in (SAME_PAIRED, UNCHANGED)]
    if notes:
        lines += ["", "## Details", ""]
        lines += [f"- `{v.case}`: {v.reason}" for v in notes]
    return "\n".join(lines) + "\n"


def write_report(path, text: str) -> None:
    """Write `text` to `path` atomically (temporary file, then rename); an existing report is replaced."""
    write_text_atomically(Path(path), text, replace=True)

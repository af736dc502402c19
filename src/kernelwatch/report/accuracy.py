"""The report's accuracy section: every judged correctness check's errors against its reference's.

One row per check whose verdict is not `same` (and a count of the rest): the maximum and average error now, the
reference's (the newest stored check, or the base's under --kernelwatch-compare-ref), the ratio of the maximum
errors, the tolerance and the margin left to it (1 - max / tolerance). A check with less than a tenth of its
tolerance left is flagged whatever its verdict.
"""

from __future__ import annotations

from collections import Counter

from kernelwatch.report.markdown import cell, table
from kernelwatch.verdict.accuracy import ACCURACY_LABELS, LESS_ACCURATE, format_error, margin_words
from kernelwatch.verdict.labels import SAME


def _order(record) -> tuple:
    label = record.verdict or SAME
    rank = ACCURACY_LABELS.index(label) if label in ACCURACY_LABELS else len(ACCURACY_LABELS)
    return rank, record.case


def accuracy_counts(records) -> str:
    """"accuracy: 1 less accurate, 12 same" ("" where no check was judged)."""
    counts = Counter(record.verdict for record in records if record.verdict)
    if not counts:
        return ""
    return "accuracy: " + ", ".join(f"{counts[label]} {label}" for label in ACCURACY_LABELS if counts[label])


def near_tolerance(record) -> bool:
    return bool(margin_words(record.margin))


def accuracy_section(records, against: str = "this GPU's history") -> str:
    """The markdown section ("" without checks)."""
    if not records:
        return ""
    shown = sorted((r for r in records if (r.verdict and r.verdict != SAME) or near_tolerance(r) or not r.passed),
                   key=_order)
    lines = ["", "## Accuracy", "",
             f"{len(records)} correctness check(s) recorded with this run; judged against {against}. "
             f"{accuracy_counts(records) or 'None judged.'}", ""]
    if shown:
        rows = []
        for r in shown:
            ratio = r.ratio
            margin = r.margin
            words = margin_words(margin)
            flag = f" ({words})" if words else ""
            rows.append([f"`{cell(r.case)}`", r.verdict or "not judged", format_error(r.max_error),
                         format_error(r.avg_error), format_error(r.reference_max), format_error(r.reference_avg),
                         "" if ratio is None else f"{ratio:.3g}x", format_error(r.tolerance_max),
                         "" if margin is None else f"{100 * margin:.1f}%{flag}"])
        lines += table(["check", "verdict", "max error", "avg error", "reference max", "reference avg", "ratio",
                        "tolerance", "margin left"], rows)
        details = [r for r in shown if r.verdict_reason and r.verdict != SAME]
        if details:
            lines += [""] + [f"- `{r.case}`: {r.verdict_reason}" + (f" (reference: {r.reference})" if r.reference
                                                                    else "") for r in details]
    return "\n".join(lines) + "\n"


def failing(records) -> list:
    return [r for r in records if r.verdict == LESS_ACCURATE]

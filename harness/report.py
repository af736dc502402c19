"""Markdown report of a run's verdicts against its baseline."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.baselines import write_text_atomically
from harness.verdict import (
    FASTER,
    NO_BASELINE,
    REGRESSED,
    SAME,
    THROTTLED,
    Verdict,
    format_duration,
)

LABEL_ORDER = (REGRESSED, FASTER, THROTTLED, NO_BASELINE, SAME)
_MISSING = "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rank(label: str) -> int:
    return LABEL_ORDER.index(label) if label in LABEL_ORDER else len(LABEL_ORDER)


def _duration(seconds: float | None) -> str:
    return _MISSING if seconds is None else format_duration(seconds)


def _ratio(ratio: float | None) -> str:
    return _MISSING if ratio is None else f"{ratio:.2f}×"


def _summary(verdicts: list[Verdict]) -> str:
    counts = Counter(v.label for v in verdicts)
    labels = list(LABEL_ORDER) + sorted(set(counts) - set(LABEL_ORDER))
    parts = [f"{counts[label]} {label}" for label in labels]
    total = len(verdicts)
    return f"Summary: {', '.join(parts)} ({total} case{'' if total == 1 else 's'})"


def markdown_report(
    verdicts: list[Verdict],
    gpu_name: str,
    baseline_file: str | None,
    extra: dict[str, dict] | None = None,
) -> str:
    """Render verdicts as a markdown report.

    The report has a heading naming the GPU and the baseline file, a summary
    line counting every label, and a table with one row per case
    (``case | baseline | now | ratio | verdict``), regressions first and the
    regressed verdicts in bold.  When ``extra`` maps cases to dicts with a
    ``"rate"`` string (e.g. ``"41.2 TFLOP/s"``), a ``rate`` column is added.
    Reasons for every verdict other than ``same`` are listed under the table.
    """
    against = f"`{baseline_file}`" if baseline_file else "no baseline"
    lines = [f"# Kernel suite on {gpu_name} vs {against}", "", _summary(verdicts), ""]

    columns = ["case", "baseline", "now", "ratio"]
    if extra:
        columns.append("rate")
    columns.append("verdict")
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "|".join("---" for _ in columns) + "|")

    ordered = sorted(verdicts, key=lambda v: (_rank(v.label), v.case))
    for v in ordered:
        row = [
            f"`{_cell(v.case)}`",
            _duration(v.baseline_median),
            _duration(v.current_median),
            _ratio(v.ratio),
        ]
        if extra:
            row.append(_cell(str(extra.get(v.case, {}).get("rate", _MISSING))))
        row.append(f"**{v.label}**" if v.label == REGRESSED else v.label)
        lines.append("| " + " | ".join(row) + " |")

    notes = [v for v in ordered if v.label != SAME]
    if notes:
        lines += ["", "## Details", ""]
        lines += [f"- `{v.case}`: {v.reason}" for v in notes]
    return "\n".join(lines) + "\n"


def write_report(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file, then rename); an existing report is replaced."""
    write_text_atomically(Path(path), text, replace=True)

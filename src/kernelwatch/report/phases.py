"""The report's section on host routines by phase: where each routine's time went, and each phase's verdict."""

from __future__ import annotations

import statistics

from kernelwatch.report.markdown import cell, table
from kernelwatch.units import MISSING, format_duration
from kernelwatch.verdict.record import CaseRecord


def _phase_cell(record: CaseRecord, phase: str, samples: list[float]) -> str:
    median = statistics.median(samples)
    share = median / record.median_s * 100 if record.median_s else 0.0
    verdict = next((v for v in record.phase_verdicts if v["phase"] == phase), None)
    judged = ""
    if verdict is not None:
        ratio = f" x{verdict['ratio']:.3f}" if verdict.get("ratio") else ""
        label = f"**{verdict['label']}**" if verdict["fails"] else verdict["label"]
        judged = f", {label}{ratio}"
    return f"{format_duration(median)} ({share:.0f}%{judged})"


def phases_section(records: list[CaseRecord]) -> str:
    """The section as text ("" where no record was cut into phases): one row per host routine, a cell per
    phase (its median, its share of the routine's median, its verdict and ratio), then the reasons of
    the phases not judged same."""
    cut = sorted((r for r in records if r.phases), key=lambda r: r.case)
    if not cut:
        return ""
    names = list(dict.fromkeys(phase for record in cut for phase in record.phases))
    rows = [[f"`{cell(record.case)}`", format_duration(record.median_s),
             *(_phase_cell(record, phase, record.phases[phase]) if record.phases.get(phase) else MISSING
               for phase in names)] for record in cut]
    lines = ["", "## Host routines by phase", "",
             "Each routine's wall-clock samples cut by CUPTI's records (docs/method.md): medians, the share of "
             "the routine's median, and each phase's verdict against this GPU's own runs (the GPU's floors for "
             "the kernel, the host-copy floor for the copies, the wall clock's 30% for the host).", ""]
    lines += table(["host routine", "end to end", *names], rows)
    reasons = [f"- `{r.case}` {v['phase']}: {v['reason']}" for r in cut for v in r.phase_verdicts
               if v["label"] not in ("same", "new")]
    return "\n".join(lines + ([""] + reasons if reasons else [])) + "\n"

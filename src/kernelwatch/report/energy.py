"""The report's energy section: joules per launch of each measured case, its power, clocks and energy verdict.

The measurement and the verdict are made as the case is timed (src/kernelwatch/plugin/energy.py,
src/kernelwatch/verdict/energy.py); this only writes what the records hold.
"""

from __future__ import annotations

from kernelwatch.report.markdown import cell, table
from kernelwatch.units import MISSING
from kernelwatch.verdict.energy import interval_text
from kernelwatch.verdict.record import CaseRecord


def energy_section(records: list[CaseRecord]) -> str:
    """The report's energy section as text ("" where no case measured energy)."""
    lines = energy_lines(records)
    return "\n".join(lines) + "\n" if lines else ""


def energy_lines(records: list[CaseRecord]) -> list[str]:
    """The report's energy section: one row per measured case (none without any)."""
    measured = sorted((r for r in records if r.energy), key=lambda r: r.case)
    if not measured:
        return []
    rows = []
    for record in measured:
        block, verdict = record.energy, record.energy_verdict or {}
        per_joule = (f"{block['work_per_joule']:.1f} {block['work_per_joule_unit']}"
                     if block.get("work_per_joule") is not None else MISSING)
        idle = block.get("idle_baseline_watts")
        clocks = (f"{block['sm_clock_mhz_min']}-{block['sm_clock_mhz_max']}"
                  if block.get("sm_clock_mhz_min") is not None else MISSING)
        label = verdict.get("label") or MISSING
        rows.append([f"`{cell(record.case)}`", cell(interval_text(block)), f"{block['active_watts_mean']:.0f}",
                     MISSING if idle is None else f"{idle:.0f}", per_joule, clocks,
                     "-".join(MISSING if block[key] is None else str(block[key])
                              for key in ("temperature_c_before", "temperature_c_after")),
                     f"**{label}**" if verdict.get("fails") else label])
    lines = ["", "## Energy", "",
             "Joules per launch over windows cut at NVML's energy counter updates, launches replayed back to back "
             "(docs/method.md); W: mean power in the windows, idle: the GPU with nothing queued, this run.", ""]
    lines += table(["case", "per launch", "W", "idle W", "work per joule", "SM MHz", "°C", "energy verdict"], rows)
    reasons = [f"- `{r.case}`: {r.energy_verdict['reason']}" for r in measured
               if r.energy_verdict and r.energy_verdict.get("label") not in ("same", None)]
    return lines + ([""] + reasons if reasons else [])

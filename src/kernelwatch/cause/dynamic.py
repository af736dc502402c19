"""The dynamic half of a cause card: both sides of a slower case under Nsight Compute, and what moved.

`profile(command, kernel)` runs `ncu` on a command that launches the kernel (replaying that kernel
only, the clocks left as they are: `--clock-control none`, the first launch skipped as a warm-up),
asks for `METRICS` and reads `ncu --csv`'s rows (one per metric: name, unit, value), never its text.
A metric this ncu does not know is dropped and the rest asked for again, and named in the profile.

`dynamic_causes(base, head)` scores what the counters say (src/kernelwatch/cause/card.py merges them with the
static causes by key):

| key | evidence | score |
| --- | --- | --- |
| bank conflicts | shared-memory bank conflicts per LSU instruction | 40 x log2((1 + head) / (1 + base)) |
| uncoalesced global loads | L1 sectors per global load request, 1.3 x or more | 40 x log2(ratio) |
| divergence | threads per executed instruction, down 1.2 x or more | 40 x log2(ratio) |
| barriers | the barrier stall's share of all stalls, up 5 points or more | 100 x the points |
| occupancy | achieved occupancy, down 1.2 x or more | 40 x log2(ratio) |
| spills | local-memory sectors, more than doubled | 50 + 10 x log2(ratio) |
| memory traffic | DRAM or L2 bytes, 1.3 x or more | 20 x log2(ratio) |

`stall_shares` ranks the warp stall reasons by how much of the change of stalled cycles each explains
(its stalls per issued instruction times the instructions issued, head minus base).
"""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from kernelwatch.cause.card import Cause

STALLS = ("barrier", "long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "math_pipe_throttle",
          "wait", "not_selected", "selected", "no_instruction", "branch_resolving", "dispatch_stall", "drain",
          "membar", "sleeping", "tex_throttle", "imc_miss", "misc")
STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
METRICS = (
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__inst_issued.avg.pct_of_peak_sustained_active",
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "smsp__inst_executed.sum",
    "smsp__inst_issued.sum",
    "sm__inst_executed_pipe_fma.sum",
    "sm__inst_executed_pipe_lsu.sum",
    "sm__inst_executed_pipe_alu.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    *(STALL_METRIC.format(reason) for reason in STALLS),
)
# ncu's units as its CSV writes them: Nsight Compute 2025.3 writes "ns", "us", "ms" for times (seen on
# the H200, 2026-12-02) where older versions wrote "nsecond"; bytes as "byte", "Kbyte", ...
_UNITS = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3,
          "s": 1.0, "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "B": 1.0, "KB": 1e3,
          "MB": 1e6, "GB": 1e9, "TB": 1e12}
_UNKNOWN = re.compile(r"Failed to find metric (\S+)")


class ProfilerMissing(RuntimeError):
    """No ncu on this machine, or it could not profile."""


@dataclass(frozen=True)
class NcuProfile:
    """Nsight Compute's counters for one launch of one side's kernel (not a sampling plan: timing/profile.py)."""

    kernel: str
    metrics: dict[str, float]
    dropped: tuple[str, ...] = ()  # metrics this ncu did not know
    seconds: float = 0.0  # how long ncu took
    notes: tuple[str, ...] = field(default=())

    def get(self, name: str, default: float = 0.0) -> float:
        return self.metrics.get(name, default)


def parse_csv(text: str) -> dict[str, float]:
    """{metric: value in base units (seconds, bytes, %, ratio)} of `ncu --csv`'s rows (the last kernel's)."""
    rows = [line for line in text.splitlines() if line.startswith('"')]
    if not rows:
        return {}
    reader = csv.DictReader(io.StringIO("\n".join(rows)))
    found: dict[str, float] = {}
    for row in reader:
        # a row cut short (fewer fields than the header) has None for the fields it lacks: read as absent
        name, unit, value = row.get("Metric Name"), row.get("Metric Unit") or "", row.get("Metric Value") or ""
        if not name:
            continue
        try:
            number = float(value.replace(",", ""))
        except ValueError:
            continue
        found[name] = number * _UNITS.get(unit, 1.0)
    return found


def profile(command: Sequence[str], kernel: str, *, metrics: Sequence[str] = METRICS, ncu: str | None = None,
            timeout: float = 300) -> NcuProfile:
    """`command` under ncu, the second launch of `kernel` (a regex of its name) profiled."""
    import time

    ncu = ncu or shutil.which("ncu")
    if ncu is None:
        raise ProfilerMissing("no ncu on PATH (Nsight Compute): the dynamic half of the card needs it")
    wanted, dropped = list(metrics), []
    started = time.perf_counter()
    for _ in range(3):
        done = subprocess.run([ncu, "--csv", "--clock-control", "none", "--kernel-name", f"regex:{kernel}",
                               "--launch-skip", "1", "--launch-count", "1", "--metrics", ",".join(wanted),
                               *command], capture_output=True, text=True, timeout=timeout)
        unknown = _UNKNOWN.findall(done.stdout + done.stderr)
        if unknown:
            dropped += [name.strip(".,'\"") for name in unknown]
            wanted = [name for name in wanted if name not in dropped]
            continue
        values = parse_csv(done.stdout)
        if not values:
            tail = " / ".join((done.stdout + done.stderr).strip().splitlines()[-4:])
            raise ProfilerMissing(f"ncu profiled nothing (exit {done.returncode}): {tail[:400]}")
        return NcuProfile(kernel, values, tuple(dropped), time.perf_counter() - started)
    raise ProfilerMissing(f"ncu kept refusing metrics: {', '.join(dropped)}")


def _share_of_stalls(p: NcuProfile, reason: str) -> float:
    total = sum(p.get(STALL_METRIC.format(r)) for r in STALLS)
    return p.get(STALL_METRIC.format(reason)) / total if total else 0.0


def stall_shares(base: NcuProfile, head: NcuProfile) -> list[tuple[str, float, float, float]]:
    """(reason, base share, head share, fraction of the change of stalled cycles it explains), largest first."""
    def cycles(p: NcuProfile, reason: str) -> float:
        return p.get(STALL_METRIC.format(reason)) * p.get("smsp__inst_issued.sum")

    changes = {reason: cycles(head, reason) - cycles(base, reason) for reason in STALLS}
    total = sum(changes.values())
    rows = [(reason, _share_of_stalls(base, reason), _share_of_stalls(head, reason),
             change / total if total else 0.0) for reason, change in changes.items()]
    return sorted(rows, key=lambda row: -row[3])


def _ratio(head: float, base: float) -> float:
    return (head + 1e-12) / (base + 1e-12)


def dynamic_causes(base: NcuProfile, head: NcuProfile) -> list[Cause]:
    """What the counters say changed from `base` to `head`, scored (module docstring)."""
    found: list[Cause] = []
    conflicts = [p.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
                 + p.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum") for p in (base, head)]
    per = [c / max(p.get("sm__inst_executed_pipe_lsu.sum"), 1) for c, p in zip(conflicts, (base, head), strict=True)]
    if per[1] > per[0] + 0.05:
        found.append(Cause("bank conflicts", 40 * math.log2((1 + per[1]) / (1 + per[0])),
                           f"shared-memory bank conflicts {conflicts[0]:.3g} -> {conflicts[1]:.3g} "
                           f"({per[0]:.2f} -> {per[1]:.2f} per LSU instruction)"))
    sectors = [p.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") / max(
        p.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 1) for p in (base, head)]
    if sectors[0] and sectors[1] >= 1.3 * sectors[0]:
        found.append(Cause("uncoalesced global loads", 40 * math.log2(sectors[1] / sectors[0]),
                           f"uncoalesced global loads: {sectors[0]:.1f} -> {sectors[1]:.1f} sectors per request"))
    threads = [p.get("smsp__thread_inst_executed_per_inst_executed.ratio") for p in (base, head)]
    if threads[1] and threads[0] >= 1.2 * threads[1]:
        found.append(Cause("divergence", 40 * math.log2(threads[0] / threads[1]),
                           f"divergence: {threads[0]:.1f} -> {threads[1]:.1f} active threads per instruction"))
    barrier = [_share_of_stalls(p, "barrier") for p in (base, head)]
    if barrier[1] >= barrier[0] + 0.05:
        found.append(Cause("barriers", 100 * (barrier[1] - barrier[0]),
                           f"stall_barrier {barrier[0]:.0%} -> {barrier[1]:.0%} of stalls"))
    occupancy = [p.get("sm__warps_active.avg.pct_of_peak_sustained_active") for p in (base, head)]
    if occupancy[1] and occupancy[0] >= 1.2 * occupancy[1]:
        found.append(Cause("occupancy", 40 * math.log2(occupancy[0] / occupancy[1]),
                           f"achieved occupancy {occupancy[0]:.0f}% -> {occupancy[1]:.0f}%"))
    local = [p.get("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum") + p.get("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
             for p in (base, head)]
    if local[1] > 2 * local[0] + 1000:
        found.append(Cause("spills", 50 + 10 * math.log2(_ratio(local[1], local[0] + 1)),
                           f"local-memory sectors {local[0]:.3g} -> {local[1]:.3g}"))
    for metric, words in (("dram__bytes.sum", "DRAM bytes"), ("lts__t_bytes.sum", "L2 bytes")):
        if base.get(metric) and head.get(metric) >= 1.3 * base.get(metric):
            found.append(Cause("memory traffic", 20 * math.log2(head.get(metric) / base.get(metric)),
                               f"{words} {base.get(metric):.3g} -> {head.get(metric):.3g}"))
    return found


def figures(p: NcuProfile) -> dict[str, float]:
    """The card table's rows of one profile (time in µs)."""
    values = {f"ncu {name}": value for name, value in p.metrics.items() if name != "gpu__time_duration.sum"}
    values["ncu duration (µs)"] = p.get("gpu__time_duration.sum") * 1e6
    return values

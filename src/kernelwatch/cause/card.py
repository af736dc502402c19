"""The cause card of a slower case: the differences between its two sides, ranked, in plain words.

`static_causes(base, head)` compares two `StaticProfile`s (static.py) and `dynamic_causes(base, head)`
two Nsight Compute profiles (dynamic.py); each gives `Cause`s with a key (what it blames), a score and
its words. `card(...)` merges them by key, the strongest first, and renders the block a report shows
under a slower case: the top three causes, a table of every figure of both sides, and the environment
differences where there are any.

How the static causes are scored (a kernel developer's order of suspicion, each term growing with how
far the figure moved; checked on the eight variants of
notes/2026-12-03.md#2026-12-03-fourteenth-session-the-nightlys-card-on-a-caching-nvrtc-copy-phases-at-the-host-copy-floor-sample-8):

| key | when | score |
| --- | --- | --- |
| spills | spill stores or loads appear or grow | 100 + log2(bytes) |
| occupancy | fewer warps per SM | 40 + 50 x the fraction lost |
| barriers | more BAR instructions in the code | 30 x log2(ratio) |
| unrolling | a quarter or fewer of the FFMAs left in the code | 30 x log2(ratio) |
| global loads per FFMA | 1.3 x or more | 30 x log2(ratio) |
| shared loads per FFMA | 1.3 x or more | 20 x log2(ratio) |
| barriers (per FFMA) | BAR per FFMA in the code 1.3 x or more (a shorter k step syncs more often) | 20 x log2(ratio) |
| narrower loads | fewer 128-bit (or 64-bit) loads of a class, more narrow ones | 20 |
| branches | 1.3 x or more branches in the code | 15 x log2(ratio) |
| registers | any change, where nothing above explains it | 10 x abs(log2(ratio)) |

Counts per FFMA are of the code, not of what runs: where the code lost its unrolling, they move with the
code's size alone, and are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kernelwatch.cause.static import StaticProfile


@dataclass(frozen=True)
class Cause:
    key: str  # what it blames: "barriers", "spills", "bank conflicts", ...
    score: float
    words: str  # "BAR in the code 2 -> 34"


def _per(counts, name: str, by: str) -> float:
    return counts.get(name, 0) / max(counts.get(by, 0), 1)


def static_causes(base: StaticProfile, head: StaticProfile) -> list[Cause]:
    """What the compiler's output says changed from `base` to `head`, scored (module docstring)."""
    found: list[Cause] = []
    b, h = base.sass, head.sass
    spilled = (head.spill_stores + head.spill_loads) - (base.spill_stores + base.spill_loads)
    if spilled > 0:
        found.append(Cause("spills", 100 + math.log2(1 + spilled),
                           f"spills: stores {base.spill_stores} -> {head.spill_stores} bytes, loads "
                           f"{base.spill_loads} -> {head.spill_loads} bytes (registers {base.registers} -> "
                           f"{head.registers}; local memory LDL/STL {b.get('LDL/STL (local)', 0)} -> "
                           f"{h.get('LDL/STL (local)', 0)} in the code)"))
    if head.occupancy.warps < base.occupancy.warps:
        lost = 1 - head.occupancy.warps / base.occupancy.warps
        found.append(Cause("occupancy", 40 + 50 * lost,
                           f"occupancy {base.occupancy.blocks} -> {head.occupancy.blocks} blocks per SM "
                           f"({base.occupancy.warps} -> {head.occupancy.warps} warps; now limited by "
                           f"{head.occupancy.limited_by}: shared memory {base.static_shared + base.dynamic_shared}"
                           f" -> {head.static_shared + head.dynamic_shared} bytes a block, registers "
                           f"{base.registers} -> {head.registers})"))
    if h.get("BAR", 0) > b.get("BAR", 0):
        found.append(Cause("barriers", 30 * math.log2(h["BAR"] / max(b.get("BAR", 0), 1)),
                           f"barriers: BAR in the code {b.get('BAR', 0)} -> {h['BAR']}"))
    unrolled_less = bool(b.get("FFMA", 0)) and h.get("FFMA", 0) <= b["FFMA"] / 4
    if unrolled_less:
        found.append(Cause("unrolling", 30 * math.log2(b["FFMA"] / max(h.get("FFMA", 0), 1)),
                           f"unrolling: FFMA in the code {b['FFMA']} -> {h.get('FFMA', 0)}, branches "
                           f"{b.get('branch', 0)} -> {h.get('branch', 0)} (a loop the compiler no longer unrolls)"))
    per_ffma = (("LDG", "global loads per FFMA", 30, "a smaller tile reuses each load less"),
                ("LDS", "shared loads per FFMA", 20, "a smaller tile reuses each load less"),
                ("BAR", "barriers", 20, "a shorter step along k synchronizes the block more often"))
    for kind, key, weight, why in () if unrolled_less else per_ffma:
        before, after = _per(b, kind, "FFMA"), _per(h, kind, "FFMA")
        if before and after >= 1.3 * before:
            found.append(Cause(key, weight * math.log2(after / before),
                               f"{kind} per FFMA in the code {before:.4f} -> {after:.4f} ({kind} {b.get(kind, 0)} -> "
                               f"{h.get(kind, 0)}, FFMA {b.get('FFMA', 0)} -> {h.get('FFMA', 0)}: {why})"))
    for kind in ("LDG", "LDS", "STG", "STS"):
        for wide in (128, 64):
            if h.get(f"{kind}.{wide}", 0) < b.get(f"{kind}.{wide}", 0) and h.get(f"{kind}.32", 0) > b.get(f"{kind}.32", 0):
                found.append(Cause("narrower loads", 20, f"narrower {kind}: {kind}.{wide} {b[f'{kind}.{wide}']} -> "
                                                         f"{h.get(f'{kind}.{wide}', 0)}, {kind}.32 "
                                                         f"{b.get(f'{kind}.32', 0)} -> {h[f'{kind}.32']}"))
                break
    if h.get("branch", 0) >= 1.3 * max(b.get("branch", 0), 1):
        found.append(Cause("branches", 15 * math.log2(h["branch"] / max(b.get("branch", 0), 1)),
                           f"branches in the code {b.get('branch', 0)} -> {h['branch']}"))
    if head.registers != base.registers and not any(c.key in ("spills", "occupancy") for c in found):
        found.append(Cause("registers", 10 * abs(math.log2(head.registers / base.registers)),
                           f"registers {base.registers} -> {head.registers} per thread"))
    return found


def merged(causes: Iterable[Cause]) -> list[Cause]:
    """Causes of one key summed into one (the words of the strongest first), the strongest first."""
    by_key: dict[str, list[Cause]] = {}
    for cause in causes:
        by_key.setdefault(cause.key, []).append(cause)
    result = []
    for key, group in by_key.items():
        group.sort(key=lambda c: -c.score)
        result.append(Cause(key, sum(c.score for c in group), "; ".join(c.words for c in group)))
    return sorted(result, key=lambda c: (-c.score, c.key))


def table(base: Mapping[str, float], head: Mapping[str, float]) -> list[str]:
    """Markdown rows of every figure of both sides (changed ones marked)."""
    rows = ["| figure | base | head |", "|---|---|---|"]
    for name in sorted(set(base) | set(head)):
        before, after = base.get(name), head.get(name)
        mark = "**" if before != after else ""
        rows.append(f"| {name} | {_number(before)} | {mark}{_number(after)}{mark} |")
    return rows


def _number(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.4g}"
    return f"{int(value)}"


def title(case: str) -> list[str]:
    """A card's heading and the blank line after it."""
    return [f"#### Why `{case}` is slower", ""]


def no_card(case: str, why: object) -> list[str]:
    """The block of a slower case whose card could not be made, and why."""
    return [*title(case), f"No card: {why}", ""]


def environment_differences(environment: Mapping[str, tuple[str, str]] | None) -> str:
    """"driver 570 -> 580; CuPy 14.1 -> 14.2": the fields of (old, new) pairs that differ ("" where none do)."""
    return "; ".join(f"{name} {a} -> {b}" for name, (a, b) in (environment or {}).items() if a != b)


def card(case: str, causes: Iterable[Cause], base_figures: Mapping[str, float], head_figures: Mapping[str, float],
         environment: Mapping[str, tuple[str, str]] | None = None, note: str = "") -> list[str]:
    """The markdown block of a slower case's cause card."""
    ranked = merged(causes)
    lines = title(case)
    if note:
        lines += [note, ""]
    if ranked:
        lines += [f"{i}. **{c.key}**: {c.words}" for i, c in enumerate(ranked[:3], start=1)]
    else:
        lines.append("No difference the card reads explains it (the same build, launch and counters).")
    lines += ["", *table(base_figures, head_figures)]
    if differing := environment_differences(environment):
        lines += ["", "Environment differences: " + differing]
    return lines + [""]

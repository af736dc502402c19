"""The card of a host routine slower in a phase: where its time moved, phase by phase.

A host routine (the seeds' allocate, copy, launch, copy back) has no one kernel build to compare, but
its phases (src/kernelwatch/timing/phases.py) were each judged against this GPU's stored runs
(src/kernelwatch/verdict/phases.py). Its card ranks the phases by the time each gained against its
reference: a phase found slower (or accepted) comes before any phase within its noise, and each
cause says its share of the time the phases gained. The table lists each phase's median on both
sides; the environment differences follow, as on every card.
"""

from __future__ import annotations

from collections.abc import Mapping

from kernelwatch.cause.card import Cause, card
from kernelwatch.units import format_duration
from kernelwatch.verdict.labels import ACCEPTED, SLOWER

FOLLOWED_SCORE = 100.0  # a phase judged slower (or accepted) ranks above any phase within its noise
MIN_SHARE = 0.05  # a phase within its noise is named only where it gained this much of the time: else it is noise


def phase_causes(phase_verdicts: list[dict]) -> list[Cause]:
    """A cause for each judged phase that gained time (`phase_fields` dicts), scored by its share of the time
    all of them gained, plus FOLLOWED_SCORE for a phase judged slower or accepted; a phase within its noise
    is left out under MIN_SHARE."""
    gained = {v["phase"]: v["median_s"] - v["reference_median_s"] for v in phase_verdicts
              if v.get("reference_median_s") is not None and v["median_s"] > v["reference_median_s"]}
    total = sum(gained.values())
    causes = []
    for verdict in phase_verdicts:
        if verdict["phase"] not in gained:
            continue
        share = gained[verdict["phase"]] / total
        followed = verdict["label"] in (SLOWER, ACCEPTED)
        if not followed and share < MIN_SHARE:
            continue
        detectable = f"; detectable {100 * verdict['detectable']:.1f}%" if verdict.get("detectable") else ""
        causes.append(Cause(
            f"{verdict['phase']} phase", FOLLOWED_SCORE * followed + 100 * share,
            f"{format_duration(verdict['reference_median_s'])} -> {format_duration(verdict['median_s'])} "
            f"(x{verdict['ratio']:.3f}, {verdict['label']}{detectable}), "
            f"{100 * share:.0f}% of the time the phases gained"))
    return causes


def phase_card(case: str, phase_verdicts: list[dict], environment: Mapping[str, tuple[str, str]] | None,
               reference: str) -> list[str]:
    """The markdown card of a host routine with a slower or accepted phase, against `reference` (in words)."""
    def micro(seconds: float) -> float:  # to the 4 figures the table prints, so that it marks only what moved
        return float(f"{seconds * 1e6:.4g}")

    base = {f"{v['phase']} median (µs)": micro(v["reference_median_s"]) for v in phase_verdicts
            if v.get("reference_median_s") is not None}
    head = {f"{v['phase']} median (µs)": micro(v["median_s"]) for v in phase_verdicts}
    return card(case, phase_causes(phase_verdicts), base, head, environment,
                note=f"Phase by phase against {reference}; the routine's kernel and copies by CUPTI's records, "
                     "its host phase by the wall clock less them.")

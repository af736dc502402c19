"""The user's threshold: the one same-GPU floor that every command that judges reads.

The plugin (`--kernelwatch-threshold`), `kernelwatch compare` and the history's `changes`, `site` and
`bisect` (whose probes are plugin runs) take it from their own option, else from $KERNELWATCH_THRESHOLD,
else they judge with the noise model's floors as they are (src/kernelwatch/verdict/noise.py).
"""

from __future__ import annotations

import dataclasses
import os

from kernelwatch.verdict.noise import NoiseFloors
from kernelwatch.verdict.stats import parse_fraction

DEFAULT_FLOORS = NoiseFloors()
# the smallest slow-down flagged against this very GPU, read by every command that judges: the plugin
# (--kernelwatch-threshold), `python -m kernelwatch.compare` and `history changes`/`site` (--threshold), and
# `history bisect`, whose probes are plugin runs
THRESHOLD_ENV = "KERNELWATCH_THRESHOLD"
THRESHOLD_HELP = (f"smallest slow-down flagged against a run from the same GPU, e.g. 0.02 or 2%% (default: "
                  f"${THRESHOLD_ENV}, as a pytest run reads it, else {DEFAULT_FLOORS.same_gpu * 100:g}%%)")


def threshold_from(given: str | None, option: str) -> float | None:
    """The threshold a command judges with: its own option's value `given` (the option named `option`), else
    $KERNELWATCH_THRESHOLD, else None (the floors as they are). ValueError naming where a value that is no
    fraction came from: the option, or the variable."""
    if given:
        return parse_fraction(given, option)
    variable = os.environ.get(THRESHOLD_ENV, "")
    return parse_fraction(variable, f"${THRESHOLD_ENV}") if variable.strip() else None


def judging_floors(given: str | None, option: str = "--threshold") -> NoiseFloors:
    """The floors of every command that judges, with `threshold_from(given, option)` (ValueError as there)."""
    return floors_with_threshold(DEFAULT_FLOORS, threshold_from(given, option))


def floors_with_threshold(floors: NoiseFloors, threshold: float | None) -> NoiseFloors:
    """The floors with the user's --kernelwatch-threshold as the same-GPU floor (never above other-GPU)."""
    if threshold is None:
        return floors
    return dataclasses.replace(floors, same_gpu=threshold, other_gpu=max(floors.other_gpu, threshold))

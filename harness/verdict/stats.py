"""Regression verdicts from stored timing samples.

A case is compared with its baseline on medians.  A change counts only when
two things agree: the median ratio moves past the case's smallest detectable
change (harness/verdict/noise.py says how that is set) and a one-sided Mann-Whitney U
test on the raw samples is significant.  Cases timed while NVML reported
throttling are never compared; harness/verdict/against_baseline.py adds the cases that are
not judged because of their baseline (another timer, another host, throttled).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import mannwhitneyu

SAME = "same"
REGRESSED = "regressed"
FASTER = "faster"
NO_BASELINE = "no baseline"
THROTTLED = "throttled"
OTHER_HOST = "other host"  # a wall-clock case against a baseline from another machine: not judged
OTHER_TIMER = "other timer"  # a baseline case timed by another timer (CUPTI, held CUDA events): not judged

# With 3 samples a side the smallest one-sided p is 0.05; below that no test is run.
MIN_SAMPLES_FOR_TEST = 3

_UNITS = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing one case's timings with its baseline.

    Times are in seconds; ``ratio`` is current median / baseline median;
    ``detectable`` is the smallest change (a fraction of the baseline median)
    the case was judged against.  ``baseline_median``, ``ratio``, ``p_value``
    and ``detectable`` are None when they could not be computed (no baseline,
    or too few samples for the test).
    """

    case: str
    label: str
    baseline_median: float | None
    current_median: float
    ratio: float | None
    p_value: float | None
    detectable: float | None
    reason: str


def format_duration(seconds: float) -> str:
    """Format a time in seconds with 3 significant figures and a fitting unit.

    For example ``0.0001234`` gives ``"123 µs"`` and ``2.5`` gives ``"2.50 s"``.
    """
    if not math.isfinite(seconds):
        return str(seconds)
    if seconds == 0:
        return "0 s"
    for unit, scale in _UNITS:
        value = seconds / scale
        rounded = abs(float(f"{value:.3g}"))
        if rounded < 1000 or unit == "s":
            break
    digits = 2 - math.floor(math.log10(rounded))
    return f"{value:.{max(digits, 0)}f} {unit}"


def checked_samples(name: str, samples: Sequence[float]) -> np.ndarray:
    """``samples`` as a float array; ValueError naming ``name`` unless a flat, non-empty set of positive times."""
    try:
        values = np.asarray(samples, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} samples are not numbers") from None
    if values.ndim != 1:
        raise ValueError(f"{name} samples must be a flat sequence of times")
    if values.size == 0:
        raise ValueError(f"{name} samples are empty")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} samples contain NaN or infinite times")
    if np.any(values <= 0):
        raise ValueError(f"{name} samples contain zero or negative times")
    return values


def parse_fraction(raw: str, what: str) -> float:
    """Read a fraction given as ``"0.05"`` or ``"5%"`` (spaces allowed).

    Raises ValueError naming ``what`` when ``raw`` is not a number or not
    strictly between 0 and 1 (0% and 100%).
    """
    if not isinstance(raw, str):
        raise ValueError(f"{what} must be text like 0.05 or 5%, got {raw!r}")
    text = raw.strip()
    percent = text.endswith("%")
    number = text[:-1].strip() if percent else text
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{what}={raw!r} is not a number; use a fraction like 0.05 or 5%") from None
    if percent:
        value /= 100
    if not (math.isfinite(value) and 0 < value < 1):
        raise ValueError(f"{what}={raw!r} must be between 0 and 1 (0% and 100%), exclusive; "
                         f"use a fraction like 0.05 or 5%")
    return value


def _is_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(value)


def _one_sided_p(current: np.ndarray, baseline: np.ndarray, slower: bool) -> float:
    alternative = "greater" if slower else "less"
    p = float(mannwhitneyu(current, baseline, alternative=alternative).pvalue)
    return 1.0 if math.isnan(p) else p


def judge(
    case: str,
    baseline_samples: Sequence[float] | None,
    current_samples: Sequence[float],
    *,
    detectable: float | None,
    alpha: float = 0.01,
    throttled: bool = False,
    because: str = "",
) -> Verdict:
    """Compare one case's current samples with its baseline samples.

    ``detectable`` is the case's smallest detectable change as a fraction
    (``harness.noise.detectable_change``); it may exceed 1 when the absolute
    floor is longer than the baseline median.  ``because`` names what set it,
    for the reason.
    Returns a Verdict labelled NO_BASELINE (``baseline_samples`` is None;
    ``detectable`` may then be None), THROTTLED (``throttled`` is true),
    REGRESSED (median ratio > 1 + detectable and one-sided Mann-Whitney
    p < ``alpha``), FASTER (ratio < 1 - detectable and p < ``alpha``) or SAME.
    With fewer than 3 samples on either side no test is run, ``p_value`` is
    None and the ratio alone decides.  Raises ValueError for empty, non-finite
    or non-positive samples, ``alpha`` outside (0, 1) and a missing,
    non-positive or non-finite ``detectable`` when there is a baseline.
    """
    if not (_is_number(alpha) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a fraction in (0, 1), got {alpha!r}")
    current = checked_samples("current", current_samples)
    current_median = float(np.median(current))

    if baseline_samples is None:
        return Verdict(case, NO_BASELINE, None, current_median, None, None, None,
                       f"no baseline for this case; now {format_duration(current_median)}")

    if not (_is_number(detectable) and detectable > 0):
        raise ValueError(f"detectable must be a positive fraction of the baseline median, got {detectable!r}")
    baseline = checked_samples("baseline", baseline_samples)
    baseline_median = float(np.median(baseline))
    ratio = current_median / baseline_median

    if throttled:
        return Verdict(case, THROTTLED, baseline_median, current_median, ratio, None, detectable,
                       f"NVML reported thermal or power throttling during the samples, "
                       f"so the {ratio:.2f}× ratio was not judged")

    slower = ratio >= 1
    change = f"{abs(ratio - 1) * 100:.1f}% {'slower' if slower else 'faster'} than the baseline"
    beyond_detectable = ratio > 1 + detectable if slower else ratio < 1 - detectable

    if min(baseline.size, current.size) < MIN_SAMPLES_FOR_TEST:
        p_value = None
        significant = True
        stats_note = "too few samples for a significance test"
    else:
        p_value = _one_sided_p(current, baseline, slower)
        significant = p_value < alpha
        stats_note = f"p={p_value:.2g}"

    limit = f"detectable change {detectable * 100:.1f}%" + (f" ({because})" if because else "")
    reason = f"{change} ({stats_note}); {limit}"
    if beyond_detectable and significant:
        label = REGRESSED if slower else FASTER
    else:
        label = SAME
        reason += ", not exceeded" if not beyond_detectable else f", exceeded but not significant at alpha={alpha:g}"
    return Verdict(case, label, baseline_median, current_median, ratio, p_value, detectable, reason)

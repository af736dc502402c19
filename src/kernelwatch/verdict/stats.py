"""Regression verdicts from stored timing samples.

A case is compared with its baseline on medians.  A change counts only when
two things agree: the median ratio moves past the case's smallest detectable
change (src/kernelwatch/verdict/noise.py says how that is set) and a one-sided Mann-Whitney U
test on the raw samples is significant.  Cases timed while NVML reported
throttling are never compared; src/kernelwatch/verdict/against_baseline.py adds the cases that are
not judged because of their baseline (another timer, another host, throttled).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
from scipy.stats import mannwhitneyu

from kernelwatch.units import change, format_duration
from kernelwatch.verdict.labels import FASTER, NEW, SAME, SLOWER, THROTTLED, Verdict

# With 3 samples a side the smallest one-sided p is 0.05; below that no test is run.
MIN_SAMPLES_FOR_TEST = 3

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
    (``kernelwatch.verdict.noise.detectable_change``); it may exceed 1 when the absolute
    floor is longer than the baseline median.  ``because`` names what set it,
    for the reason.
    Returns a Verdict labelled NEW (``baseline_samples`` is None;
    ``detectable`` may then be None), THROTTLED (``throttled`` is true),
    SLOWER (median ratio > 1 + detectable and one-sided Mann-Whitney
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
        return Verdict(case, NEW, None, current_median, None, None,
                       f"no reference for this case; now {format_duration(current_median)}")

    if not (_is_number(detectable) and detectable > 0):
        raise ValueError(f"detectable must be a positive fraction of the baseline median, got {detectable!r}")
    baseline = checked_samples("baseline", baseline_samples)
    baseline_median = float(np.median(baseline))
    ratio = current_median / baseline_median

    if throttled:
        return Verdict(case, THROTTLED, baseline_median, current_median, ratio, detectable,
                       f"NVML reported thermal or power throttling during the samples, "
                       f"so the {ratio:.2f}× ratio was not judged")

    slower = ratio >= 1
    moved = f"{change(ratio)} than the reference"
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
    reason = f"{moved} ({stats_note}); {limit}"
    if beyond_detectable and significant:
        label = SLOWER if slower else FASTER
    else:
        label = SAME
        reason += ", not exceeded" if not beyond_detectable else f", exceeded but not significant at alpha={alpha:g}"
    return Verdict(case, label, baseline_median, current_median, ratio, detectable, reason, p_value=p_value)

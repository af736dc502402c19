"""Regression verdicts from stored timing samples.

A case is compared with its baseline on medians, but a change only counts
when three things agree: the median ratio moves past the threshold, a
one-sided Mann-Whitney U test on the raw samples is significant, and the
shift between medians is larger than the interquartile range of either
run.  Cases timed while NVML reported throttling are never compared.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import mannwhitneyu

SAME = "same"
REGRESSED = "regressed"
FASTER = "faster"
NO_BASELINE = "no baseline"
THROTTLED = "throttled"

THRESHOLD_ENV = "KERNEL_SUITE_THRESHOLD"
MIN_SAMPLES_FOR_TEST = 3

_UNITS = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing one case's timings with its baseline.

    Times are in seconds; ``ratio`` is current median / baseline median.
    ``baseline_median``, ``ratio`` and ``p_value`` are None when they could
    not be computed (no baseline, or too few samples for the test).
    """

    case: str
    label: str
    baseline_median: float | None
    current_median: float
    ratio: float | None
    p_value: float | None
    reason: str

    @property
    def passed(self) -> bool:
        """False only for a regression; every other label passes."""
        return self.label != REGRESSED


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


def _checked_samples(name: str, samples: Sequence[float]) -> np.ndarray:
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


def _check_fraction(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name} must be a fraction in (0, 1), got {value!r}")


def _noise(values: np.ndarray) -> float:
    q1, q3 = np.percentile(values, [25, 75])
    return float(q3 - q1)


def _one_sided_p(current: np.ndarray, baseline: np.ndarray, slower: bool) -> float:
    alternative = "greater" if slower else "less"
    p = float(mannwhitneyu(current, baseline, alternative=alternative).pvalue)
    return 1.0 if math.isnan(p) else p


def judge(
    case: str,
    baseline_samples: Sequence[float] | None,
    current_samples: Sequence[float],
    threshold: float = 0.05,
    alpha: float = 0.01,
    throttled: bool = False,
) -> Verdict:
    """Compare one case's current samples with its baseline samples.

    Returns a Verdict labelled NO_BASELINE (no baseline samples), THROTTLED
    (``throttled`` is true), REGRESSED or FASTER (median ratio beyond
    ``1 ± threshold``, one-sided Mann-Whitney p < ``alpha``, and median
    shift larger than both runs' IQR), or SAME.  With fewer than 3 samples
    on either side the test is skipped and ``p_value`` is None.
    Raises ValueError for empty, non-finite or non-positive samples and for
    ``threshold``/``alpha`` outside (0, 1).
    """
    _check_fraction("threshold", threshold)
    _check_fraction("alpha", alpha)
    current = _checked_samples("current", current_samples)
    current_median = float(np.median(current))

    if baseline_samples is None:
        return Verdict(case, NO_BASELINE, None, current_median, None, None,
                       f"no baseline for this case; now {format_duration(current_median)}")

    baseline = _checked_samples("baseline", baseline_samples)
    baseline_median = float(np.median(baseline))
    ratio = current_median / baseline_median

    if throttled:
        return Verdict(case, THROTTLED, baseline_median, current_median, ratio, None,
                       f"NVML reported thermal or power throttling during the samples, "
                       f"so the {ratio:.2f}× ratio was not judged")

    slower = ratio >= 1
    change = f"{abs(ratio - 1) * 100:.1f}% {'slower' if slower else 'faster'} than the baseline"
    shift = abs(current_median - baseline_median)
    noise = max(_noise(baseline), _noise(current))
    beyond_threshold = ratio > 1 + threshold if slower else ratio < 1 - threshold
    beyond_noise = shift > noise
    limit = f"{threshold * 100:g}% threshold"

    few = min(baseline.size, current.size) < MIN_SAMPLES_FOR_TEST
    if few:
        p_value = None
        significant = True
        stats_note = "too few samples for a significance test; judged on ratio and noise only"
    else:
        p_value = _one_sided_p(current, baseline, slower)
        significant = p_value < alpha
        stats_note = f"p={p_value:.2g}"

    if beyond_threshold and significant and beyond_noise:
        label = REGRESSED if slower else FASTER
        why = f"beyond the {limit} and the noise of both runs"
    else:
        label = SAME
        if not beyond_threshold:
            why = f"within the {limit}"
        elif not significant:
            why = f"not significant at alpha={alpha:g}"
        else:
            why = (f"but the {format_duration(shift)} shift is within the run-to-run "
                   f"noise (IQR up to {format_duration(noise)})")
    reason = f"{change} ({stats_note}), {why}"
    return Verdict(case, label, baseline_median, current_median, ratio, p_value, reason)


def threshold_from_env(default: float = 0.05) -> float:
    """Read the regression threshold from ``KERNEL_SUITE_THRESHOLD``.

    Accepts a fraction (``0.05``) or a percentage (``5%``); returns
    ``default`` when the variable is unset or blank.  Raises ValueError
    naming the variable when the value is not a number in (0, 1).
    """
    raw = os.environ.get(THRESHOLD_ENV, "").strip()
    if not raw:
        return default
    text = raw[:-1].strip() if raw.endswith("%") else raw
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"{THRESHOLD_ENV}={raw!r} is not a number; use a fraction like 0.05 or 5%"
        ) from None
    if raw.endswith("%"):
        value /= 100
    if not (math.isfinite(value) and 0 < value < 1):
        raise ValueError(
            f"{THRESHOLD_ENV}={raw!r} must be between 0 and 1 (or 0% and 100%), "
            f"exclusive; use a fraction like 0.05 or 5%"
        )
    return value

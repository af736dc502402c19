"""Verdicts for a pull request timed against its base in the same run, samples interleaved.

Base and head are timed A, B, A, B, ... on one GPU, so sample i of each side shares the
clock, temperature and neighbours of that moment: (base_i, head_i) is a pair. The estimate
is the ratio of medians head / base; its confidence interval comes from a bootstrap that
resamples whole pairs, which keeps whatever drift both sides share inside every resample
instead of letting it widen the interval. The resampling uses a fixed seed, so the same
samples always give the same verdict.

A case is SLOWER only when the ratio exceeds 1 + detectable AND the interval lies wholly
above 1 (FASTER alike below); a change smaller than the detectable one, or one the interval
cannot separate from 1, is SAME. Cases whose code and launch are identical on both sides
are UNCHANGED and not timed; cases on one side only are NEW or REMOVED.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from kernelwatch.timing.profile import MIN_PAIRS
from kernelwatch.units import change, format_duration
from kernelwatch.verdict.labels import FASTER, NEW, REMOVED, SAME, SLOWER, UNCHANGED, Verdict
from kernelwatch.verdict.stats import checked_samples

# Resamples drawn and sorted at a time: blocks of 512 x 200 pairs stay in cache; one block of
# 4000 x 200 took twice as long on a 2-core host.
_RESAMPLES_PER_BLOCK = 512


def _check_fraction(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name} must be a fraction in (0, 1), got {value!r}")


def _ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's rank among `values`, and `values` sorted, so that sorted[rank[i]] == values[i]."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size, dtype=np.int16 if values.size <= np.iinfo(np.int16).max else np.int32)
    ranks[order] = np.arange(values.size)
    return ranks, values[order]


def bootstrap_ratio_interval(base: np.ndarray, head: np.ndarray, confidence: float, resamples: int,
                             seed: int) -> tuple[float, float]:
    """Percentile interval of median(head) / median(base) over `resamples` resamplings of the pairs."""
    rng = np.random.default_rng(seed)
    pairs = base.size
    middle = [(pairs - 1) // 2, pairs // 2]
    # A median needs only ranks: numpy sorts rows of 16-bit ranks by radix sort (kind="stable"),
    # twice as fast as sorting the times themselves, and the medians come out identical.
    base_ranks, base_sorted = _ranks(base)
    head_ranks, head_sorted = _ranks(head)
    ratios = np.empty(resamples)
    for start in range(0, resamples, _RESAMPLES_PER_BLOCK):
        stop = min(start + _RESAMPLES_PER_BLOCK, resamples)
        picks = rng.integers(0, pairs, size=(stop - start, pairs))
        base_middle = np.sort(base_ranks[picks], axis=1, kind="stable")[:, middle]
        head_middle = np.sort(head_ranks[picks], axis=1, kind="stable")[:, middle]
        ratios[start:stop] = head_sorted[head_middle].mean(axis=1) / base_sorted[base_middle].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return float(low), float(high)


def judge_paired(case: str, base_samples: Sequence[float], head_samples: Sequence[float], *,
                 detectable: float, confidence: float = 0.99, resamples: int = 4000,
                 seed: int = 0) -> Verdict:
    """Judge one case from interleaved samples: pair i is (base_samples[i], head_samples[i]).

    Unequal lengths use the common prefix (an interrupted run loses its last pairs). Returns
    SLOWER iff ratio > 1 + detectable and ci_low > 1, FASTER iff ratio < 1 - detectable and
    ci_high < 1, else SAME. Raises ValueError for fewer than 5 pairs, samples that are not
    finite positive times, `detectable` or `confidence` outside (0, 1), or fewer than 100
    resamples.
    """
    _check_fraction("detectable", detectable)
    _check_fraction("confidence", confidence)
    # 100 resamples put a 99% interval's ends on single resamples; the default 4000 puts 20 beyond each
    if isinstance(resamples, bool) or not isinstance(resamples, numbers.Integral) or resamples < 100:
        raise ValueError(f"resamples must be an integer of at least 100, got {resamples!r}")
    base = checked_samples("base", base_samples)
    head = checked_samples("head", head_samples)
    pairs = min(base.size, head.size)
    if pairs < MIN_PAIRS:
        raise ValueError(f"{case}: {pairs} pairs of samples, at least {MIN_PAIRS} are needed for a paired verdict")
    base, head = base[:pairs], head[:pairs]

    base_median = float(np.median(base))
    head_median = float(np.median(head))
    ratio = head_median / base_median
    ci_low, ci_high = bootstrap_ratio_interval(base, head, confidence, int(resamples), seed)

    limit = f"the {detectable * 100:g}% detectable change"
    if ratio > 1 + detectable and ci_low > 1:
        label, why = SLOWER, f"beyond {limit}, and the interval lies above 1"
    elif ratio < 1 - detectable and ci_high < 1:
        label, why = FASTER, f"beyond {limit}, and the interval lies below 1"
    else:
        label = SAME
        if not 1 - detectable <= ratio <= 1 + detectable:
            why = f"beyond {limit}, but the interval includes 1"
        elif ci_low > 1 or ci_high < 1:
            why = f"the interval excludes 1, but the change is within {limit}"
        else:
            why = f"within {limit}"
    reason = (f"{change(ratio)} than base ({format_duration(base_median)} -> {format_duration(head_median)}; "
              f"{confidence * 100:g}% interval {ci_low:.3f}x to {ci_high:.3f}x over {pairs} pairs): {why}")
    return Verdict(case, label, base_median, head_median, ratio, detectable, reason, ci_low=ci_low, ci_high=ci_high)


def unchanged(case: str) -> Verdict:
    """A case whose machine code and launch configuration are the same in base and head: not timed."""
    return Verdict(case, UNCHANGED, None, None, None, None, "same SASS and launch configuration in base and head, so not timed")


def new(case: str, head_samples: Sequence[float]) -> Verdict:
    """A case that exists in head only; its median time is reported, nothing is judged."""
    head = checked_samples("head", head_samples)
    head_median = float(np.median(head))
    return Verdict(case, NEW, None, head_median, None, None, f"not in base; {format_duration(head_median)} in head")


def removed(case: str) -> Verdict:
    """A case that exists in base only."""
    return Verdict(case, REMOVED, None, None, None, None, "in base only, removed in head")


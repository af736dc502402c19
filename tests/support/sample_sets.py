"""Sample sets for the verdict tests: recorded ones from a committed H200 run, synthetic ones, and stored
results made of them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.stats import norm

from kernelwatch.verdict.noise import StoredResult
from kernelwatch.verdict.record import TIMER_CUPTI

RECORDED = Path(__file__).parents[1] / "data" / "samples" / "h200_34b7857.json"
ADD_8192_VEC4 = "suites/test_perf_elementwise.py::test_add_time[8192x8192-matrix_add_2d_vec4]"
SPREAD = [0.97e-3, 0.98e-3, 0.99e-3, 1e-3, 1.01e-3, 1.02e-3, 1.03e-3] * 6  # 1 ms, a 3% spread either side


def recorded(case):
    """A sample set of the committed H200 baseline (seconds, recorded order)."""
    return json.loads(RECORDED.read_text())["cases"][case]["samples"]


def spread_samples(median, rsd, n, seed=0):
    """n samples at the normal quantiles of a lognormal with this median and rsd, in a seeded order."""
    quantiles = (np.arange(n) + 0.5) / n
    return np.random.default_rng(seed).permutation(median * np.exp(rsd * norm.ppf(quantiles))).tolist()


def fresh(text: str | None) -> str | None:
    """An equal string that is not the same object, as json or a file name gives."""
    return None if text is None else json.loads(json.dumps(text))


def noisy(median: float, n: int = 40, seed: int = 0) -> list[float]:
    """n samples about `median` with a 0.3% relative spread."""
    return list(median * (1 + 0.003 * np.random.default_rng(seed).standard_normal(n)))


def stored(gpu: str | None, i: int, *, timer: str = TIMER_CUPTI, median: float = 1e-3, sass: str | None = "sass-1",
           run: str | None = None) -> StoredResult:
    """Stored run i's result of one case on `gpu`, every text field read back as from a file."""
    return StoredResult(fresh(gpu), fresh(timer), median, fresh(run or f"run {i}"), fresh(sass),
                        tuple(noisy(median, seed=10 + i)))

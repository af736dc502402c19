"""Sample sets for the verdict tests: recorded ones from a committed H200 run, and synthetic ones."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.stats import norm

RECORDED = Path(__file__).parent / "data" / "samples" / "h200_34b7857.json"
ADD_8192_VEC4 = "suites/test_perf_elementwise.py::test_add_time[8192x8192-matrix_add_2d_vec4]"


def recorded(case):
    """A sample set of the committed H200 baseline (seconds, recorded order)."""
    return json.loads(RECORDED.read_text())["cases"][case]["samples"]


def spread_samples(median, rsd, n, seed=0):
    """n samples at the normal quantiles of a lognormal with this median and rsd, in a seeded order."""
    quantiles = (np.arange(n) + 0.5) / n
    return np.random.default_rng(seed).permutation(median * np.exp(rsd * norm.ppf(quantiles))).tolist()

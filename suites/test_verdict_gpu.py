"""The regression verdict works on real GPU timings: itself is "same", double work is flagged."""

from __future__ import annotations

import pytest

from harness.verdict import REGRESSED, SAME, judge
from kernels import prepare_matmul
from suites.perf_cases import random_device, repeated

pytestmark = [pytest.mark.gpu, pytest.mark.perf]  # times: needs the GPU to itself

N = 2048


@pytest.fixture(scope="module")
def prepared_warptile(gpu):
    return prepare_matmul("warptile", random_device((N, N), 1), random_device((N, N), 2))


def test_kernel_compared_with_itself_is_same(gpu_timer, profile, prepared_warptile):
    first = gpu_timer.measure(prepared_warptile.run, profile)
    second = gpu_timer.measure(prepared_warptile.run, profile)
    verdict = judge("warptile vs itself", first.samples, second.samples)
    assert verdict.label == SAME, verdict.reason


def test_kernel_doing_its_work_twice_is_flagged(gpu_timer, profile, prepared_warptile):
    baseline = gpu_timer.measure(prepared_warptile.run, profile)
    slowed = gpu_timer.measure(repeated(prepared_warptile.run, 2), profile)
    verdict = judge("warptile twice", baseline.samples, slowed.samples)
    assert verdict.label == REGRESSED, verdict.reason
    assert 1.8 < verdict.ratio < 2.2

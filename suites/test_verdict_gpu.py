"""The verdict works on real GPU timings: a kernel against itself is "same", double work is flagged."""

from __future__ import annotations

import pytest

from kernels import prepare_matmul
from kernelwatch.verdict.labels import SAME, SLOWER
from kernelwatch.verdict.noise import detectable_change
from kernelwatch.verdict.stats import judge
from suites.perf_cases import random_device

pytestmark = [pytest.mark.gpu, pytest.mark.perf]  # times: needs the GPU to itself

N = 2048


@pytest.fixture(scope="module")
def prepared_warptile(kernelwatch_gpu):
    return prepare_matmul("warptile", random_device((N, N), 1), random_device((N, N), 2))


def verdict_of(case, baseline, current):
    detectable = detectable_change(baseline.samples, current.samples, same_gpu=True)
    return judge(case, baseline.samples, current.samples, detectable=detectable.fraction, because=detectable.because)


def test_kernel_compared_with_itself_is_same(kernelwatch_timer, kernelwatch_profile, prepared_warptile):
    first = kernelwatch_timer.measure(prepared_warptile.run, kernelwatch_profile)
    second = kernelwatch_timer.measure(prepared_warptile.run, kernelwatch_profile)
    verdict = verdict_of("warptile vs itself", first, second)
    assert verdict.label == SAME, verdict.reason


def test_kernel_doing_its_work_twice_is_flagged(kernelwatch_timer, kernelwatch_profile, prepared_warptile):
    def twice(stream):
        prepared_warptile.run(stream)
        prepared_warptile.run(stream)

    baseline = kernelwatch_timer.measure(prepared_warptile.run, kernelwatch_profile)
    slowed = kernelwatch_timer.measure(twice, kernelwatch_profile)
    verdict = verdict_of("warptile twice", baseline, slowed)
    assert verdict.label == SLOWER, verdict.reason
    assert 1.8 < verdict.ratio < 2.2

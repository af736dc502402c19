"""Host routines: NumPy in, NumPy out, from pageable and from pinned memory."""

from __future__ import annotations

import numpy as np
import pytest

from kernels import MATMUL_KERNELS, matmul_host, pinned_empty, tolerance
from kernelwatch.metrics import relative_error
from suites.inputs import seed_for

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("memory", ["pageable", "pinned"])
@pytest.mark.parametrize("name", list(MATMUL_KERNELS))
def test_matmul_host_routine_matches_float64(name, memory, request, kernelwatch_accuracy):
    m, n, k = 65, 33, 129
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    out = None
    if memory == "pinned":
        a_p, b_p, out = pinned_empty((m, k)), pinned_empty((k, n)), pinned_empty((m, n))
        a_p[:], b_p[:] = a, b
        a, b = a_p, b_p
    out_poisoned = out if out is not None else np.full((m, n), np.nan, np.float32)
    out_poisoned[:] = np.nan
    c = matmul_host(name, a, b, out=out_poisoned)
    errors = relative_error(c, a.astype(np.float64) @ b.astype(np.float64))
    bound = tolerance(MATMUL_KERNELS[name], k)
    kernelwatch_accuracy.record(errors, tolerance=(bound.max_error, bound.avg_error), shape=f"{m}x{n}x{k}",
                                kind="uniform", seed=seed_for(request.node.nodeid), kernel=name, measure="relative",
                                fail=errors.max_error <= bound.max_error)
    assert errors.max_error <= bound.max_error, errors

"""Every matrix-multiply kernel against a float64 reference (max and average error per element).

Errors per element: relative |c - ref| / |ref| for inputs of one sign,
scaled |c - ref| / (|A|·|B|) for mixed signs (src/kernelwatch/metrics.py), bounded by
the kernel's tolerance (kernels/registry.py). Outputs are poisoned with NaN
before every launch, so an element never written fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels import MATMUL_KERNELS, NEGATIVE_CONTROL, prepare_matmul, tolerance
from kernelwatch.metrics import product_scale, relative_error, same_nonfinite_pattern, scaled_error
from suites.inputs import operands, reference_product, seed_for

pytestmark = pytest.mark.gpu

# (M, N, K): C is M x N, the inner dimension K.
SQUARE = [1, 2, 15, 16, 17, 31, 32, 33, 1000, 1023, 1024, 1025, 4096]
OTHER = [
    (1000, 1, 1000),  # matrix-vector
    (1, 1000, 1000),
    (33, 65, 17),
    (17, 1025, 130),
    (4096, 8, 16),  # tall and skinny
    (8, 4096, 300),
    (250, 130, 4097),  # long inner dimension, not a multiple of any tile
    (4100, 4097, 257),  # above 4096 in two dimensions
]
SHAPES = [(n, n, n) for n in SQUARE] + OTHER
# ones and non-finite inputs on the shapes where edges matter, not on every size
EDGE_SHAPES = [(n, n, n) for n in (1, 15, 17, 33, 1025)] + [(33, 65, 17), (4096, 8, 16)]


def shape_id(shape) -> str:
    return "x".join(map(str, shape))


def run_kernel(name, a, b):
    """Poison, launch, wait, and return the dense result."""
    import cupy

    prepared = prepare_matmul(name, a, b)
    prepared.poison()
    prepared.run()
    cupy.cuda.runtime.deviceSynchronize()  # surfaces any asynchronous launch error here
    return prepared.result()


def error_problems(name, a, b, c, ref, kind):
    """The ways in which c misses the kernel's tolerance (empty when it passes), the errors, and that tolerance (of
    the inner dimension k, a's columns)."""
    kernel = NEGATIVE_CONTROL if name == NEGATIVE_CONTROL.name else MATMUL_KERNELS[name]
    tol = tolerance(kernel, a.shape[1])
    errors = relative_error(c, ref) if kind == "uniform" else scaled_error(c, ref, product_scale(a, b))
    problems = []
    if not errors.max_error <= tol.max_error:
        problems.append(f"max error {errors.max_error:.3g} > {tol.max_error:.3g} at {errors.worst_index}")
    if not errors.avg_error <= tol.avg_error:
        problems.append(f"average error {errors.avg_error:.3g} > {tol.avg_error:.3g}")
    return problems, errors, tol


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("kind", ["uniform", "normal"])
@pytest.mark.parametrize("name", list(MATMUL_KERNELS))
def test_matmul_matches_float64(name, kind, shape, request, kernelwatch_accuracy):
    a, b = operands(request.node.nodeid, *shape, kind)
    c = run_kernel(name, a, b)
    ref = reference_product(a, b)
    problems, errors, tol = error_problems(name, a, b, c, ref, kind)
    # recorded with the run (its JSON, the history store, `changes`, the dashboard) and judged against this GPU's
    # history, with the tolerance the check above held it to: `less accurate` fails the test; also kept as JUnit
    # properties (maintainers/device/summarize.py)
    kernelwatch_accuracy.record(errors, tolerance=(tol.max_error, tol.avg_error), shape=shape_id(shape), kind=kind,
                                seed=seed_for(request.node.nodeid), kernel=name,
                                measure="relative" if kind == "uniform" else "scaled", fail=not problems)
    assert not problems, f"{name} on {shape_id(shape)} {kind}: " + "; ".join(problems)


@pytest.mark.parametrize("shape", EDGE_SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", list(MATMUL_KERNELS))
def test_matmul_of_ones_is_exact(name, shape, request):
    m, n, k = shape
    a, b = operands(request.node.nodeid, m, n, k, "ones")
    c = run_kernel(name, a, b).get()
    assert np.array_equal(c, np.full((m, n), k, np.float32)), f"{name}: not exactly {k} everywhere"


@pytest.mark.parametrize("shape", EDGE_SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", list(MATMUL_KERNELS))
def test_matmul_propagates_nan_and_inf(name, shape, request, kernelwatch_accuracy):
    a, b = operands(request.node.nodeid, *shape, "nonfinite")
    c = run_kernel(name, a, b)
    # judged on the host: these products are small, and selecting the finite elements on the
    # device compiles CuPy's mask kernels anew for each size (4-6 s each without its kernel cache)
    ref = reference_product(a, b).get()
    c, scale = c.get(), product_scale(a, b, ignore_nonfinite=True).get()
    problem = same_nonfinite_pattern(c, ref)
    assert problem is None, f"{name}: {problem}"
    finite = np.isfinite(ref)  # where the reference is finite, the usual error bound holds
    errors = scaled_error(c[finite], ref[finite], scale[finite])
    bound = tolerance(MATMUL_KERNELS[name], shape[2]).max_error
    kernelwatch_accuracy.record(errors, tolerance=(bound, bound), shape=shape_id(shape), kind="nonfinite",
                                seed=seed_for(request.node.nodeid), kernel=name, measure="scaled (finite elements)",
                                fail=errors.max_error <= bound)
    assert errors.max_error <= bound, f"{name}: {errors}"


@pytest.mark.parametrize("n", [1000, 4096])
def test_kahan_max_error_is_ten_times_below_plain(n, request):
    a, b = operands(request.node.nodeid, n, n, n, "uniform")
    ref = reference_product(a, b)
    plain = {k: relative_error(run_kernel(k, a, b), ref).max_error for k in ("naive", "tiled32", "warptile")}
    kahan = {k: relative_error(run_kernel(k, a, b), ref).max_error for k in ("naive_kahan", "row_shared")}
    assert max(kahan.values()) * 10 <= min(plain.values()), f"Kahan {kahan} vs plain {plain}"


def test_negative_control_fails_the_checks(request):
    """A kernel that rounds its inputs to 11 bits must be caught: the checks can fail."""
    for kind in ("uniform", "normal"):
        a, b = operands(request.node.nodeid + kind, 1000, 1000, 1000, kind)
        c = run_kernel(NEGATIVE_CONTROL.name, a, b)
        problems, errors, _ = error_problems(NEGATIVE_CONTROL.name, a, b, c, reference_product(a, b), kind)
        assert problems, f"the float16-input kernel passed on {kind} inputs ({errors})"


def test_unwritten_output_fails_the_checks(request):
    """Poisoning works: a result with one element left at NaN fails."""
    a, b = operands(request.node.nodeid, 33, 33, 33, "uniform")
    c = run_kernel("naive", a, b)
    c[17, 5] = np.nan
    problems, _, _ = error_problems("naive", a, b, c, reference_product(a, b), "uniform")
    assert problems


def test_row_shared_uses_opt_in_shared_memory_for_long_rows(request):
    """K = 20000 needs 80 KB of shared memory per block, past the default 48 KB."""
    a, b = operands(request.node.nodeid, 3, 5, 20000, "uniform")
    c = run_kernel("row_shared", a, b)
    problems, _, _ = error_problems("row_shared", a, b, c, reference_product(a, b), "uniform")
    assert not problems, problems


def test_row_shared_refuses_rows_beyond_the_device_limit():
    import cupy

    limit = cupy.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]
    k = limit // 4 + 1
    a = cupy.ones((2, k), np.float32)
    b = cupy.ones((k, 2), np.float32)
    with pytest.raises(ValueError, match="shared memory"):
        prepare_matmul("row_shared", a, b)


@pytest.mark.parametrize("name", [name for name in MATMUL_KERNELS if name != "cublas"])
def test_a_build_described_without_a_gpu_is_the_one_the_prepared_case_gives(name):
    """kernels.matmul.build_for (the cause cards of stored runs) against what a prepared case reports."""
    from kernels.matmul import build_for
    from suites.perf_cases import random_device

    for m, n, k in ((1000, 1000, 1000), (1001, 1002, 1003)):
        prepared = prepare_matmul(name, random_device((m, k), 1), random_device((k, n), 2))
        assert build_for(name, m, n, k) == prepared.build(), (name, m, n, k)


def test_a_cause_cards_build_of_a_kernel_the_suite_has_built_still_gets_ptxas_report():
    """The static half compiles what the suite has already built in this process (the nightly's card): NVRTC's
    own cache (12.9 on) would hand back a cubin with an empty log, and every card would read 'No card'."""
    import kernels
    from kernelwatch.ab.identity import arch_of
    from kernelwatch.cause.sides import Side, _profile
    from kernelwatch.timing.gpu import gpu_info
    from suites.perf_cases import random_device

    prepared = prepare_matmul("warptile_128x256", random_device((1000, 1000), 1), random_device((1000, 1000), 2))
    # for this GPU's architecture, as the nightly's card builds it: the build CuPy has just made, so a cached one
    arch = arch_of(gpu_info().compute_capability)
    ncu_profile = _profile(Side(kernels, prepared.build(), "1000x1000x1000"), arch)[2]  # ValueError without it
    assert ncu_profile.registers > 0 and ncu_profile.function == "matmul_warptile"

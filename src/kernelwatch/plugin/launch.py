"""The `kernelwatch` fixture's work: any callable that launches GPU work, checked, then timed (docs/adopting.md).

    @pytest.mark.kernelwatch(bytes=3 * 4 * n)
    def test_saxpy(kernelwatch):
        ...
        kernelwatch(lambda: saxpy(2.0, x, y, out), out=out, reference=lambda: 2.0 * x.astype(cp.float64) + y)

A call, once per test:
1. the reference (an array, or a function called now, before anything is launched: an in-place kernel's
   inputs are still intact) and the scale of the errors are read;
2. `out` (an array, or a tuple of them, that the launch writes) is filled with NaN where its type holds NaN
   (an element the kernel never writes then fails);
3. the callable runs once on the plugin's stream (`current_stream`), the device is synchronized and the result
   (`out`, else what the callable returned) is compared with the reference in float64: the maximum and average
   error per element (kernelwatch.metrics), against the tolerance. A miss fails the test in one line;
4. the callable is timed and judged as the suite's own cases are (TimedCase: CUPTI time of every kernel it
   launched, a library's included, the L2 flushed, the stop rule, the verdicts), each launch on the plugin's
   stream made current.
Settings come from the call's keywords, else the test's `@pytest.mark.kernelwatch(...)`, else the defaults.

`launch` may instead be a prepared case of the project's kernel library (docs/kernel-library.md: `run(stream)`,
`build()`, `same_case_in(library)`): it is checked through `run` on the plugin's stream and handed to the timer
as it is, so its machine code is recorded and `--kernelwatch-compare-ref` times it against the base's version.
"""

from __future__ import annotations

import contextlib
import math
import sys

import pytest

from kernelwatch.ab.library import is_prepared_case
from kernelwatch.metrics import relative_error, scaled_error
from kernelwatch.plugin.benchmark import mark_not_timed

# what the marker and the call both take; `out` and `reference` only the call
SETTINGS = ("tolerance", "scale", "flops", "bytes", "kernel", "shape", "flush", "kind", "seed")
# a tolerance of the maximum (and average) error per element where the test names none, by the output's type:
# an elementwise result's rounding, with room; a sum over many terms wants its own
DEFAULT_TOLERANCE = {"float64": 1e-12, "float32": 1e-5, "float16": 1e-2, "bfloat16": 1e-2}


class Launch:
    """The `kernelwatch` fixture: `kernelwatch(launch, out=..., reference=..., **settings)`, `launch` launching on
    the current stream (the `kernelwatch_stream` fixture's, for a callable that names its stream)."""

    def __init__(self, bench, device, node, checks):
        self._bench, self._device, self._node = bench, device, node
        self._checks = checks  # kernelwatch.plugin.accuracy.AccuracyChecks: the check's errors go with the run
        self._stream = bench.timer.stream
        self._called = False
        self._errors: dict = {}  # the check's figures, kept in the case's record
        self._accuracy = None  # the check's AccuracyRecord, judged: a less accurate case fails after its timing

    def __call__(self, launch, *, out=None, reference=None, **settings):
        """Check `launch()` against `reference`, then time it; returns the Measurement (None where
        --kernelwatch-compare-ref found the case unchanged)."""
        try:
            if self._called:
                fail("kernelwatch: one timed callable per test; parametrize the test for more cases")
            self._called = True
            marker = self._node.get_closest_marker("kernelwatch")
            marked = settings_of(marker.args, marker.kwargs, "@pytest.mark.kernelwatch") if marker else {}
            chosen = {**marked, **settings_of((), settings, "kernelwatch(...)")}
            prepared = launch if is_prepared_case(launch) else None
            call = (lambda: prepared.run(self._stream)) if prepared is not None else launch
            base = self._base_side(prepared) if reference is not None else None
            base_call = (lambda: base.run(self._stream)) if base is not None else None
            result = self._checked(call, out, reference, chosen, base_call) if reference is not None else None
        except pytest.fail.Exception:
            mark_not_timed(self._bench.benchmark, "not timed: the kernelwatch fixture failed the test first")
            raise

        def run(stream):
            with current_stream(stream):
                launch()

        kernel = self._kernel_name(chosen)
        shape = chosen.get("shape") or shape_of(out if out is not None else result)
        measured = self._bench.time(prepared if prepared is not None else run, kernel=kernel, shape=shape,
                                    flops=chosen.get("flops"), bytes_moved=chosen.get("bytes"),
                                    flush=chosen.get("flush", True), params=self._errors)
        if self._accuracy is not None and self._accuracy.fails:
            from kernelwatch.plugin.accuracy import failure_message

            fail(failure_message(self._accuracy))
        return measured

    def _checked(self, launch, out, reference, chosen, base_launch=None):
        """Poison, launch once, compare: fails the test on a miss; returns the result. With `base_launch` (the
        base side of --kernelwatch-compare-ref), the base is checked first on the same inputs and outputs, and
        head's errors are judged against base's."""
        references = as_tuple(reference() if callable(reference) else reference)
        scale = chosen.get("scale")
        scale = scale() if callable(scale) else scale
        outputs = as_tuple(out)
        base = None
        if base_launch is not None:
            base_errors, *_ = self._launched_errors(base_launch, outputs, references, scale, chosen)
            base = (base_errors["max_error"], base_errors["avg_error"])
        self._errors, misses, bounds, measure, results = self._launched_errors(launch, outputs, references, scale,
                                                                               chosen)
        ref = self._bench.state.code.ref
        self._accuracy = self._checks.record(
            (self._errors["max_error"], self._errors["avg_error"]), tolerance=bounds,
            shape=chosen.get("shape") or shape_of(results[0]), kind=chosen.get("kind"), seed=chosen.get("seed"),
            measure=measure, kernel=self._kernel_name(chosen),
            base=base, base_ref=ref.reference if ref is not None else None,
            fail=False)  # a less accurate case is still timed; it fails after
        if misses:
            fail(misses[0])
        return results[0]

    def _kernel_name(self, chosen) -> str:
        """The kernel the case names: the settings' `kernel`, else the test's name without its test_ prefix."""
        return chosen.get("kernel") or self._node.originalname.removeprefix("test_")

    def _base_side(self, prepared):
        """Under --kernelwatch-compare-ref, the same case prepared by the base's kernel library (None where there is
        no ref, the case is no prepared case, or the base does not know its kernel: a new kernel)."""
        ref = self._bench.state.code.ref
        if ref is None or prepared is None:
            return None
        try:
            return prepared.same_case_in(ref.base)
        except ValueError as error:
            if str(error).startswith("unknown"):
                return None
            raise

    def _launched_errors(self, launch, outputs, references, scale, chosen):
        """Poison, launch once, compare every output: (worst errors, misses, bounds, measure, results)."""
        for array in outputs:
            poison(array)
        self._device.synchronize()  # the inputs the test made on its own stream are complete
        with current_stream(self._stream):
            returned = launch()
        self._device.synchronize()  # and so is the launch (an asynchronous launch error surfaces here)
        results = outputs or as_tuple(returned)
        if not results:
            fail("kernelwatch: a reference needs a result: pass out=ARRAY (what the launch writes) or return the "
                 "result from the callable")
        if len(results) != len(references):
            fail(f"kernelwatch: {len(results)} result(s) against {len(references)} reference(s)")
        worst: dict = {}
        misses, bounds, measure = [], None, None
        for index, (result, ref) in enumerate(zip(results, references, strict=True)):
            which = f" (output {index + 1} of {len(results)})" if len(results) > 1 else ""
            miss, bounds, measure = self._check_one(result, ref, scale, chosen.get("tolerance"), which, worst)
            misses += [miss] if miss else []
        return worst, misses, bounds, measure, results

    def _check_one(self, result, reference, scale, tolerance, which: str, worst: dict):
        """One output against its reference: (why it misses or None, the (max, avg) bounds, the measure)."""
        dtype = dtype_name(result)
        result, reference, scale = same_place(float_view(result), float_view(reference),
                                              None if scale is None else float_view(scale))
        if tuple(result.shape) != tuple(reference.shape):
            fail(f"kernelwatch: the result{which} has shape {tuple(result.shape)}, the reference "
                 f"{tuple(reference.shape)}")
        bound_max, bound_avg = tolerance_of(tolerance, dtype)
        if scale is None:
            errors, measure, kind = relative_error(result, reference), "relative error |out - ref| / |ref|", "relative"
        else:
            errors, measure, kind = scaled_error(result, reference, scale), "error |out - ref| / scale", "scaled"
        worst.update(max_error=max(errors.max_error, worst.get("max_error", 0.0)),  # of several outputs, the worst
                     avg_error=max(errors.avg_error, worst.get("avg_error", 0.0)))
        if not (errors.max_error <= bound_max and errors.avg_error <= bound_avg):
            bound = f"{bound_max:.3g}" if bound_avg == bound_max else f"{bound_max:.3g} (average {bound_avg:.3g})"
            return (f"kernelwatch: {self._node.name}{which} misses its float64 reference: max error "
                    f"{errors.max_error:.3g}, average error {errors.avg_error:.3g}, tolerance {bound} ({measure}, "
                    f"{dtype} output; worst at {errors.worst_index})"), (bound_max, bound_avg), kind
        return None, (bound_max, bound_avg), kind


def settings_of(args, kwargs: dict, where: str) -> dict:
    """The settings given in `where`, checked: unknown names and positional values fail the test."""
    unknown = sorted(set(kwargs) - set(SETTINGS))
    if args or unknown:
        fail(f"{where}: takes only the keywords {', '.join(SETTINGS)} (given: "
             f"{', '.join([repr(a) for a in args] + unknown)})")
    return dict(kwargs)


def fail(message: str):
    pytest.fail(message, pytrace=False)


@contextlib.contextmanager
def current_stream(stream):
    """`stream` (a CuPy stream) is the current stream of CuPy and, where it is imported already, of PyTorch
    (Triton launches on PyTorch's current stream). PyTorch is never imported here."""
    torch = sys.modules.get("torch")
    with stream, contextlib.ExitStack() as more:
        if torch is not None and torch.cuda.is_available():
            more.enter_context(torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr)))
        yield


def as_tuple(value) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def is_torch(value) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def dtype_name(array) -> str:
    """numpy's name of an array's type ("float32"), PyTorch's without its prefix ("bfloat16")."""
    return str(getattr(array, "dtype", type(array).__name__)).removeprefix("torch.")


def poison(array) -> None:
    """NaN in every element of an output whose type holds NaN (a tensor of PyTorch, or any array that NumPy or
    CuPy can view); an integer output is left as it is."""
    if is_torch(array):
        if array.is_floating_point() or array.is_complex():
            array.detach().fill_(math.nan)
        return
    view = array_view(array)
    if view.dtype.kind in "fc":
        view.fill(math.nan)


def array_view(value):
    """A NumPy or CuPy array of `value` without a copy where it can: a NumPy or CuPy array as it is, anything
    with __cuda_array_interface__ (Numba, PyTorch) as a CuPy view, else NumPy's array of it."""
    module = type(value).__module__.split(".")[0]
    if module in ("numpy", "cupy"):
        return value
    if hasattr(value, "__cuda_array_interface__"):
        import cupy

        return cupy.asarray(value)
    import numpy

    return numpy.asarray(value)


def float_view(value):
    """`value` as a NumPy or CuPy array, a PyTorch tensor in float64 first (CuPy has no bfloat16)."""
    if is_torch(value):
        value = value.detach().double()
        if value.is_cuda:
            import cupy

            return cupy.from_dlpack(value)
        return value.cpu().numpy()
    return array_view(value)


def same_place(*arrays):
    """The arrays all on the device (CuPy) where any of them is, else all NumPy's."""
    if not any(a is not None and type(a).__module__.split(".")[0] == "cupy" for a in arrays):
        return arrays
    import cupy

    return tuple(None if a is None else cupy.asarray(a) for a in arrays)


def tolerance_of(tolerance, dtype: str) -> tuple[float, float]:
    """(maximum, average) error allowed: a number bounds both, a pair each; none given, the output type's."""
    if tolerance is None:
        if dtype.startswith(("int", "uint", "bool")):
            return 0.0, 0.0
        if dtype not in DEFAULT_TOLERANCE:
            fail(f"kernelwatch: no default tolerance for a {dtype} output: pass tolerance=")
        tolerance = DEFAULT_TOLERANCE[dtype]
    if isinstance(tolerance, (tuple, list)):
        return float(tolerance[0]), float(tolerance[1])
    return float(tolerance), float(tolerance)


def shape_of(value) -> str | None:
    """"4096x4096" for an array's shape (the first of several); None without an array."""
    first = as_tuple(value)[:1]
    shape = getattr(first[0], "shape", None) if first else None
    return "x".join(str(n) for n in shape) if shape else None

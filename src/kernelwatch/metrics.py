"""Error metrics against a float64 reference, on NumPy or CuPy arrays alike.

The matmul-optimisation tutorial reports two figures per kernel: the maximum and the average
relative error per element, |c - ref| / |ref|. That measure is meaningful
when no reference element is near zero (inputs of one sign, such as seed
000's uniform [0, 1) data). With mixed signs, sums cancel, |ref| can be
arbitrarily small and the relative error explodes without the kernel being
at fault; there we divide by (|A|·|B|) instead, the magnitude the rounding
errors of a dot product actually scale with (the classical bound is
|c - ref| <= gamma_k (|A|·|B|)).
"""

from __future__ import annotations

from dataclasses import dataclass


def _xp(array):
    """NumPy or CuPy, whichever module the array belongs to."""
    module = type(array).__module__.split(".")[0]
    if module == "cupy":
        import cupy

        return cupy
    import numpy

    return numpy


@dataclass(frozen=True)
class ErrorStats:
    max_error: float
    avg_error: float
    worst_index: tuple[int, ...]

    def __str__(self) -> str:
        return f"max {self.max_error:.3g}, avg {self.avg_error:.3g} (worst at {self.worst_index})"


def _ratio(diff, magnitude, xp):
    """diff / magnitude per element, with 0/0 -> 0, x/0 -> inf and NaN -> inf.

    Element-wise `where`, not boolean-mask assignment: on CuPy a mask assignment runs a scan
    whose kernels are compiled anew for each array size, 4-6 s each on a machine without
    CuPy's kernel cache (H200, docs/method.md#nightly-time, 2026-12-01 seventh session).
    """
    with _quiet():
        error = diff / magnitude
    error = xp.where((magnitude == 0) & (diff == 0), 0.0, error)
    return xp.where(xp.isnan(error), xp.inf, error)


def _stats(error, xp) -> ErrorStats:
    if error.size == 0:
        return ErrorStats(0.0, 0.0, ())
    import numpy

    flat = int(xp.argmax(error))
    # NumPy's unravel_index: CuPy's refuses a Python int under NumPy 2.5 (NEP 50)
    index = tuple(int(i) for i in numpy.unravel_index(flat, error.shape))
    return ErrorStats(float(error.max()), float(error.mean()), index)


def relative_error(result, reference) -> ErrorStats:
    """Per-element |result - ref| / |ref| (the matmul-optimisation tutorial's figures).

    An element whose reference is exactly 0 counts 0 if the result is exactly 0
    and infinity otherwise; a NaN result (an element never written, say)
    counts infinity. Use `scaled_error` for inputs of mixed sign.
    """
    xp = _xp(result)
    ref = reference.astype(xp.float64)
    diff = xp.abs(result.astype(xp.float64) - ref)
    return _stats(_ratio(diff, xp.abs(ref), xp), xp)


def scaled_error(result, reference, scale) -> ErrorStats:
    """Per-element |result - ref| / scale, with scale = |A|·|B| for a product.

    Meaningful for any signs. Zero scale: 0 if the result is exactly the
    reference, infinity otherwise; NaN counts infinity.
    """
    xp = _xp(result)
    diff = xp.abs(result.astype(xp.float64) - reference.astype(xp.float64))
    return _stats(_ratio(diff, scale.astype(xp.float64), xp), xp)


def product_scale(a, b, ignore_nonfinite: bool = False):
    """|A|·|B| in float64: the magnitude a dot product's rounding errors scale with.

    ignore_nonfinite=True counts NaN and infinite entries as 0, for judging
    the finite elements of a product whose inputs hold a few of them.
    """
    xp = _xp(a)
    abs_a, abs_b = xp.abs(a.astype(xp.float64)), xp.abs(b.astype(xp.float64))
    if ignore_nonfinite:
        abs_a = xp.where(xp.isfinite(abs_a), abs_a, 0.0)
        abs_b = xp.where(xp.isfinite(abs_b), abs_b, 0.0)
    return abs_a @ abs_b


def same_nonfinite_pattern(result, reference) -> str | None:
    """None when NaNs and infinities (with their signs) sit exactly where the reference has them.

    Otherwise a sentence saying how many elements differ and the first of them.
    """
    xp = _xp(result)
    ref = reference.astype(xp.float64)
    res = result.astype(xp.float64)
    mismatch = (xp.isnan(res) != xp.isnan(ref)) | (xp.isinf(res) != xp.isinf(ref))
    mismatch |= xp.isinf(ref) & xp.isinf(res) & (xp.sign(res) != xp.sign(ref))
    count = int(mismatch.sum())
    if count == 0:
        return None
    import numpy

    first = tuple(int(i) for i in numpy.unravel_index(int(xp.argmax(mismatch)), mismatch.shape))
    return f"{count} element(s) differ in NaN/Inf from the reference, first at {first}: {float(res[first])} vs {float(ref[first])}"


class _quiet:
    """Silence NumPy's divide-by-zero warnings (CuPy does not warn)."""

    def __enter__(self):
        import numpy

        self._state = numpy.seterr(divide="ignore", invalid="ignore")

    def __exit__(self, *exc):
        import numpy

        numpy.seterr(**self._state)

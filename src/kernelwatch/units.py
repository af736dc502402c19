"""How the suite writes times, changes and fractions: the one place that formats them.

A leaf: it imports nothing of the suite. Every report, verdict reason and
table goes through these, so "2.1% slower" and "123 µs" read the same in the
terminal, the markdown reports and the dashboard.
"""

from __future__ import annotations

import math

TIME_UNITS = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))  # (unit, its seconds), smallest first
MISSING = "—"  # a table cell with no value


def format_duration(seconds: float) -> str:
    """Format a time in seconds with 3 significant figures and a fitting unit.

    For example ``0.0001234`` gives ``"123 µs"`` and ``2.5`` gives ``"2.50 s"``.
    """
    if not math.isfinite(seconds):
        return str(seconds)
    if seconds == 0:
        return "0 s"
    for unit, scale in TIME_UNITS:
        value = seconds / scale
        rounded = abs(float(f"{value:.3g}"))
        if rounded < 1000 or unit == "s":
            break
    digits = 2 - math.floor(math.log10(rounded))
    return f"{value:.{max(digits, 0)}f} {unit}"


def joule_unit(joules: float) -> tuple[float, str]:
    """(scale, unit) that writes `joules` in J, mJ or µJ: 1.7 J, 0.87 mJ, 42 µJ."""
    return (1.0, "J") if joules >= 0.1 else (1e3, "mJ") if joules >= 1e-4 else (1e6, "µJ")


def format_joules(joules: float) -> str:
    """Joules with 4 significant figures and a fitting unit: ``0.0008697`` gives ``"0.8697 mJ"``."""
    scale, unit = joule_unit(joules)
    return f"{joules * scale:.4g} {unit}"


def percent(fraction: float | None, digits: int = 1) -> str:
    """``0.0213`` as ``"2.1%"``; None as the missing-value mark."""
    return MISSING if fraction is None else f"{100 * fraction:.{digits}f}%"


def change(ratio: float) -> str:
    """A ratio of medians as a change: ``1.021`` gives ``"2.1% slower"``, ``0.98`` ``"2.0% faster"``."""
    moved = (ratio - 1) * 100
    return f"{abs(moved):.1f}% {'slower' if moved >= 0 else 'faster'}"


def ratio_text(ratio: float | None) -> str:
    """``1.0213`` as ``"1.021×"``; None as the missing-value mark."""
    return MISSING if ratio is None else f"{ratio:.3f}×"


SMALLEST_P = 1e-12  # below this a p-value is written as "< 1e-12": floating point says no more


def p_text(p: float) -> str:
    """A p-value with two significant figures, or "< 1e-12" for one too small to be told apart from 0."""
    return f"{p:.2g}" if p >= SMALLEST_P else f"< {SMALLEST_P:g}"

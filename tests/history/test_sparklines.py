"""src/kernelwatch/history/sparklines.py: the index's sparklines and a case page's energy lines, compared whole with
their reviewed snapshots (tests/history/__snapshots__/test_sparklines.ambr), and the one scale they share."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from kernelwatch.history.reference import Reference
from kernelwatch.history.sparklines import SCALES, centre_of, energy_line, shared_scale, sparkline
from tests.history.made_series import a_series, with_points

FAILED = {"outcome": "failed", "verdict": "slower"}
ACCEPTED = {"outcome": "failed", "verdict": "slower", "accepted_reason": 'tiles "by" <trailer> & co'}
RUN_FAILED = {"run_failed": True}


def _readable(svg: str) -> str:
    """The SVG, checked to be one well-formed line, one element a line (a lossless form: it held no line break)."""
    assert "\n" not in svg
    ET.fromstring(svg)
    return svg.replace("><", ">\n<")


def _every_state():
    """Six runs around 1 ms, r0 to r5: passed, accepted, failed, passed, run failed, passed; r3 and r4 on GPU-b."""
    one = a_series(1.0e-3, 1.004e-3, 1.012e-3, 0.996e-3, 1.001e-3, 0.999e-3,
                   uuids=["GPU-a", "GPU-a", "GPU-a", "GPU-b", "GPU-b", "GPU-a"])
    return with_points(one, p1=ACCEPTED, p2=FAILED, p4=RUN_FAILED)


def _with_energy(one, *joules):
    return dataclasses.replace(one, points=tuple(dataclasses.replace(p, energy_j=j)
                                                 for p, j in zip(one.points, joules, strict=True)))


SPARKLINES = {
    # its own median the centre (1.0005 ms), the smallest scale that holds +1.15%: 2%
    "every-state-over-its-median": lambda: sparkline(_every_state()),
    # over a reference (1 ms, from runs 1-4) on the scale the page shares (5%): -0.4% to +1.2%
    "every-state-over-a-reference": lambda: sparkline(_every_state(), Reference(1e-3, "runs 1-4 <r1..r4> & more"),
                                                      0.05),
    # +3% and -7% on a page of ±5%: one run beyond, drawn at the edge, counted in the tooltip
    "one-beyond": lambda: sparkline(a_series(1e-3, 1.03e-3, 0.93e-3, 1e-3), Reference(1e-3, "runs 1-6"), 0.05),
    # -50% and +50% over its median, past the largest scale: both drawn at the edges
    "two-beyond": lambda: sparkline(a_series(1e-3, 2e-3, 3e-3)),
    "one-run": lambda: sparkline(a_series(2.5e-6)),
    "flat": lambda: sparkline(a_series(2e-3, 2e-3, 2e-3)),
    # the runs 2 and 4 measured no energy: four of six drawn, evenly over the box, over their median 1.05 J
    "energy-of-the-runs-that-measured-it": lambda: energy_line(_with_energy(_every_state(), 1.0, 1.1, None, 1.04, None,
                                                                            1.06)),
    "energy-on-a-given-scale": lambda: energy_line(_with_energy(_every_state(), 1.0, 1.0, 1.2, 1.0, 1.0, 0.9), 0.1),
    "energy-all-zero": lambda: energy_line(_with_energy(_every_state(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)),
}


@pytest.mark.parametrize("name", SPARKLINES)
def test_the_whole_line_is_the_reviewed_one(name, snapshot):
    assert _readable(SPARKLINES[name]()) == snapshot


def test_a_series_without_energy_has_no_energy_line():
    assert energy_line(_every_state()) == ""


# --- the one scale of a page --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("values, centre, scale", [
    ([1.0, 1.01], 1.0, 0.01),  # 1.01 / 1 - 1 is 0.010000000000000009: still within 1%
    ([1.0, 1.0101], 1.0, 0.02),
    ([1.0, 0.98], 1.0, 0.02),  # below the centre as above it
    ([1.0, 1.02001], 1.0, 0.05),
    ([1.05], 1.0, 0.05),
    ([1.0500001], 1.0, 0.10),
    ([0.9], 1.0, 0.10),
    ([3.0], 1.0, 0.10),  # past the largest: the largest
    ([0.0, 5.0], 0.0, 0.01),  # a centre of 0: nothing to be relative to, every deviation 0
], ids=str)
def test_the_scale_is_the_smallest_of_1_2_5_and_10_percent_that_holds_the_largest_deviation(values, centre, scale):
    assert shared_scale([(values, centre)]) == scale


def test_the_scale_of_a_page_holds_every_line_of_it_and_of_none_is_the_smallest():
    assert shared_scale([([1.0, 1.004], 1.0), ([2.0, 2.06], 2.0), ([5.0], 5.0)]) == 0.05
    assert shared_scale([]) == shared_scale([([], 1.0)]) == SCALES[0] == 0.01
    assert SCALES == (0.01, 0.02, 0.05, 0.10)


def test_a_line_is_drawn_on_the_scale_it_is_given_and_on_its_own_where_given_none():
    one = a_series(1e-3, 1.004e-3)  # +0.2% and -0.2% over its median
    assert 'data-scale="0.01"' in sparkline(one) and 'data-scale="0.01"' in sparkline(one, scale=None)
    assert 'data-scale="0.1"' in sparkline(one, scale=0.1)
    assert 'data-scale="0.05"' in energy_line(_with_energy(one, 1.0, 1.06), None)  # ±2.9%


def test_the_centre_is_the_references_median_or_the_series_own():
    one = a_series(1e-3, 3e-3, 2e-3, 10e-3)
    assert centre_of(one, None) == 2.5e-3
    assert centre_of(one, Reference(7e-3, "given")) == 7e-3

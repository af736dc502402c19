"""kernelwatch.verdict.threshold: the same-GPU floor every judging command takes, from its option or the variable,
and the help that says its default."""

from __future__ import annotations

import re

import pytest

from kernelwatch.verdict.noise import NoiseFloors
from kernelwatch.verdict.threshold import THRESHOLD_ENV, THRESHOLD_HELP, judging_floors, threshold_from


def test_the_option_wins_over_the_variable_and_without_either_the_floors_stay(monkeypatch):
    monkeypatch.setenv(THRESHOLD_ENV, "3%")
    assert threshold_from("0.02", "--threshold") == pytest.approx(0.02)
    assert threshold_from(None, "--threshold") == pytest.approx(0.03)
    monkeypatch.delenv(THRESHOLD_ENV)
    assert threshold_from(None, "--threshold") is None and judging_floors(None) == NoiseFloors()


def test_a_threshold_above_the_other_gpu_floor_raises_that_floor_too():
    floors = judging_floors("8%")
    assert (floors.same_gpu, floors.other_gpu) == (pytest.approx(0.08), pytest.approx(0.08))
    assert judging_floors("1%").other_gpu == NoiseFloors().other_gpu


def test_a_value_that_is_no_fraction_names_where_it_came_from(monkeypatch):
    with pytest.raises(ValueError, match="--kernelwatch-threshold"):
        threshold_from("fast", "--kernelwatch-threshold")
    monkeypatch.setenv(THRESHOLD_ENV, "fast")
    with pytest.raises(ValueError, match=re.escape(f"${THRESHOLD_ENV}")):
        threshold_from(None, "--threshold")


def test_the_help_gives_the_default_same_gpu_floor_as_a_percentage():
    shown = THRESHOLD_HELP % {}  # as argparse writes it
    default = re.search(r"else ([\d.]+)%\)$", shown)
    assert default and float(default.group(1)) / 100 == pytest.approx(NoiseFloors().same_gpu), shown

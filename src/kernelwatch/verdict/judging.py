"""How one pytest process judges its cases: the noise floors, whether it compares, and what fails a test.

Filled from the command line once (src/kernelwatch/plugin/__init__.py); read by every
timed case's judgement (src/kernelwatch/plugin/timed_case.py, plugin/energy.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelwatch.verdict.noise import NoiseFloors


@dataclass(eq=False)
class Judging:
    """The rules a run's cases are judged by."""

    floors: NoiseFloors
    comparing: bool = False  # --benchmark-compare given: cases are judged against stored runs
    energy_fails: bool = True  # --kernelwatch-energy-verdict fail: a case judged "more energy" fails its test

"""How one pytest process measures: its sampling plan, its GPU, its timer and its energy meter.

The plugin makes one `Measuring` per process (src/kernelwatch/plugin/state.py) and fills
it as the session starts: the GPU where one is usable, the timer where cases can be timed,
the energy meter where energy is measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kernelwatch.timing.profile import Profile

if TYPE_CHECKING:  # for the annotations only: these import CuPy or NVML when loaded
    from kernelwatch.timing.energy import EnergyMeter
    from kernelwatch.timing.gpu import GpuInfo
    from kernelwatch.timing.timer import GpuTimer


@dataclass(eq=False)
class Measuring:
    """The sampling plan, and the instruments of the GPU in use."""

    profile: Profile
    gpu: GpuInfo | None = None  # of the device in use; None without a usable GPU
    timer: GpuTimer | None = None  # the session's (made at session start where cases can be timed)
    energy_cases: str = "profile"  # --kernelwatch-energy: all, profile (the profile's energy cases) or none
    energy_meter: EnergyMeter | None = None  # (or a device layer's stand-in), where energy is measured

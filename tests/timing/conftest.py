"""The timing room's fixtures: fake_cupti, a GpuTimer on a fake cupti module (tests/support/cupti.py)."""

from tests.support.cupti import fake_cupti  # noqa: F401 (the fixture, for every test file of this folder)

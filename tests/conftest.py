"""Fixtures shared by the CPU tests of the plugin (tests/test_plugin_*.py)."""

from __future__ import annotations

import pytest

from tests.fake_suite import SUITE


@pytest.fixture
def suite(tmp_path):
    """A folder with a conftest loading the suite's plugin and the fake GPU, and a timed suite."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (tmp_path / "test_fake_suite.py").write_text(SUITE)
    (tmp_path / "baselines").mkdir()
    return tmp_path

"""Fixtures of the plugin's CPU tests (tests/plugin/): a folder holding a timed suite on the fake GPU."""

from __future__ import annotations

import pytest

from tests.support.fake_suite import SUITE


@pytest.fixture
def suite(tmp_path):
    """A folder with a conftest loading the suite's plugin and the fake GPU, and a timed suite."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (tmp_path / "test_fake_suite.py").write_text(SUITE)
    (tmp_path / "baselines").mkdir()
    return tmp_path

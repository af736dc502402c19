"""The plugin's fixtures as pytest sees them: the GPU lock wraps every test (it takes the lock only for
GPU tests on a GPU, harness/plugin/fixtures.py)."""

from __future__ import annotations


def test_every_test_runs_inside_the_gpu_lock_fixture(request):
    assert "_gpu_lock" in request.fixturenames

"""The plugin's fixtures as pytest sees them: the GPU lock wraps every test (it takes the lock only for
GPU tests on a GPU, harness/plugin/fixtures.py)."""

from __future__ import annotations


def test_every_test_runs_inside_the_gpu_lock_fixture(request):
    assert "_gpu_lock" in request.fixturenames


TIMER_SUITE = '''
import pytest


@pytest.mark.gpu
def test_a_correctness_test_gets_the_sessions_timer(gpu_timer):
    assert gpu_timer is not None and type(gpu_timer).__name__ == "FakeTimer"
'''


def test_gpu_timer_makes_the_timer_where_no_timed_test_made_it(suite):
    # harness/plugin/fixtures.py: with no perf test in the run the session made no timer at collection;
    # a test outside the perf marker that asks for one gets one made then
    from tests.test_plugin_end_to_end import output, run

    (suite / "test_fake_suite.py").write_text(TIMER_SUITE)
    result = run(suite)
    assert result.returncode == 0 and "1 passed" in output(result), output(result)

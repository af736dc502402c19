"""The plugin's fixtures as pytest sees them: the GPU lock wraps every test (it takes the lock only for
GPU tests on a GPU, src/kernelwatch/plugin/fixtures.py)."""

from __future__ import annotations


def test_every_test_runs_inside_the_gpu_lock_fixture(request):
    assert "_kernelwatch_gpu_lock" in request.fixturenames


TIMER_SUITE = '''
import pytest


@pytest.mark.gpu
def test_a_correctness_test_gets_the_sessions_timer(kernelwatch_timer):
    assert kernelwatch_timer is not None and type(kernelwatch_timer).__name__ == "FakeTimer"
'''


def test_gpu_timer_makes_the_timer_where_no_timed_test_made_it(suite):
    # src/kernelwatch/plugin/fixtures.py: with no perf test in the run the session made no timer at collection;
    # a test outside the perf marker that asks for one gets one made then
    from tests.support.fake_suite import output, run

    (suite / "test_fake_suite.py").write_text(TIMER_SUITE)
    result = run(suite)
    assert result.returncode == 0 and "1 passed" in output(result), output(result)


LOCK_SUITE = '''
import contextlib

import pytest

import kernelwatch.plugin.fixtures as fixtures

TAKEN = []


@contextlib.contextmanager
def recording_lock(bus_id, exclusive):
    TAKEN.append("exclusive" if exclusive else "shared")
    yield


@pytest.fixture(scope="module", autouse=True)
def recording():  # module scope: set up before the function-scoped lock fixture, and put back after
    original, fixtures.gpu_lock = fixtures.gpu_lock, recording_lock
    yield
    fixtures.gpu_lock = original


def test_a_cpu_test_takes_no_lock():
    assert TAKEN == []


@pytest.mark.gpu
def test_a_gpu_test_takes_it_shared():
    assert TAKEN == ["shared"]


@pytest.mark.gpu
@pytest.mark.perf
def test_a_timed_test_takes_it_exclusive():
    assert TAKEN == ["shared", "exclusive"]
'''


def test_on_a_gpu_a_gpu_test_holds_the_lock_shared_a_timed_one_exclusive_and_a_cpu_test_none(suite):
    from tests.support.fake_suite import output, run

    (suite / "test_fake_suite.py").write_text(LOCK_SUITE)
    result = run(suite, "-p", "no:randomly")
    assert result.returncode == 0 and "3 passed" in output(result), output(result)

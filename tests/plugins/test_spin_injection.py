"""The slowdown plugin's means (tests/plugins/spin_injection.py), on a CPU: the spin put into
every kernel's source, the slowed copy of the kernels building without spills, and the search
for the spin that gives a slowdown, on responses shaped like the GPU's."""

from __future__ import annotations

import re
import sys

import pytest

from kernels.compile import cuda_sources
from tests.plugins.spin_injection import (
    SLOWED_ALIAS,
    SPIN_VARIABLE,
    SlowedKernels,
    calibrate,
    spin_unseen,
    with_spin_prologue,
)
from tests.support.cuda_builds import BUILDS, build_id

CLOCK_HZ = 1.98e9


def test_the_spin_goes_first_into_every_kernel_body_and_nowhere_else():
    text = '''
// a __global__ named in a comment is followed by no body of its own before this declaration:
extern "C" __global__ void declared_only(float *x);
template <int N> struct Tile { float v[N]; };
extern "C" __global__ void __launch_bounds__(256, 2)
bounded(const float *a, float *b) {
    b[0] = a[0];
}
extern "C" __global__ void plain(int n) { if (n) { return; } }
'''
    patched, count = with_spin_prologue(text)
    assert count == 2
    assert patched.startswith(f'extern "C" {{ __constant__ long long {SPIN_VARIABLE} = 0; }}')
    bodies = re.findall(r"\)\s*\{\n    asm volatile\(.*// test-only spin", patched)
    assert len(bodies) == 2
    assert "void declared_only(float *x);" in patched  # untouched
    assert "struct Tile { float v[N]; };" in patched
    assert patched.index("test-only spin") > patched.index("bounded(const float *a, float *b) {")


@pytest.mark.parametrize("source", cuda_sources(), ids=lambda p: p.name)
def test_every_kernel_of_the_suite_gets_the_spin(source):
    text = source.read_text()
    _, count = with_spin_prologue(text)
    assert count == len(re.findall(r'extern "C" __global__', text)) > 0


@pytest.fixture(scope="module")
def slowed_kernels():
    copy = SlowedKernels()
    yield copy
    copy.close()
    assert SLOWED_ALIAS not in sys.modules


def test_the_slowed_copy_is_a_package_of_its_own(slowed_kernels):
    import kernels

    assert slowed_kernels.package.__name__ == SLOWED_ALIAS
    assert slowed_kernels.package.compile.CUDA_DIR != kernels.compile.CUDA_DIR
    assert all(count > 0 for count in slowed_kernels.patched.values())
    assert "clock64" not in (kernels.compile.CUDA_DIR / "elementwise.cu").read_text()  # the suite's own untouched


@pytest.mark.slow  # nvcc builds of every slowed kernel: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("build", BUILDS, ids=build_id)
def test_the_slowed_kernels_build_for_sm_90_without_spills(slowed_kernels, build):
    from kernels.compile import compile_report

    source, defines = build
    plain = compile_report(source, "sm_90", defines)
    slowed = slowed_kernels.package.compile.compile_report(source, "sm_90", defines)
    # the same kernels, each with the spin, and otherwise compiled alike: no register or stack moved
    assert slowed.registers == plain.registers and slowed.stack_frame == plain.stack_frame, slowed.log
    assert SPIN_VARIABLE in slowed_kernels.package.compile.load_source(source)
    assert slowed.spill_stores == 0 and slowed.spill_loads == 0, slowed.log


def appended_spin(zero_s: float):
    """A one-thread spin after the case: its cycles at the clock, after a fixed gap."""
    return lambda cycles: zero_s + cycles / CLOCK_HZ


def spin_in_every_block(unslowed_s: float, waves: int, hidden_cycles: int = 0):
    """A spin in every block: each wave waits for it, less what memory traffic hides."""
    return lambda cycles: unslowed_s + waves * max(0, cycles - hidden_cycles) / CLOCK_HZ


@pytest.mark.parametrize("response, unslowed_s", [
    (appended_spin(61.9e-6 + 1.4e-6), 61.9e-6),  # a library case, appended to
    (spin_in_every_block(118e-6, waves=1), 118e-6),
    (spin_in_every_block(2.93e-3, waves=16), 2.93e-3),  # warptile 4096³: 2048 blocks, 132 SMs
    (spin_in_every_block(235e-6, waves=250, hidden_cycles=400), 235e-6),  # a memory-bound add
    (spin_in_every_block(182e-6, waves=62, hidden_cycles=2000), 182e-6),  # float4 add: hides 1 µs
    (spin_in_every_block(1.73e-3, waves=4, hidden_cycles=30_000), 1.73e-3),  # copies hide the kernels
], ids=["appended", "one-wave", "sixteen-waves", "memory-bound", "hides-a-microsecond", "mostly-hidden"])
def test_the_search_finds_three_percent_within_its_tolerance(response, unslowed_s):
    found = calibrate(response, unslowed_s, 3.0, CLOCK_HZ)
    assert not found.least
    assert found.median_s == response(found.cycles)
    assert abs(found.median_s / unslowed_s - 1.03) <= 0.003
    assert len(found.tried) <= 8  # of 12 allowed
    assert found.tried[0] == (0, response(0))


def test_a_case_the_appended_gap_alone_slows_past_the_target_gets_the_least():
    found = calibrate(appended_spin(61.9e-6 + 4.5e-6), 61.9e-6, 3.0, CLOCK_HZ)
    assert found.least and found.cycles == 0 and len(found.tried) == 1
    assert found.median_s / 61.9e-6 - 1 == pytest.approx(4.5 / 61.9)


def test_the_search_keeps_the_closest_try_when_noise_keeps_it_from_the_tolerance():
    medians = iter([100e-6, 101e-6, 104e-6, 102e-6, 103.8e-6, 102.5e-6, 103.5e-6, 102.6e-6])
    found = calibrate(lambda cycles: next(medians), 100e-6, 3.0, CLOCK_HZ, max_tries=8)
    assert len(found.tried) == 8
    assert (found.cycles, found.median_s) == (15129, 102.6e-6)  # 0.4 µs short beats 0.5 µs over


def test_a_spin_the_timer_never_sees_ends_the_search_with_every_try_equal():
    found = calibrate(lambda cycles: 100e-6, 100e-6, 3.0, CLOCK_HZ)
    assert len(found.tried) == 12 and {median for _, median in found.tried} == {100e-6}
    assert found.tried[-1][0] > 16 ** 9  # it grew the spin each time before giving up


def test_a_spin_found_in_an_earlier_run_is_tried_first_and_kept_when_close():
    response = spin_in_every_block(182e-6, waves=62, hidden_cycles=2000)
    earlier = calibrate(response, 182e-6, 3.0, CLOCK_HZ)
    again = calibrate(response, 182e-6, 3.0, CLOCK_HZ, first_guess=earlier.cycles)
    assert again.tried == [(0, response(0)), (earlier.cycles, response(earlier.cycles))]
    assert again.cycles == earlier.cycles


def test_an_appended_gap_of_most_of_the_target_is_no_sign_of_a_blind_timer():
    # host W, cupy_add 8192²: unslowed 320.3 µs, 0 cycles 325.54 µs (+1.6%), 8633 cycles 329.82 µs (+2.98%)
    found = calibrate(appended_spin(325.54e-6), 320.3e-6, 3.0, CLOCK_HZ)
    assert found.reached and len(found.tried) == 2 and not spin_unseen(found, 3.0)
    assert found.median_s - found.tried[0][1] < 0.015 * found.tried[0][1]  # what the old check took for blindness


def test_a_timer_that_never_sees_the_spin_is_told_apart():
    found = calibrate(lambda cycles: 100e-6, 100e-6, 3.0, CLOCK_HZ)
    assert not found.reached and spin_unseen(found, 3.0)
    least = calibrate(appended_spin(61.9e-6 + 4.5e-6), 61.9e-6, 3.0, CLOCK_HZ)
    assert not spin_unseen(least, 3.0)

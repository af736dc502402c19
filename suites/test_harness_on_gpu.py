"""The harness's GPU side on the real GPU: the held stream, the L2 flush, the event and CUPTI timers,
the NVML queries and the ceilings. The CPU tests (tests/) replace each of these with a fake; these
tests are what says the real ones do what the fakes pretend.

Each bound below has its reason beside it. They hold on any GPU the suite supports (Volta and later):
the spins count wall time on the GPU's own clock (%globaltimer), and the ceilings are checked against
the datasheet figures that NVML's clocks give, not against numbers of one GPU model.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import time

import numpy as np
import pytest

from kernelwatch.timing import timer as timer_module
from kernelwatch.timing.ceilings import Ceilings, datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s
from kernelwatch.timing.gpu import clock_state
from kernelwatch.timing.profile import MIN_PAIRS
from kernelwatch.timing.timer import TIMER_CUPTI_KERNEL, TIMER_EVENTS

pytestmark = [pytest.mark.gpu, pytest.mark.perf]  # times: needs the GPU to itself

SOURCE = r"""
// One thread that runs for `ns` nanoseconds of the GPU's global timer: a launch of known length.
extern "C" __global__ void spin_ns(long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while ((long long)(now - start) < ns);
}

// One thread that follows `steps` links of a chain through memory, each load waiting on the one
// before it and bypassing L1 (__ldcg): its time is the latency of wherever the chain lies, L2 or DRAM.
extern "C" __global__ void chase(const unsigned int *__restrict__ next, unsigned int steps, unsigned int *out) {
    unsigned int at = 0;
    for (unsigned int s = 0; s < steps; ++s) at = __ldcg(next + at);
    *out = at;
}
"""

CHAIN_LINKS = 4096  # 4096 cache lines (512 KiB touched): far inside any L2, thousands of dependent loads
CHAIN_SPAN_BYTES = 32 << 20  # spread over 32 MiB, so that each link is a line and a page of its own


@pytest.fixture(scope="module")
def kernels(kernelwatch_gpu):
    import cupy

    module = cupy.RawModule(code=SOURCE, options=("-std=c++17",))
    return module.get_function("spin_ns"), module.get_function("chase")


def spin(kernels, stream, ns: int) -> None:
    with stream:
        kernels[0]((1,), (1,), (np.int64(ns),))


@pytest.fixture(scope="module")
def chain(kernelwatch_gpu):
    """A closed chain of CHAIN_LINKS links, each in a random cache line of CHAIN_SPAN_BYTES."""
    import cupy

    words_per_line = 128 // 4
    others = np.random.default_rng(7).choice(np.arange(1, CHAIN_SPAN_BYTES // 128), CHAIN_LINKS - 1, replace=False)
    lines = np.concatenate(([0], others)) * words_per_line  # the chase starts at word 0
    host = np.zeros(CHAIN_SPAN_BYTES // 4, np.uint32)
    host[lines] = np.roll(lines, -1)
    return cupy.asarray(host), cupy.zeros(1, np.uint32)


def chase(kernels, chain, stream) -> None:
    with stream:
        kernels[1]((1,), (1,), (chain[0], np.uint32(CHAIN_LINKS), chain[1]))


@pytest.mark.parametrize("length", [200e-6, 20e-3], ids=["200us", "20ms"])
def test_an_event_sample_reads_a_spin_of_known_length(kernelwatch_timer, kernels, length):
    times = [kernelwatch_timer.sample(lambda stream: spin(kernels, stream, int(length * 1e9)), flush=False) for _ in range(5)]
    # the spin ends on the GPU's clock and the events add their fixed cost (2.6-4.2 µs on H200 hosts,
    # docs/method.md#event-timer-cost). The shortest sample is judged: other work on the GPU (another process's context)
    # can only lengthen one. 8 µs below the length covers the two clocks' resolution; at 20 ms a
    # figure 0.1% off (20 µs) falls outside either bound
    assert length - 8e-6 <= min(times) < length + 15e-6, times


def test_the_held_stream_keeps_host_time_between_launches_out_of_a_sample(kernelwatch_timer, kernels):
    def run(stream):
        spin(kernels, stream, 50_000)
        time.sleep(0.01)  # 10 ms of host time between two launches: queued behind the hold, not timed
        spin(kernels, stream, 50_000)

    sampled = kernelwatch_timer.sample(run, flush=False)
    assert 100e-6 <= sampled < 1e-3, sampled  # two 50 µs spins back to back, not the 10 ms between them


def test_a_hold_that_times_out_is_an_error_and_the_timer_still_works_after_it(kernelwatch_timer, kernels, monkeypatch):
    monkeypatch.setattr(timer_module, "HOLD_TIMEOUT_NS", 1_000_000)  # 1 ms instead of 2 s

    def slow_to_queue(stream):
        time.sleep(0.03)  # the hold gives up while the host is still queuing
        spin(kernels, stream, 10_000)

    with pytest.raises(RuntimeError, match="held stream timed out"):
        kernelwatch_timer.sample(slow_to_queue, flush=False)
    monkeypatch.undo()
    assert 10e-6 <= kernelwatch_timer.sample(lambda stream: spin(kernels, stream, 10_000), flush=False) < 1e-3


def test_a_sample_starts_with_the_l2_flushed_unless_asked_not_to(kernelwatch_timer, kernels, chain):
    run = lambda stream: chase(kernels, chain, stream)  # noqa: E731
    kernelwatch_timer.sample(run, flush=False)  # loads the chain into L2 (and its pages into the TLBs)
    warm = statistics.median(kernelwatch_timer.sample(run, flush=False) for _ in range(7))
    cold = statistics.median(kernelwatch_timer.sample(run) for _ in range(7))  # flush=True is the default
    # every link a DRAM access instead of an L2 hit: about twice as long on any recent GPU; 1.3x leaves room
    assert cold > 1.3 * warm, (cold, warm)


def test_a_measurement_of_a_spin_reads_its_length_with_the_timer_it_names(kernelwatch_gpu, kernelwatch_timer, kernels, kernelwatch_profile):
    length = 100e-6
    measured = kernelwatch_timer.measure(lambda stream: spin(kernels, stream, int(length * 1e9)), kernelwatch_profile, case="spin")
    assert 0.99 * length <= measured.median < length + 10e-6, measured.samples[:10]
    assert len(measured.samples) >= kernelwatch_profile.min_samples
    assert measured.stopped_by in ("noise", "precision", "time cap", "max samples")
    assert len(measured.event_samples) == len(measured.samples)
    # one stream's work of 20 µs or more gets CUPTI's KERNEL kind (src/kernelwatch/timing/timer.py)
    assert measured.timer == (TIMER_CUPTI_KERNEL if kernelwatch_timer.uses_cupti else TIMER_EVENTS)
    assert measured.host_copies is (False if kernelwatch_timer.uses_cupti else None)
    if kernelwatch_gpu.nvml:
        assert measured.sm_clock_mhz and all(0 < mhz <= kernelwatch_gpu.sm_clock_max_mhz for mhz in measured.sm_clock_mhz)


def test_interleaved_measurements_keep_each_run_apart(kernelwatch_timer, kernels, kernelwatch_profile):
    one, two = kernelwatch_timer.measure_interleaved(lambda stream: spin(kernels, stream, 50_000),
                                             lambda stream: spin(kernels, stream, 100_000), kernelwatch_profile, case="pair")
    assert len(one.samples) >= MIN_PAIRS and len(two.samples) >= MIN_PAIRS
    assert 1.8 < two.median / one.median < 2.05, (one.median, two.median)


def nvidia_smi(*args: str) -> str:
    if shutil.which("nvidia-smi") is None:
        pytest.skip("nvidia-smi is not on PATH: nothing to check NVML's answers against")
    return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, check=True).stdout


def test_the_gpu_description_matches_what_nvidia_smi_says(kernelwatch_gpu):
    import cupy

    if not kernelwatch_gpu.nvml:
        pytest.skip("NVML is not usable here: the description comes from CUDA alone")
    fields = "pci.bus_id,name,uuid,driver_version,clocks.max.sm,clocks.max.memory,compute_cap,enforced.power.limit"
    rows = [[value.strip() for value in line.split(",")]
            for line in nvidia_smi(f"--query-gpu={fields}", "--format=csv,noheader,nounits").splitlines() if line]
    # nvidia-smi writes the PCI domain with 8 digits, CUDA with 4: compare bus, device and function
    mine = [row[1:] for row in rows if row[0].lower().split(":", 1)[1] == kernelwatch_gpu.pci_bus_id.lower().split(":", 1)[1]]
    assert len(mine) == 1, (kernelwatch_gpu.pci_bus_id, rows)
    name, uuid, driver, sm_max, memory_max, capability, power_limit = mine[0]
    assert (kernelwatch_gpu.name, kernelwatch_gpu.uuid, kernelwatch_gpu.driver) == (name, uuid, driver)
    assert (kernelwatch_gpu.sm_clock_max_mhz, kernelwatch_gpu.memory_clock_max_mhz) == (int(sm_max), int(memory_max))
    assert kernelwatch_gpu.compute_capability == capability
    assert kernelwatch_gpu.power_limit_w == pytest.approx(float(power_limit), abs=0.01)  # nvidia-smi prints W to 2 places
    # CuPy loads the NVRTC of the CUDA major it was built for, as it does the runtime
    assert kernelwatch_gpu.nvrtc.split(".")[0] == kernelwatch_gpu.cuda_runtime.split(".")[0], (kernelwatch_gpu.nvrtc, kernelwatch_gpu.cuda_runtime)
    cuda = re.search(r"CUDA Version: (\d+\.\d+)", nvidia_smi()).group(1)
    assert kernelwatch_gpu.cuda_driver_api == cuda
    # NVML's bus width against CUDA's own device property: two sources of one number
    assert kernelwatch_gpu.memory_bus_width_bits == cupy.cuda.runtime.getDeviceProperties(kernelwatch_gpu.cuda_device)["memoryBusWidth"]


def test_the_clock_state_reads_a_clock_within_the_gpus_range(kernelwatch_gpu):
    state = clock_state()
    if not kernelwatch_gpu.nvml:
        assert (state.sm_clock_mhz, state.reasons) == (None, None)
        return
    assert 0 < state.sm_clock_mhz <= kernelwatch_gpu.sm_clock_max_mhz
    assert isinstance(state.reasons, int)


def test_the_device_copy_ceiling_is_below_the_datasheet_bandwidth_and_near_it(kernelwatch_gpu, kernelwatch_ceilings):
    datasheet = datasheet_memory_bytes_per_s(kernelwatch_gpu.memory_clock_max_mhz, kernelwatch_gpu.memory_bus_width_bits)
    if datasheet is None:
        pytest.skip("NVML gives no memory clock or bus width here")
    # a copy reaches 75-95% of the datasheet on HBM GPUs (H200: 89%, ../shared/MEASURED.md); it can never pass it
    assert 0.5 * datasheet < kernelwatch_ceilings.copy_bytes_per_s <= datasheet


def test_the_cublas_ceiling_is_below_the_fp32_datasheet_peak_and_near_it(kernelwatch_gpu, kernelwatch_ceilings):
    peak = datasheet_fp32_flops_per_s(kernelwatch_gpu.compute_capability, kernelwatch_gpu.multiprocessors, kernelwatch_gpu.sm_clock_max_mhz)
    if peak is None:
        pytest.skip("no FP32 lane count for this compute capability, or no clock from NVML")
    # SGEMM of 4096³ (the nightly's largest matmul, so measured once) reaches 65-80% of the FP32 peak
    # with TF32 off (H200: 49 of 67 TFLOP/s, ../shared/MEASURED.md), never more than the peak
    assert 0.4 * peak < kernelwatch_ceilings.cublas_flops_per_s(4096, 4096, 4096) <= peak


def test_a_host_copy_ceiling_is_sampled_without_an_l2_flush_or_the_host_copy_window(kernelwatch_ceilings, monkeypatch):
    # a copy between pinned host memory and the device reads no L2 line: a flush before each sample would
    # only cost time; the host-copy window is for verdicts, and a ceiling is a figure (ceilings.py)
    seen, measure = [], kernelwatch_ceilings.timer.measure

    def spy(run, profile, flush=True, case=""):
        seen.append((flush, profile.host_copy_min_time))
        return measure(run, profile, flush=flush, case=case)

    monkeypatch.setattr(kernelwatch_ceilings.timer, "measure", spy)
    assert kernelwatch_ceilings.host_copy_seconds(True, 1 << 20, 2) > 0
    assert seen == [(False, 0.0)]


def test_a_host_copy_ceiling_grows_with_the_copies_and_runs_at_a_pcie_rate(kernelwatch_timer, kernelwatch_profile):
    # Three fresh sets of ceilings, each rule judged on the middle one: the host's other traffic can slow
    # one ceiling's samples for a fraction of a second (GPU-e767c524, 2026-12-04: a lone copy's median
    # 130.5 µs against 79 µs per copy of four and of sixteen, in 2 of 25 runs;
    # notes/2026-12-04.md#2026-12-04-nineteenth-session-the-censuss-last-four-modules-a-host-copy-ceiling-that-read-slow-on-one-host-issue-29). The rules are
    # about the copies, and a count ignored or a copy dropped fails all three.
    chunk = 4 << 20
    trials = []
    for _ in range(3):
        ceilings = Ceilings(kernelwatch_timer, kernelwatch_profile)
        # 16: the streams case's largest count
        trials.append([ceilings.host_copy_seconds(True, chunk, count) for count in (1, 4, 16)]
                      + [ceilings.host_copy_seconds(False, chunk, 4)])
    _, four, sixteen, back = (statistics.median(column) for column in zip(*trials, strict=True))
    # copies back to back on one engine: each as long as the one before, a launch cost saved
    four_by_one = statistics.median(t[1] / t[0] for t in trials)
    sixteen_by_four = statistics.median(t[2] / t[1] for t in trials)
    assert 3.0 < four_by_one < 4.5 and 3.5 < sixteen_by_four < 4.5, trials
    for count, seconds in ((4, four), (16, sixteen), (4, back)):
        # PCIe 3 x16 moves about 12 GB/s, PCIe 5 x16 about 55 GB/s (63 on paper)
        assert 5e9 < count * chunk / seconds < 64e9, (count, seconds, trials)

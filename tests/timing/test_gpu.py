"""What src/kernelwatch/timing/gpu.py reads from CuPy and NVML, against fakes of both on this CPU machine.

The fakes answer as the real libraries do where it matters: nvidia-ml-py returns str from some
versions and bytes from others, CuPy's device name is bytes, NVML takes the PCI bus id as bytes.
suites/test_harness_on_gpu.py checks the same fields against nvidia-smi on a real GPU.
"""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest

from kernelwatch.timing import gpu
from kernelwatch.timing.gpu import ClockState
from tests.support.cuda_runtime import FakeCudaError, fake_cupy

BUS_IDS = {0: "0000:19:00.0", 1: "0000:3B:00.0"}


class FakeNvml(types.SimpleNamespace):
    """nvidia-ml-py's calls that gpu.py makes; `as_bytes` picks the older bindings' return type."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 2

    class NVMLError(Exception):
        pass

    def __init__(self, as_bytes: bool = False, new_reasons: bool = True, unknown_bus: bool = False):
        super().__init__(inits=0, lookups=0)
        self._text = (lambda s: s.encode()) if as_bytes else (lambda s: s)
        self._unknown_bus = unknown_bus
        if new_reasons:
            self.nvmlDeviceGetCurrentClocksEventReasons = lambda handle: 0x20

    def nvmlInit(self):
        self.inits += 1

    def nvmlDeviceGetHandleByPciBusId(self, bus_id):
        assert isinstance(bus_id, bytes), "NVML takes the bus id as bytes"
        self.lookups += 1
        if self._unknown_bus:
            raise self.NVMLError("Not Found")
        return ("handle", bus_id.decode())

    def nvmlDeviceGetName(self, handle):
        return self._text("NVIDIA H200")

    def nvmlSystemGetDriverVersion(self):
        return self._text("580.159.04")

    def nvmlDeviceGetUUID(self, handle):
        return self._text(f"GPU-{handle[1]}")

    def nvmlDeviceGetMaxClockInfo(self, handle, clock):
        return {self.NVML_CLOCK_SM: 1980, self.NVML_CLOCK_MEM: 3201}[clock]

    def nvmlDeviceGetMemoryBusWidth(self, handle):
        return 6144

    def nvmlDeviceGetEnforcedPowerLimit(self, handle):
        return 700000  # mW

    def nvmlDeviceGetClockInfo(self, handle, clock):
        return 1755

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle):
        return 0x4  # the name before nvidia-ml-py 12.535


def fake_device_cupy(monkeypatch, current: int = 0, name=b"NVIDIA H200 (CUDA)"):
    """fake_cupy plus the device calls gpu_info makes, for two devices of which `current` is CuPy's."""
    fake_cupy(monkeypatch, count=2, driver=13000, runtime=12090)
    cupy = sys.modules["cupy"]

    def device(index=None):
        return types.SimpleNamespace(id=current if index is None else index)

    def properties(index):
        return {"name": name, "major": 9, "minor": 0, "multiProcessorCount": 132 + index,
                "l2CacheSize": 52428800, "totalGlobalMem": 150 << 30, "memoryBusWidth": 5120}

    cupy.cuda.Device = device
    cupy.cuda.runtime.getDeviceProperties = properties
    cupy.cuda.runtime.deviceGetPCIBusId = BUS_IDS.__getitem__
    cupy.cuda.nvrtc = types.SimpleNamespace(getVersion=lambda: (12, 9))
    cupy.__version__ = "14.2.0"
    return cupy


@pytest.fixture
def fresh(monkeypatch):
    """gpu.py's caches emptied before and after: each test sees only its own fakes."""
    caches = (gpu._nvml, gpu._nvml_handle, gpu.gpu_info)
    for cache in caches:
        cache.cache_clear()
    yield
    for cache in caches:
        cache.cache_clear()


def with_nvml(monkeypatch, nvml: FakeNvml | None) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", nvml)  # None: `import pynvml` raises ImportError


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_the_description_takes_nvmls_answers_whether_str_or_bytes(fresh, monkeypatch, as_bytes):
    fake_device_cupy(monkeypatch)
    with_nvml(monkeypatch, FakeNvml(as_bytes=as_bytes))
    info = gpu.gpu_info()
    assert (info.name, info.slug, info.driver, info.uuid) == ("NVIDIA H200", "NVIDIA_H200", "580.159.04",
                                                               "GPU-0000:19:00.0")
    assert (info.sm_clock_max_mhz, info.memory_clock_max_mhz, info.memory_bus_width_bits) == (1980, 3201, 6144)
    assert info.nvml is True
    assert (info.cuda_device, info.pci_bus_id, info.compute_capability, info.multiprocessors) == (
        0, "0000:19:00.0", "9.0", 132)
    assert (info.cuda_runtime, info.cuda_driver_api, info.nvrtc, info.cupy) == ("12.9", "13.0", "12.9", "14.2.0")
    assert info.power_limit_w == 700.0  # NVML's milliwatts as watts


def test_a_device_asked_for_by_number_is_that_device_not_the_current_one(fresh, monkeypatch):
    fake_device_cupy(monkeypatch, current=0)
    nvml = FakeNvml()
    with_nvml(monkeypatch, nvml)
    info = gpu.gpu_info(1)
    assert (info.cuda_device, info.pci_bus_id, info.multiprocessors, info.uuid) == (1, "0000:3B:00.0", 133,
                                                                                     "GPU-0000:3B:00.0")
    assert gpu.nvml_handle(1) == ("handle", "0000:3B:00.0")
    assert gpu.nvml_handle() == ("handle", "0000:19:00.0")  # no number: CuPy's current device


def test_the_current_device_is_cupys_current_one(fresh, monkeypatch):
    fake_device_cupy(monkeypatch, current=1)
    with_nvml(monkeypatch, FakeNvml())
    assert gpu.gpu_info().cuda_device == 1
    assert gpu.nvml_handle() == ("handle", "0000:3B:00.0")


@pytest.mark.parametrize("nvml", [None, "init fails", "unknown bus"])
def test_without_a_usable_nvml_the_description_comes_from_cuda_alone(fresh, monkeypatch, nvml):
    fake_device_cupy(monkeypatch, name=b"NVIDIA H200 (CUDA)")
    if nvml == "init fails":
        broken = FakeNvml()
        broken.nvmlInit = lambda: (_ for _ in ()).throw(RuntimeError("NVML Shared Library Not Found"))
        with_nvml(monkeypatch, broken)
    else:
        with_nvml(monkeypatch, None if nvml is None else FakeNvml(unknown_bus=True))
    info = gpu.gpu_info()
    assert (info.name, info.nvml, info.driver, info.uuid, info.sm_clock_max_mhz, info.power_limit_w) == (
        "NVIDIA H200 (CUDA)", False, None, None, None, None)
    assert info.nvrtc == "12.9"  # CuPy's NVRTC needs no NVML
    assert info.memory_bus_width_bits == 5120  # CUDA's own property
    assert gpu.clock_state() == gpu.ClockState(None, None)


def test_a_device_name_cuda_gives_as_str_is_taken_as_it_is(fresh, monkeypatch):
    fake_device_cupy(monkeypatch, name="NVIDIA H200 (str)")
    with_nvml(monkeypatch, None)
    assert gpu.gpu_info().name == "NVIDIA H200 (str)"


def test_a_bus_width_nvml_cannot_give_is_none(fresh, monkeypatch):
    fake_device_cupy(monkeypatch)
    nvml = FakeNvml()
    nvml.nvmlDeviceGetMemoryBusWidth = lambda handle: 0
    with_nvml(monkeypatch, nvml)
    assert gpu.gpu_info().memory_bus_width_bits is None


def test_nvml_is_initialised_once_and_each_device_looked_up_once(fresh, monkeypatch):
    fake_device_cupy(monkeypatch)
    nvml = FakeNvml()
    with_nvml(monkeypatch, nvml)
    assert gpu.gpu_info() is gpu.gpu_info()
    gpu.nvml_handle(0)
    gpu.clock_state()
    assert (nvml.inits, nvml.lookups) == (1, 1)


@pytest.mark.parametrize("new_reasons, reasons", [(True, 0x20), (False, 0x4)], ids=["events", "throttle"])
def test_the_clock_state_reads_the_reasons_by_either_name_of_nvmls_call(fresh, monkeypatch, new_reasons, reasons):
    fake_device_cupy(monkeypatch)
    with_nvml(monkeypatch, FakeNvml(new_reasons=new_reasons))
    if new_reasons:  # the newer name must win where both exist
        monkeypatch.setattr(FakeNvml, "nvmlDeviceGetCurrentClocksThrottleReasons",
                            lambda self, handle: pytest.fail("the deprecated call was used"))
    assert gpu.clock_state() == gpu.ClockState(1755, reasons)


def test_descriptions_and_clock_states_cannot_be_changed_after_the_fact(fresh, monkeypatch):
    fake_device_cupy(monkeypatch)
    with_nvml(monkeypatch, FakeNvml())
    with pytest.raises(dataclasses.FrozenInstanceError):
        gpu.gpu_info().name = "other"  # gpu_info is cached: one caller's change would reach every other
    with pytest.raises(dataclasses.FrozenInstanceError):
        gpu.clock_state().sm_clock_mhz = 0


def test_a_libcuda_found_under_its_second_name_counts_as_a_driver(monkeypatch):
    def only_the_unversioned_name(name):
        if name != "libcuda.so":
            raise OSError(f"{name}: cannot open shared object file")
        return object()

    monkeypatch.setattr("ctypes.CDLL", only_the_unversioned_name)
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert gpu.nvidia_driver_present()


def test_a_driver_too_old_whose_version_cannot_be_read_says_so_without_numbers(monkeypatch):
    fake_cupy(monkeypatch, error=FakeCudaError(gpu.CUDA_ERROR_INSUFFICIENT_DRIVER, "insufficient"))
    runtime = sys.modules["cupy"].cuda.runtime
    runtime.driverGetVersion = lambda: (_ for _ in ()).throw(RuntimeError("no driver entry point"))
    assert gpu.cuda_available() == (False, "the NVIDIA driver is too old for CuPy's CUDA runtime")


@pytest.mark.parametrize("status", [3, 46], ids=["initialization error", "devices unavailable"])
def test_other_cuda_errors_below_the_named_codes_are_not_mistaken_for_them(monkeypatch, status):
    # cudaErrorInitializationError (3) and cudaErrorDevicesUnavailable (46) sit below 35 and 100
    fake_cupy(monkeypatch, error=FakeCudaError(status, f"error {status}"))
    available, why = gpu.cuda_available()
    assert not available
    assert why == f"CUDA cannot use a device (FakeCudaError: error {status})"


def test_the_throttle_bits_and_cuda_error_codes_are_the_libraries_own():
    """Derived from nvidia-ml-py's and cuda-bindings' constants, not copied from them."""
    import pynvml
    from cuda.bindings import runtime

    from kernelwatch.timing import gpu

    assert gpu.THROTTLE_REASONS == {
        pynvml.nvmlClocksEventReasonSwPowerCap: "SW power cap",
        pynvml.nvmlClocksEventReasonHwSlowdown: "HW slowdown",
        pynvml.nvmlClocksEventReasonSwThermalSlowdown: "SW thermal slowdown",
        pynvml.nvmlClocksEventReasonHwThermalSlowdown: "HW thermal slowdown",
        pynvml.nvmlClocksEventReasonHwPowerBrakeSlowdown: "HW power brake slowdown",
    }
    assert gpu.CUDA_ERROR_INSUFFICIENT_DRIVER == int(runtime.cudaError_t.cudaErrorInsufficientDriver)
    assert gpu.CUDA_ERROR_NO_DEVICE == int(runtime.cudaError_t.cudaErrorNoDevice)


@pytest.mark.parametrize("number, written", [(12080, "12.8"), (13000, "13.0"), (12040, "12.4"), (11020, "11.2"),
                                             (12090, "12.9")])
def test_cuda_version_numbers_are_written_as_people_write_them(number, written):
    from kernelwatch.timing import gpu

    assert gpu._cuda_version(number) == written


def test_what_nvml_said_of_a_gpu_and_its_clocks_cannot_be_changed_afterwards():
    import dataclasses


    with pytest.raises(dataclasses.FrozenInstanceError):
        ClockState(1980, 0).sm_clock_mhz = 345

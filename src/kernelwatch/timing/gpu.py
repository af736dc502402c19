"""Which GPU the suite runs on, as NVML names it, and what state it is in.

The CUDA device (CuPy's current device) is mapped to its NVML handle by PCI
bus id: CUDA and NVML number devices differently, and CUDA_VISIBLE_DEVICES
renumbers only CUDA's. Everything here degrades to None where the machine has
no NVML (a CPU-only machine, a container without the management library):
the suite still runs and says so.

The GPU's identity lives here too: `gpu_slug` names its baseline folder
(src/kernelwatch/storage/runs.py) from the NVML name. The plugin's device layer
(src/kernelwatch/plugin/device.py) bundles these for a pytest session.
"""

from __future__ import annotations

import functools
import re
import socket
from dataclasses import asdict, dataclass

_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


def safe_name(text: str) -> str:
    """``text`` with every run of characters other than letters, digits, ``.`` and ``-`` as one ``_``,
    and no ``_`` at either end: safe in a file or folder name."""
    return _UNSAFE.sub("_", text).strip("_")


def gpu_slug(nvml_name: str) -> str:
    """Return the baseline folder name for an NVML device name.

    Letters, digits, ``.`` and ``-`` are kept; every other run of characters
    becomes a single ``_`` and underscores at either end are dropped, so
    ``"NVIDIA GeForce RTX 4090"`` gives ``"NVIDIA_GeForce_RTX_4090"``.
    Raises ValueError when nothing usable is left.
    """
    slug = safe_name(nvml_name)
    if not slug:
        raise ValueError(f"GPU name {nvml_name!r} gives an empty folder name")
    return slug

# NVML clock event ("throttle") reason bits that mean the clocks were cut for
# heat or power; idle, application-clock and sync-boost bits are harmless.
THROTTLE_REASONS = {
    0x0000000000000004: "SW power cap",
    0x0000000000000008: "HW slowdown",
    0x0000000000000020: "SW thermal slowdown",
    0x0000000000000040: "HW thermal slowdown",
    0x0000000000000080: "HW power brake slowdown",
}


# the CUDA runtime's error codes that cuda_available tells apart
CUDA_ERROR_INSUFFICIENT_DRIVER = 35  # cudaErrorInsufficientDriver
CUDA_ERROR_NO_DEVICE = 100  # cudaErrorNoDevice
NO_DRIVER = "no NVIDIA driver on this machine (libcuda cannot be loaded and nvidia-smi is not on PATH)"


def nvidia_driver_present() -> bool:
    """Whether this machine has an NVIDIA driver: its library libcuda loads, or nvidia-smi is on PATH."""
    import ctypes
    import shutil

    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return shutil.which("nvidia-smi") is not None


def _cuda_version(version: int) -> str:
    """12080 -> "12.8": the CUDA runtime's and driver's version numbers as people write them."""
    return f"{version // 1000}.{version % 1000 // 10}"


def cuda_available() -> tuple[bool, str]:
    """(True, "") when CuPy can use a CUDA device, else (False, the real reason).

    The reasons, in the order they are checked: CuPy missing; no NVIDIA driver (libcuda and
    nvidia-smi both absent); CUDA_VISIBLE_DEVICES set but empty; a driver too old for CuPy's CUDA
    runtime (both versions named); no device visible; any other CUDA error, as CUDA words it.
    """
    import os

    try:
        import cupy
    except ImportError as error:
        return False, f"CuPy is not installed ({error})"
    if not nvidia_driver_present():
        return False, NO_DRIVER
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and not visible.strip():
        return False, "CUDA_VISIBLE_DEVICES is set empty, which hides every GPU from this process"
    runtime = cupy.cuda.runtime
    try:
        count = runtime.getDeviceCount()
    except Exception as error:  # CUDARuntimeError, with the runtime's status code
        status = getattr(error, "status", None)
        if status == CUDA_ERROR_INSUFFICIENT_DRIVER:
            return False, _driver_too_old(runtime)
        if status == CUDA_ERROR_NO_DEVICE:
            return False, f"no CUDA device is visible (the driver is there; CUDA_VISIBLE_DEVICES={visible!r})"
        return False, f"CUDA cannot use a device ({type(error).__name__}: {error})"
    if count == 0:
        return False, f"no CUDA device is visible (the driver is there; CUDA_VISIBLE_DEVICES={visible!r})"
    return True, ""


def _driver_too_old(runtime) -> str:
    try:
        driver, needed = _cuda_version(runtime.driverGetVersion()), _cuda_version(runtime.runtimeGetVersion())
    except Exception:
        return "the NVIDIA driver is too old for CuPy's CUDA runtime"
    return (f"the NVIDIA driver (CUDA {driver}) is too old for CuPy's CUDA runtime (CUDA {needed}): "
            f"update the driver, or use the -cuda12 tox environments")


@functools.cache
def _nvml():
    """The initialised pynvml module (from nvidia-ml-py), or None without NVML."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def nvml_module():
    """The initialised pynvml module (nvidia-ml-py), or None where this machine has no NVML."""
    return _nvml()


def nvml_handle(cuda_device: int | None = None):
    """The NVML handle of a CUDA device (default: CuPy's current one), by PCI bus id."""
    import cupy

    return _nvml_handle(cupy.cuda.Device(cuda_device).id if cuda_device is not None else cupy.cuda.Device().id)


@functools.cache
def _nvml_handle(device_id: int):
    nvml = _nvml()
    if nvml is None:
        return None
    import cupy

    bus_id = cupy.cuda.runtime.deviceGetPCIBusId(device_id)
    try:
        return nvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode() if isinstance(bus_id, str) else bus_id)
    except nvml.NVMLError:
        return None


@dataclass(frozen=True)
class GpuInfo:
    """What a baseline file records about the GPU (machine_info["gpu"])."""

    name: str  # NVML's name where NVML is present, else the CUDA device name
    slug: str
    uuid: str | None  # NVML's GPU UUID: tells two hosts of one GPU model apart
    host: str
    cuda_device: int
    pci_bus_id: str
    compute_capability: str
    multiprocessors: int
    l2_bytes: int
    memory_bytes: int
    driver: str | None
    cuda_runtime: str
    cuda_driver_api: str
    nvrtc: str  # the NVRTC that compiles the suite's kernels (CuPy's), "12.9"
    cupy: str
    sm_clock_max_mhz: int | None
    memory_clock_max_mhz: int | None
    memory_bus_width_bits: int | None
    power_limit_w: float | None  # NVML's enforced power limit: a lower one slows the long kernels
    nvml: bool

    def as_dict(self) -> dict:
        return asdict(self)


@functools.cache
def gpu_info(cuda_device: int | None = None) -> GpuInfo:
    import cupy

    device = cupy.cuda.Device(cuda_device) if cuda_device is not None else cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(device.id)
    cuda_name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    handle = nvml_handle(device.id)
    nvml = _nvml()
    name, driver, sm_max, mem_max, uuid, power_limit = cuda_name, None, None, None, None, None
    bus_width = props.get("memoryBusWidth")
    if handle is not None:
        raw = nvml.nvmlDeviceGetName(handle)
        name = raw.decode() if isinstance(raw, bytes) else raw
        raw = nvml.nvmlSystemGetDriverVersion()
        driver = raw.decode() if isinstance(raw, bytes) else raw
        sm_max = nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM)
        mem_max = nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_MEM)
        bus_width = nvml.nvmlDeviceGetMemoryBusWidth(handle)
        raw = nvml.nvmlDeviceGetUUID(handle)
        uuid = raw.decode() if isinstance(raw, bytes) else raw
        power_limit = nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1e3  # NVML answers in mW
    nvrtc_major, nvrtc_minor = cupy.cuda.nvrtc.getVersion()
    return GpuInfo(
        name=name,
        slug=gpu_slug(name),
        uuid=uuid,
        host=socket.gethostname(),
        cuda_device=device.id,
        pci_bus_id=cupy.cuda.runtime.deviceGetPCIBusId(device.id),
        compute_capability=f"{props['major']}.{props['minor']}",
        multiprocessors=int(props["multiProcessorCount"]),
        l2_bytes=int(props["l2CacheSize"]),
        memory_bytes=int(props["totalGlobalMem"]),
        driver=driver,
        cuda_runtime=_cuda_version(cupy.cuda.runtime.runtimeGetVersion()),
        cuda_driver_api=_cuda_version(cupy.cuda.runtime.driverGetVersion()),
        nvrtc=f"{nvrtc_major}.{nvrtc_minor}",
        cupy=cupy.__version__,
        sm_clock_max_mhz=sm_max,
        memory_clock_max_mhz=mem_max,
        memory_bus_width_bits=int(bus_width) if bus_width else None,
        power_limit_w=power_limit,
        nvml=handle is not None,
    )


@dataclass(frozen=True)
class ClockState:
    sm_clock_mhz: int | None
    reasons: int | None  # NVML clock event reason bits

    @property
    def throttle(self) -> list[str]:
        """The heat/power reasons among the bits (empty when none, or without NVML)."""
        if not self.reasons:
            return []
        return [text for bit, text in THROTTLE_REASONS.items() if self.reasons & bit]


def clock_state(cuda_device: int | None = None) -> ClockState:
    """Current SM clock and clock event reasons; (None, None) without NVML."""
    handle = nvml_handle(cuda_device)
    if handle is None:
        return ClockState(None, None)
    nvml = _nvml()
    sm = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)
    getter = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    return ClockState(int(sm), int(getter(handle)))

"""cuda_available names the real reason a GPU cannot be used, each reason faked on this CPU machine."""

from __future__ import annotations

import sys

from kernelwatch.timing import gpu
from tests.support.cuda_runtime import FakeCudaError, fake_cupy


def no_library(name):
    raise OSError(f"{name}: cannot open shared object file")


def test_without_libcuda_and_nvidia_smi_the_reason_is_no_driver_not_an_old_one(monkeypatch):
    # what CuPy says on such a machine: the runtime finds no driver and calls it insufficient
    fake_cupy(monkeypatch, error=FakeCudaError(gpu.CUDA_ERROR_INSUFFICIENT_DRIVER, "insufficient"),
              driver=0, driver_present=False)
    monkeypatch.setattr("ctypes.CDLL", no_library)
    monkeypatch.setattr("shutil.which", lambda name: None)
    available, why = gpu.cuda_available()
    assert not available
    assert why.startswith("no NVIDIA driver on this machine")


def test_nvidia_smi_on_path_counts_as_a_driver(monkeypatch):
    monkeypatch.setattr("ctypes.CDLL", no_library)
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/nvidia-smi" if name == "nvidia-smi" else None)
    assert gpu.nvidia_driver_present()


def test_a_loadable_libcuda_counts_as_a_driver(monkeypatch):
    monkeypatch.setattr("ctypes.CDLL", lambda name: object())
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert gpu.nvidia_driver_present()


def test_a_driver_older_than_the_runtime_names_both_versions(monkeypatch):
    fake_cupy(monkeypatch, error=FakeCudaError(gpu.CUDA_ERROR_INSUFFICIENT_DRIVER, "insufficient"),
              driver=12080, runtime=13000)
    available, why = gpu.cuda_available()
    assert not available
    assert "too old" in why and "CUDA 12.8" in why and "CUDA 13.0" in why


def test_cuda_visible_devices_set_empty_is_named(monkeypatch):
    fake_cupy(monkeypatch, error=FakeCudaError(gpu.CUDA_ERROR_NO_DEVICE, "no CUDA-capable device"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    available, why = gpu.cuda_available()
    assert not available
    assert "CUDA_VISIBLE_DEVICES is set empty" in why


def test_no_device_with_a_driver_says_no_device_is_visible(monkeypatch):
    fake_cupy(monkeypatch, error=FakeCudaError(gpu.CUDA_ERROR_NO_DEVICE, "no CUDA-capable device"))
    available, why = gpu.cuda_available()
    assert not available
    assert why.startswith("no CUDA device is visible")


def test_a_device_count_of_zero_says_no_device_is_visible(monkeypatch):
    fake_cupy(monkeypatch, count=0)
    assert gpu.cuda_available() == (False, "no CUDA device is visible (the driver is there; CUDA_VISIBLE_DEVICES=None)")


def test_another_cuda_error_is_passed_on_in_cudas_words(monkeypatch):
    fake_cupy(monkeypatch, error=FakeCudaError(999, "cudaErrorUnknown: unknown error"))
    available, why = gpu.cuda_available()
    assert not available
    assert "cudaErrorUnknown: unknown error" in why


def test_one_visible_device_is_available(monkeypatch):
    fake_cupy(monkeypatch, count=1)
    assert gpu.cuda_available() == (True, "")


def test_without_cupy_the_reason_is_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    available, why = gpu.cuda_available()
    assert not available
    assert why.startswith("CuPy is not installed")


def test_this_cpu_machine_reports_no_driver_rather_than_an_insufficient_one():
    available, why = gpu.cuda_available()
    if not available and "CuPy is not installed" not in why and not gpu.nvidia_driver_present():
        assert why.startswith("no NVIDIA driver on this machine")

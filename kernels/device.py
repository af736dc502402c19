"""Small queries of the current CUDA device, read from the device, never assumed."""

from __future__ import annotations

import numpy as np


def free_device_bytes() -> int:
    """Bytes a new allocation can get: the driver's free memory plus CuPy's pooled free blocks."""
    import cupy

    free, _total = cupy.cuda.runtime.memGetInfo()
    return int(free) + int(cupy.get_default_memory_pool().free_bytes())


def attribute(name: str) -> int:
    """A device attribute by CuPy's name, e.g. 'MaxSharedMemoryPerBlockOptin'."""
    import cupy

    return int(cupy.cuda.Device().attributes[name])


def int32(value: int) -> np.int32:
    """Kernel `int` parameters: CuPy passes a Python int as 64 bits, so convert explicitly."""
    return np.int32(value)


def is_pinned(host_array: np.ndarray) -> bool:
    """True when a NumPy array's memory is page-locked (cudaHostAlloc'ed)."""
    import cupy

    ptr = host_array.__array_interface__["data"][0]
    try:
        attributes = cupy.cuda.runtime.pointerGetAttributes(ptr)
    except cupy.cuda.runtime.CUDARuntimeError:
        return False
    return attributes.type == cupy.cuda.runtime.memoryTypeHost


def pinned_empty(shape, dtype=np.float32) -> np.ndarray:
    """An uninitialised NumPy array in page-locked host memory (the array keeps it alive)."""
    import cupy

    count = int(np.prod(shape))
    memory = cupy.cuda.alloc_pinned_memory(count * np.dtype(dtype).itemsize)
    return np.frombuffer(memory, dtype, count).reshape(shape)

"""The thin layer over CUPTI's activity API (NVIDIA's cupti-python) that the timer uses.

`open_recorder()` decides once whether CUPTI can be used in this process: it
imports `cupti`, registers the buffer callbacks, and enables, disables and
flushes activity recording once. Any failure (not installed, a libcupti the
driver does not accept, a profiler such as Nsight Compute already attached)
gives no recorder and a one-line note saying why; the timer then falls back
to held CUDA events.

An `ActivityRecorder` records kernels, memcpys and memsets only between
`start()` and `stop()`; `collect()` flushes and returns the records gathered
so far as plain `Activity` tuples (src/kernelwatch/timing/spans.py) with CUPTI's count
of dropped records. Records are copied out inside CUPTI's callback, because
the record objects point into a buffer that CUPTI reuses afterwards.

CUPTI has two kinds of kernel record, and `start(serial_kernels=...)` picks
one per recording session (src/kernelwatch/timing/timer.py picks per case; docs/method.md#cupti-kernel-kinds has the
measurements, all on H200):
- CONCURRENT_KERNEL: kernels overlap as they would untraced; its timestamps
  are the first block's start and the last block's end, and read alike on
  every host tried (the 1024x1024 adds within 0.1 µs). Its price: CUPTI
  instruments the kernel code to take them, which slows kernels made of very
  many very short blocks (the one-float-a-thread 8192x8192 adds, 5-7%).
- KERNEL: serializes kernels and leaves their code alone (those adds within
  1% of Nsight Compute), but its timestamps take in part of the GPU front
  end's handling of the launch, about 1.4 µs, of which up to 0.8 µs differs
  between hosts: 10-15% of a 5 µs add, under 2% from 40 µs up.
"""

from __future__ import annotations

import ctypes
import threading

from kernelwatch.timing.spans import Activity

BUFFER_BYTES = 8 * 2**20  # a kernel record is ~200 bytes: ~40 000 records, far more than one batch makes
FALLBACK = "timing with held CUDA events"


class _Inbox:
    """Records handed over by CUPTI's buffer-completed callback, which may run on CUPTI's own thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._records: list[Activity] = []

    def add(self, records: list[Activity]) -> None:
        with self._lock:
            self._records.extend(records)

    def take(self) -> list[Activity]:
        with self._lock:
            records, self._records = self._records, []
        return records


_INBOX = _Inbox()
_REGISTERED: list = []  # cupti modules whose callbacks point at _INBOX (strong references: compared by identity)


def _register_callbacks(cupti) -> None:
    """Hand CUPTI our buffer callbacks, once per process (CUPTI keeps one pair)."""
    if any(module is cupti for module in _REGISTERED):
        return
    kind_names = {int(cupti.ActivityKind.CONCURRENT_KERNEL): "kernel", int(cupti.ActivityKind.KERNEL): "kernel",
                  int(cupti.ActivityKind.MEMCPY): "memcpy", int(cupti.ActivityKind.MEMSET): "memset"}

    def copy_kind(activity) -> str:
        try:
            return cupti.ActivityMemcpyKind(activity.copy_kind).name
        except (AttributeError, ValueError):
            return str(getattr(activity, "copy_kind", "?"))

    def buffer_requested():
        return BUFFER_BYTES, 0  # 0: as many records as fit

    def buffer_completed(activities):
        records = []
        for activity in activities:
            kind = kind_names.get(int(activity.kind))
            if kind == "kernel":
                name = str(activity.name)
            elif kind == "memcpy":
                name = f"memcpy {copy_kind(activity)}"
            elif kind == "memset":
                name = "memset"
            else:
                continue
            records.append(Activity(kind, name, int(activity.start), int(activity.end)))
        _INBOX.add(records)

    cupti.activity_register_callbacks(buffer_requested, buffer_completed)
    _REGISTERED.append(cupti)


class ActivityRecorder:
    """Kernel, memcpy and memset activity records of this process, between start() and stop()."""

    def __init__(self, cupti):
        self._cupti = cupti
        self._kinds: tuple = ()  # the kinds of the session in progress
        _register_callbacks(cupti)

    def probe(self) -> None:
        """Enable, disable and flush once with each kernel kind, and read the dropped count: raises
        where CUPTI refuses."""
        for serial_kernels in (False, True):
            self.start(serial_kernels)
            self.stop()
        self.dropped_records()

    def start(self, serial_kernels: bool = False) -> None:
        """Record kernels (CUPTI's KERNEL kind if `serial_kernels`, else CONCURRENT_KERNEL), memcpys
        and memsets until stop()."""
        kinds = self._cupti.ActivityKind
        self._kinds = (kinds.KERNEL if serial_kernels else kinds.CONCURRENT_KERNEL, kinds.MEMCPY, kinds.MEMSET)
        _INBOX.take()  # nothing from before this session counts
        enabled = []
        try:
            for kind in self._kinds:
                self._cupti.activity_enable(kind)
                enabled.append(kind)
        except BaseException:
            for kind in enabled:
                self._cupti.activity_disable(kind)
            raise

    def collect(self) -> tuple[list[Activity], int]:
        """Every record completed since start() or the last collect(), and how many CUPTI dropped."""
        self._cupti.activity_flush_all(1)  # 1: forced, also the buffers that are not full
        return _INBOX.take(), self.dropped_records()

    def stop(self) -> None:
        """Disable every kind, then flush and discard what is left; the first error is raised after."""
        errors = []
        for kind in self._kinds:
            try:
                self._cupti.activity_disable(kind)
            except Exception as error:
                errors.append(error)
        try:
            self._cupti.activity_flush_all(1)
        except Exception as error:
            errors.append(error)
        _INBOX.take()
        if errors:
            raise errors[0]

    def dropped_records(self) -> int:
        """Records CUPTI dropped for want of buffer space since the last call (global queue)."""
        dropped = ctypes.c_size_t(0)
        self._cupti.activity_get_num_dropped_records(0, 0, ctypes.addressof(dropped))
        return int(dropped.value)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def open_recorder() -> tuple[ActivityRecorder | None, str]:
    """(a working recorder, "") or (None, why not, as one line). Never raises."""
    try:
        from cupti import cupti
    except Exception as error:
        return None, f"CUPTI unavailable ({_one_line(error)}); {FALLBACK}"
    try:
        recorder = ActivityRecorder(cupti)
        recorder.probe()
    except Exception as error:
        return None, f"CUPTI refused activity recording ({type(error).__name__}: {_one_line(error)}); {FALLBACK}"
    return recorder, ""

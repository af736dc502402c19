"""The thin layer over CUPTI's activity API (NVIDIA's cupti-python) that the timer uses.

`open_recorder()` decides once whether CUPTI can be used in this process: it
imports `cupti`, registers the buffer callbacks, and enables, disables and
flushes activity recording once. Any failure (not installed, a libcupti the
driver does not accept, a profiler such as Nsight Compute already attached)
gives no recorder and a one-line note saying why; the timer then falls back
to held CUDA events.

An `ActivityRecorder` records kernels, memcpys and memsets only between
`start()` and `stop()`; `collect()` flushes and returns the records gathered
so far as plain `Activity` tuples (harness/cupti_spans.py) with CUPTI's count
of dropped records. Records are copied out inside CUPTI's callback, because
the record objects point into a buffer that CUPTI reuses afterwards.

Kernels are recorded with CUPTI's CONCURRENT_KERNEL kind, whose timestamps
are the first block's start and the last block's end. The other kernel kind,
KERNEL, was tried and rejected (H200, NOTES.md): it serializes kernels and
leaves their code alone, and it agreed with Nsight Compute on every case of
one host, but its timestamps include some of the launch's handling by the GPU
front end, which differs between hosts: the 1024x1024 adds read 10-15% (0.8
µs) longer on a two-GPU host than on the host that recorded them, where the
concurrent kind reads them alike (within 0.1 µs) on every host tried. The
concurrent kind's price: it instruments kernels, which slows kernels made of
very many very short blocks (the one-float-a-thread 8192x8192 adds, 7%).
"""

from __future__ import annotations

import ctypes
import threading

from .cupti_spans import Activity

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
    kind_names = {int(cupti.ActivityKind.CONCURRENT_KERNEL): "kernel", int(cupti.ActivityKind.MEMCPY): "memcpy",
                  int(cupti.ActivityKind.MEMSET): "memset"}

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
        self._kinds = (cupti.ActivityKind.CONCURRENT_KERNEL, cupti.ActivityKind.MEMCPY, cupti.ActivityKind.MEMSET)
        _register_callbacks(cupti)

    def probe(self) -> None:
        """Enable, disable and flush once, and read the dropped count: raises where CUPTI refuses."""
        self.start()
        self.stop()
        self.dropped_records()

    def start(self) -> None:
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

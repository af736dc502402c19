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

Kernels are recorded with one of CUPTI's two kernel kinds, chosen per
recording session:
- KERNEL (the default) serializes kernel execution and leaves the kernels as
  they are. A case that runs one stream loses nothing by the serializing.
- CONCURRENT_KERNEL lets kernels of different streams overlap, but CUPTI
  instruments the kernel code for it, and that slows kernels made of very
  many very short blocks: on an H200 the one-float-a-thread adds of 8192²
  ran 7% slower (vector_add 232 -> 248 µs) while the float4 adds and the
  matrix products moved by 0-0.2 µs (NOTES.md). Only a case that overlaps
  kernels on purpose (the streams pipeline) asks for it.
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
    kinds = cupti.ActivityKind
    kind_names = {int(kinds.KERNEL): "kernel", int(kinds.CONCURRENT_KERNEL): "kernel", int(kinds.MEMCPY): "memcpy",
                  int(kinds.MEMSET): "memset"}

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
        kinds = cupti.ActivityKind
        self._kernel_kind = {False: kinds.KERNEL, True: kinds.CONCURRENT_KERNEL}
        self._copy_kinds = (kinds.MEMCPY, kinds.MEMSET)
        self._enabled: list = []
        _register_callbacks(cupti)

    def probe(self) -> None:
        """Enable, disable and flush each kernel kind once, and read the dropped count: raises
        where CUPTI refuses."""
        for concurrent_kernels in (False, True):
            self.start(concurrent_kernels)
            self.stop()
        self.dropped_records()

    def start(self, concurrent_kernels: bool = False) -> None:
        """Record from now on; kernels with the CONCURRENT_KERNEL kind where asked, else KERNEL."""
        if self._enabled:
            raise RuntimeError("CUPTI activity recording is already on; stop() it first")
        _INBOX.take()  # nothing from before this session counts
        try:
            for kind in (self._kernel_kind[concurrent_kernels], *self._copy_kinds):
                self._cupti.activity_enable(kind)
                self._enabled.append(kind)
        except BaseException:
            self._disable_all()
            raise

    def collect(self) -> tuple[list[Activity], int]:
        """Every record completed since start() or the last collect(), and how many CUPTI dropped."""
        self._cupti.activity_flush_all(1)  # 1: forced, also the buffers that are not full
        return _INBOX.take(), self.dropped_records()

    def _disable_all(self) -> list[Exception]:
        errors = []
        for kind in self._enabled:
            try:
                self._cupti.activity_disable(kind)
            except Exception as error:
                errors.append(error)
        self._enabled = []
        return errors

    def stop(self) -> None:
        """Disable every kind, then flush and discard what is left; the first error is raised after."""
        errors = self._disable_all()
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

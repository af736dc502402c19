"""kernelwatch.plugin.xdist: records and verdicts handed from pytest-xdist workers to the controller."""

import json
import threading
import time

import pytest

from kernelwatch.plugin import xdist as workers
from kernelwatch.report.findings import Findings
from kernelwatch.verdict.labels import Verdict
from kernelwatch.verdict.record import CaseRecord
from kernelwatch.verdict.stats import SAME


def test_workers_spread_over_the_visible_devices():
    assert [workers.worker_device(f"gw{i}", 2) for i in range(5)] == [0, 1, 0, 1, 0]
    assert workers.worker_device("gw3", 1) == 0
    with pytest.raises(ValueError):
        workers.worker_device("master", 2)


def test_exclusive_lock_waits_for_shared_holders(tmp_path, monkeypatch):
    monkeypatch.setattr(workers.tempfile, "gettempdir", lambda: str(tmp_path))
    events = []

    def shared_user():
        with workers.gpu_lock("0000:00:06.0", exclusive=False):
            events.append("shared start")
            time.sleep(0.3)
            events.append("shared end")

    thread = threading.Thread(target=shared_user)
    thread.start()
    time.sleep(0.1)
    with workers.gpu_lock("0000:00:06.0", exclusive=True) as waited:
        events.append("exclusive")
    thread.join()
    assert events == ["shared start", "shared end", "exclusive"]
    assert waited > 0.1


def test_locks_of_different_gpus_are_independent(tmp_path, monkeypatch):
    monkeypatch.setattr(workers.tempfile, "gettempdir", lambda: str(tmp_path))
    with workers.gpu_lock("0000:00:06.0", exclusive=True):
        with workers.gpu_lock("0000:00:07.0", exclusive=True) as waited:
            assert waited < 0.05


class FakeBench:
    def __init__(self, fullname, data, extra_info):
        self.fullname, self.data, self.extra_info = fullname, data, extra_info

    def __bool__(self):
        return True

    def as_dict(self, include_data=True):
        return {"name": self.fullname.split("::")[-1], "fullname": self.fullname, "group": "g", "param": "p",
                "params": {"n": 1}, "extra_info": self.extra_info, "options": {"timer": "gpu"},
                "stats": {"iterations": 1, "data": self.data}}


def test_worker_results_reach_the_controller_intact():
    import types

    record = {"worker": "gw1", "verdict": SAME, "ratio": 1.0, "detectable": 0.02}
    worker = types.SimpleNamespace(
        workeroutput={},
        _benchmarksession=types.SimpleNamespace(benchmarks=[FakeBench("s.py::t[a]", [1e-3, 2e-3, 3e-3], record)]),
    )
    worker_findings = Findings(records=[CaseRecord("s.py::t[a]", 2e-3, [1e-3, 2e-3, 3e-3], verdict=SAME)],
                               verdicts=[Verdict("s.py::t[a]", SAME, 2e-3, 2e-3, 1.0, 0.02, "within")],
                               cards={"s.py::t[a]": ["#### Why `s.py::t[a]` is slower", "", "1. **barriers**"]})
    workers.export_results(worker, worker_findings)
    assert json.loads(worker.workeroutput[workers.PAYLOAD_KEY])["benchmarks"][0]["fullname"] == "s.py::t[a]"

    controller = types.SimpleNamespace(_benchmarksession=types.SimpleNamespace(benchmarks=[]))
    controller_findings = Findings(cards={"s.py::other": ["its own card"]})
    workers.import_results(controller, controller_findings, worker.workeroutput)
    assert controller_findings.records == worker_findings.records and controller_findings.verdicts == worker_findings.verdicts
    # the worker's cards reach the controller's report beside the cards of the other workers
    assert controller_findings.cards == {"s.py::other": ["its own card"], **worker_findings.cards}
    (merged,) = controller._benchmarksession.benchmarks
    assert merged.fullname == "s.py::t[a]" and merged.stats.median == 2e-3
    as_dict = merged.as_dict(include_data=True)
    assert as_dict["stats"]["data"] == [1e-3, 2e-3, 3e-3]
    back = CaseRecord.from_benchmark(as_dict)  # the record, verdict included, travels with the samples
    assert (back.worker, back.verdict, back.ratio, back.detectable) == ("gw1", SAME, 1.0, 0.02)


def timed(name, bus, start, end):
    return {"fullname": name, "extra_info": {"pci_bus_id": bus, "timing_started": start, "timing_ended": end}}


def test_back_to_back_timings_do_not_overlap():
    runs = [timed("a", "0:6", 0.0, 1.0), timed("b", "0:6", 1.0, 2.0), timed("c", "0:7", 0.5, 1.5)]
    assert workers.overlapping_timings(runs) == []


def test_overlapping_timings_on_one_gpu_are_found():
    runs = [timed("a", "0:6", 0.0, 3.0), timed("b", "0:6", 1.0, 2.0), timed("c", "0:6", 2.5, 4.0)]
    assert workers.overlapping_timings(runs) == [("a", "b"), ("a", "c")]


def test_a_worker_is_pinned_to_its_device_before_cuda_starts_and_the_controller_to_none(monkeypatch):
    import sys
    import types

    set_to = []
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 2, setDevice=set_to.append)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime)))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert workers.worker_id() is None and workers.pin_worker_to_device() is None and set_to == []
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert workers.pin_worker_to_device() == 1 and set_to == [1]
    with pytest.raises(ValueError, match=r"^unexpected xdist worker id 'gwx'$"):
        workers.worker_device("gwx", 2)


def test_a_worker_reenables_benchmarking_and_leaves_saving_to_the_controller():
    import types

    session = types.SimpleNamespace(disabled=True, save="s", autosave=True, json="j", histogram="h")
    config = types.SimpleNamespace(_benchmarksession=session, getoption=lambda name: False)
    workers.prepare_worker_session(config)
    assert vars(session) == {"disabled": False, "save": None, "autosave": None, "json": None, "histogram": None}
    off = types.SimpleNamespace(disabled=True, save="s", autosave=True, json="j", histogram="h")
    workers.prepare_worker_session(types.SimpleNamespace(_benchmarksession=off, getoption=lambda name: True))
    assert off.disabled and off.save == "s"  # --benchmark-disable: left off
    workers.prepare_worker_session(types.SimpleNamespace(getoption=lambda name: False))  # no pytest-benchmark


def test_the_lock_file_is_named_by_the_bus_id_with_other_characters_replaced():
    assert workers.lock_path("00000000:19:00.0").name == "kernelwatch-gpu-00000000_19_00_0.lock"


def test_timings_that_touch_do_not_overlap_and_a_case_without_timing_is_left_out():
    runs = [timed("a", "0:6", 0.0, 2.0), timed("b", "0:6", 0.5, 1.0), timed("c", "0:6", 1.5, 2.5),
            {"fullname": "d", "extra_info": {}}, {"fullname": "e"}]
    # c starts before a ends (a still the latest end), not before b's
    assert workers.overlapping_timings(runs) == [("a", "b"), ("a", "c")]
    tie = [timed("a", "0:6", 0.0, 2.0), timed("b", "0:6", 1.0, 2.0), timed("c", "0:6", 1.5, 3.0)]
    assert workers.overlapping_timings(tie) == [("a", "b"), ("a", "c")]  # b ends with a: a stays the one named
    assert workers.overlapping_timings([timed("a", "0:6", 0.0, 2.0), timed("b", "0:6", 2.0, 3.0)]) == []


def test_a_shared_holder_admits_other_shared_holders_and_an_exclusive_one_admits_none(tmp_path, monkeypatch):
    import fcntl

    monkeypatch.setattr(workers.tempfile, "gettempdir", lambda: str(tmp_path))

    def shared_lock_taken_at_once() -> bool:
        # another holder's shared lock, asked without waiting (its own open file: flock locks are per open file)
        with open(workers.lock_path("0000:00:06.0"), "a+") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

    with workers.gpu_lock("0000:00:06.0", exclusive=False):
        assert shared_lock_taken_at_once()  # correctness checks side by side
    with workers.gpu_lock("0000:00:06.0", exclusive=True):
        assert not shared_lock_taken_at_once()  # timing: the GPU to itself
    assert shared_lock_taken_at_once()  # released on leaving

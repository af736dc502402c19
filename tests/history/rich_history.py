"""The rich history that the tests of `changes`, `site` and the analysis read: every kind of change a store holds,
on two GPUs, recorded into a fresh store by `record_rich_history`."""

from __future__ import annotations

import dataclasses
import hashlib

from kernelwatch.verdict.accuracy import AccuracyRecord
from tests.history.model_histories import GPUS, written
from tests.history.model_store import PROFILE, document_of

# Two GPUs, written night by night as tokens
# (tests/history/model_histories.py's `written`: the median in µs, F failed on its time, E on its energy, A accepted
# by a trailer, K acknowledged afterwards, T throttled, X the run failed besides its cases), each commit a sha1 of
# its own so that every shortened commit differs, energy measured by one case, a window of 13 commits with a link,
# and two correctness checks. GPU-aaaa (run ids by night: 1, 3, 5, 7, then 9-18) holds every kind of change:
RAMP = " ".join(f"{100 + 0.25 * i:g}" for i in range(1, 9))  # 0.25% a night: a creep, no step


def rich_case(name: str) -> str:
    return f"suites/test_perf_rich.py::test_time[{name}]"


RICH_GPU_A = {
    rich_case("open"): "100 " * 11 + "110F 110F 110F",  # a slower step in the newest 3 runs, failing since
    rich_case("still-failing"): "100 " * 7 + "110F " * 7,  # a slower step before them, failing in 7 runs since
    rich_case("trailer"): "100 " * 4 + "110F " * 6 + "110A 110 110 110",  # failed 6 runs, then accepted (trailer)
    rich_case("acknowledged"): "100 " * 7 + "110FK" + " 110" * 6,  # acknowledged at its first run after
    rich_case("faster"): "100 " * 8 + "80 " * 6,
    rich_case("quietly-slower"): "100 " * 8 + "110 " * 6,  # slower, never failed: open on the site only
    rich_case("failing"): "100 " * 12 + "100F 100F",  # failing in its 2 newest runs, no step (yet)
    rich_case("energy"): "100 " * 13 + "100E",  # failing on its energy in the newest run
    rich_case("creep"): "100 " * 6 + RAMP,
    rich_case("throttled"): "100 100 130T 100 100 100 100 100 100 100X 130T 100 100 100",  # night 9: run failed
}
# GPU-bbbb (runs 2, 4, 6, 8): too short for a step; its throttled case keeps one run
RICH_GPU_B = {rich_case("open"): "100 100 100 100", rich_case("throttled"): "130T 130T 130T 100"}
RICH_CHECK = "suites/test_correct.py::test_errors[fp16]"  # a correctness check that is not timed
RICH_WINDOW_LINK = "https://git.example/kernels/compare/aaa61018...4cf09965"


def rich_commit(commit: str) -> str:
    return hashlib.sha1(f"rich {commit}".encode()).hexdigest()


def _rich_checks(night: int) -> list[dict]:
    """GPU-aaaa's correctness checks of a night: the timed case `open` less accurate from night 11 on (failing
    since), and RICH_CHECK more accurate at night 4, less accurate at 9 and accepted by a trailer at 10."""
    errors = (4e-6, 1e-6) if night >= 11 else (1e-6, 2.5e-7)
    timed = AccuracyRecord(rich_case("open"), *errors, tolerance_max=1e-5, tolerance_avg=5e-6, shape="64x64",
                           input_kind="normal", seed=7, measure="relative",
                           verdict=None if night == 0 else "less accurate" if night >= 11 else "same")
    errors = (2e-6, 5e-7) if night < 4 else (1e-6, 2.5e-7) if night < 9 else (8e-6, 2e-6)
    untimed = AccuracyRecord(RICH_CHECK, *errors, tolerance_max=1e-5, tolerance_avg=5e-6, shape="256",
                             input_kind="uniform", seed=3, measure="scaled",
                             verdict={0: None, 4: "more accurate", 9: "less accurate", 10: "accepted"}.get(night, "same"),
                             accepted_reason="Accept-Slowdown: cases=*fp16* fused rounding" if night == 10 else None)
    return [timed.as_dict(), untimed.as_dict()]


def record_rich_history(store, leave_out: tuple[str, ...] = ()) -> dict[tuple[int, int], int]:
    """Record the rich history (above) in `store`, a fresh one, but for the cases `leave_out`; {(GPU 0 or 1, night):
    run id}."""
    history = written(*({case: tokens for case, tokens in gpu.items() if case not in leave_out}
                        for gpu in (RICH_GPU_A, RICH_GPU_B)))
    ids = {}
    for run in history.runs:
        gpu, night = GPUS.index(run.gpu), (run.started_at - history.runs[0].started_at).days
        cases = {case: dataclasses.replace(one, window_base=one.window_base and rich_commit(one.window_base))
                 for case, one in run.cases.items()}
        document = document_of(dataclasses.replace(run, commit=rich_commit(run.commit), cases=cases))
        for bench in document["benchmarks"]:
            info = bench["extra_info"]
            if bench["fullname"] == rich_case("energy") and gpu == 0 and night >= 10:  # its 4 newest runs
                joules = 1.5 + night / 100
                info["energy"] = {"joules_per_launch": joules, "window_joules_per_launch": [joules, joules]}
            if bench["fullname"] == rich_case("failing") and night == 12:  # its first failed run
                info["window"].update(commits=[[rich_commit(f"between {n}"), f"change {n}"] for n in range(13)],
                                      link=RICH_WINDOW_LINK)
        if gpu == 0:
            document["kernelwatch_accuracy"] = _rich_checks(night)
        ids[(gpu, night)] = store.record_run(document, outcome=run.outcome, profile=PROFILE,
                                             other_failures=run.other_failures if run.outcome == "failed" else None)
    for case, number, reason in history.acknowledgements:
        store.acknowledge(case, number + 1, reason=reason, who="tests")
    return ids


def rich_store_url(tmp_path_factory) -> str:
    """A SQLite store holding the rich history, in a folder of its own: for a module-scoped fixture whose tests only
    read it."""
    from kernelwatch.storage.history import open_store

    url = f"sqlite:///{tmp_path_factory.mktemp('rich') / 'history.sqlite'}"
    with open_store(url) as store:
        record_rich_history(store)
    return url

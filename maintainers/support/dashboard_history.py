"""The dashboard's synthetic history (issue 45): 20 nightlies of five cases, one of them 3% slower from run 7 on.

Recorded in a history store through `HistoryStore.record_run`, as `import` records runs, so that
`python -m kernelwatch.history site` draws it as it would a real store. Run i (1-20) starts at
START + i hours at a commit of its own (the sha1 of its number, so commit ranges read like git's):

* case 2 (30 µs) is 3% slower from run `STEP_RUN` (7) on, judged slower and failed in every run since:
  an open slower step, and a case failing in its newest runs;
* case 4 (50 µs) is 4% slower from run `ACCEPTED_RUN` (12) on, accepted there by a trailer (verdict
  accepted), the same since: an accepted slowdown, no longer open;
* run `FAILED_RUN` (15) is recorded as failed (`import --outcome failed`: some test of it failed, which
  one is not known), so every case of it is a "run failed" point, never a reference;
* every other case of every run is within 0.3% of its level (make_document's noise).

The browser tests (tests/history/test_site_browser.py) and the docs' screenshots
(maintainers/checks/dashboard_screenshots.py) read it.
"""

from __future__ import annotations

import hashlib

from kernelwatch.storage.history import open_store

from .synthetic_history import make_document

RUNS = 20
CASES = 5
STEPPED_CASE, STEP_RUN, STEP = 2, 7, 1.03
ACCEPTED_CASE, ACCEPTED_RUN, ACCEPTED_STEP = 4, 12, 1.04
ACCEPTED_REASON = "Accept-Slowdown: 8-deep k tiles free registers for the fused epilogue"
FAILED_RUN = 15


def commit_of(run: int) -> str:
    return hashlib.sha1(f"dashboard run {run}".encode()).hexdigest()


def dashboard_document(run: int) -> dict:
    """Run `run` (1-20) of the history, as pytest-benchmark's JSON with the plugin's verdicts."""
    slower = {STEPPED_CASE: STEP if run >= STEP_RUN else 1.0, ACCEPTED_CASE: ACCEPTED_STEP if run >= ACCEPTED_RUN else 1.0}
    doc = make_document(run, cases=CASES, case_slower=slower)
    doc["commit_info"]["id"] = commit_of(run)
    for number, bench in enumerate(doc["benchmarks"]):
        info = bench["extra_info"]
        if run == 1:
            continue  # the first run had nothing to be judged against
        if number == STEPPED_CASE and run >= STEP_RUN:
            info["verdict"] = "slower"
        elif number == ACCEPTED_CASE and run == ACCEPTED_RUN:
            info.update(verdict="accepted", accepted_reason=ACCEPTED_REASON)
        else:
            info["verdict"] = "same"
    return doc


def record_dashboard_history(url: str) -> dict[int, int]:
    """Record runs 1-20 in the store at `url` (profile quick); {run number: the store's run id}."""
    with open_store(url) as store:
        return {run: store.record_run(dashboard_document(run), outcome="failed" if run == FAILED_RUN else "passed",
                                      profile="quick") for run in range(1, RUNS + 1)}

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
* every other case of every run is within 0.3% of its level (make_document's noise);
* with accuracy=True, case `ACCURACY_CASE` (0) also carries its correctness check (issue 47): the Kahan errors of
  naive_kahan at K = 4096 (max 5.97e-8, avg 2.40e-8) bit for bit, until run `ACCURACY_RUN` (7) drops the
  compensation (2.41e-6, 6.82e-7: less accurate, failed), accepted by a trailer at run 8, the same since.

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
ACCURACY_CASE, ACCURACY_RUN = 0, 7
KAHAN, PLAIN = (5.97e-08, 2.40e-08), (2.41e-06, 6.82e-07)  # tests/end_to_end/test_accuracy_life.py's figures (fake GPU, g++)


def commit_of(run: int) -> str:
    return hashlib.sha1(f"dashboard run {run}".encode()).hexdigest()


def accuracy_check(run: int, case: str) -> dict:
    """The correctness check of `case` at run `run`, as the plugin records it (AccuracyRecord.as_dict)."""
    from kernelwatch.verdict.accuracy import AccuracyRecord

    errors = PLAIN if run >= ACCURACY_RUN else KAHAN
    reference = None if run == 1 else PLAIN if run > ACCURACY_RUN + 1 else KAHAN
    verdict = ("new" if run == 1 else "less accurate" if run == ACCURACY_RUN else
               "accepted" if run == ACCURACY_RUN + 1 else "same")
    record = AccuracyRecord(case=case, max_error=errors[0], avg_error=errors[1], tolerance_max=1e-5,
                            tolerance_avg=1e-6, shape="16x16x4096", input_kind="uniform", seed=47,
                            measure="relative", kernel="naive_kahan", verdict=verdict,
                            reference_max=None if reference is None else reference[0],
                            reference_avg=None if reference is None else reference[1],
                            accepted_reason="Accept-Slowdown: cases=*case0* Kahan-less sum"
                            if verdict == "accepted" else None)
    return record.as_dict()


def dashboard_document(run: int, accuracy: bool = False) -> dict:
    """Run `run` (1-20) of the history, as pytest-benchmark's JSON with the plugin's verdicts (and, with `accuracy`,
    one case's correctness check)."""
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
    if accuracy:
        doc["kernelwatch_accuracy"] = [accuracy_check(run, doc["benchmarks"][ACCURACY_CASE]["fullname"])]
    return doc


def record_dashboard_history(url: str, accuracy: bool = False) -> dict[int, int]:
    """Record runs 1-20 in the store at `url` (profile quick); {run number: the store's run id}."""
    with open_store(url) as store:
        return {run: store.record_run(dashboard_document(run, accuracy), outcome="failed" if run == FAILED_RUN else "passed",
                                      profile="quick") for run in range(1, RUNS + 1)}

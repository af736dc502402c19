"""What the history store costs a nightly: recording a run and judging it against 200 stored runs.

    python3 -m maintainers.checks.time_store [--history URL] [--runs 200] [--cases 90] [--samples 500]

Fills a store (default: a new SQLite file in a temporary folder) with a synthetic
history of RUNS runs of CASES cases (maintainers/support/synthetic_history.py; SAMPLES samples
a case, about the mean of a committed H200 run), then prints the time of
recording one more run, of `reference_history` over all of them (the one query
a nightly verdict makes), of decoding the samples the verdict pools (the
newest 5 runs of every case) and of `case_series` for every case.  Issue 20
allows the nightly 5 s for recording and judging.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from maintainers.environment import needs, summary


def timed(what: str, action):
    started = time.perf_counter()
    result = action()
    print(f"{what}: {time.perf_counter() - started:.3f} s")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.time_store", description=summary(__doc__))
    parser.add_argument("--history", help="the store to fill (default: a new SQLite file); use an empty one")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cases", type=int, default=90)
    parser.add_argument("--samples", type=int, default=500)
    args = parser.parse_args(argv)
    if min(args.runs, args.cases, args.samples) < 1:
        parser.error("--runs, --cases and --samples must be at least 1")
    needs("maintainers.checks.time_store", "sqlalchemy")
    from kernelwatch.storage.history import open_store
    from maintainers.support.synthetic_history import GPU_A, make_document

    with tempfile.TemporaryDirectory() as scratch:
        url = args.history or str(Path(scratch) / "history.sqlite")
        with open_store(url) as store:
            print(f"store: {store.safe_url}; {args.runs} runs x {args.cases} cases x {args.samples} samples")
            documents = [make_document(i, cases=args.cases, samples=args.samples) for i in range(args.runs + 1)]
            timed(f"recording {args.runs} runs", lambda: [
                store.record_run(doc, outcome="passed", profile="nightly") for doc in documents[:-1]])
            timed("recording one nightly", lambda: store.record_run(documents[-1], outcome="passed", profile="nightly"))
            history = timed(f"reference_history of {args.runs + 1} runs (one query)", lambda: store.reference_history(
                [GPU_A], profile="nightly", limit_runs=args.runs + 1))
            timed("decoding the samples of the newest 5 runs of every case",
                  lambda: [entry.samples for entries in history.values() for entry in entries[:5]])
            series = timed("case_series of every case", store.case_series)
            print(f"{len(history)} cases, {sum(map(len, history.values()))} case-runs; {len(series)} series")


if __name__ == "__main__":
    main()

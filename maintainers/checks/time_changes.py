"""Time change-point detection (and the site) over a synthetic history: `python3 -m maintainers.checks.time_changes [RUNS] [CASES]`.

The history is maintainers/support/h200_histories.py's: every case of the committed H200 runs
with its own run-to-run noise, a 3% step in every tenth case at 60% of the runs.
Prints the seconds detection took (issue 21 asks for under 10 s at 200 runs x 90
cases) and, with --site DIR, the seconds writing the dashboard took (under 30 s).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from maintainers.environment import needs, summary


def store_bench(url: str | None, runs: int, cases: int) -> None:
    """Record a stepped history in a store, then time `changes` and `site` over it."""
    import contextlib
    import io
    import tempfile

    from kernelwatch.history.cli import main as history
    from maintainers.support.synthetic_history import record_stepped_history

    with tempfile.TemporaryDirectory() as scratch:
        url = url or f"sqlite:///{Path(scratch) / 'history.sqlite'}"
        started = time.perf_counter()
        record_stepped_history(url, runs=runs, cases=cases, step_at=int(runs * 0.6), stepped=range(0, cases, 10))
        print(f"recording {runs} runs x {cases} cases: {time.perf_counter() - started:.1f} s")
        for argv in (["changes"], ["site", str(Path(scratch) / "site")]):
            output = io.StringIO()
            started = time.perf_counter()
            with contextlib.redirect_stdout(output):
                status = history([*argv, "--history", url])
            took = time.perf_counter() - started
            print(f"{argv[0]}: {took:.2f} s (exit {status}); {output.getvalue().strip().splitlines()[-1]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.time_changes", description=summary(__doc__))
    parser.add_argument("runs", nargs="?", type=int, default=200)
    parser.add_argument("cases", nargs="?", type=int, default=90)
    parser.add_argument("--site", type=Path, help="also write the dashboard into this folder and time it")
    # a flag and a separate URL: an optional value after --store swallowed RUNS (`--store 200 90` wrote a
    # 90-run store into a file named 200)
    parser.add_argument("--store", action="store_true",
                        help="time the commands over a store instead (a new SQLite file, or --history's)")
    parser.add_argument("--history", metavar="URL", help="with --store: the store to fill (use an empty one)")
    args = parser.parse_args(argv)
    if args.runs < 2 or args.cases < 1:
        parser.error("RUNS must be at least 2 and CASES at least 1")
    needs("maintainers.checks.time_changes", "numpy", "ruptures")
    if args.history and not args.store:
        parser.error("--history needs --store (without it the series are timed in memory)")
    if args.store:
        store_bench(args.history, args.runs, args.cases)
        return 0
    import numpy as np

    from kernelwatch.history.steps import detect_all
    from maintainers.support.h200_histories import case_profiles, relative_medians, synthetic_series

    profiles = case_profiles()
    rng = np.random.default_rng(7)
    series = []
    for i in range(args.cases):
        noise = profiles[i % len(profiles)]
        relative = relative_medians(noise, args.runs, rng, step_at=int(args.runs * 0.6) if i % 10 == 0 else None,
                                    step=0.03)
        series.append(synthetic_series(noise, relative, gpu=f"GPU-synthetic-{i // len(profiles)}"))
    started = time.perf_counter()
    steps = detect_all(series, 0.015)
    detection = time.perf_counter() - started
    found = sum(len(v) for v in steps.values())
    print(f"detection: {args.runs} runs x {args.cases} cases in {detection:.2f} s ({found} changes)")
    if args.site is not None:
        from kernelwatch.history.site import write_site

        started = time.perf_counter()
        write_site(args.site, series, steps)
        print(f"site: {args.site} in {time.perf_counter() - started:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The nightly's wall time per test family: runs it (or reads a run's JUnit XML) and prints a table.

    python -m maintainers.checks.nightly_time [-- PYTEST ARGS ...]      run `pytest suites/ --benchmark-compare`
    python -m maintainers.checks.nightly_time --junit FILE [--wall S]   the table of a run already made

Each test's time is pytest's own (setup, call and teardown, as --junitxml writes it). What no
test accounts for (start-up, collection, the CuPy import, the report at the end) is the
"session" row: the command's wall time less the tests' sum, when the wall time is known.
The slowest tests of each family are listed under the table (--slowest N).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from maintainers.environment import needs_gpu, summary

# (family, test module, test function prefix): the first row that a test matches is its family
FAMILIES = (
    ("host routines, timed", "test_perf_matmul", "test_matmul_host_routine_time"),
    ("matmul, timed", "test_perf_matmul", "test_matmul_time"),
    ("adds, timed", "test_perf_elementwise", "test_add_time"),
    ("streams, timed", "test_perf_elementwise", "test_vector_add_streams_time"),
    ("matmul NaN/Inf propagation", "test_matmul_correctness", "test_matmul_propagates_nan_and_inf"),
    ("matmul correctness", "test_matmul_correctness", ""),
    ("host routines, correctness", "test_host_routines", ""),
    ("elementwise correctness", "test_elementwise_correctness", ""),
    ("verdicts on the GPU", "test_verdict_gpu", ""),
    ("harness on the GPU", "test_harness_on_gpu", ""),
)
OTHER = "other"


def family_of(module: str, name: str) -> str:
    """The family of a test from its module (`suites.test_x`) and name (`test_y[params]`)."""
    module = module.rsplit(".", 1)[-1]
    function = name.split("[", 1)[0]
    for family, family_module, prefix in FAMILIES:
        if module == family_module and function.startswith(prefix):
            return family
    return OTHER


def test_times(junit: Path) -> list[tuple[str, str, float]]:
    """(module, test name, seconds) of every test case in a JUnit XML file."""
    cases = ET.parse(junit).getroot().iter("testcase")
    return [(case.get("classname", ""), case.get("name", ""), float(case.get("time") or 0.0)) for case in cases]


def family_table(times: list[tuple[str, str, float]], wall: float | None = None, slowest: int = 0) -> str:
    """A markdown table of tests and seconds per family (and the session rest), the slowest below."""
    per_family: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for module, name, seconds in times:
        per_family[family_of(module, name)].append((name, seconds))
    order = list(dict.fromkeys(family for family, _, _ in FAMILIES)) + [OTHER]
    lines = ["| family | tests | seconds | slowest test |", "| --- | --- | --- | --- |"]
    for family in order:
        cases = per_family.get(family)
        if not cases:
            continue
        name, seconds = max(cases, key=lambda case: case[1])
        lines.append(f"| {family} | {len(cases)} | {sum(s for _, s in cases):.1f} | {name} ({seconds:.2f} s) |")
    total = sum(seconds for _, _, seconds in times)
    lines.append(f"| all tests | {len(times)} | {total:.1f} | |")
    if wall is not None:
        lines.append(f"| session (start-up, collection, report) | | {wall - total:.1f} | |")
        lines.append(f"| **wall** | | **{wall:.1f}** | |")
    for family in order if slowest else ():
        cases = sorted(per_family.get(family, ()), key=lambda case: -case[1])[:slowest]
        if cases:
            lines.append("")
            lines.append(f"{family}: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in cases))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.nightly_time", description=summary(__doc__),
                                     epilog="exit status: the nightly's own when it runs it; 2 bad arguments; 3 no GPU here")
    parser.add_argument("--junit", type=Path, help="a --junitxml file of a run already made: print its table")
    parser.add_argument("--wall", type=float, help="that run's wall time in seconds (with --junit)")
    parser.add_argument("--slowest", type=int, default=3, metavar="N", help="list the N slowest tests per family")
    parser.add_argument("pytest_args", nargs="*", help="after --: more arguments for pytest")
    args = parser.parse_args(argv)
    if args.junit is not None:
        if args.pytest_args:
            parser.error("--junit reads a run already made: give no pytest arguments")
        if not args.junit.is_file():
            parser.error(f"no such file: {args.junit}")
        print(family_table(test_times(args.junit), args.wall, args.slowest))
        return 0
    if args.wall is not None:
        parser.error("--wall goes with --junit")
    needs_gpu("maintainers.checks.nightly_time")
    with tempfile.TemporaryDirectory() as scratch:
        junit = Path(scratch) / "nightly.xml"
        command = [sys.executable, "-m", "pytest", "suites", "--benchmark-compare", "--kernelwatch-require-gpu",
                   f"--junitxml={junit}", *args.pytest_args]
        print("$ " + " ".join(command), flush=True)
        started = time.perf_counter()
        status = subprocess.call(command)
        wall = time.perf_counter() - started
        if not junit.is_file():
            print(f"the nightly wrote no JUnit XML (exit {status})", file=sys.stderr)
            return status or 1
        print()
        print(family_table(test_times(junit), wall, args.slowest))
    return status


if __name__ == "__main__":
    raise SystemExit(main())

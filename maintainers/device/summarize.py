"""Short tables from a run's outputs: the error table and the performance table.

    python3 -m maintainers.device.summarize --errors correctness.xml --bench perf.json [--bench ...]

--errors reads the JUnit XML of the correctness suite (pytest --junitxml): each
test_matmul_matches_float64 case records its max_error and avg_error as
properties. --bench reads a JSON file the suite wrote (--benchmark-json, or a
stored run) through the cases' records.
"""

from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from kernelwatch.units import format_duration
from kernelwatch.verdict.record import records_of
from maintainers.environment import summary

CASE_ID = re.compile(r"test_matmul_matches_float64\[(?P<kernel>\w+)-(?P<kind>\w+)-(?P<shape>[0-9x]+)\]")


def error_table(path: Path, shapes=("1000x1000x1000", "4096x4096x4096")) -> str:
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        match = CASE_ID.search(case.get("name", ""))
        properties = {p.get("name"): float(p.get("value")) for p in case.iter("property")}
        if match and match["shape"] in shapes and "max_error" in properties:
            rows.append((match["shape"], match["kind"], match["kernel"], properties))
    lines = ["| kernel | n | input | max error | avg error |", "| --- | --- | --- | --- | --- |"]
    for shape, kind, kernel, p in sorted(rows):
        lines.append(f"| {kernel} | {shape.split('x')[0]} | {kind} | {p['max_error']:.2e} | {p['avg_error']:.2e} |")
    return "\n".join(lines)


def bench_table(path: Path) -> str:
    lines = ["| case | timer | median | events median | rsd | samples | rate | of ceiling | of datasheet | verdict "
             "| detectable |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in records_of(json.loads(path.read_text())):
        events = format_duration(r.event_median_s) if r.event_median_s else ""
        detectable = f"{100 * r.detectable:.1f}%" if r.detectable is not None else ""
        ratio = f" {r.ratio:.3f}x" if r.ratio else ""
        lines.append(f"| {r.case.split('::')[-1]} | {r.timer} | {format_duration(r.median_s)} | {events} "
                     f"| {100 * (r.rsd or 0):.2f}% | {len(r.samples)} | {r.rate_text()} | {r.ceiling_text()} "
                     f"| {r.datasheet_text()} | {r.verdict or ''}{ratio} | {detectable} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.device.summarize", description=summary(__doc__))
    parser.add_argument("--errors", type=Path)
    parser.add_argument("--bench", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    if not args.errors and not args.bench:
        parser.error("give --errors FILE, --bench FILE or both")
    if args.errors and args.errors.exists():
        print(error_table(args.errors))
        print()
    for bench in args.bench:
        if bench.exists():
            print(f"{bench.name}:")
            print(bench_table(bench))
            print()


if __name__ == "__main__":
    main()

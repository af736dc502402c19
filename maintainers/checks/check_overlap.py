"""Per GPU and worker, which cases were timed, and whether any two timings overlapped.

    python -m maintainers.checks.check_overlap run.json     (a --benchmark-json file)

Exit status 1 if two cases were timed on one GPU at the same time.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from maintainers.environment import needs, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.check_overlap", description=summary(__doc__),
                                     epilog="exit status: 0 no overlap, 1 two timings overlapped, 2 bad arguments")
    parser.add_argument("path", type=Path, help="a --benchmark-json file of a run with -n N")
    path = parser.parse_args(argv).path
    if not path.is_file():
        parser.error(f"no such file: {path}")
    needs("maintainers.checks.check_overlap", "pytest", "pytest_benchmark", "elftools")
    from kernelwatch.plugin.xdist import overlapping_timings

    benchmarks = json.loads(path.read_text())["benchmarks"]
    counts = Counter((b["extra_info"].get("pci_bus_id"), b["extra_info"].get("cuda_device"),
                      b["extra_info"].get("worker")) for b in benchmarks)
    print("| GPU (PCI bus id) | CUDA device | worker | cases timed |\n| --- | --- | --- | --- |")
    for (bus, device, worker), n in sorted(counts.items(), key=str):
        print(f"| {bus} | {device} | {worker} | {n} |")
    overlaps = overlapping_timings(benchmarks)
    for first, second in overlaps:
        print(f"OVERLAP: {first} and {second}")
    print(f"{len(benchmarks)} timed cases, {len(overlaps)} overlapping pairs")
    return 1 if overlaps else 0


if __name__ == "__main__":
    sys.exit(main())

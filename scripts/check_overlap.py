"""Per GPU and worker, which cases were timed, and whether any two timings overlapped.

    python3 scripts/check_overlap.py run.json     (a --benchmark-json file)

Exit status 1 if two cases were timed on one GPU at the same time.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.plugin.xdist import overlapping_timings  # noqa: E402


def main(path: Path) -> int:
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
    sys.exit(main(Path(sys.argv[1])))

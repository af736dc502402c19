"""One table from the --kernelwatch-compare-ref runs of maintainers/device/run_gpu_suites.sh (step `ab`).

    python3 -m experiments.ab_table FOLDER

Reads FOLDER/ab-*.md (the reports) and FOLDER/ab-*.log (pytest's output) and
prints, per run: its summary line, pytest's exit line and wall time, and the
cases that were not "unchanged" or "same" with their ratio and interval.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ORDER = ("clean", "comment", "slow", "all")


def sort_key(path: Path):
    kind, _, number = path.stem.removeprefix("ab-").partition("-")
    return ORDER.index(kind) if kind in ORDER else len(ORDER), int(number or 0)


def main(folder: Path) -> int:
    print("| run | summary | pytest | cases not same/unchanged (ratio, 99% interval) |")
    print("| --- | --- | --- | --- |")
    for report in sorted(folder.glob("ab-*.md"), key=sort_key):
        text = report.read_text()
        summary = next((line.removeprefix("Summary: ") for line in text.splitlines() if line.startswith("Summary:")), "")
        log = report.with_suffix(".log")
        tail = log.read_text().strip().splitlines()[-1] if log.exists() else ""
        outcome = re.sub(r"=+", "", tail).strip()
        notable = []
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("| `") and cells[-1].strip("*") not in ("same", "unchanged (same SASS)"):
                notable.append(f"{cells[0].strip('`').split('::')[-1]} {cells[-1].strip('*')} {cells[3]} ({cells[4]})")
        print(f"| {report.stem} | {summary} | {outcome} | {'; '.join(notable)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))

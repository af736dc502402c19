"""One table from the --kernelwatch-compare-ref runs of maintainers/device/run_gpu_suites.sh (step `ab`).

    python -m maintainers.experiments.ab_table FOLDER

Reads FOLDER/ab-*.md (the reports) and FOLDER/ab-*.log (pytest's output) and
prints, per run: its summary line, pytest's exit line and wall time, and the
cases that were not "unchanged" or "same" with their ratio and interval.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from maintainers.environment import summary

ORDER = ("clean", "comment", "slow", "all")


def sort_key(path: Path):
    kind, _, number = path.stem.removeprefix("ab-").partition("-")
    return ORDER.index(kind) if kind in ORDER else len(ORDER), int(number or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.ab_table", description=summary(__doc__))
    parser.add_argument("folder", type=Path, help="the work folder of a run_gpu_suites.sh `ab` step (ab-*.md, ab-*.log)")
    folder = parser.parse_args(argv).folder
    print("| run | summary | pytest | cases not same/unchanged (ratio, 99% interval) |")
    print("| --- | --- | --- | --- |")
    for report in sorted(folder.glob("ab-*.md"), key=sort_key):
        text = report.read_text()
        said = next((line.removeprefix("Summary: ") for line in text.splitlines() if line.startswith("Summary:")), "")
        log = report.with_suffix(".log")
        tail = log.read_text().strip().splitlines()[-1] if log.exists() else ""
        outcome = re.sub(r"=+", "", tail).strip()
        notable = []
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("| `") and cells[-1].strip("*") not in ("same", "unchanged (same SASS)"):
                notable.append(f"{cells[0].strip('`').split('::')[-1]} {cells[-1].strip('*')} {cells[3]} ({cells[4]})")
        print(f"| {report.stem} | {said} | {outcome} | {'; '.join(notable)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Figures and the README table from the stored baselines of one GPU model.

    python3 -m scripts.plot_baselines baselines/NVIDIA_H200 [--out docs]

Writes <out>/<gpu>-roofline.png (newest baseline), <out>/<gpu>-trend.png
(every saved run, per case) and prints the performance table in markdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.environment import needs, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.plot_baselines", description=summary(__doc__))
    parser.add_argument("folder", type=Path, help="baselines/<gpu>")
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args(argv)
    needs("plot_baselines", "matplotlib", "numpy")
    from kernelwatch.report.plots import performance_table, plot_roofline, plot_trend
    from kernelwatch.storage.runs import load_run, stored_runs

    files = stored_runs(args.folder)
    if not files:
        print(f"no baseline files in {args.folder}", file=sys.stderr)
        return 1
    docs = [load_run(f) for f in files]
    slug = args.folder.name
    plot_roofline(docs[-1], args.out / f"{slug}-roofline.png")
    cases = plot_trend(docs, args.out / f"{slug}-trend.png")
    print(f"<!-- from {files[-1]} -->")
    print(performance_table(docs[-1]))
    print(f"\nwrote {args.out / f'{slug}-roofline.png'} and {args.out / f'{slug}-trend.png'} "
          f"({len(docs)} run(s), {cases} case(s))", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`kernelwatch`: the plugin's one command line, installed with it (pyproject.toml's console script).

    kernelwatch compare OLD NEW [--report R.md] [--allow-partial] [--in FOLDER] [--repo CHECKOUT] [--kernels PACKAGE] [--threshold F]
    kernelwatch plot FOLDER [--out DIR]
    kernelwatch import | runs | export | changes | acknowledge | remove-run | site | bisect ... [--history URL]

`compare` judges one saved run against another (src/kernelwatch/compare.py); `plot` draws the
roofline and the trend of one GPU model's stored runs and prints the newest one's performance table
(src/kernelwatch/report/plots.py); the others are the history store's commands
(src/kernelwatch/history/cli.py). `python -m kernelwatch.compare` and `python -m kernelwatch.history
COMMAND` are the same commands, for a checkout without the package installed. The maintainers' tools
of this repository (maintainers/) stay apart.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernelwatch import compare
from kernelwatch.history import cli as history_cli

NO_MATPLOTLIB = 3  # exit status of `plot` where matplotlib cannot be imported (2 is a usage error)
PLOT = ("figures and the performance table from the stored runs of one GPU model: writes "
        "<out>/<folder>-roofline.png (the newest run) and <out>/<folder>-trend.png (every run, per case) and "
        "prints the newest run's performance table in markdown")


def add_plot(commands) -> None:
    plot = commands.add_parser("plot", help="the roofline, the trend and the performance table of stored runs",
                               description=PLOT[0].upper() + PLOT[1:] + ".")
    plot.add_argument("folder", type=Path, metavar="FOLDER",
                      help="the stored runs of one GPU model (NNNN_*.json), e.g. baselines/NVIDIA_H200")
    plot.add_argument("--out", type=Path, default=Path("."), metavar="DIR",
                      help="where the two figures are written (default: here)")
    plot.set_defaults(run=run_plot)


def run_plot(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401  (a dependency of kernelwatch: missing only from a broken install)
    except ImportError:
        print("kernelwatch plot needs matplotlib: `pip install matplotlib`", file=sys.stderr)
        return NO_MATPLOTLIB
    from kernelwatch.report.plots import performance_table, plot_roofline, plot_trend
    from kernelwatch.storage.runs import BaselineError, load_run, stored_runs

    files = stored_runs(args.folder)
    if not files:
        print(f"no stored runs (NNNN_*.json) in {args.folder}", file=sys.stderr)
        return 1
    try:
        docs = [load_run(f) for f in files]
    except BaselineError as error:
        print(f"error: {error}", file=sys.stderr)
        return compare.EXIT_UNUSABLE
    slug = args.folder.resolve().name
    roofline, trend = args.out / f"{slug}-roofline.png", args.out / f"{slug}-trend.png"
    plot_roofline(docs[-1], roofline)
    cases = plot_trend(docs, trend)
    print(f"<!-- from {files[-1]} -->")
    print(performance_table(docs[-1]))
    print(f"\nwrote {roofline} and {trend} ({len(docs)} run(s), {cases} case(s))", file=sys.stderr)
    return 0


OWN = ("compare", "plot")  # the commands of this module; the rest are the history store's


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="kernelwatch", description="kernelwatch's commands: "
                                  "compare two saved runs, plot stored runs, and the history store's runs, changes, "
                                  "dashboard and bisection. The suite itself runs under pytest (`pytest suites/`).")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    judge = commands.add_parser("compare", help="judge one saved run against another, on any machine",
                                description=compare.__doc__.splitlines()[0])
    compare.add_arguments(judge)
    judge.set_defaults(run=compare.run)
    add_plot(commands)
    history_cli.add_commands(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args) if args.command in OWN else history_cli.run(args)


if __name__ == "__main__":
    raise SystemExit(main())

"""`kernelwatch`: the suite's one command line, installed by `pip install -e .` (pyproject.toml).

    kernelwatch compare OLD NEW [--report R.md] [--allow-partial] [--in FOLDER]
    kernelwatch import | runs | export | changes | acknowledge | site | bisect ... [--history URL]

`compare` judges one saved run against another (src/kernelwatch/compare.py); the others
are the history store's commands (src/kernelwatch/history/cli.py). `python -m
kernelwatch.compare` and `python -m kernelwatch.history COMMAND` are the same commands,
for a checkout without the package installed. The maintainers' scripts
(`python -m scripts.NAME`) stay apart.
"""

from __future__ import annotations

import argparse

from kernelwatch import compare
from kernelwatch.history import cli as history_cli


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="kernelwatch", description="kernelwatch's commands: "
                                  "compare two saved runs, and the history store's runs, changes, dashboard and "
                                  "bisection. The suite itself runs under pytest (`pytest suites/`).")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    judge = commands.add_parser("compare", help="judge one saved run against another, on any machine",
                                description=compare.__doc__.splitlines()[0])
    compare.add_arguments(judge)
    judge.set_defaults(run=compare.run)
    history_cli.add_commands(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args) if args.command == "compare" else history_cli.run(args)


if __name__ == "__main__":
    raise SystemExit(main())

"""The command line of the history store.

    python -m kernelwatch.history import PATH... [--history URL]
    python -m kernelwatch.history runs [--gpu GPU] [--removed] [--history URL]
    python -m kernelwatch.history export RUN [-o FILE] [--history URL]
    python -m kernelwatch.history changes [--since DATE] [--gpu UUID|MODEL] [--newest N] [--by gpu_uuid|gpu_model] [--threshold F]
    python -m kernelwatch.history acknowledge CASE RUN --reason TEXT [--history URL]
    python -m kernelwatch.history remove-run RUN --reason TEXT [--history URL]
    python -m kernelwatch.history site OUT/ [--gpu UUID|MODEL] [--by gpu_uuid|gpu_model] [--history URL]
    python -m kernelwatch.history bisect CASE GOOD..BAD [-k EXPRESSION] [--profile quick|nightly|full]

A command is a module with ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args, store) -> exit status``, and optionally ``check_arguments(args)``
(usage errors that argparse cannot see, before any store is opened); adding one
is adding it to `COMMANDS`.
One with ``USES_STORE = False`` (bisect) is given None: no store is opened; only
one with ``CREATES_STORE = True`` (import) makes a store that does not exist yet:
the others, which read, say there is none. Whatever a command prints from the
store (case names, branches) goes out with its control characters escaped, so a
name cannot move the terminal's cursor or colour what follows.
Exit status: 0 done, 1 the store or an input cannot be used (one sentence on
stderr, no traceback), `changes` found an open slower step, or `bisect` could
not name a commit (BAD not slower, or nothing could be judged); 2 bad arguments (argparse's usage line).
"""

from __future__ import annotations

import argparse
import re
import sys

from kernelwatch.storage.history import ENV_URL, HistoryError, open_store
from kernelwatch.storage.history.documents import BaselineError

from . import cmd_acknowledge, cmd_bisect, cmd_changes, cmd_export, cmd_import, cmd_remove_run, cmd_runs, cmd_site

COMMANDS = (cmd_import, cmd_runs, cmd_export, cmd_changes, cmd_acknowledge, cmd_remove_run, cmd_site, cmd_bisect)


def common_arguments() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--history", metavar="URL",
                        help=f"the store: a SQLite file or a SQLAlchemy URL (sqlite:///FILE, postgresql://USER@HOST/DB); "
                             f"default ${ENV_URL}, else history.sqlite in the runner's tool cache or ~/.cache/kernelwatch")
    return common


def add_commands(commands) -> None:
    """Each history command as a subcommand of `commands` (argparse's subparsers): here and in `kernelwatch`."""
    common = common_arguments()
    for command in COMMANDS:
        sub = commands.add_parser(command.NAME, parents=[common], help=command.HELP, description=command.HELP)
        command.add_arguments(sub)
        sub.set_defaults(handler=command.run, uses_store=getattr(command, "USES_STORE", True), parser_error=sub.error,
                         creates_store=getattr(command, "CREATES_STORE", False),
                         check_arguments=getattr(command, "check_arguments", None))


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m kernelwatch.history",
                                  description="The history of every run per physical GPU: the runs, the changes "
                                              "of each case, a dashboard, and the bisection of a slowdown.")
    add_commands(top.add_subparsers(dest="command", metavar="COMMAND", required=True))
    return top


class Escaping:
    """A text stream that writes control characters (but newline and tab) as escapes: \\x1b for ESC."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(escaped(text))

    def __getattr__(self, name):
        return getattr(self.stream, name)


def escaped(text: str) -> str:
    return _CONTROL.sub(lambda found: found.group(0).encode("unicode_escape").decode("ascii"), text)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run a parsed history command: its store opened (made only by the one that may), errors in one sentence."""
    if getattr(args, "check_arguments", None):
        args.check_arguments(args)  # a usage error (exit 2) before any store is opened or made
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Escaping(out), Escaping(err)
    try:
        if not args.uses_store:
            return args.handler(args, None)
        with open_store(args.history, create=getattr(args, "creates_store", False)) as store:
            return args.handler(args, store)
    except (HistoryError, BaselineError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        sys.stdout, sys.stderr = out, err

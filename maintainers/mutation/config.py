"""Write cosmic-ray's config file from pyproject.toml's [tool.cosmic-ray] table.

    python -m maintainers.mutation.config OUT.toml [MODULE ...] [--test-command CMD]

cosmic-ray reads its settings from a `[cosmic-ray]` table of a file of its own; the project keeps
them in pyproject.toml (tox -e mutation calls this). MODULE paths, where given, replace
module-path (a bounded run over a few modules); --test-command replaces the test command (the
tests that cover those modules, say).
"""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path

from maintainers.environment import summary

ROOT = Path(__file__).resolve().parents[2]


def config_text(settings: dict, prefix: str = "cosmic-ray") -> str:
    """``settings`` as the TOML of a ``[cosmic-ray]`` table (strings, numbers, lists and sub-tables)."""
    scalars = [f"{key} = {json.dumps(value)}" for key, value in settings.items() if not isinstance(value, dict)]
    text = f"[{prefix}]\n" + "".join(line + "\n" for line in scalars) if scalars else ""
    for key, value in settings.items():
        if isinstance(value, dict):
            text += "\n" + config_text(value, f"{prefix}.{key}")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.mutation.config", description=summary(__doc__))
    parser.add_argument("out", type=Path, help="the config file to write")
    parser.add_argument("modules", nargs="*", help="modules to mutate instead of pyproject's module-path")
    parser.add_argument("--test-command", help="the test command instead of pyproject's")
    args = parser.parse_args(argv)
    for module in args.modules:
        if not (ROOT / module).exists():
            parser.error(f"no such module: {module}")
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cosmic-ray"]
    if args.modules:
        settings["module-path"] = args.modules
    if args.test_command:
        settings["test-command"] = args.test_command
    args.out.write_text(config_text(settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

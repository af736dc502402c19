"""Mark the mutants that sit inside annotations as skipped in a cosmic-ray session: they cannot be killed.

    python -m maintainers.mutation.filter SESSION.sqlite

Every module of src/kernelwatch/ that annotates starts with `from __future__ import annotations`, so its
annotations stay strings that nothing evaluates (no `typing.get_type_hints` in the project), and a
mutant of one (`str | None` to `str - None`: cosmic-ray's BitOr swaps, 7% of src/kernelwatch/'s mutants) is
equivalent by construction. This filter runs after `cr-filter-operators`, as cosmic-ray's own
filters do: it writes a SKIPPED result for each such mutant, so neither `cosmic-ray exec` nor
`maintainers.mutation.replay export --outcome pending` (samples included) spends a run or a judgement on them.
A module without the future import keeps all its mutants. Needs only the Python standard library.
"""

from __future__ import annotations

import argparse
import ast
import sqlite3
from pathlib import Path

from maintainers.environment import summary

Position = tuple[int, int]  # (line from 1, column from 0), as cosmic-ray stores a mutant's start


def annotation_spans(source: str) -> list[tuple[Position, Position]]:
    """(start, end) of every annotation in `source` (arguments, returns, annotated assignments) where
    the module has `from __future__ import annotations`; none where it has not (they run there)."""
    tree = ast.parse(source)
    postponed = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                    and any(alias.name == "annotations" for alias in node.names) for node in tree.body)
    if not postponed:
        return []
    annotations = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
            annotations += [argument.annotation for argument in every if argument is not None and argument.annotation]
            if node.returns is not None:
                annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
    return [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in annotations]


def in_annotation(spans: list[tuple[Position, Position]], start: Position) -> bool:
    return any(first <= start < last for first, last in spans)


def skip_annotations(session: Path, root: Path) -> tuple[int, int]:
    """Write a SKIPPED result for each not yet run mutant of `session` that starts inside an annotation
    of its module (paths relative to `root`); (skipped, pending left)."""
    db = sqlite3.connect(session)
    pending = db.execute("select m.job_id, m.module_path, m.start_pos_row, m.start_pos_col from mutation_specs m"
                         " left join work_results r on r.job_id = m.job_id where r.job_id is null").fetchall()
    spans: dict[str, list] = {}
    skipped = []
    for job_id, module, row, column in pending:
        if module not in spans:
            spans[module] = annotation_spans((root / module).read_text())
        if in_annotation(spans[module], (row, column)):
            skipped.append(job_id)
    with db:  # cosmic-ray's own filters write the same row: WorkResult(worker_outcome=SKIPPED), the rest null
        db.executemany("insert into work_results (worker_outcome, output, test_outcome, diff, job_id)"
                       " values ('SKIPPED', null, null, null, ?)", [(job,) for job in skipped])
    db.close()
    return len(skipped), len(pending) - len(skipped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.mutation.filter", description=summary(__doc__))
    parser.add_argument("session", type=Path, help="a cosmic-ray session file (SQLite), after cosmic-ray init")
    parser.add_argument("--root", type=Path, default=Path.cwd(),
                        help="the folder the session's module paths are relative to (default: this one)")
    args = parser.parse_args(argv)
    if not args.session.is_file():
        parser.error(f"no such session file: {args.session}")
    try:
        skipped, left = skip_annotations(args.session, args.root)
    except sqlite3.DatabaseError as error:  # not SQLite, or no mutation_specs table: before cosmic-ray init
        parser.error(f"{args.session} is not a cosmic-ray session ({error}): make one with cosmic-ray init")
    except FileNotFoundError as error:
        parser.error(f"a module of the session is not under --root {args.root}: {error.filename}")
    print(f"{skipped} mutants inside annotations marked skipped; {left} pending")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

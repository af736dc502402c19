"""The four semantic mutants of issue 46, replayed against the model-based tests of the history's rules.

    python -m maintainers.mutation.model_mutants [-o RESULTS.jsonl] [--test-command CMD] [--workers N]

Each mutant is one bug that needs two events in one history, written as an edit of this tree's code (so
it applies as long as the line it edits is there) and replayed as cosmic-ray's mutants are
(maintainers/mutation/replay.py: a copy of the tree each, the unmutated tree checked first). The test
command runs tests/history/test_model.py's default pass; each mutant must fail it (killed). Exit 1 when a
mutant survives or no longer applies; tests/history/test_model_mutants.py runs it in the slow pass.
"""

from __future__ import annotations

import argparse
import difflib
import json
import shlex
import sys
import tempfile
from pathlib import Path

from maintainers.environment import summary
from maintainers.mutation import replay

# (name, module, the code as it is, the mutant's)
MUTANTS = (
    ("level from the oldest acceptance", "src/kernelwatch/verdict/against_baseline.py",
     "start = max((i for i, run in enumerate(mine) if run.accepted_reason is not None), default=0)",
     "start = min((i for i, run in enumerate(mine) if run.accepted_reason is not None), default=0)"),
    ("a step accepted at its first run stays open", "src/kernelwatch/history/analysis.py",
     "level = one.points[step.index:min(later, default=len(one.points))]\n        return next(",
     "level = one.points[step.index + 1:min(later, default=len(one.points))]\n        return next("),
    ("a throttled episode is a step", "src/kernelwatch/history/analysis.py",
     "kept = [row for row in rows if not row.throttled]\n        if kept:\n            series.append",
     "kept = list(rows)\n        if kept:\n            series.append"),
    ("a failing stretch's window at its newest run", "src/kernelwatch/history/analysis.py",
     "record = store.case_record(one.key.case, int(stretch.first.run_id))",
     "record = store.case_record(one.key.case, int(stretch.newest.run_id))"),
)
TEST_COMMAND = (f"{shlex.quote(sys.executable)} -m pytest -q -p no:randomly -p no:cacheprovider -m 'not slow' "
                f"-rf tests/history/test_model.py")


def mutants(root: Path = replay.ROOT) -> list[dict]:
    """MUTANTS as replay.py's mutants: each with the unified diff of its edit of this tree."""
    found = []
    for number, (name, module, original, mutated) in enumerate(MUTANTS):
        source = (root / module).read_text()
        if source.count(original) != 1:
            raise SystemExit(f"mutant {name!r}: {module} no longer holds its line once: {original!r}")
        edited = source.replace(original, mutated)
        line = source[:source.index(original)].count("\n") + 1
        diff = "".join(difflib.unified_diff(source.splitlines(keepends=True), edited.splitlines(keepends=True),
                                            f"a/{module}", f"b/{module}"))
        found.append({"job_id": f"issue46-{number + 1}", "module": module, "operator": name, "occurrence": 0,
                      "line": line, "definition": name, "diff": diff})
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.mutation.model_mutants", description=summary(__doc__))
    parser.add_argument("-o", "--out", type=Path, help="the results, one JSON line a mutant (default: a temporary file)")
    parser.add_argument("--test-command", default=TEST_COMMAND, help="exit 0 means the mutant survived")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    with tempfile.TemporaryDirectory(prefix="model-mutants-") as scratch:
        out = args.out or Path(scratch) / "results.jsonl"
        status = replay.run(mutants(), args.test_command, args.workers, args.timeout, out, private_tmp=True)
        if status:
            return status
        results = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    for result in results:
        print(f"{result['outcome']}: {result['operator']} ({result['module']}:{result['line']}): {result['tail']}")
    return 0 if all(result["outcome"] == "killed" for result in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Verdicts and the markdown report from two saved runs, on any machine (no GPU needed).

    python -m kernelwatch.compare OLD NEW [--report report.md] [--allow-partial] [--in FOLDER] [--threshold F]

OLD and NEW are files the suite saved (baselines/<gpu>/NNNN_*.json, a
--benchmark-json output, or a run exported from the history store), or run
numbers of a baselines folder (`compare 4 5` in baselines/NVIDIA_H200, or
`--in baselines/NVIDIA_H200`). Every case
of NEW is judged against OLD with the same rules as a live run
(src/kernelwatch/verdict/against_baseline.py): the noise model's floor depends on
whether both runs were recorded on the same GPU (UUID), the same-GPU floor is
--threshold, else $KERNELWATCH_THRESHOLD as a live run reads it, and a case timed by
another timer in OLD is reported "other timer", not judged. Unlike a live run,
no other stored runs add their spread to the noise or pool into the reference,
so a ratio here can differ from the one the live run recorded.

The output leads with how many cases were judged and why the others were not
("other host": another machine; "other GPU": another GPU of a host of the same
name; "other timer"). Where fewer than MIN_JUDGED (half) of NEW's cases could be
judged, the comparison says too little to pass: exit 2, unless --allow-partial.
A slower case of a kernel at a shape gets a cause card with its static half (src/kernelwatch/cause/):
both sides built by the project's kernel library (src/kernelwatch/ab/library.py: `build_for`) at
each run's commit, checked out from the git checkout --repo (default: here). The library is
--kernels PACKAGE, else the kernelwatch_kernels of the pytest configuration pytest would read in
--repo, found as a folder (or src/ folder) of --repo, not imported; a project that names none gets a
card that says so, as does a commit that is not there.
Exit status: 0 when no case is slower; 1 when a case is slower; 2 when a file
cannot be used, or too few cases of NEW could be judged (the reason is printed).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from kernelwatch.report.markdown import counts_text, markdown_report, verdict_counts, where, write_report
from kernelwatch.storage.runs import BaselineError, load_run, stored_runs
from kernelwatch.verdict.against_baseline import Baseline, judge_record, run_gpu_uuid, run_host
from kernelwatch.verdict.labels import JUDGED, SLOWER, Verdict
from kernelwatch.verdict.noise import NoiseFloors
from kernelwatch.verdict.record import records_of
from kernelwatch.verdict.threshold import DEFAULT_FLOORS, THRESHOLD_HELP, judging_floors

EXIT_OK, EXIT_SLOWER, EXIT_UNUSABLE = 0, 1, 2
MIN_JUDGED = 0.5  # the fraction of NEW's cases that must be judged for a comparison to pass


def compare_runs(old_path: Path, new_path: Path, repository: Path = Path("."),
                 library: str | None = None, floors: NoiseFloors = DEFAULT_FLOORS) -> tuple[list[Verdict], str]:
    """Judge NEW's records against OLD at `floors`; returns (verdicts, markdown report). The cards' commits are read
    from the git checkout `repository`, their builds made by the kernel library `library` (an import name; None: the
    one the checkout's pytest configuration names)."""
    new_doc = load_run(new_path)
    gpu = (new_doc.get("machine_info") or {}).get("gpu") or {}
    old_doc = load_run(old_path, expected_gpu=gpu.get("name"))
    baseline = Baseline.from_doc(old_path, old_doc)
    uuid = run_gpu_uuid(new_doc)
    records = records_of(new_doc)
    host = run_host(new_doc)
    verdicts = [judge_record(record, baseline, gpu_uuid=uuid, current_host=host, floors=floors)
                for record in records]
    recorded_on = SimpleNamespace(name=gpu.get("name", "unknown GPU"), uuid=uuid, host=gpu.get("host", "unknown host"))
    title = f"kernelwatch on {where(recorded_on)} vs `{old_path}`"
    text = markdown_report(title, verdicts, {r.case: r for r in records}, [judged_line(verdicts)])
    return verdicts, text + cards_text(verdicts, records, old_doc, new_doc, repository, library)


def cards_text(verdicts: list[Verdict], records, old_doc: dict, new_doc: dict, repository: Path,
               library: str | None = None) -> str:
    """The cause cards of NEW's slower cases of a kernel at a shape (a machine code of the project's, not a library
    call's), as a report section ("" where there are none)."""
    slower = {v.case for v in verdicts if v.label == SLOWER}
    cases = [r for r in records if r.case in slower and r.kernel and r.shape and r.sass != "library"]
    if not cases:
        return ""
    from kernelwatch.ab.identity import arch_of
    from kernelwatch.ab.library import NOT_NAMED, LibraryError, configured_name, library_path
    from kernelwatch.cause.card import no_card
    from kernelwatch.cause.stored import PackagesAtCommits, environment_pairs, stored_card

    lines = ["", "## Why the slower cases are slower", ""]
    try:
        arch = arch_of(((new_doc.get("machine_info") or {}).get("gpu") or {}).get("compute_capability"))
        name = library or configured_name(repository)
        if not name:
            raise LibraryError(NOT_NAMED + "; or name it with --kernels PACKAGE")
        path = library_path(name, repository)
    except (ValueError, LibraryError) as error:
        return "\n".join(lines + [line for record in cases for line in no_card(record.case, error)]) + "\n"
    commits = [(doc.get("commit_info") or {}).get("id") or "" for doc in (old_doc, new_doc)]
    environment = environment_pairs(old_doc.get("machine_info"), new_doc.get("machine_info"))
    packages = PackagesAtCommits(repository, path)
    try:
        for record in cases:
            lines += stored_card(record.case, record.kernel, record.shape, *commits, arch, packages, environment)
    finally:
        packages.close()
    return "\n".join(lines) + "\n"


def judged_line(verdicts: list[Verdict]) -> str:
    """"8 of 86 cases judged; not judged: 54 other timer, 24 other host": what the comparison could say."""
    judged = sum(v.label in JUDGED for v in verdicts)
    others = Counter(v.label for v in verdicts if v.label not in JUDGED)
    why = f"; not judged: {counts_text(verdict_counts(others.elements()))}" if others else ""
    return f"{judged} of {len(verdicts)} cases judged{why}"


def run_path(text: str, folder: Path) -> Path:
    """A run's file: a path as given, or a run number (4, 0004) of `folder`'s NNNN_*.json runs."""
    path = Path(text)
    if path.exists() or not text.isdigit():
        return path
    runs = stored_runs(folder)
    found = [run for run in runs if int(run.name.split("_", 1)[0]) == int(text)]
    if not found:
        listed = ", ".join(run.name for run in runs) or "none"
        raise BaselineError(f"{text} is no file, and {folder} holds no run {int(text):04d} (its runs: {listed}); "
                            f"--in FOLDER names the baselines folder")
    if len(found) > 1:  # two branches that each saved a run of this number, merged: which one is meant?
        raise BaselineError(f"{folder} holds {len(found)} runs numbered {int(text):04d} "
                            f"({', '.join(run.name for run in found)}): name the file")
    return found[0]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="the reference run: a JSON file the suite saved, or a run number")
    parser.add_argument("new", metavar="NEW", help="the run to judge: a file or a run number")
    parser.add_argument("--report", type=Path, help="also write the markdown report here")
    parser.add_argument("--in", dest="folder", type=Path, default=Path("."), metavar="FOLDER",
                        help="the baselines folder run numbers are read from (default: here)")
    parser.add_argument("--repo", type=Path, default=Path("."), metavar="CHECKOUT",
                        help="the git checkout whose commits the cause cards build (default: here)")
    parser.add_argument("--kernels", metavar="PACKAGE", default=None,
                        help="the project's kernel library, which builds the cause cards' sides (default: the "
                             "kernelwatch_kernels ini key of the pytest configuration in --repo)")
    parser.add_argument("--threshold", metavar="FRACTION", help=THRESHOLD_HELP)
    parser.add_argument("--allow-partial", action="store_true",
                        help=f"pass a comparison that judged under {MIN_JUDGED * 100:g}%% of the cases (default: exit 2)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kernelwatch.compare", description=__doc__.splitlines()[0],
        epilog="exit status: 0 no case slower, 1 a case slower, 2 a file unusable or too few cases judged")
    add_arguments(parser)
    return run(parser.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    try:
        floors = judging_floors(args.threshold)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        args.old, args.new = run_path(args.old, args.folder), run_path(args.new, args.folder)
        verdicts, text = compare_runs(args.old, args.new, args.repo, args.kernels, floors)
    except BaselineError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.report:
        try:
            write_report(args.report, text)
        except OSError as error:
            print(f"error: could not write the report {args.report}: {error}", file=sys.stderr)
            return EXIT_UNUSABLE
    print(judged_line(verdicts))
    if args.old.resolve() == args.new.resolve():
        print(f"note: {args.old} was compared with itself: every judged case is 'same' by construction")
    print(text)
    counts = verdict_counts(v.label for v in verdicts)
    print(counts_text(counts))
    judged = sum(v.label in JUDGED for v in verdicts)
    if not judged:
        print("error: no case could be judged: the runs share no case timed by the same timer on a comparable "
              "machine", file=sys.stderr)
        return EXIT_UNUSABLE
    if judged < MIN_JUDGED * len(verdicts) and not args.allow_partial:
        print(f"error: only {judged_line(verdicts)}: under {MIN_JUDGED:.0%}, too few to pass the comparison "
              f"(--allow-partial accepts it)", file=sys.stderr)
        return EXIT_UNUSABLE
    return EXIT_SLOWER if counts.get(SLOWER) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

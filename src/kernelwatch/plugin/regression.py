"""What follows a slower verdict against stored runs: its window of commits, and whether a trailer accepts it.

For each case judged `slower` against this GPU's history or the model's baseline, the
commits since its newest reference run are read from git once per reference commit
(src/kernelwatch/ab/commits.py), kept in the case's record (so the store and `changes` know
them), and searched for an `Accept-Slowdown` trailer that accepts the case
(src/kernelwatch/verdict/acceptance.py). An accepted case passes with the label `accepted`;
from its run on, its reference is the new level. A host routine's slower phases follow
their window the same way (`follow_slower_phases`): a trailer that names the routine
accepts them, and the routine's new level starts at that run. The report and the terminal
summary print each window with the `bisect` command for it (`bisect_command`).

A host routine with a slower (or accepted) phase gets the card of where its time moved
(`card_of_phases`). A slower (or accepted) prepared case (src/kernelwatch/ab/library.py) gets a
cause card (`card_against_stored`): its static half against the build at the newest reference
run's commit, by the project's kernel library there, checked out as `--kernelwatch-compare-ref`
checks out a base (once per commit and session), or, where its machine code is the reference
run's, a card that says the cause is not in the code; in a project that names no kernel
library, a card that says so in one line. Under `--kernelwatch-compare-ref` the card is
`explain_slower`'s, with both sides in the run.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from kernelwatch.ab.commits import CommitWindow, head_of, window
from kernelwatch.history.bisect import command_line
from kernelwatch.report.session_report import followed_phases, reference_words
from kernelwatch.storage.stored_runs import StoredRuns
from kernelwatch.verdict.acceptance import Acceptance, accepted, first_accepting, parse_acceptance
from kernelwatch.verdict.labels import SLOWER, ReferenceRun, Verdict
from kernelwatch.verdict.record import CaseRecord

if TYPE_CHECKING:
    from kernelwatch.plugin.state import SuiteState


def window_of(state: SuiteState, base: str | None) -> CommitWindow:
    if state.code.head is None:
        state.code.head = head_of(state.code.repo)
    if base not in state.code.windows:
        sha, dirty = state.code.head
        state.code.windows[base] = window(state.code.repo, base, sha, head_dirty=dirty)
    return state.code.windows[base]


def acceptances_of(state: SuiteState, found: CommitWindow) -> list[Acceptance]:
    """The window's trailers as acceptances; a trailer that cannot be read is a problem of the run."""
    result = []
    for sha, value in found.acceptances:
        try:
            acceptance = parse_acceptance(value, f"the Accept-Slowdown trailer of {sha[:12]}")
        except ValueError as error:
            problem = f"commit {sha[:12]}: {error}"
            if problem not in state.findings.problems:
                state.findings.problems.append(problem)
            continue
        if acceptance is not None:
            result.append(acceptance)
    return result


def _window_and_acceptance(state: SuiteState, record: CaseRecord,
                           newest: ReferenceRun) -> tuple[CommitWindow, Acceptance | None]:
    """The commits since `newest` and the first of their trailers that accepts `record`'s case."""
    found = window_of(state, newest.commit)
    code_changed = bool(record.sass and newest.sass and record.sass != newest.sass)
    return found, first_accepting(acceptances_of(state, found), record.case, code_changed)


def follow_slower(state: SuiteState, record: CaseRecord, verdict: Verdict) -> tuple[CaseRecord, Verdict]:
    """A slower verdict against stored runs with its window, accepted where a trailer in it says so."""
    if verdict.label != SLOWER or not verdict.references:
        return record, verdict
    found, acceptance = _window_and_acceptance(state, record, verdict.newest_reference)
    if acceptance is not None:
        verdict = accepted(verdict, acceptance)
    record = dataclasses.replace(record.judged(verdict), window=found.as_dict(),
                                 accepted_reason=acceptance.words() if acceptance is not None else None)
    return record, verdict


def follow_slower_phases(state: SuiteState, record: CaseRecord,
                         verdicts: dict[str, Verdict]) -> tuple[CaseRecord, dict[str, Verdict]]:
    """A host routine's phase verdicts with the window since their newest reference run, every slower one
    accepted where a trailer there accepts the routine (then the record carries the acceptance, and the
    routine's next runs are judged from this run's level, its end-to-end time and each phase alike)."""
    slower = [verdict for verdict in verdicts.values() if verdict.label == SLOWER and verdict.references]
    if not slower:
        return record, verdicts
    newest = max((verdict.newest_reference for verdict in slower), key=lambda run: run.started_at or "")
    found, acceptance = _window_and_acceptance(state, record, newest)
    record = dataclasses.replace(record, window=record.window or found.as_dict())
    if acceptance is None:
        return record, verdicts
    return (dataclasses.replace(record, accepted_reason=record.accepted_reason or acceptance.words()),
            {phase: accepted(verdict, acceptance) for phase, verdict in verdicts.items()})


def bisect_command(case: str, found: CommitWindow, profile: str) -> str | None:
    """The `bisect` command line for `case` over the window, ready to paste (None without a listed window, or
    for a window of no commits: nothing to bisect)."""
    if found.unknown or not found.base or not found.head or not found.commits:
        return None
    return command_line(case, found.base, found.head, profile)


def failure_words(record: CaseRecord) -> str:
    """What a slower case's failure adds to its message: its window, and how to accept it if meant."""
    if record.window is None:
        return ""
    found = CommitWindow.from_dict(record.window)
    if found.unknown:
        return f"; the commits since the reference could not be listed ({found.unknown})"
    trailers = len(found.acceptances)
    none_accept = (f"{trailers} Accept-Slowdown trailer{'s' if trailers != 1 else ''} in it, none naming this case"
                   if trailers else "no Accept-Slowdown trailer in it")
    commits = f"{len(found.commits)} commit{'s' if len(found.commits) != 1 else ''}"
    return (f"; window {found.range_text} ({commits}, {none_accept}): if the slowdown is meant, "
            f"land a commit with the trailer 'Accept-Slowdown: REASON', or run `python -m kernelwatch.history "
            f"acknowledge` on this case at this run")


def _reference_machine_info(stored: StoredRuns, reference: ReferenceRun) -> dict:
    """The machine_info of a stored reference run: the history store's ("history run N") or a baseline
    file's beside the baseline; {} where it cannot be read (the card then lists no environment)."""
    import json

    from kernelwatch.storage.history import HistoryError

    try:
        if reference.name.startswith("history run ") and stored.store is not None:
            return stored.store.export_run(int(reference.name.removeprefix("history run "))).get("machine_info") or {}
        if stored.baseline is not None:
            path = stored.baseline.path.parent / reference.name
            return json.loads(path.read_text()).get("machine_info") or {}
    except (HistoryError, OSError, ValueError, AttributeError):  # a card without its environment is still a card
        return {}
    return {}


def _this_machine_info(state: SuiteState) -> dict:
    import platform

    return {"gpu": state.measuring.gpu.as_dict(), "python_version": platform.python_version()}


def card_against_stored(state: SuiteState, record: CaseRecord, verdict: Verdict, prepared) -> None:
    """The cause card of a case slower than its stored reference (the module's docstring), kept in
    `state.findings.cards`; a card that cannot be made says why in it."""
    from kernelwatch.ab.identity import arch_of
    from kernelwatch.ab.library import NOT_NAMED, LibraryError
    from kernelwatch.ab.ref_tree import RefError
    from kernelwatch.cause.card import environment_differences, no_card, title
    from kernelwatch.cause.sides import Side, case_card
    from kernelwatch.cause.stored import PackagesAtCommits, environment_pairs

    newest = verdict.newest_reference
    if prepared is None or newest is None:
        return
    commit = newest.commit or ""
    reference_info = _reference_machine_info(state.stored, newest)
    environment = environment_pairs(reference_info, _this_machine_info(state)) if reference_info else None
    if record.sass and newest.sass and record.sass == newest.sass:
        differing = environment_differences(environment)
        moved = f"; what differs from that run: {differing}" if differing else ""
        state.findings.cards[record.case] = [*title(record.case), (
            f"The machine code and launch are those of the newest reference run ({newest.name}, commit "
            f"{commit[:12] or 'unknown'}): the cause is not in this kernel's code, but in what it ran on or beside "
            f"(driver, clocks, power, another process) or in the measurement; no commit of the window made it{moved}."),
            ""]
        return
    shape = matmul_shape(prepared)
    try:
        if state.code.library is None:
            raise LibraryError(NOT_NAMED)
        if not commit:
            raise RefError(f"the reference run {newest.name} names no commit")
        if state.code.reference_packages is None:
            state.code.reference_packages = PackagesAtCommits(state.code.repo, state.code.library.located())
        package = state.code.reference_packages.package(commit)
        base = prepared.same_case_in(package)
        lines = case_card(record.case, Side(package, base.build(), shape),
                          Side(state.code.library.package, prepared.build(), shape),
                          arch_of(state.measuring.gpu.compute_capability), environment=environment)
        lines[2:2] = [f"Against the build at commit {commit[:12]}, the newest reference run's ({newest.name}).", ""]
    except (RefError, RuntimeError, ValueError, OSError) as error:
        lines = no_card(record.case, error)
    state.findings.cards[record.case] = lines


def card_of_phases(state: SuiteState, record: CaseRecord) -> None:
    """The card of a host routine with a slower or accepted phase (src/kernelwatch/cause/phases.py), kept in
    `state.findings.cards`, against the newest reference run of its first such phase."""
    from kernelwatch.cause.phases import phase_card
    from kernelwatch.cause.stored import environment_pairs

    phases = followed_phases(record)
    if not phases or record.case in state.findings.cards:
        return
    references = [ReferenceRun.from_dict(run) for run in phases[0].get("references") or []]
    newest = references[-1] if references else None
    reference_info = _reference_machine_info(state.stored, newest) if newest is not None else {}
    environment = environment_pairs(reference_info, _this_machine_info(state)) if reference_info else None
    state.findings.cards[record.case] = phase_card(record.case, record.phase_verdicts, environment,
                                                   reference_words(phases[0].get("references") or []))


def explain_slower(state: SuiteState, case: str, prepared) -> None:
    """The cause card of a slower case of --kernelwatch-compare-ref (src/kernelwatch/cause/): both sides' builds, static always,
    and with --kernelwatch-diagnose their profiles under Nsight Compute. A card that cannot be made says why in it."""
    import shutil

    from kernelwatch.ab.identity import arch_of
    from kernelwatch.cause.card import no_card
    from kernelwatch.cause.sides import Side, case_card

    builds = state.code.ref.builds.get(case)
    if builds is None:
        return
    shape = matmul_shape(prepared)
    ncu = (shutil.which("ncu") or "ncu") if state.code.diagnose else None
    try:
        ref = state.code.ref
        lines = case_card(case, Side(ref.base, builds[0], shape), Side(ref.library.package, builds[1], shape),
                          arch_of(state.measuring.gpu.compute_capability), ncu=ncu, launched=ref.launched.get(case))
    except (RuntimeError, ValueError, OSError) as error:
        lines = no_card(case, error)
    state.code.ref.cards[case] = lines


def matmul_shape(prepared) -> str | None:
    """"MxNxK" of a prepared matrix product (one that gives m, n and k), the shape its card's Nsight Compute half
    launches (cause/launch.py); None for any other case."""
    return f"{prepared.m}x{prepared.n}x{prepared.k}" if all(hasattr(prepared, x) for x in "mnk") else None

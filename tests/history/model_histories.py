"""Histories that hypothesis makes for the model-based tests (tests/history/test_model.py).

One or two GPUs, each with its nights; every night a run of two cases. Each case's series on a GPU is a
sequence of flat levels (at least MIN_RUNS_AT_LEVEL runs each, the newest possibly fewer: not yet a step),
neighbouring levels 10-30% apart, with throttled runs (30% slow) anywhere in between. Each run's verdict is
drawn: a run of a slower level mostly fails or is accepted by a trailer, any run may fail on its energy or a
phase, a run may fail besides its cases (or fail with its other failures unknown), the machine code changes
now and then, failed runs are acknowledged now and then, and some runs are imported late (stored after
runs that started after them).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from tests.history.model import MIN_RUNS_AT_LEVEL, CaseRun, History, Run

GPUS = ("GPU-aaaaaaaa-0000-0000-0000-000000000001", "GPU-bbbbbbbb-0000-0000-0000-000000000002")
CASES = ("suites/test_perf_model.py::test_kernel_time[case000]", "suites/test_perf_model.py::test_kernel_time[case001]")
START = datetime(2026, 12, 1, tzinfo=UTC)
MOVES = (0.8, 0.9, 1.1, 1.2, 1.3)  # a level over the one before
THROTTLED = 1.3
# a level younger than MIN_RUNS_AT_LEVEL follows one of at least this many runs
LONG_BEFORE_A_YOUNG_LEVEL = 2 * MIN_RUNS_AT_LEVEL
# the verdicts a run of a slower level gets (mostly failed), and those of any other run (mostly passed)
AT_A_SLOWER_LEVEL = ("failed", "failed", "failed", "failed", "failed", "accepted", "passed", "energy")
ELSEWHERE = ("passed", "passed", "passed", "passed", "passed", "energy", "phase", "accepted")


def commit_of(gpu: int, night: int) -> str:
    return f"{gpu + 1:02x}{night:038x}"


@st.composite
def level_lengths(draw, runs: int) -> list[int]:
    """Lengths of a series' levels, oldest first, summing to `runs`: every one but the newest at least
    MIN_RUNS_AT_LEVEL long."""
    lengths, left = [], runs
    while left > MIN_RUNS_AT_LEVEL and draw(st.integers(0, 3)):
        length = draw(st.integers(MIN_RUNS_AT_LEVEL, min(left - 1, 2 * MIN_RUNS_AT_LEVEL)))
        lengths.append(length)
        left -= length
    if left < MIN_RUNS_AT_LEVEL and lengths and lengths[-1] < LONG_BEFORE_A_YOUNG_LEVEL:
        # the detector's known limit (test_model.py: a young level hides the step before it): not drawn
        lengths[-1] += left
        left = 0
    return [*lengths, left] if left else lengths


@st.composite
def case_series(draw, gpu: int, nights: int, case: str) -> list[CaseRun]:
    """One case's runs on one GPU, one a night."""
    throttled = set(draw(st.lists(st.integers(0, nights - 1), max_size=3)))
    if nights - len(throttled) < 1:
        throttled = set()
    lengths = draw(level_lengths(nights - len(throttled)))
    medians, slower = [], []
    median = (1 + CASES.index(case)) * 1e-4
    for k, length in enumerate(lengths):
        move = draw(st.sampled_from(MOVES)) if k else 1.0
        median *= move
        medians += [median] * length
        slower += [move > 1] * length
    code, runs, level_run = 1, [], iter(range(len(medians)))
    for night in range(nights):
        code += draw(st.integers(0, 6)) == 0  # a new machine code now and then
        if night in throttled:
            level_now = medians[min(len(runs) - sum(r.throttled for r in runs), len(medians) - 1)]
            runs.append(CaseRun(level_now * THROTTLED, throttled=True, sass=f"sass-{code}"))
            continue
        i = next(level_run)
        verdict = draw(st.sampled_from(AT_A_SLOWER_LEVEL if slower[i] else ELSEWHERE))
        window = commit_of(gpu, draw(st.integers(0, night - 1))) if night else None
        runs.append(CaseRun(medians[i], outcome={"energy": "failed", "phase": "failed"}.get(verdict, verdict),
                            accepted=f"meant, night {night}" if verdict == "accepted" else None,
                            sass=f"sass-{code}", fails_by=verdict if verdict in ("energy", "phase") else "time",
                            window_base=window if verdict == "failed" else None))
    return runs


@st.composite
def histories(draw) -> History:
    gpus = draw(st.integers(1, len(GPUS)))
    nights = [draw(st.integers(MIN_RUNS_AT_LEVEL, 16)) for _ in range(gpus)]
    per_case = {(g, case): draw(case_series(g, nights[g], case)) for g in range(gpus) for case in CASES}
    runs = []
    for g in range(gpus):
        for night in range(nights[g]):
            # each GPU's nightly at its own hour; a run may fail besides its cases (None: how, not known)
            other = draw(st.sampled_from((0, 0, 0, 0, 0, 1, None)))
            runs.append(((night + draw(st.sampled_from((0, 0, 0, 1, 3)))) * 2 + g, Run(
                0, START + timedelta(days=night, hours=g), commit_of(g, night), GPUS[g],
                {case: per_case[(g, case)][night] for case in CASES}, other)))
    # stored in the order of their nights plus a delay: a delayed run is a late import
    ordered = [run for _, run in sorted(runs, key=lambda pair: (pair[0], pair[1].started_at))]
    stored = tuple(Run(number, run.started_at, run.commit, run.gpu, run.cases, run.other_failures)
                   for number, run in enumerate(ordered))
    acknowledged = [(case, run.number, f"acknowledged at {run.run_id}") for run in stored for case in CASES
                    if run.cases[case].outcome == "failed" and draw(st.integers(0, 5)) == 0]
    return History(stored, tuple(draw(st.permutations(acknowledged))))


def written(*gpu_series: dict[str, str], late: tuple[tuple[int, int], ...] = ()) -> History:
    """A history written by hand: per GPU, per case, one token a night, e.g. "100 100 110F 110A 143T 110FK".

    A token is the median in µs, then flags: F failed on its time (its window's base: the night before), E on
    its energy, P on a phase, A accepted by a trailer, T throttled, K acknowledged afterwards, X its run failed
    besides its cases, @N its machine code. `late` (GPU, night): stored after every other run."""
    runs, acks = [], []
    for g, cases in enumerate(gpu_series):
        tokens = {case: text.split() for case, text in cases.items()}
        for night in range(len(next(iter(tokens.values())))):
            made, other = {}, 0
            for case, row in tokens.items():
                token = row[night]
                number, flags, code = re.fullmatch(r"([0-9.]+)([FEPATKX]*)(?:@(\d+))?", token).groups()
                median, code = float(number) * 1e-6, code or "1"
                fails_by = "time" if "F" in flags else "energy" if "E" in flags else "phase" if "P" in flags else None
                made[case] = CaseRun(median, outcome="failed" if fails_by else "accepted" if "A" in flags else "passed",
                                     accepted=f"meant, night {night}" if "A" in flags else None, throttled="T" in flags,
                                     sass=f"sass-{code}", fails_by=fails_by or "time",
                                     window_base=commit_of(g, night - 1) if "F" in flags and night else None)
                other = 1 if "X" in flags else other
                if "K" in flags:
                    acks.append((case, (g, night)))
            runs.append(((g, night) in late, night, g, Run(0, START + timedelta(days=night, hours=g), commit_of(g, night),
                                                            GPUS[g], made, other)))
    ordered = sorted(runs, key=lambda item: item[:3])
    numbers = {(g, night): number for number, (_, night, g, _) in enumerate(ordered)}
    stored = tuple(Run(number, run.started_at, run.commit, run.gpu, run.cases, run.other_failures)
                   for number, (*_, run) in enumerate(ordered))
    return History(stored, tuple((case, numbers[at], f"acknowledged, night {at[1]}") for case, at in acks))

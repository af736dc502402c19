"""What `bisect` checks before it builds anything: each problem said in one line, not found out in a probe.

In this order: `--repo` must be a folder of a git checkout (git's own line quoted); GOOD and BAD must
name commits; and the checkout's pytest, as it is now, must collect the case among the timed ones:

    python -m pytest CASE -m perf --kernelwatch-profile P --collect-only -q -p no:cacheprovider

in `--repo`, for the profile given or any of quick, nightly, full (exit 5: nothing selected; any
other failure: pytest's ERROR line). Without these, a case that selects nothing, or a folder that is
no checkout, was found out only in BAD's probe, after a worktree was built, as a nested "exit 4 ...
no usable CUDA GPU" or "no case row". Kept apart from bisect.py, whose copy runs alone under
`git bisect run`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .bisect import NO_TESTS_COLLECTED, PROFILES, BisectError, Selector, resolve

COLLECT_TIMEOUT_S = 300


def check_repository(repo) -> None:
    """BisectError, in one line, where `repo` is no folder of a git checkout."""
    if not Path(repo).is_dir():
        raise BisectError(f"--repo {repo} is no folder: it names the project's folder in its git checkout")
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"git exit {done.returncode}"])[-1]
        raise BisectError(f"--repo {repo} is not in a git repository ({why}): it names the project's folder in its "
                          f"git checkout")


def collect_command(selector: Selector, profile: str, python: str = sys.executable) -> list[str]:
    """pytest's collection of the timed cases the selector selects, as a probe of `profile` would run them."""
    return [python, "-m", "pytest", *selector.pytest_args(), "-m", "perf", "--kernelwatch-profile", profile,
            "--collect-only", "-q", "-p", "no:cacheprovider"]


def check_selection(repo, selector: Selector, profiles: Sequence[str]) -> None:
    """BisectError, in one line, where `selector` selects no timed case in the checkout `repo` as it is now, under
    any of `profiles`, or pytest cannot collect there."""
    for profile in profiles:
        try:
            done = subprocess.run(collect_command(selector, profile), cwd=repo, capture_output=True, text=True,
                                  timeout=COLLECT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BisectError(f"pytest's collection of {selector.shell()} in {repo} ran past {COLLECT_TIMEOUT_S} s") from None
        if done.returncode == 0:
            return
        if done.returncode == NO_TESTS_COLLECTED:
            continue
        lines = (done.stdout + done.stderr).strip().splitlines()
        said = next((line for line in lines if line.startswith("ERROR")), lines[-1] if lines else "nothing said")
        raise BisectError(f"{selector.shell()} selects no timed case in {repo}: pytest --collect-only exit "
                          f"{done.returncode}: {said}"[:400])
    raise BisectError(f"{selector.shell()} selects no timed case (-m perf) in {repo} under the "
                      f"{' or '.join(profiles)} profile: see `pytest {selector.shell()} -m perf --collect-only -q` "
                      f"there")


def check_before_building(repo, selector: Selector, good: str, bad: str, profile: str | None) -> None:
    """The repository, the refs and the case, in that order (module docstring); BisectError at the first problem."""
    check_repository(repo)
    resolve(repo, good)
    resolve(repo, bad)
    check_selection(repo, selector, [profile] if profile else PROFILES)

"""A slowdown that was meant: the `Accept-Slowdown` trailer, the cases it names, and the accepted verdict.

One trailer serves the pull request and the nightly. Its value is a reason, optionally led by
the cases it accepts:

    Accept-Slowdown: the 8-deep k tiles fix the 1000³ edge case; 3% slower at 4096³
    Accept-Slowdown: cases=*warptile_128x256*,*blocktile_2d* smaller tiles for the edge case

Without ``cases=``, a trailer accepts the slower cases whose machine code changed in its window
(the commits between the newest reference run and this run): a commit that accepts a slowdown
accepts the slowdown of the code it changed, not a slowdown the runner's mood made elsewhere.
With ``cases=``, it accepts the cases each pattern names: a pattern matches a case's node id as a
substring or, with glob characters, as an `fnmatch` pattern of the whole id.

In the nightly, an accepted case passes with the label `accepted`; it is stored so, and from that
run on its reference is the new level (src/kernelwatch/verdict/against_baseline.py). Without an acceptance
a slowdown fails every night.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from kernelwatch.verdict.labels import ACCEPTED, SLOWER, Verdict

TRAILER = "Accept-Slowdown"
CASES_PREFIX = "cases="


@dataclass(frozen=True)
class Acceptance:
    """One acceptance: its reason, the case patterns it is limited to (none: code changed), and its source."""

    reason: str
    patterns: tuple[str, ...] = ()
    source: str = ""  # where it came from, in words: "the Accept-Slowdown trailer of 1a2b3c4d5e"

    def names(self, case: str) -> bool:
        """True when one of the patterns names `case`."""
        return any(pattern in case or fnmatch.fnmatchcase(case, pattern) for pattern in self.patterns)

    def accepts(self, case: str, code_changed: bool) -> bool:
        """Patterns: the case is named. No patterns: the case's machine code changed in the window."""
        return self.names(case) if self.patterns else code_changed

    def words(self) -> str:
        limited = f" (cases {', '.join(self.patterns)})" if self.patterns else ""
        return f"{self.reason}{limited}" + (f", by {self.source}" if self.source else "")


def parse_acceptance(value: str, source: str = "") -> Acceptance | None:
    """The acceptance a trailer's (or --kernelwatch-accept-slowdown's) value says; None for a blank value.

    Raises ValueError for ``cases=`` with no pattern, or with no reason after it.
    """
    text = " ".join(str(value).split())
    if not text:
        return None
    patterns: tuple[str, ...] = ()
    if text.startswith(CASES_PREFIX):
        listed, _, text = text[len(CASES_PREFIX):].partition(" ")
        patterns = tuple(pattern for pattern in listed.split(",") if pattern)
        if not patterns:
            raise ValueError(f"{TRAILER}: {value!r} says cases= but names no case pattern")
        if not text.strip():
            raise ValueError(f"{TRAILER}: {value!r} names cases but gives no reason after them")
    return Acceptance(text.strip(), patterns, source)


def first_accepting(acceptances: Iterable[Acceptance], case: str, code_changed: bool) -> Acceptance | None:
    """The first of `acceptances` (oldest commit first) that accepts `case`, or None."""
    return next((one for one in acceptances if one.accepts(case, code_changed)), None)


def accepted(verdict: Verdict, acceptance: Acceptance) -> Verdict:
    """A slower verdict as accepted (it passes), its reason saying by what; other labels as they are."""
    if verdict.label != SLOWER:
        return verdict
    return dataclasses.replace(verdict, label=ACCEPTED, reason=f"{verdict.reason}; accepted: {acceptance.words()}")

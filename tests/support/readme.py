"""The README read as its reader runs it: the code pieces a person copies (tests/project/)."""

from __future__ import annotations

import re


def code_pieces(text: str) -> list[str]:
    """The contents of every code span and every line of a fenced code block."""
    pieces, prose, fenced = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        (pieces if fenced else prose).append(line)
    spans = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", "\n".join(prose))]  # a span may wrap
    return pieces + spans

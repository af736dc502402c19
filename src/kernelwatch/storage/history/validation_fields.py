"""The checks of single fields that validation.py (a run's timed cases) and validation_accuracy.py (its correctness
checks) share: text, numbers, objects, a window of commits, and a case's name as an error shows it."""

from __future__ import annotations

CASE_NAME_BYTES = 2000  # PostgreSQL's btree index entry holds at most about 2700 bytes: the name and
GPU_UUID_BYTES = 200  # the GPU UUID share one (cases_by_gpu, accuracy_by_gpu)


def shown(name) -> str:
    """A case's name as an error names it: repr (escapes control characters), cut to 80 characters."""
    return repr(str(name)[:80])


def is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def text_or_none(value, where: str, max_bytes: int | None = None) -> str | None:
    if value is not None and not isinstance(value, str):
        return f"{where} is {value!r}, not text"
    if value is not None and max_bytes is not None and len(value.encode("utf-8")) > max_bytes:
        return f"{where} is {len(value.encode('utf-8'))} bytes, more than {max_bytes}"
    return None


def object_or_none(value, where: str) -> str | None:
    if value is not None and not isinstance(value, dict):
        return f"{where} is a {type(value).__name__}, not an object"
    return None


def window_problems(window, where: str):
    yield object_or_none(window, where)
    if isinstance(window, dict):
        for key in ("base", "head", "link"):
            yield text_or_none(window.get(key), f"{where}.{key}")
        commits = window.get("commits")
        if commits is not None and (not isinstance(commits, list) or not all(
                isinstance(c, list | tuple) and len(c) == 2 and all(isinstance(part, str) for part in c)
                for c in commits)):
            yield f"{where}.commits is not a list of [commit, subject] pairs of text"

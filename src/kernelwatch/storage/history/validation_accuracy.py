"""What the store checks in a run's correctness checks (src/kernelwatch/verdict/accuracy.py: ACCURACY_KEY), beside
validation.py's checks of its timed cases: every check an object with a case name of its own, its errors and
tolerances numbers of 0 or more (or none), its words text, its seed a whole number, its window of the shape
`changes` reads."""

from __future__ import annotations

import math

from kernelwatch.verdict.accuracy import ACCURACY_KEY

from .validation_fields import CASE_NAME_BYTES, GPU_UUID_BYTES, is_number, shown, text_or_none, window_problems


def accuracy_problems(doc: dict):
    """What in the run's correctness checks (src/kernelwatch/verdict/accuracy.py: ACCURACY_KEY) the accuracy
    table or a later command cannot take."""
    checks = doc.get(ACCURACY_KEY)
    if checks is None:
        return
    if not isinstance(checks, list):
        yield f"{ACCURACY_KEY} is a {type(checks).__name__}, not a list of checks"
        return
    names: set[str] = set()
    for index, check in enumerate(checks):
        where = f"{ACCURACY_KEY}[{index}]"
        if not isinstance(check, dict):
            yield f"{where} is a {type(check).__name__}, not an object"
            return
        name = check.get("case")
        if not isinstance(name, str) or not name or name in names:
            yield f"{where} needs a case name of its own (has {shown(name)})"
            return
        names.add(name)
        yield text_or_none(name, f"{where}.case", CASE_NAME_BYTES)
        for key in ("max_error", "avg_error", "tolerance_max", "tolerance_avg", "reference_max", "reference_avg"):
            value = check.get(key)
            if value is not None and (not is_number(value) or not 0 <= value < math.inf):
                yield f"{where}.{key} is {value!r}, not an error of 0 or more"
        for key in ("shape", "input_kind", "measure", "kernel", "verdict", "accepted_reason", "gpu_uuid"):
            yield text_or_none(check.get(key), f"{where}.{key}", GPU_UUID_BYTES if key == "gpu_uuid" else None)
        seed = check.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            yield f"{where}.seed is {seed!r}, not a whole number"
        yield from window_problems(check.get("window"), f"{where}.window")

"""Every run the history store records is checked here, once, before either backend sees it (issue 45).

SQLite and PostgreSQL store different things: SQLite keeps text in an integer
column, any integer in any column up to 2^63 (and raises OverflowError past it),
a NUL in a name; PostgreSQL refuses all of these, and holds an integer column
to 2^31.  And a value both take can still break every later read: samples of
1e308 s give a median of infinity, which no series can hold.  So a document is
refused here, in one sentence naming the case and the field, unless every
value in it is one that both backends store alike and every later command can
read:

* a JSON value throughout: objects with text keys, lists, text, booleans, null,
  finite numbers, integers within 64 bits (SQLite's JSON functions, which the
  reference query uses, read a larger one as a float), nested at most
  MAX_DEPTH levels (a deeper one overflows the encoders' recursion);
* text without a NUL (PostgreSQL cannot store one) and without a lone surrogate
  (no UTF-8);
* samples, and the times of a record (``median_s``, ``event_median_s``, each
  phase's), positive times from MIN_TIME_S to MAX_TIME_S; energies positive
  joules up to MAX_JOULES;
* what goes into a column of its own, of the column's type and range: text
  columns text, the clocks whole numbers of MHz from 0 to 2^31 - 1, ``dirty`` a
  boolean, a case's name at most CASE_NAME_BYTES bytes and its GPU UUID at most
  GPU_UUID_BYTES (the two share one index entry), the commit and the profile
  their columns' widths;
* what a later command reads from the record (``window``, ``phases``,
  ``energy``, the verdicts of energy and phases) of the shape it reads.

`checked_run` is the one entry: HistoryStore.record_run calls it on every
document, the plugin's and `import`'s alike.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from kernelwatch.storage.schema import RunSchemaError, migrated
from kernelwatch.verdict.accuracy import ACCURACY_KEY

from .validation_accuracy import accuracy_problems
from .validation_fields import (
    CASE_NAME_BYTES,
    GPU_UUID_BYTES,
    is_number,
    object_or_none,
    shown,
    text_or_none,
    window_problems,
)

MAX_DEPTH = 32  # objects and lists in one another; a stored run nests 7 (a reference's fields in a case's record)
MIN_TIME_S = 1e-12  # a picosecond: a thousandth of a GPU clock's tick
MAX_TIME_S = 86_400.0  # a day: no launch of a timed case takes longer; a median of such samples cannot overflow
MAX_JOULES = 1e6
MAX_RSD = 1e6
INT64 = 2**63
INT32 = 2**31  # PostgreSQL's integer column holds -2^31 .. 2^31 - 1
LIMITS = {"commit": 64, "profile": 32}  # the widths of their columns (PostgreSQL holds them; SQLite does not)

# the record's fields stored in columns of their own, and the type each column takes
RECORD_TEXT = ("timer", "sass", "verdict", "reference", "accepted_reason", "gpu_uuid")
RECORD_CLOCKS = ("sm_clock_mhz_min", "sm_clock_mhz_max")
RECORD_TIMES = ("median_s", "event_median_s")
GPU_TEXT = ("name", "uuid", "host", "driver", "cuda_runtime", "cupy")


class DocumentError(ValueError):
    """A document that is no run the suite saved, or holds a value the store will not keep."""


def current(doc) -> dict:
    """`doc` in the current schema of stored runs (src/kernelwatch/storage/schema.py): what the store keeps."""
    if not isinstance(doc, dict):
        raise DocumentError(f"a run is a JSON object, not a {type(doc).__name__}")
    try:
        return migrated(doc)
    except RunSchemaError as exc:
        raise DocumentError(str(exc)) from None


def _key_text(key: str) -> str:
    return key if key.replace("_", "").isalnum() else repr(key)


def text_problem(text: str) -> str | None:
    """Why neither backend may store `text` (a NUL, a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is text that is no UTF-8 (a lone surrogate)"
    if "\x00" in text:
        return "holds a NUL character, which PostgreSQL cannot store"
    return None


def _path(path: str) -> str:
    """A field's path as a message names it: its middle cut where it is long (deep, or of long keys)."""
    return path if len(path) <= 160 else f"{path[:80]}...{path[-60:]}"


def json_problem(value, where: str, depth: int = 1) -> str | None:
    """Where in `value` (found at `where`, `depth` levels down) lies the first thing that is no JSON value both
    backends store alike (the module docstring), or None. Walked without recursion: any depth is told, never
    a RecursionError."""
    stack = [(value, where, depth)]
    while stack:
        item, path, level = stack.pop()
        if level > MAX_DEPTH and isinstance(item, dict | list | tuple):
            return f"{_path(path)} nests deeper than {MAX_DEPTH} levels"
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, int):
            if not -INT64 <= item < INT64:
                return f"{_path(path)} is an integer of {item.bit_length()} bits, beyond the 64 bits a store holds"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{_path(path)} is {item!r}, not a finite number"
        elif isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return f"{_path(path)} {problem}"
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{_path(path)} has a key {key!r} that is not text"
                problem = text_problem(key)
                if problem:
                    return f"{_path(path)} has a key that {problem}"
                children.append((child, f"{path}.{_key_text(key)}", level + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend(reversed([(child, f"{path}[{index}]", level + 1) for index, child in enumerate(item)]))
        else:
            return f"{_path(path)} is a {type(item).__name__}, not a JSON value"
    return None


def _first(problems) -> str | None:
    """The first problem a checker's generator yields (it yields None for each thing it found right)."""
    return next((problem for problem in problems if problem), None)


def _time_problem(value, where: str) -> str | None:
    if not is_number(value) or not MIN_TIME_S <= value <= MAX_TIME_S:
        return f"{where} is {value!r}, not a time in seconds from {MIN_TIME_S:g} to {MAX_TIME_S:g}"
    return None


def _times_problem(values, where: str) -> str | None:
    if not isinstance(values, list):
        return f"{where} is a {type(values).__name__}, not a list of times"
    return _first(_time_problem(value, f"{where}[{index}]") for index, value in enumerate(values))


def _joules_problem(value, where: str) -> str | None:
    if not is_number(value) or not 0 < value <= MAX_JOULES:
        return f"{where} is {value!r}, not an energy in joules above 0 and up to {MAX_JOULES:g}"
    return None


def _list_of(value, kind: type, where: str, words: str) -> str | None:
    if value is not None and (not isinstance(value, list) or not all(isinstance(item, kind) for item in value)):
        return f"{where} is {str(value)[:60]}, not a list of {words}"
    return None


def _record_problems(info: dict, where: str):
    """What in a case's record (extra_info) a column or a later command cannot take."""
    for key in RECORD_TEXT:
        yield text_or_none(info.get(key), f"{where}.{key}", GPU_UUID_BYTES if key == "gpu_uuid" else None)
    for key in (*RECORD_CLOCKS, "reference_runs"):
        value = info.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < INT32):
            yield f"{where}.{key} is {value!r}, not a whole number from 0 to {INT32 - 1}"
    for key in RECORD_TIMES:
        yield None if info.get(key) is None else _time_problem(info[key], f"{where}.{key}")
    rsd = info.get("rsd")
    if rsd is not None and (not is_number(rsd) or not 0 <= rsd <= MAX_RSD):
        yield f"{where}.rsd is {rsd!r}, not a relative spread from 0 to {MAX_RSD:g}"
    yield _list_of(info.get("throttle_reasons"), str, f"{where}.throttle_reasons", "text")
    yield object_or_none(info.get("energy_verdict"), f"{where}.energy_verdict")
    for key in ("phase_verdicts", "references"):
        yield _list_of(info.get(key), dict, f"{where}.{key}", "objects")
    yield from _energy_problems(info.get("energy"), f"{where}.energy")
    phases = info.get("phases")
    yield object_or_none(phases, f"{where}.phases")
    for name, values in (phases.items() if isinstance(phases, dict) else ()):
        yield _times_problem(values, f"{where}.phases.{_key_text(name)}")
    yield from window_problems(info.get("window"), f"{where}.window")


def _energy_problems(energy, where: str):
    yield object_or_none(energy, where)
    windows = energy.get("window_joules_per_launch") if isinstance(energy, dict) else None
    if windows:  # the energy columns are filled (else the rest is JSON only)
        if not isinstance(windows, list):
            yield f"{where}.window_joules_per_launch is a {type(windows).__name__}, not a list of energies"
            return
        for index, value in enumerate(windows):
            yield _joules_problem(value, f"{where}.window_joules_per_launch[{index}]")
        yield _joules_problem(energy.get("joules_per_launch"), f"{where}.joules_per_launch")


def _case_problems(bench: dict):
    """What in one benchmark (a case) a column or a later command cannot take."""
    stats = bench.get("stats")
    data = stats.get("data") if isinstance(stats, dict) else None
    if not isinstance(data, list) or not data:
        yield "benchmark.stats.data holds no sample" if isinstance(stats, dict) else "benchmark.stats is not an object"
        return
    yield _times_problem(data, "benchmark.stats.data")
    info = bench.get("extra_info")
    yield object_or_none(info, "benchmark.extra_info")
    if isinstance(info, dict):
        yield from _record_problems(info, "benchmark.extra_info")


def _benchmarks(doc: dict) -> list[dict]:
    """The benchmarks of a document, each an object with its own name (a DocumentError naming the first that is not).
    A run of correctness checks only (ACCURACY_KEY) may have none."""
    benchmarks = doc.get("benchmarks")
    if isinstance(benchmarks, list) and not benchmarks and doc.get(ACCURACY_KEY):
        return benchmarks
    if not isinstance(benchmarks, list) or not benchmarks:
        raise DocumentError('the run has no timed case (an empty or missing "benchmarks" list)')
    names: set[str] = set()
    for index, bench in enumerate(benchmarks):
        if not isinstance(bench, dict):
            raise DocumentError(f"benchmarks[{index}] is a {type(bench).__name__}, not an object")
        name = bench.get("fullname")
        if not isinstance(name, str) or not name or name in names:
            raise DocumentError('every benchmark needs its own "fullname"'
                                + (f" (benchmarks[{index}] has {shown(name)})" if name is not None else ""))
        names.add(name)
    return benchmarks


def _run_problems(doc: dict):
    """What in the run's own fields (machine_info, commit_info, datetime) its columns cannot take."""
    for key in ("machine_info", "commit_info"):
        yield object_or_none(doc.get(key), key)
    machine, commit = doc.get("machine_info") or {}, doc.get("commit_info") or {}
    gpu = machine.get("gpu")
    yield object_or_none(gpu, "machine_info.gpu")
    yield text_or_none(machine.get("node"), "machine_info.node")
    for key in GPU_TEXT:
        yield text_or_none((gpu or {}).get(key), f"machine_info.gpu.{key}", GPU_UUID_BYTES if key == "uuid" else None)
    yield text_or_none(commit.get("id"), "commit_info.id") or text_or_none(commit.get("branch"), "commit_info.branch")
    if isinstance(commit.get("id"), str) and len(commit["id"]) > LIMITS["commit"]:
        yield f"commit_info.id is {len(commit['id'])} characters, more than {LIMITS['commit']}"
    if commit.get("dirty") is not None and not isinstance(commit["dirty"], bool):
        yield f"commit_info.dirty is {commit['dirty']!r}, not true or false"
    started_at(doc)


def started_at(doc: dict) -> datetime:
    """When the run was saved (pytest-benchmark's ``datetime``), in UTC; naive in the store."""
    text = doc.get("datetime")
    try:
        moment = datetime.fromisoformat(text) if isinstance(text, str) else None
        if moment is not None and moment.tzinfo is not None:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):  # OverflowError: a time of year 1 or 9999 moved out of range by its zone
        moment = None
    if moment is None:
        raise DocumentError(f"the run has no valid \"datetime\" ({str(text)[:80]!r})")
    return moment


def _argument_problems(profile, label, source):
    for name, value in (("profile", profile), ("label", label), ("source", source)):
        if value is not None and not isinstance(value, str):
            yield f"the {name} is {value!r}, not text"
        elif value is not None and text_problem(value):
            yield f"the {name} {text_problem(value)}"
    if isinstance(profile, str) and len(profile) > LIMITS["profile"]:
        yield f"the profile {profile[:40]!r}... is longer than {LIMITS['profile']} characters"


def _run_key_problem(key) -> str | None:
    """Why a key of the run itself is no key both backends store (a number, None: a document built in Python), or
    None. JSON read from a file has text keys only."""
    if not isinstance(key, str):
        return f"the run has a key {key!r} that is not text"
    return json_problem(key, "a key")


def checked_run(doc, *, profile: str | None = None, label: str | None = None, source: str | None = None) -> dict:
    """`doc` in the current schema once every value in it is one both backends store alike and every later
    command reads (the module docstring); DocumentError, one sentence naming the case and the field, otherwise."""
    problem = _first(_argument_problems(profile, label, source))
    if problem:
        raise DocumentError(problem)
    if not isinstance(doc, dict):
        raise DocumentError(f"a run is a JSON object, not a {type(doc).__name__}")
    for bench in _benchmarks(doc):
        problem = (json_problem(bench, "benchmark", depth=3)
                   or object_or_none(bench.get("extra_info"), "benchmark.extra_info")
                   or text_or_none(bench["fullname"], "its name", CASE_NAME_BYTES))
        if problem:
            raise DocumentError(f"case {shown(bench['fullname'])}: {problem}")
    problem = _first(_run_key_problem(key) or json_problem(value, _key_text(key), depth=2)
                     for key, value in doc.items() if key != "benchmarks")
    if problem:
        raise DocumentError(problem)
    doc = current(doc)  # a version-1 document's records migrated: what is checked below is what is stored
    for bench in doc["benchmarks"]:
        problem = (json_problem(bench.get("extra_info"), "benchmark.extra_info", depth=4)
                   or _first(_case_problems(bench)))
        if problem:
            raise DocumentError(f"case {shown(bench['fullname'])}: {problem}")
    problem = _first(_run_problems(doc)) or _first(accuracy_problems(doc))
    if problem:
        raise DocumentError(problem)
    return doc

"""The schema version of a stored run, and the one step that brings older files up to date.

Every run the suite writes says its schema in ``machine_info["kernel_suite_schema"]``
(written by the plugin, so saved baselines and ``--benchmark-json`` files alike
carry it). A file without it is version 1: everything written before the
version existed, baselines 0001-0005 among them. `migrated` turns a version-1
document into the current form, once, when it is loaded; the record
(src/kernelwatch/verdict/record.py) reads only the current form. A file from a newer
version of the suite than this one is refused: its meaning is unknown here.

What version 2 changed:
- timer names are short ("cupti concurrent kernel", "cupti kernel", "cuda events",
  "wall clock"); older files say "cupti" (0002) or "CUDA events, held stream, L2 flushed";
- one verdict vocabulary (src/kernelwatch/verdict/labels.py): "regressed" is "slower",
  "no baseline" is "new", "unchanged (same SASS)" is "unchanged";
- what a case was judged against is ``reference`` (it was ``baseline``), and an A/B
  verdict's interval is the record's ``ci_low``/``ci_high`` (it was in the params,
  with ``base_median_s``, which the ratio gives);
- derived figures are not stored as fields: ``tflops``, ``gbps``, ``median_s``, ...
  are dropped, and ``datasheet_tflops`` became ``datasheet_rate`` (per second).
"""

from __future__ import annotations

import copy

from kernelwatch.timing.timer import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL

SCHEMA_KEY = "kernel_suite_schema"
SCHEMA_VERSION = 2

RENAMED_LABELS = {"regressed": "slower", "no baseline": "new", "unchanged (same SASS)": "unchanged"}
RETIRED_KEYS = frozenset({"tflops", "gbps", "datasheet_tflops", "regression_threshold", "verdict_note", "median_s",
                          "samples", "base_median_s"})


class RunSchemaError(ValueError):
    """A stored run's schema version is not one this code can read."""


def schema_version(doc: dict) -> int:
    """The schema version a document says (1 when it says none); RunSchemaError for a malformed one."""
    machine = doc.get("machine_info") if isinstance(doc.get("machine_info"), dict) else {}
    version = machine.get(SCHEMA_KEY, 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise RunSchemaError(f"machine_info.{SCHEMA_KEY} is {version!r}, not a schema version (1, 2, ...)")
    return version


def short_timer_name(text: str | None) -> str | None:
    """A version-1 timer name in its short form. Older files say "CUDA events, held stream, L2
    flushed", or "cupti" for what CUPTI's CONCURRENT_KERNEL kind recorded (0002). "cupti kernel" is
    CUPTI's KERNEL kind: baseline 0003 timed every single-stream case with it, the timer now
    only those of 20 µs or more (src/kernelwatch/timing/timer.py)."""
    if not text:
        return None
    lowered = text.lower()
    if lowered == "cupti":
        return TIMER_CUPTI
    if lowered.startswith("cuda events"):
        return TIMER_EVENTS
    if lowered.startswith("wall clock"):
        return TIMER_WALL
    return lowered


def _migrated_info(info: dict) -> dict:
    """A version-1 record in the current form; a value of a type version 1 never wrote is left as it is (the
    history store refuses it by name: src/kernelwatch/storage/history/validation.py)."""
    if not isinstance(info, dict):
        raise RunSchemaError(f"a benchmark's extra_info is a {type(info).__name__}, not an object")
    info = dict(info)
    tflops = info.get("datasheet_tflops")
    if "datasheet_rate" not in info and isinstance(tflops, int | float) and not isinstance(tflops, bool) and tflops:
        info["datasheet_rate"] = tflops * 1e12
    if info.get("timer") is None or isinstance(info["timer"], str):
        info["timer"] = short_timer_name(info.get("timer"))
    if isinstance(info.get("verdict"), str) and info["verdict"] in RENAMED_LABELS:
        info["verdict"] = RENAMED_LABELS[info["verdict"]]
    if "baseline" in info:
        info.setdefault("reference", info.pop("baseline"))
    return {key: value for key, value in info.items() if key not in RETIRED_KEYS}


def migrated(doc: dict) -> dict:
    """`doc` in the current schema: a version-1 document is migrated (a copy; `doc` is left
    as it is), a current one returned as it is; RunSchemaError for a newer or malformed version."""
    version = schema_version(doc)
    if version == SCHEMA_VERSION:
        return doc
    if version > SCHEMA_VERSION:
        raise RunSchemaError(f"it was written with schema version {version} by a newer version of the suite; "
                          f"this one reads up to version {SCHEMA_VERSION}: update the suite")
    doc = copy.copy(doc)
    benchmarks, machine = doc.get("benchmarks"), doc.get("machine_info")
    if not isinstance(benchmarks, list) or not all(isinstance(bench, dict) for bench in benchmarks):
        raise RunSchemaError('its "benchmarks" is not a list of objects')
    if machine is not None and not isinstance(machine, dict):
        raise RunSchemaError(f"its machine_info is a {type(machine).__name__}, not an object")
    doc["benchmarks"] = [dict(bench, extra_info=_migrated_info(bench.get("extra_info") or {}))
                         for bench in benchmarks]
    doc["machine_info"] = dict(doc.get("machine_info") or {}, **{SCHEMA_KEY: SCHEMA_VERSION})
    return doc

"""Finding, loading and writing pytest-benchmark baseline files.

Baselines live in ``baselines/<gpu_slug>/NNNN_<label>.json``, one folder per
GPU model, where ``NNNN`` is a counter that grows with every recorded run
(the newest file has the highest number).  The files are pytest-benchmark's
own JSON format; our ``machine_info`` adds a ``gpu`` dict whose ``name`` is
the NVML device name.

Baselines are append-only: :func:`write_json_atomically` never replaces an
existing file, and a reader never sees a half-written one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path

_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9.-]+")
_BASELINE_NAME = re.compile(r"^(\d{4,})_.+\.json$")


class BaselineError(Exception):
    """A baseline file is missing data, malformed, or from another GPU."""


def _sanitize(text: str) -> str:
    return _UNSAFE_RUN.sub("_", text).strip("_")


def gpu_slug(nvml_name: str) -> str:
    """Return the baseline folder name for an NVML device name.

    Letters, digits, ``.`` and ``-`` are kept; every other run of characters
    becomes a single ``_`` and underscores at either end are dropped, so
    ``"NVIDIA GeForce RTX 4090"`` gives ``"NVIDIA_GeForce_RTX_4090"``.
    Raises ValueError when nothing usable is left.
    """
    slug = _sanitize(nvml_name)
    if not slug:
        raise ValueError(f"GPU name {nvml_name!r} gives an empty folder name")
    return slug


def _prefix(path: Path) -> int | None:
    match = _BASELINE_NAME.match(path.name)
    return int(match.group(1)) if match else None


def baseline_files(folder: Path) -> list[Path]:
    """List the ``NNNN_*.json`` files in ``folder``, oldest first.

    Files are ordered by the numeric value of their prefix; names that do
    not follow the pattern are ignored.  A missing folder gives ``[]``.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    numbered = [
        (number, path.name, path)
        for path in folder.iterdir()
        if path.is_file() and (number := _prefix(path)) is not None
    ]
    return [path for _, _, path in sorted(numbered)]


def newest_baseline(folder: Path) -> Path | None:
    """Return the newest baseline file in ``folder``, or None if there is none."""
    files = baseline_files(folder)
    return files[-1] if files else None


def _read_json(path: Path):
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"{path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path} is not UTF-8 text: {exc}") from None
    except OSError as exc:
        raise BaselineError(f"{path} cannot be read: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{path} is not valid JSON (truncated?): {exc.msg} "
            f"at line {exc.lineno} column {exc.colno}"
        ) from None


def _check_benchmarks(path: Path, benchmarks) -> None:
    if not isinstance(benchmarks, list):
        raise BaselineError(f'{path} has no "benchmarks" list')
    seen: set[str] = set()
    for index, bench in enumerate(benchmarks):
        if not isinstance(bench, dict):
            raise BaselineError(f"{path}: benchmark #{index} is not an object")
        fullname = bench.get("fullname")
        if not isinstance(fullname, str) or not fullname:
            raise BaselineError(f'{path}: benchmark #{index} has no "fullname"')
        if not isinstance(bench.get("stats"), dict):
            raise BaselineError(f'{path}: case {fullname} has no "stats" object')
        if fullname in seen:
            raise BaselineError(f"{path}: case {fullname} appears more than once")
        seen.add(fullname)


def _recorded_gpu(doc: dict) -> str | None:
    machine = doc.get("machine_info")
    gpu = machine.get("gpu") if isinstance(machine, dict) else None
    name = gpu.get("name") if isinstance(gpu, dict) else None
    return name if isinstance(name, str) and name else None


def load_baseline(path: Path, expected_gpu: str | None = None) -> dict:
    """Load and check one baseline file, returning the parsed document.

    Raises BaselineError, naming the file, when it cannot be read, is not
    valid JSON, is not a JSON object, lacks a ``benchmarks`` list, or has a
    benchmark without ``fullname``/``stats`` (or a repeated ``fullname``).
    When ``expected_gpu`` is given, the file's ``machine_info.gpu.name`` must
    equal it: timings from different GPU models are never compared.
    """
    path = Path(path)
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise BaselineError(
            f"{path} holds a JSON {type(doc).__name__}, not a benchmark object"
        )
    _check_benchmarks(path, doc.get("benchmarks"))
    if expected_gpu is not None:
        recorded = _recorded_gpu(doc)
        if recorded is None:
            raise BaselineError(
                f"{path} does not say which GPU it was recorded on "
                f"(machine_info.gpu.name is missing) and this run is on GPU "
                f"{expected_gpu!r}; comparing across GPU models is refused"
            )
        if recorded != expected_gpu:
            raise BaselineError(
                f"{path} was recorded on GPU {recorded!r} and this run is on "
                f"GPU {expected_gpu!r}; comparing across GPU models is refused"
            )
    return doc


def baseline_cases(doc: dict) -> dict[str, dict]:
    """Map each benchmark's ``fullname`` (pytest node id) to its dict."""
    return {bench["fullname"]: bench for bench in doc["benchmarks"]}


def baseline_samples(bench: dict) -> list[float]:
    """Return the per-sample times (seconds) stored with a benchmark.

    Raises BaselineError when the baseline was saved without sample data or
    the data is not a list of numbers.
    """
    name = bench.get("fullname", "<unnamed>")
    data = (bench.get("stats") or {}).get("data")
    if not data:
        raise BaselineError(
            f"case {name} has no stored samples; re-record the baseline "
            f"with --benchmark-save-data"
        )
    if not isinstance(data, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in data
    ):
        raise BaselineError(f"case {name} has stored samples that are not numbers")
    return [float(x) for x in data]


def next_baseline_path(folder: Path, label: str) -> Path:
    """Return the path for the next baseline in ``folder``.

    The name is ``{n:04d}_{label}.json`` with ``n`` one more than the newest
    existing prefix (1 when there is none); ``label`` is sanitized the same
    way as :func:`gpu_slug`.  Raises ValueError for an unusable label.
    """
    folder = Path(folder)
    safe_label = _sanitize(label)
    if not safe_label:
        raise ValueError(f"baseline label {label!r} is empty once sanitized")
    newest = newest_baseline(folder)
    number = _prefix(newest) + 1 if newest is not None else 1
    return folder / f"{number:04d}_{safe_label}.json"


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json_atomically(path: Path, obj) -> None:
    """Write ``obj`` as JSON to ``path`` without ever replacing a file.

    Raises FileExistsError when ``path`` already exists (see
    `write_text_atomically`).
    """
    write_text_atomically(path, json.dumps(obj, indent=2, sort_keys=False) + "\n", replace=False)


def write_text_atomically(path: Path, text: str, replace: bool) -> None:
    """Write ``text`` so that no reader ever sees a partial file.

    The text goes to a temporary file in the same folder and is fsynced;
    then it is hard-linked to ``path`` (replace=False: the link fails if
    ``path`` exists, so an existing baseline is never overwritten) or renamed
    over it (replace=True, for reports). The folder is created if needed and
    the temporary file is always removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o644)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp_name, path)
        else:
            try:
                os.link(tmp_name, path)
            except FileExistsError:
                raise FileExistsError(
                    f"{path} already exists; baseline files are never overwritten, "
                    f"record under a new name instead"
                ) from None
        _fsync_folder(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)

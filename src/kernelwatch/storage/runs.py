"""Stored benchmark runs (baselines): finding, loading and saving them.

Runs live in ``baselines/<gpu_slug>/NNNN_<label>.json``, one folder per GPU
model, in pytest-benchmark's own JSON format; our ``machine_info`` adds a
``gpu`` dict whose ``name`` is the NVML device name. ``NNNN`` is a counter:
the run with the highest number is the newest (``10000_*`` after ``9999_*``).

Three rules, each a fix for a way a comparison used to mislead:

* One strict loader. `load_run` reads a file once and raises `BaselineError`,
  naming the file, for every problem it can have; no caller decides on its
  own that a broken file means "no baseline".
* No silent fallback. `resolve_compare` picks the newest run, or the one the
  user named, and never skips a file it cannot read: a broken newest run is
  an error, not a reason to compare with an older one.
* Numbered, atomic saves. `save_run` takes the next number under an
  exclusive lock on ``<folder>/.save.lock`` and links a complete, fsynced
  file into place without ever replacing one, so two processes saving at
  once get two numbers and neither run is lost.

Linux only (fcntl), like the rest of the suite.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from pathlib import Path

from kernelwatch.storage.schema import RunSchemaError, migrated
from kernelwatch.timing.gpu import safe_name
from kernelwatch.verdict.stats import checked_samples

_RUN_NAME = re.compile(r"^(\d{4,})_.+\.json$")
SAVE_LOCK = ".save.lock"
# how many stored runs an error message lists (the newest ones)
_LISTED_RUNS = 12


class BaselineError(Exception):
    """A stored run is missing, malformed, from another GPU, or cannot be saved."""


def _run_number(path: Path) -> int | None:
    match = _RUN_NAME.match(path.name)
    return int(match.group(1)) if match else None


def stored_runs(folder: Path) -> list[Path]:
    """The ``NNNN_*.json`` entries of ``folder``, oldest first (by number, then name).

    Other names are ignored. An entry with a run's name is listed even when it
    is not a readable file, so that `load_run` reports it instead of an older
    run being used in its place. A missing folder holds no runs.
    """
    folder = Path(folder)
    if not folder.exists():
        return []
    if not folder.is_dir():
        raise BaselineError(f"{folder} is not a folder of baselines")
    numbered = [(number, path.name, path) for path in folder.iterdir() if (number := _run_number(path)) is not None]
    return [path for _, _, path in sorted(numbered)]


def _listing(runs: list[Path]) -> str:
    if not runs:
        return "it holds no stored run"
    names = [path.name for path in runs[-_LISTED_RUNS:]]
    older = len(runs) - len(names)
    return "stored runs: " + ", ".join(names) + (f" and {older} older" if older else "")


def resolve_compare(folder: Path, spec) -> Path | None:
    """The stored run that ``--benchmark-compare[=spec]`` means, without reading it.

    * ``True``, ``""`` or ``None``: the newest run in ``folder``, or None when
      the folder holds none (a GPU model without a baseline yet).
    * A run number, as an int or digits (``"0001"``, ``"12"``): the run with
      that number.
    * A path to a file (as given, or relative to ``folder`` or to the folder of
      all GPUs), or the start of a run's file name (``"0003_tuned"``).

    Raises BaselineError when the spec matches no run (listing the stored
    runs), matches several, or when two runs share the newest number. The
    chosen file is checked by `load_run`: a broken one is never skipped.
    """
    folder = Path(folder)
    runs = stored_runs(folder)
    if spec is None or spec is True or spec == "":
        if not runs:
            return None
        newest = [path for path in runs if _run_number(path) == _run_number(runs[-1])]
        if len(newest) > 1:
            raise BaselineError(
                f"runs {', '.join(p.name for p in newest)} in {folder} share the newest number; "
                f"which one is the baseline is unclear: rename one of them"
            )
        return runs[-1]
    if isinstance(spec, bool):
        raise TypeError(f"compare spec must be True, a run number, a name or a path, got {spec!r}")
    text = str(spec).strip()
    if text.isdigit():
        matches = [path for path in runs if _run_number(path) == int(text)]
    else:
        as_given = Path(text).expanduser()
        for candidate in (as_given, folder / as_given, folder.parent / as_given):
            if candidate.is_file():
                return candidate
        matches = [path for path in runs if path.name.startswith(text)]
    if not matches:
        raise BaselineError(f"no stored run matches --benchmark-compare={text} in {folder}; {_listing(runs)}")
    if len(matches) > 1:
        raise BaselineError(
            f"--benchmark-compare={text} matches {len(matches)} runs in {folder} "
            f"({', '.join(p.name for p in matches)}); name one file"
        )
    return matches[0]


def _read_document(path: Path):
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BaselineError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise BaselineError(f"{path} is a directory, not a baseline file") from None
    except OSError as exc:
        raise BaselineError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if not raw:
        raise BaselineError(f"{path} is empty (0 bytes): an interrupted save? Delete it or record a new run")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path} is not UTF-8 text: {exc}") from None
    if not text.strip():
        raise BaselineError(f"{path} holds only whitespace, no benchmark run")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{path} is not valid JSON (truncated?): {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise BaselineError(f"{path} nests its JSON deeper than Python's parser goes: no stored run") from None
    except ValueError as exc:  # an integer of more digits than int() takes (sys.get_int_max_str_digits)
        raise BaselineError(f"{path} is not a stored run: {exc}") from None


def _samples_problem(bench: dict) -> str | None:
    """Why a benchmark's stored samples (stats.data) are unusable, or None."""
    data = bench["stats"].get("data")
    if not data:
        return "has no stored samples (stats.data); re-record the baseline with --benchmark-save-data"
    # the verdicts' own check (finite, positive times), so that a stored 0 cannot break a verdict later
    if not isinstance(data, list) or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in data):
        return "has stored samples that are not finite, positive times"
    try:
        checked_samples("stored", data)
    except (ValueError, OverflowError):  # OverflowError: an integer beyond any float
        return "has stored samples that are not finite, positive times"
    return None


def _check_benchmarks(path: Path, benchmarks) -> None:
    if not isinstance(benchmarks, list):
        raise BaselineError(f'{path} has no "benchmarks" list')
    if not benchmarks:
        raise BaselineError(f'{path} has an empty "benchmarks" list: a run without a timed case is no baseline')
    seen: set[str] = set()
    for index, bench in enumerate(benchmarks):
        if not isinstance(bench, dict):
            raise BaselineError(f"{path}: benchmark #{index} is not an object")
        fullname = bench.get("fullname")
        if not isinstance(fullname, str) or not fullname:
            raise BaselineError(f'{path}: benchmark #{index} has no "fullname"')
        if not isinstance(bench.get("stats"), dict):
            raise BaselineError(f'{path}: case {fullname} has no "stats" object')
        problem = _samples_problem(bench)
        if problem:
            raise BaselineError(f"{path}: case {fullname} {problem}")
        if fullname in seen:
            raise BaselineError(f"{path}: case {fullname} appears more than once")
        seen.add(fullname)


def _recorded_gpu(doc: dict) -> str | None:
    machine = doc.get("machine_info")
    gpu = machine.get("gpu") if isinstance(machine, dict) else None
    name = gpu.get("name") if isinstance(gpu, dict) else None
    return name if isinstance(name, str) and name else None


def load_run(path: Path, expected_gpu: str | None = None, *, migrate: bool = True) -> dict:
    """Read one stored run once, check it, and return the parsed document.

    Raises BaselineError, naming the file, when it is missing, unreadable,
    empty or whitespace only, not valid JSON (a truncated file), not an
    object, without a non-empty ``benchmarks`` list, or when a benchmark lacks
    ``fullname``, ``stats`` or stored samples (``stats.data``, every one a
    finite, positive time) or repeats a ``fullname``. With ``expected_gpu``, the file's ``machine_info.gpu.name``
    must say it and equal it: timings of different GPU models are never
    compared. A file of an older schema comes back migrated to the current one
    (src/kernelwatch/storage/schema.py), unless ``migrate`` is False (the history store's
    import: the store checks the document as it was written, then migrates it); one of a
    newer schema is refused.
    """
    path = Path(path)
    doc = _read_document(path)
    if not isinstance(doc, dict):
        raise BaselineError(f"{path} holds a JSON {type(doc).__name__}, not a benchmark run")
    _check_benchmarks(path, doc.get("benchmarks"))
    try:
        doc = migrated(doc) if migrate else doc
    except RunSchemaError as error:
        raise BaselineError(f"{path}: {error}") from None
    if expected_gpu is not None:
        recorded = _recorded_gpu(doc)
        if recorded is None:
            raise BaselineError(
                f"{path} does not say which GPU it was recorded on (machine_info.gpu.name is missing) "
                f"and this run is on GPU {expected_gpu!r}; comparing across GPU models is refused"
            )
        if recorded != expected_gpu:
            raise BaselineError(
                f"{path} was recorded on GPU {recorded!r} and this run is on GPU {expected_gpu!r}; "
                f"comparing across GPU models is refused"
            )
    return doc


@contextlib.contextmanager
def _exclusive_lock(folder: Path):
    """Hold an exclusive flock on ``folder/.save.lock`` (created if needed).

    flock belongs to the open file description, so two savers exclude each
    other whether they are processes or threads; closing the file releases it.
    """
    fd = os.open(folder / SAVE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def save_run(folder: Path, label: str, doc: dict) -> Path:
    """Save ``doc`` as the next run in ``folder`` and return its path.

    The name is ``{number:04d}_{label}.json``, the label sanitized as in
    `gpu_slug` and the number one more than the highest stored one (1 in a new
    folder), taken under an exclusive lock so that concurrent savers get
    distinct numbers. The file is written atomically and never replaces
    another. Raises BaselineError for a label with nothing usable in it and
    when the folder cannot be written (read-only, not a folder, disk full);
    TypeError, before anything is written, for a document that is not JSON.
    """
    folder = Path(folder)
    safe_label = safe_name(str(label))
    if not safe_label:
        raise BaselineError(f"baseline label {label!r} has no letter, digit, '.' or '-' to name a file with")
    text = json.dumps(doc, indent=2) + "\n"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _exclusive_lock(folder):
            number = max((_run_number(p) for p in stored_runs(folder)), default=0) + 1
            while True:
                path = folder / f"{number:04d}_{safe_label}.json"
                try:
                    write_text_atomically(path, text, replace=False)
                    return path
                except FileExistsError:
                    # only a writer that ignores the lock (a copy, a git pull) gets here: take the next number
                    number += 1
    except OSError as exc:
        raise BaselineError(
            f"cannot save the baseline in {folder}: {exc.strerror or exc}; nothing was saved "
            f"(make the folder writable, or point --benchmark-storage at a writable one)"
        ) from None


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


def write_text_atomically(path: Path, text: str, replace: bool) -> None:
    """Write ``text`` to ``path`` so that no reader ever sees a partial file.

    The text goes to a temporary file in the same folder and is fsynced;
    then it is hard-linked to ``path`` (replace=False: the link fails with
    FileExistsError if ``path`` exists, so a baseline is never overwritten) or
    renamed over it (replace=True, for reports). The folder is created if
    needed and the temporary file is always removed. A ``path`` that is a
    directory raises IsADirectoryError naming it.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; give the name of a file to write instead")
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
                    f"{path} already exists; stored runs are never overwritten, record under a new name instead"
                ) from None
        _fsync_folder(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)

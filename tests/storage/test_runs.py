"""CPU tests for kernelwatch.storage.runs: stored runs built in tmp_path, saves from several processes.

Issue 11's findings covered here: 1 (broken or missing baselines are errors, never a
fallback), 2 (concurrent saves), 3 (unwritable folder, report path that is a directory)
and 5 (one numbering, past 9999).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelwatch.storage import runs as baselines
from kernelwatch.storage import runs as stored
from kernelwatch.storage.runs import (
    SAVE_LOCK,
    BaselineError,
    load_run,
    resolve_compare,
    save_run,
    stored_runs,
    write_text_atomically,
)
from kernelwatch.storage.schema import SCHEMA_KEY, SCHEMA_VERSION, migrated
from kernelwatch.timing.gpu import gpu_slug

REPO = Path(__file__).resolve().parents[2]
MATMUL = "suites/test_perf_matmul.py::test_matmul_time[tiled32-1024x1024x1024]"
REDUCE = "suites/test_perf_reduce.py::test_reduce_time[warp-16M]"
TRIALS = 8  # issue 11 saw 3 of 8 trials collide without a lock


def recorded_run(gpu_name="NVIDIA H200", samples=(1.01e-3, 0.99e-3, 1.00e-3), marker="abc123"):
    """A document shaped like a pytest-benchmark save with our GPU info."""
    def bench(fullname):
        stats = {"min": min(samples), "max": max(samples), "mean": sum(samples) / len(samples),
                 "stddev": 1e-5, "median": sorted(samples)[len(samples) // 2],
                 "iqr": 1e-5, "q1": 0.995e-3, "q3": 1.005e-3, "rounds": len(samples),
                 "data": list(samples)}
        return {"fullname": fullname, "name": fullname.split("::")[1], "group": None,
                "params": {}, "extra_info": {}, "stats": stats}

    return {
        "machine_info": {"node": "ci", "gpu": {"name": gpu_name, "slug": gpu_slug(gpu_name),
                                               "driver": "560.35", "cuda_runtime": 12060,
                                               "cupy": "13.3.0"}},
        "commit_info": {"id": marker, "dirty": False},
        "benchmarks": [bench(MATMUL), bench(REDUCE)],
        "datetime": "2025-01-01T00:00:00+00:00",
        "version": "5.2.3",
    }


def store(folder, name, doc=None, text=None):
    """Write a stored run by hand (a valid one unless text is given) and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text if text is not None else json.dumps(doc or recorded_run()))
    return path


def truncated_run_text():
    text = json.dumps(recorded_run(), indent=2)
    return text[: len(text) // 2]


# -- names and ordering -------------------------------------------------------------------------

@pytest.mark.parametrize("name, slug", [
    ("NVIDIA H200", "NVIDIA_H200"),
    ("NVIDIA GeForce RTX 4090", "NVIDIA_GeForce_RTX_4090"),
    ("Tesla V100-SXM2-16GB", "Tesla_V100-SXM2-16GB"),
    ("  NVIDIA  A100 (80GB) ", "NVIDIA_A100_80GB"),
    ("NVIDIA RTX A6000/2.0", "NVIDIA_RTX_A6000_2.0"),
])
def test_gpu_slug_keeps_safe_characters_and_collapses_the_rest(name, slug):
    assert gpu_slug(name) == slug


@pytest.mark.parametrize("name", ["", "   ", "()/!"])
def test_gpu_slug_without_usable_characters_is_rejected(name):
    with pytest.raises(ValueError):
        gpu_slug(name)


def test_stored_runs_are_ordered_by_number_and_ignore_other_names(tmp_path):
    for name in ["0010_tuned.json", "0002_b.json", "0009_c.json", "0001_first.json", "README.md",
                 "latest.json", "12_short.json", "0003_x.txt", "0004.json", ".0005_x.json.abc.tmp", ".save.lock"]:
        store(tmp_path, name)
    assert [p.name for p in stored_runs(tmp_path)] == \
        ["0001_first.json", "0002_b.json", "0009_c.json", "0010_tuned.json"]


def test_missing_folder_holds_no_runs(tmp_path):
    assert stored_runs(tmp_path / "absent") == []


# -- finding 1: a broken or missing baseline is an error, never a fallback ------------------------

def test_truncated_newest_baseline_is_an_error_not_a_fallback_to_the_older_run(tmp_path):
    store(tmp_path, "0001_good.json")
    newest = store(tmp_path, "0002_cut.json", text=truncated_run_text())
    assert resolve_compare(tmp_path, True) == newest
    with pytest.raises(BaselineError) as info:
        load_run(resolve_compare(tmp_path, True), expected_gpu="NVIDIA H200")
    assert str(newest) in str(info.value)
    assert "not valid JSON (truncated?)" in str(info.value)


@pytest.mark.parametrize("text, problem", [
    ("", "is empty"),
    ("  \n\t\n", "only whitespace"),
    ("{}", '"benchmarks"'),
    ('{"benchmarks": []}', "empty"),
    (None, "not valid JSON"),
], ids=["empty", "whitespace", "empty-object", "no-benchmarks", "truncated"])
def test_a_broken_only_baseline_is_an_error_not_no_baseline(tmp_path, text, problem):
    only = store(tmp_path, "0001_only.json", text=truncated_run_text() if text is None else text)
    assert resolve_compare(tmp_path, True) == only
    with pytest.raises(BaselineError) as info:
        load_run(only, expected_gpu="NVIDIA H200")
    assert str(only) in str(info.value)
    assert problem in str(info.value)


def test_compare_with_a_run_number_that_does_not_exist_is_an_error_listing_the_stored_runs(tmp_path):
    store(tmp_path, "0001_first.json")
    store(tmp_path, "0002_second.json")
    with pytest.raises(BaselineError) as info:
        resolve_compare(tmp_path, "9999")
    message = str(info.value)
    assert "9999" in message and str(tmp_path) in message
    assert "0001_first.json" in message and "0002_second.json" in message


@pytest.mark.parametrize("spec", ["nope", "0003_tuned", "missing/0001_x.json"])
def test_compare_with_a_name_or_path_that_matches_nothing_is_an_error(tmp_path, spec):
    store(tmp_path, "0001_first.json")
    with pytest.raises(BaselineError, match="no stored run matches"):
        resolve_compare(tmp_path, spec)


@pytest.mark.parametrize("spec", [True, None, ""])
def test_a_gpu_without_any_baseline_is_not_an_error(tmp_path, spec):
    assert resolve_compare(tmp_path / "NVIDIA_H200", spec) is None
    (tmp_path / "empty").mkdir()
    assert resolve_compare(tmp_path / "empty", spec) is None


def test_compare_finds_a_run_by_number_name_prefix_or_path(tmp_path):
    folder = tmp_path / "NVIDIA_H200"
    first = store(folder, "0001_first.json")
    tuned = store(folder, "0012_tuned.json")
    newest = store(folder, "0013_after.json")
    assert resolve_compare(folder, True) == newest
    assert resolve_compare(folder, "0001") == first
    assert resolve_compare(folder, "12") == tuned
    assert resolve_compare(folder, 12) == tuned
    assert resolve_compare(folder, "0012_tu") == tuned
    assert resolve_compare(folder, str(first)) == first
    assert resolve_compare(folder, "0001_first.json") == folder / "0001_first.json"
    assert resolve_compare(folder, "NVIDIA_H200/0012_tuned.json") == tuned


def test_two_runs_sharing_the_newest_number_are_an_error_not_a_guess(tmp_path):
    store(tmp_path, "0001_p1.json")
    store(tmp_path, "0001_p2.json")
    with pytest.raises(BaselineError, match="share the newest number"):
        resolve_compare(tmp_path, True)
    with pytest.raises(BaselineError, match="matches 2 runs"):
        resolve_compare(tmp_path, "1")


def test_a_directory_named_like_the_newest_run_is_reported_not_skipped(tmp_path):
    store(tmp_path, "0001_good.json")
    (tmp_path / "0002_odd.json").mkdir()
    newest = resolve_compare(tmp_path, True)
    assert newest.name == "0002_odd.json"
    with pytest.raises(BaselineError, match="is a directory"):
        load_run(newest)


def test_valid_run_loads_with_its_cases_and_samples(tmp_path):
    path = store(tmp_path, "0001_run.json", recorded_run(samples=(2e-3, 3e-3, 4e-3)))
    doc = load_run(path, expected_gpu="NVIDIA H200")
    assert [bench["fullname"] for bench in doc["benchmarks"]] == [MATMUL, REDUCE]
    assert doc["benchmarks"][0]["stats"]["data"] == [2e-3, 3e-3, 4e-3]


def test_a_stored_zero_sample_is_rejected_at_load_time(tmp_path):
    # the verdict refuses a zero time (src/kernelwatch/verdict.checked_samples): loading must refuse it first
    path = store(tmp_path, "0001_zero.json", recorded_run(samples=(1.01e-3, 0.0, 1.00e-3)))
    with pytest.raises(BaselineError) as info:
        load_run(path)
    assert str(path) in str(info.value) and "positive" in str(info.value)


def test_the_committed_h200_baseline_passes_the_strict_loader():
    runs = stored_runs(REPO / "baselines" / "NVIDIA_H200")
    assert runs, "the repository's H200 baseline is missing"
    assert len(load_run(runs[-1], expected_gpu="NVIDIA H200")["benchmarks"]) > 0


def test_truncated_json_names_the_file_and_the_place(tmp_path):
    path = store(tmp_path, "0003_x.json", text=truncated_run_text())
    with pytest.raises(BaselineError) as info:
        load_run(path)
    message = str(info.value)
    assert str(path) in message and "not valid JSON" in message and "line" in message


def bench_with(**fields):
    bench = {"fullname": MATMUL, "stats": {"data": [1e-3, 2e-3]}}
    bench.update(fields)
    return bench


@pytest.mark.parametrize("doc, problem", [
    ([1, 2, 3], "not a benchmark run"),
    ({"machine_info": {}}, '"benchmarks"'),
    ({"benchmarks": {"a": 1}}, '"benchmarks"'),
    ({"benchmarks": [7]}, "not an object"),
    ({"benchmarks": [bench_with(fullname="")]}, '"fullname"'),
    ({"benchmarks": [{"fullname": MATMUL}]}, '"stats"'),
    ({"benchmarks": [bench_with(stats={"median": 1e-3})]}, "--benchmark-save-data"),
    ({"benchmarks": [bench_with(stats={"data": []})]}, "--benchmark-save-data"),
    ({"benchmarks": [bench_with(stats={"data": [1e-3, "fast"]})]}, "not finite"),
    ({"benchmarks": [bench_with(stats={"data": [1e-3, -1.0]})]}, "positive"),
    ({"benchmarks": [bench_with(stats={"data": [1e-3, float("inf")]})]}, "not finite"),
    ({"benchmarks": [bench_with(), bench_with()]}, "more than once"),
])
def test_malformed_run_is_rejected_with_the_file_and_the_problem(tmp_path, doc, problem):
    path = store(tmp_path, "0001_bad.json", text=json.dumps(doc))
    with pytest.raises(BaselineError) as info:
        load_run(path)
    assert str(path) in str(info.value)
    assert problem in str(info.value)


def test_non_utf8_file_is_a_baseline_error(tmp_path):
    path = tmp_path / "0001_bin.json"
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(BaselineError, match="not UTF-8"):
        load_run(path)


def test_missing_run_file_is_a_baseline_error(tmp_path):
    with pytest.raises(BaselineError, match="does not exist"):
        load_run(tmp_path / "0001_gone.json")


def test_run_from_another_gpu_is_refused_naming_both_gpus(tmp_path):
    path = store(tmp_path, "0001_run.json", recorded_run(gpu_name="NVIDIA A100-SXM4-80GB"))
    with pytest.raises(BaselineError) as info:
        load_run(path, expected_gpu="NVIDIA H200")
    message = str(info.value)
    assert "NVIDIA A100-SXM4-80GB" in message and "NVIDIA H200" in message
    assert str(path) in message and "refused" in message


def test_run_without_gpu_info_is_refused_when_a_gpu_is_expected(tmp_path):
    doc = recorded_run()
    del doc["machine_info"]["gpu"]
    path = store(tmp_path, "0001_run.json", doc)
    assert load_run(path)["benchmarks"]
    with pytest.raises(BaselineError, match="does not say which GPU"):
        load_run(path, expected_gpu="NVIDIA H200")


# -- finding 2: saves are numbered under a lock ---------------------------------------------------

def test_first_save_in_a_new_folder_is_0001_and_loads_back(tmp_path):
    folder = tmp_path / "NVIDIA_H200"
    path = save_run(folder, "first", recorded_run())
    assert path == folder / "0001_first.json"
    assert load_run(path, expected_gpu="NVIDIA H200") == migrated(recorded_run())  # a version-1 run, migrated
    assert sorted(os.listdir(folder)) == [".save.lock", "0001_first.json"]


def test_save_follows_the_highest_number_and_sanitizes_the_label(tmp_path):
    store(tmp_path, "0002_a.json")
    store(tmp_path, "0009_b.json")
    store(tmp_path, "notes.json")
    assert save_run(tmp_path, "after tuning/v2", recorded_run()).name == "0010_after_tuning_v2.json"


def test_the_same_label_twice_gives_two_runs(tmp_path):
    first = save_run(tmp_path, "abc123", recorded_run(marker="one"))
    second = save_run(tmp_path, "abc123", recorded_run(marker="two"))
    assert (first.name, second.name) == ("0001_abc123.json", "0002_abc123.json")
    assert load_run(first)["commit_info"]["id"] == "one"


def test_a_label_with_nothing_usable_is_refused(tmp_path):
    with pytest.raises(BaselineError, match="label"):
        save_run(tmp_path, "///", recorded_run())
    assert not tmp_path.joinpath("0001_.json").exists()


def test_a_document_that_is_not_json_leaves_nothing_behind(tmp_path):
    with pytest.raises(TypeError):
        save_run(tmp_path / "gpu", "x", {"bad": object()})
    assert not (tmp_path / "gpu").exists()


def _save_after_barrier(folder, label, marker, barrier, results):
    barrier.wait()
    try:
        results.put((marker, str(save_run(Path(folder), label, recorded_run(marker=marker)))))
    except Exception as error:  # reported to the parent, which fails the test with it
        results.put((marker, f"{type(error).__name__}: {error}"))


@pytest.mark.parametrize("labels", [("abc123", "abc123"), ("p1", "p2")], ids=["same-label", "different-labels"])
def test_two_processes_saving_at_once_never_share_a_number_nor_lose_a_run(tmp_path, labels):
    context = multiprocessing.get_context("fork")
    for trial in range(TRIALS):
        folder = tmp_path / f"trial{trial}"
        barrier, results = context.Barrier(len(labels)), context.Queue()
        workers = [context.Process(target=_save_after_barrier, args=(folder, label, f"t{trial}p{i}", barrier, results))
                   for i, label in enumerate(labels)]
        for worker in workers:
            worker.start()
        outcome = dict(results.get(timeout=60) for _ in workers)
        for worker in workers:
            worker.join(timeout=60)
        assert all(result.startswith(str(folder)) for result in outcome.values()), outcome
        runs = stored_runs(folder)
        assert [p.name.split("_")[0] for p in runs] == ["0001", "0002"], f"trial {trial}: {runs}"
        saved = {load_run(path)["commit_info"]["id"]: str(path) for path in runs}
        assert saved == outcome, f"trial {trial}"


# -- finding 3: an unwritable folder or a directory as target is a clear error -----------------------

def run_without_root_privileges(code: str) -> subprocess.CompletedProcess:
    """Run Python code in a child that file permissions apply to.

    Root ignores a folder's missing write bit. In a new user namespace root's
    capabilities do not extend to files owned outside it, so the folder's owner
    bits apply, as they do to any user on a CI runner.
    """
    command = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        command = ["unshare", "--user", *command]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)


def test_saving_into_a_read_only_folder_is_a_baseline_error_without_traceback(tmp_path):
    folder = tmp_path / "NVIDIA_H200"
    store(folder, "0001_old.json")
    folder.chmod(0o555)
    try:
        child = run_without_root_privileges(textwrap.dedent(f"""
            import sys
            from kernelwatch.storage.runs import BaselineError, save_run
            try:
                save_run({str(folder)!r}, "new", {{"benchmarks": []}})
            except BaselineError as error:
                print(error)
                sys.exit(3)
        """))
    finally:
        folder.chmod(0o755)
    assert child.returncode == 3, child.stdout + child.stderr
    assert "Traceback" not in child.stderr
    assert f"cannot save the baseline in {folder}: Permission denied" in child.stdout
    assert sorted(os.listdir(folder)) == ["0001_old.json"]


def test_saving_where_the_folder_path_is_a_file_is_a_baseline_error(tmp_path):
    blocker = tmp_path / "baselines"
    blocker.write_text("not a folder")
    with pytest.raises(BaselineError, match=f"cannot save the baseline in {blocker / 'NVIDIA_H200'}"):
        save_run(blocker / "NVIDIA_H200", "x", recorded_run())


@pytest.mark.parametrize("replace", [True, False], ids=["report", "baseline"])
def test_writing_to_a_path_that_is_a_directory_names_it(tmp_path, replace):
    target = tmp_path / "report.md"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as info:
        write_text_atomically(target, "# report\n", replace=replace)
    assert str(info.value).startswith(f"{target} is a directory")
    assert os.listdir(tmp_path) == ["report.md"] and os.listdir(target) == []


def test_report_writer_replaces_and_baseline_writer_never_does(tmp_path):
    report = tmp_path / "report.md"
    write_text_atomically(report, "old\n", replace=True)
    write_text_atomically(report, "new\n", replace=True)
    assert report.read_text() == "new\n"
    with pytest.raises(FileExistsError, match="never overwritten"):
        write_text_atomically(report, "other\n", replace=False)
    assert report.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["report.md"]


# -- finding 5: one numbering, the one saves use ---------------------------------------------------

def test_save_after_run_9999_is_numbered_10000_and_is_the_newest(tmp_path):
    store(tmp_path, "9999_earlier.json")
    store(tmp_path, "0100_old.json")
    saved = save_run(tmp_path, "later", recorded_run())
    assert saved.name == "10000_later.json"
    assert [p.name for p in stored_runs(tmp_path)] == ["0100_old.json", "9999_earlier.json", "10000_later.json"]
    assert resolve_compare(tmp_path, True) == saved
    assert resolve_compare(tmp_path, "10000") == saved


def test_the_unused_second_numbering_is_gone():
    assert not hasattr(baselines, "next_baseline_path")
    assert not hasattr(baselines, "newest_baseline")


def a_run(data):
    return {"machine_info": {"gpu": {"name": "G"}}, "benchmarks": [{"fullname": "a", "stats": {"data": data}}]}


def stored_run(tmp_path, doc) -> Path:
    """`doc` written as the stored run tmp_path/0001_run.json."""
    path = tmp_path / "0001_run.json"
    path.write_text(json.dumps(doc))
    return path


def folder_fd(fd):
    return os.path.isdir(f"/proc/self/fd/{fd}")


def test_a_saved_run_is_json_indented_by_two_with_a_final_newline(tmp_path):
    doc = a_run([1.0])
    path = save_run(tmp_path / "G", "label", doc)
    assert path.read_text() == json.dumps(doc, indent=2) + "\n"


def test_the_save_lock_is_created_readable_and_writable_by_its_owner_and_readable_by_others(tmp_path):
    """The lock file is made with mode 0o644 (less the umask), like the runs beside it."""
    umask = os.umask(0o022)
    os.umask(umask)
    save_run(tmp_path / "G", "label", {"benchmarks": []})
    assert (tmp_path / "G" / SAVE_LOCK).stat().st_mode & 0o777 == 0o644 & ~umask


def test_an_error_listing_the_stored_runs_names_the_newest_twelve_and_counts_the_older(tmp_path):
    for number in range(1, 15):
        (tmp_path / f"{number:04d}_run.json").write_text("{}")
    with pytest.raises(BaselineError) as error:
        resolve_compare(tmp_path, "9999")
    message = str(error.value)
    assert "0003_run.json" in message and "0014_run.json" in message
    assert "0002_run.json" not in message and "and 2 older" in message


def test_two_older_runs_sharing_a_number_do_not_hide_the_newest(tmp_path):
    for name in ("0001_a.json", "0001_b.json", "0002_c.json"):
        (tmp_path / name).write_text("{}")
    assert resolve_compare(tmp_path, True) == tmp_path / "0002_c.json"


def test_a_run_file_that_cannot_be_read_is_a_baseline_error_naming_it(tmp_path):
    """Any OSError reading the file (here: a path under a file, not a folder) is a BaselineError."""
    (tmp_path / "not-a-folder").write_text("x")
    path = tmp_path / "not-a-folder" / "0001_run.json"
    with pytest.raises(BaselineError, match="cannot be read: Not a directory$") as error:
        load_run(path)
    assert "[Errno" not in str(error.value)  # the OS's words, not the exception's text


NO_GPU_NAME = "does not say which GPU it was recorded on"
OTHER_MODEL = "comparing across GPU models is refused"


# A100 sorts before H200 and L40S after it: another model is refused whichever way the names compare
@pytest.mark.parametrize(("recorded", "refusal"), [("", NO_GPU_NAME), (5, NO_GPU_NAME), (None, NO_GPU_NAME),
                                                   ("NVIDIA A100-SXM4-80GB", OTHER_MODEL), ("NVIDIA L40S", OTHER_MODEL)])
def test_a_run_that_does_not_name_this_gpu_model_is_refused(tmp_path, recorded, refusal):
    doc = a_run([1.0])
    doc["machine_info"]["gpu"]["name"] = recorded
    path = stored_run(tmp_path, doc)
    with pytest.raises(BaselineError, match=refusal):
        load_run(path, expected_gpu="NVIDIA H200")


def test_a_stored_sample_that_is_a_boolean_is_refused(tmp_path):
    """true is not a time, though it would pass as 1.0 (JSON booleans are Python bools)."""
    path = stored_run(tmp_path, a_run([1e-3, True, 2e-3]))
    with pytest.raises(BaselineError, match="not finite, positive times"):
        load_run(path)


def test_a_save_never_replaces_a_file_that_took_its_number_behind_the_lock(tmp_path, monkeypatch):
    """A run file that appears under the chosen name (a copy, a git pull) is kept; the save takes the next number."""
    folder = tmp_path / "G"
    folder.mkdir()
    (folder / "0001_label.json").write_text("theirs")
    monkeypatch.setattr(stored, "stored_runs", lambda folder: [])  # the listing missed it
    tries = []
    write = stored.write_text_atomically

    def write_at_most_three_times(*args, **kwargs):
        tries.append(args[0])
        assert len(tries) <= 3, f"save_run keeps trying {tries[-1].name}"
        return write(*args, **kwargs)

    monkeypatch.setattr(stored, "write_text_atomically", write_at_most_three_times)
    path = save_run(folder, "label", a_run([1.0]))
    assert path.name == "0002_label.json"
    assert (folder / "0001_label.json").read_text() == "theirs"


def test_two_runs_sharing_a_newest_number_above_256_are_an_error(tmp_path):
    """Run numbers are compared by value: 10000 and 10000 are the same number (not the same int object)."""
    for name in ("9999_a.json", "10000_b.json", "10000_c.json"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(BaselineError, match="share the newest number"):
        resolve_compare(tmp_path, True)


def test_an_atomic_write_creates_the_missing_folders_above_the_file(tmp_path):
    path = tmp_path / "reports" / "2026" / "report.md"
    write_text_atomically(path, "text", replace=True)
    assert path.read_text() == "text"


@pytest.mark.parametrize("refused", ["open", "fsync"])
def test_a_folder_that_cannot_be_opened_or_synced_does_not_fail_the_save(tmp_path, monkeypatch, refused):
    """Syncing the folder after the link is best effort: an OSError opening or syncing it leaves the saved run."""
    real_open, real_fsync = os.open, os.fsync

    def refusing_open(path, flags, *args, **kwargs):
        if refused == "open" and os.path.isdir(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    def refusing_fsync(fd):
        if refused == "fsync" and folder_fd(fd):
            raise OSError(22, "Invalid argument")
        return real_fsync(fd)

    folder = tmp_path / "G"
    folder.mkdir()
    (folder / SAVE_LOCK).touch()
    monkeypatch.setattr(os, "open", refusing_open)
    monkeypatch.setattr(os, "fsync", refusing_fsync)
    path = save_run(folder, "label", a_run([1.0]))
    monkeypatch.undo()
    assert json.loads(path.read_text()) == a_run([1.0])


def test_run_number_one_given_as_an_int_is_that_run_not_the_newest(tmp_path):
    """1 == True in Python: the number 1 must still pick run 0001, not mean "the newest"."""
    for name in ("0001_a.json", "0002_b.json"):
        (tmp_path / name).write_text("{}")
    assert resolve_compare(tmp_path, 1) == tmp_path / "0001_a.json"
    assert resolve_compare(tmp_path, True) == tmp_path / "0002_b.json"


def test_a_stored_run_of_a_newer_schema_is_a_baseline_error_naming_the_file(tmp_path):
    doc = a_run([1.0])
    doc["machine_info"][SCHEMA_KEY] = SCHEMA_VERSION + 1
    path = stored_run(tmp_path, doc)
    with pytest.raises(BaselineError, match=f"^{path}: it was written with schema version"):
        load_run(path)


def test_a_save_creates_the_missing_folders_above_its_own(tmp_path):
    path = save_run(tmp_path / "new" / "store" / "G", "label", a_run([1.0]))
    assert path == tmp_path / "new" / "store" / "G" / "0001_label.json" and path.is_file()


def test_a_file_is_written_into_a_folder_that_is_there_or_not_yet(tmp_path):
    write_text_atomically(tmp_path / "there.md", "a\n", replace=True)  # tmp_path exists already
    write_text_atomically(tmp_path / "new" / "deeper" / "b.md", "b\n", replace=True)
    assert (tmp_path / "there.md").read_text() == "a\n" and (tmp_path / "new" / "deeper" / "b.md").read_text() == "b\n"

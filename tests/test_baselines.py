"""CPU tests for harness.baselines on baseline files built in tmp_path."""

from __future__ import annotations

import json
import os

import pytest

from harness.baselines import (
    BaselineError,
    baseline_cases,
    baseline_files,
    baseline_samples,
    gpu_slug,
    load_baseline,
    newest_baseline,
    next_baseline_path,
    write_json_atomically,
)

MATMUL = "suites/test_perf_matmul.py::test_matmul_time[tiled32-1024x1024x1024]"
REDUCE = "suites/test_perf_reduce.py::test_reduce_time[warp-16M]"


def recorded_run(gpu_name="NVIDIA H200", samples=(1.01e-3, 0.99e-3, 1.00e-3)):
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
        "commit_info": {"id": "abc123", "dirty": False},
        "benchmarks": [bench(MATMUL), bench(REDUCE)],
        "datetime": "2025-01-01T00:00:00+00:00",
        "version": "5.2.0",
    }


def touch(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("{}")


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


def test_baseline_files_are_ordered_by_numeric_prefix_and_ignore_other_names(tmp_path):
    touch(tmp_path, "0010_tuned.json", "0002_b.json", "0009_c.json", "0001_first.json",
          "README.md", "latest.json", "12_short.json", "0003_x.txt", "0004.json")
    names = [p.name for p in baseline_files(tmp_path)]
    assert names == ["0001_first.json", "0002_b.json", "0009_c.json", "0010_tuned.json"]


def test_newest_baseline_is_the_highest_counter_not_the_last_name(tmp_path):
    touch(tmp_path, "0009_zzz.json", "0010_aaa.json")
    assert newest_baseline(tmp_path).name == "0010_aaa.json"


def test_counter_past_9999_still_orders_numerically(tmp_path):
    touch(tmp_path, "10000_later.json", "9999_earlier.json")
    assert [p.name for p in baseline_files(tmp_path)] == ["9999_earlier.json", "10000_later.json"]
    assert next_baseline_path(tmp_path, "next").name == "10001_next.json"


def test_missing_folder_has_no_baselines(tmp_path):
    assert baseline_files(tmp_path / "absent") == []
    assert newest_baseline(tmp_path / "absent") is None


def test_next_baseline_path_starts_at_0001_in_an_empty_folder(tmp_path):
    assert next_baseline_path(tmp_path / "NVIDIA_H200", "first") == \
        tmp_path / "NVIDIA_H200" / "0001_first.json"


def test_next_baseline_path_follows_the_newest_prefix_and_sanitizes_the_label(tmp_path):
    touch(tmp_path, "0002_a.json", "0009_b.json", "notes.json")
    assert next_baseline_path(tmp_path, "after tuning/v2").name == "0010_after_tuning_v2.json"


def test_next_baseline_path_rejects_an_empty_label(tmp_path):
    with pytest.raises(ValueError):
        next_baseline_path(tmp_path, "///")


def test_valid_baseline_loads_and_maps_cases_to_samples(tmp_path):
    path = tmp_path / "0001_run.json"
    path.write_text(json.dumps(recorded_run(samples=(2e-3, 3e-3, 4e-3))))
    doc = load_baseline(path, expected_gpu="NVIDIA H200")
    cases = baseline_cases(doc)
    assert sorted(cases) == sorted([MATMUL, REDUCE])
    assert baseline_samples(cases[MATMUL]) == [2e-3, 3e-3, 4e-3]


def test_truncated_json_names_the_file(tmp_path):
    path = tmp_path / "0003_x.json"
    text = json.dumps(recorded_run(), indent=2)
    path.write_text(text[: len(text) // 2])
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    message = str(info.value)
    assert str(path) in message
    assert "not valid JSON" in message
    assert "line" in message


@pytest.mark.parametrize("doc, problem", [
    ([1, 2, 3], "not a benchmark object"),
    ({"machine_info": {}}, '"benchmarks"'),
    ({"benchmarks": {"a": 1}}, '"benchmarks"'),
    ({"benchmarks": [{"stats": {}}]}, '"fullname"'),
    ({"benchmarks": [{"fullname": MATMUL}]}, '"stats"'),
    ({"benchmarks": [{"fullname": MATMUL, "stats": {}}] * 2}, "more than once"),
])
def test_malformed_baseline_is_rejected_with_the_file_and_the_problem(tmp_path, doc, problem):
    path = tmp_path / "0001_bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    assert str(path) in str(info.value)
    assert problem in str(info.value)


def test_missing_baseline_file_is_a_baseline_error(tmp_path):
    with pytest.raises(BaselineError, match="does not exist"):
        load_baseline(tmp_path / "0001_gone.json")


def test_baseline_from_another_gpu_is_refused_naming_both_gpus(tmp_path):
    path = tmp_path / "0001_run.json"
    path.write_text(json.dumps(recorded_run(gpu_name="NVIDIA A100-SXM4-80GB")))
    with pytest.raises(BaselineError) as info:
        load_baseline(path, expected_gpu="NVIDIA H200")
    message = str(info.value)
    assert "NVIDIA A100-SXM4-80GB" in message
    assert "NVIDIA H200" in message
    assert str(path) in message
    assert "refused" in message


def test_baseline_without_gpu_info_is_refused_when_a_gpu_is_expected(tmp_path):
    doc = recorded_run()
    del doc["machine_info"]["gpu"]
    path = tmp_path / "0001_run.json"
    path.write_text(json.dumps(doc))
    assert load_baseline(path)["benchmarks"]
    with pytest.raises(BaselineError, match="NVIDIA H200"):
        load_baseline(path, expected_gpu="NVIDIA H200")


@pytest.mark.parametrize("stats", [{"median": 1e-3}, {"median": 1e-3, "data": []}])
def test_case_without_stored_samples_asks_for_save_data(stats):
    bench = {"fullname": MATMUL, "stats": stats}
    with pytest.raises(BaselineError) as info:
        baseline_samples(bench)
    assert MATMUL in str(info.value)
    assert "--benchmark-save-data" in str(info.value)


def test_non_numeric_samples_are_a_baseline_error():
    with pytest.raises(BaselineError, match="not numbers"):
        baseline_samples({"fullname": MATMUL, "stats": {"data": [1e-3, "fast"]}})


def test_write_json_atomically_creates_the_folder_and_round_trips(tmp_path):
    path = tmp_path / "NVIDIA_H200" / "0001_first.json"
    doc = recorded_run()
    write_json_atomically(path, doc)
    assert json.loads(path.read_text()) == doc
    assert load_baseline(path, expected_gpu="NVIDIA H200") == doc
    assert os.listdir(path.parent) == ["0001_first.json"]


def test_write_json_atomically_refuses_to_overwrite_and_keeps_the_original(tmp_path):
    path = tmp_path / "0001_first.json"
    write_json_atomically(path, {"benchmarks": [], "version": "original"})
    original = path.read_bytes()
    with pytest.raises(FileExistsError) as info:
        write_json_atomically(path, {"benchmarks": [], "version": "replacement"})
    assert str(path) in str(info.value)
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["0001_first.json"]


def test_write_json_atomically_leaves_nothing_when_the_object_cannot_be_serialized(tmp_path):
    path = tmp_path / "0001_first.json"
    with pytest.raises(TypeError):
        write_json_atomically(path, {"bad": object()})
    assert os.listdir(tmp_path) == []

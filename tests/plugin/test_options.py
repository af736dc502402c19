"""The plugin's checks of named things, called directly (src/kernelwatch/plugin/options.py `check_named_things`):
a run number or name is looked up; `--benchmark-compare` without a value (the newest run) and the
option not given name nothing, so an empty baselines folder is no error for them. At the end, what
pytest_configure does with the options and the device layer, on the fake GPU in a pytest run of its own
(tests/support/pytest_runs.py: in this process)."""

from __future__ import annotations

import io
import types
from pathlib import Path

import pytest

from kernelwatch.plugin.options import check_named_things, refuse_requests_without_a_gpu
from tests.plugins.fake_gpu import fake_info
from tests.support.fake_suite import output, run
from tests.support.suite_states import state_with


def config(compare):
    options = {"kernelwatch_compare_ref": None, "kernelwatch_history": None}
    return types.SimpleNamespace(option=types.SimpleNamespace(benchmark_compare=compare),
                                 getoption=lambda name: options[name], rootpath=Path.cwd())


@pytest.mark.parametrize("compare", [True, False, [], None])
def test_the_newest_run_or_no_comparison_needs_no_stored_run(tmp_path, compare):
    check_named_things(config(compare), tmp_path)  # an empty folder: nothing to find, nothing asked


def test_the_newest_run_is_left_to_the_gpus_own_folder_whatever_another_gpus_folder_holds(tmp_path):
    # another model's folder whose newest number two runs share: unclear there, and no concern of this run's
    # until its GPU is known (its own folder is checked then)
    other = tmp_path / "Other_GPU"
    other.mkdir()
    for name in ("0002_a.json", "0002_b.json"):
        (other / name).write_text("{}")
    from kernelwatch.storage.runs import BaselineError, resolve_compare

    with pytest.raises(BaselineError, match="share the newest number"):
        resolve_compare(other, True)  # what that folder's newest run would say, asked
    check_named_things(config(True), tmp_path)  # not asked here

@pytest.mark.parametrize("compare", ["0001", "9999"])
def test_a_run_number_is_looked_up_in_the_baselines(tmp_path, compare):
    with pytest.raises(pytest.UsageError, match=f"--benchmark-compare={compare}: no GPU's folder under"):
        check_named_things(config(compare), tmp_path)


def _options(**given):
    return types.SimpleNamespace(option=types.SimpleNamespace(**given), getoption=lambda name: given.get(name),
                                 rootpath=Path.cwd())


@pytest.mark.parametrize(("given", "words"), [
    ({"numprocesses": 2}, "--kernelwatch-compare-ref runs in one process: drop -n"),
    ({"benchmark_compare": "0001"}, "--kernelwatch-compare-ref compares with a git ref in this run; drop --benchmark-compare"),
    ({"benchmark_save": "x"}, "--kernelwatch-compare-ref cannot be combined with --benchmark-save: a pull-request run is never "
                              "saved as a baseline; drop one of them"),
    ({"benchmark_autosave": True}, "--kernelwatch-compare-ref cannot be combined with --benchmark-autosave: a pull-request run "
                                   "is never saved as a baseline; drop one of them"),
    ({"benchmark_compare_fail": ["mean:5%"]}, "--kernelwatch-compare-ref cannot be combined with --benchmark-compare-fail: it "
                                              "judges against a stored baseline, and --kernelwatch-compare-ref judges against "
                                              "the ref; drop one of them"),
    ({"kernelwatch_history": "sqlite:///x"}, "--kernelwatch-compare-ref cannot be combined with --kernelwatch-history: a pull-request run is judged "
                                 "against its ref, never recorded as a GPU's history; drop one of them"),
])
def test_compare_ref_refuses_each_conflicting_option_by_name(given, words):
    from kernelwatch.plugin.options import refuse_conflicts_with_compare_ref

    with pytest.raises(pytest.UsageError) as refused:
        refuse_conflicts_with_compare_ref(_options(**given))
    assert str(refused.value) == words


def test_compare_ref_alone_or_with_options_left_empty_is_fine():
    from kernelwatch.plugin.options import refuse_conflicts_with_compare_ref

    refuse_conflicts_with_compare_ref(_options())
    refuse_conflicts_with_compare_ref(_options(numprocesses=0, benchmark_compare=None, benchmark_save=None,
                                               benchmark_autosave=False, benchmark_compare_fail=[], kernelwatch_history=None))


def test_the_regression_threshold_sets_the_same_gpu_floor_and_no_fraction_is_a_usage_error(monkeypatch):
    from kernelwatch.plugin.options import floors_of
    from kernelwatch.verdict.noise import NoiseFloors

    monkeypatch.delenv("KERNELWATCH_THRESHOLD", raising=False)
    assert floors_of(_options(kernelwatch_threshold=None)) == NoiseFloors()
    assert floors_of(_options(kernelwatch_threshold="")) == NoiseFloors()
    assert floors_of(_options(kernelwatch_threshold="5%")).same_gpu == pytest.approx(0.05)
    assert floors_of(_options(kernelwatch_threshold="0.2")).same_gpu == 0.2
    with pytest.raises(pytest.UsageError, match=r"^--kernelwatch-threshold='x' is not a number; use a fraction like "
                                                r"0\.05 or 5%$"):
        floors_of(_options(kernelwatch_threshold="x"))
    monkeypatch.setenv("KERNELWATCH_THRESHOLD", "3%")
    assert floors_of(_options(kernelwatch_threshold=None)).same_gpu == pytest.approx(0.03)
    assert floors_of(_options(kernelwatch_threshold="0.2")).same_gpu == 0.2  # the option wins over the variable
    monkeypatch.setenv("KERNELWATCH_THRESHOLD", "x")
    with pytest.raises(pytest.UsageError, match=r"^\$KERNELWATCH_THRESHOLD='x' is not a number"):
        floors_of(_options(kernelwatch_threshold=None))


def test_no_history_option_opens_no_store_and_a_store_that_cannot_be_opened_is_a_usage_error(monkeypatch):
    import kernelwatch.storage.history as history
    from kernelwatch.plugin.options import open_history_store

    assert open_history_store(_options(kernelwatch_history=None)) is None
    urls = []

    def refuse(url):
        urls.append(url)
        raise history.HistoryError("cannot reach it")

    monkeypatch.setattr(history, "open_store", refuse)
    with pytest.raises(pytest.UsageError) as refused:
        open_history_store(_options(kernelwatch_history=""))
    assert str(refused.value) == "--kernelwatch-history: cannot reach it" and urls == [None]  # "" asks for the default store
    with pytest.raises(pytest.UsageError):
        open_history_store(_options(kernelwatch_history="sqlite:///x.db"))
    assert urls == [None, "sqlite:///x.db"]


def test_energy_all_typed_on_a_command_line_without_a_gpu_is_refused_like_energy_alone():
    # a console command's "all" is a string built at run time, never the interned literal that --kernelwatch-energy alone gives
    typed = "".join(["al", "l"])
    with pytest.raises(pytest.UsageError, match=r"^--kernelwatch-energy asks for what only a GPU can give .*: no driver here\."):
        refuse_requests_without_a_gpu(_options(kernelwatch_energy=typed), "no driver here")


@pytest.mark.parametrize("why", [
    "RefError: 'v0.1' (0123456789ab) has no package at kernels",  # the ref resolves, but its tree has no library
    "LibraryError: /project is in no git repository: no commit's version of the kernel library 'kernels' can be read",
])
def test_a_ref_that_cannot_serve_as_the_base_is_a_usage_error_naming_why(monkeypatch, why):
    # the ref resolves (check_named_things passed) but cannot be a base: exit 4 with the reason, no traceback
    import kernelwatch.ab.against_ref as against_ref
    import kernelwatch.plugin as plugin
    from kernelwatch.ab.library import LibraryError
    from kernelwatch.ab.ref_tree import RefError

    kind, _, message = why.partition(": ")

    def refuse(repo_root, ref, **options):
        assert options["library"] == "the head's library"
        raise {"RefError": RefError, "LibraryError": LibraryError}[kind](message)

    monkeypatch.setattr(against_ref, "RefComparison", refuse)
    state = state_with(gpu=fake_info("GPU-test"), ref=None, library="the head's library")
    with pytest.raises(pytest.UsageError) as refused:
        plugin._open_ref(_options(kernelwatch_compare_ref="v0.1", kernelwatch_compare_ref_all=False, kernelwatch_accept_slowdown=None), state)
    assert str(refused.value) == f"--kernelwatch-compare-ref: {message}"
    assert state.code.ref is None


def test_a_run_named_for_comparison_is_looked_up_in_the_storage_the_user_names(suite):
    # the suite's storage is tmp_path/baselines (tests/plugin/test_end_to_end.py `run`), not the repository's
    # baselines/, which holds no run of this name
    assert run(suite, "--benchmark-save=mine").returncode == 0
    result = run(suite, "--benchmark-compare=0001_mine", "--fake-gpu-seed=1")
    assert result.returncode == 0, output(result)
    assert "3 same" in output(result)


TWO_MODELS = '''
from tests.plugins.fake_gpu import FakeDevice, fake_info



class TwoModels(FakeDevice):
    """The fake GPU beside a GPU of another model; it leaves a file where exact allocations are asked for."""

    def __init__(self, config):
        self.config, self._info = config, fake_info("GPU-test")

    def model_names(self):
        return {"Fake GPU 9000", "Fake GPU 8000"}

    def use_exact_allocations(self):
        (self.config.rootpath / "exact-allocations").touch()


def pytest_kernelwatch_device(config):
    return TwoModels(config)
'''


@pytest.fixture
def two_models(tmp_path):
    """A folder whose conftest's device layer sees GPUs of two models, with one plain test."""
    (tmp_path / "conftest.py").write_text(TWO_MODELS)
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    return tmp_path


def test_gpus_of_two_models_are_refused_with_workers_and_used_by_one_process(two_models):
    # --collect-only: xdist starts no workers, the refusal comes from pytest_configure alone
    refused = run(two_models, "--numprocesses=2", "--collect-only")
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR, output(refused)
    assert "the visible GPUs are of different models (Fake GPU 8000, Fake GPU 9000)" in output(refused)
    one_process = run(two_models)
    assert one_process.returncode == 0, output(one_process)
    assert "1 passed" in output(one_process)


def test_no_memory_pool_and_only_it_asks_the_device_for_exact_allocations(two_models):
    assert run(two_models).returncode == 0
    assert not (two_models / "exact-allocations").exists()
    assert run(two_models, "--kernelwatch-no-memory-pool").returncode == 0
    assert (two_models / "exact-allocations").exists()


def test_every_request_a_machine_without_a_gpu_cannot_answer_is_named_in_one_refusal():
    # the benchmark options are absent where pytest-benchmark is not loaded, and --kernelwatch-energy where it is not given
    with pytest.raises(pytest.UsageError) as refused:
        refuse_requests_without_a_gpu(_options(benchmark_compare="0001", benchmark_save="x", benchmark_autosave=True,
                                               benchmark_json=io.BytesIO(), kernelwatch_compare_ref="origin/main",
                                               kernelwatch_history=""), "no driver here")
    assert str(refused.value).startswith("--benchmark-compare, --benchmark-save, --benchmark-autosave, --benchmark-json, "
                                         "--kernelwatch-compare-ref, --kernelwatch-history asks for what only a GPU can "
                                         "give (timings, verdicts, a baseline, a recorded run), and this machine has no "
                                         "usable CUDA GPU: no driver here. ")
    refuse_requests_without_a_gpu(_options(), "no driver here")  # nothing asked: the GPU tests are only skipped
    refuse_requests_without_a_gpu(_options(benchmark_compare=[], benchmark_save=None, benchmark_autosave=False,
                                           benchmark_json=None, kernelwatch_compare_ref=None, kernelwatch_history=None, kernelwatch_energy="profile"), "no driver here")

"""The plugin's checks of named things, called directly (harness/plugin/options.py `check_named_things`):
a run number or name is looked up; `--benchmark-compare` without a value (the newest run) and the
option not given name nothing, so an empty baselines folder is no error for them."""

from __future__ import annotations

import types

import pytest

from harness.plugin.options import check_named_things, refuse_requests_without_a_gpu


def config(compare):
    options = {"compare_ref": None, "history": None}
    return types.SimpleNamespace(option=types.SimpleNamespace(benchmark_compare=compare),
                                 getoption=lambda name: options[name])


@pytest.mark.parametrize("compare", [True, False, [], None])
def test_the_newest_run_or_no_comparison_needs_no_stored_run(tmp_path, compare):
    check_named_things(config(compare), tmp_path)  # an empty folder: nothing to find, nothing asked


@pytest.mark.parametrize("compare", ["0001", "9999"])
def test_a_run_number_is_looked_up_in_the_baselines(tmp_path, compare):
    with pytest.raises(pytest.UsageError, match=f"--benchmark-compare={compare}: no GPU's folder under"):
        check_named_things(config(compare), tmp_path)


def _options(**given):
    return types.SimpleNamespace(option=types.SimpleNamespace(**given), getoption=lambda name: given.get(name))


@pytest.mark.parametrize(("given", "words"), [
    ({"numprocesses": 2}, "--compare-ref runs in one process: drop -n"),
    ({"benchmark_compare": "0001"}, "--compare-ref compares with a git ref in this run; drop --benchmark-compare"),
    ({"benchmark_save": "x"}, "--compare-ref cannot be combined with --benchmark-save: a pull-request run is never "
                              "saved as a baseline; drop one of them"),
    ({"benchmark_autosave": True}, "--compare-ref cannot be combined with --benchmark-autosave: a pull-request run "
                                   "is never saved as a baseline; drop one of them"),
    ({"benchmark_compare_fail": ["mean:5%"]}, "--compare-ref cannot be combined with --benchmark-compare-fail: it "
                                              "judges against a stored baseline, and --compare-ref judges against "
                                              "the ref; drop one of them"),
    ({"history": "sqlite:///x"}, "--compare-ref cannot be combined with --history: a pull-request run is judged "
                                 "against its ref, never recorded as a GPU's history; drop one of them"),
])
def test_compare_ref_refuses_each_conflicting_option_by_name(given, words):
    from harness.plugin.options import refuse_conflicts_with_compare_ref

    with pytest.raises(pytest.UsageError) as refused:
        refuse_conflicts_with_compare_ref(_options(**given))
    assert str(refused.value) == words


def test_compare_ref_alone_or_with_options_left_empty_is_fine():
    from harness.plugin.options import refuse_conflicts_with_compare_ref

    refuse_conflicts_with_compare_ref(_options())
    refuse_conflicts_with_compare_ref(_options(numprocesses=0, benchmark_compare=None, benchmark_save=None,
                                               benchmark_autosave=False, benchmark_compare_fail=[], history=None))


def test_the_regression_threshold_is_a_fraction_or_none_and_no_fraction_is_a_usage_error():
    from harness.plugin.options import threshold_of

    assert threshold_of(_options(regression_threshold=None)) is None
    assert threshold_of(_options(regression_threshold="")) is None
    assert threshold_of(_options(regression_threshold="5%")) == pytest.approx(0.05)
    assert threshold_of(_options(regression_threshold="0.2")) == 0.2
    with pytest.raises(pytest.UsageError, match=r"^--regression-threshold='x' is not a number; use a fraction like "
                                                r"0\.05 or 5%$"):
        threshold_of(_options(regression_threshold="x"))


def test_no_history_option_opens_no_store_and_a_store_that_cannot_be_opened_is_a_usage_error(monkeypatch):
    import harness.storage.history as history
    from harness.plugin.options import open_history_store

    assert open_history_store(_options(history=None)) is None
    urls = []

    def refuse(url):
        urls.append(url)
        raise history.HistoryError("cannot reach it")

    monkeypatch.setattr(history, "open_store", refuse)
    with pytest.raises(pytest.UsageError) as refused:
        open_history_store(_options(history=""))
    assert str(refused.value) == "--history: cannot reach it" and urls == [None]  # "" asks for the default store
    with pytest.raises(pytest.UsageError):
        open_history_store(_options(history="sqlite:///x.db"))
    assert urls == [None, "sqlite:///x.db"]


def test_energy_all_typed_on_a_command_line_without_a_gpu_is_refused_like_energy_alone():
    # a console command's "all" is a string built at run time, never the interned literal that --energy alone gives
    typed = "".join(["al", "l"])
    with pytest.raises(pytest.UsageError, match=r"^--energy asks for what only a GPU can give .*: no driver here\."):
        refuse_requests_without_a_gpu(_options(energy=typed), "no driver here")

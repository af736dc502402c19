"""The plugin's checks of named things, called directly (harness/plugin/options.py `check_named_things`):
a run number or name is looked up; `--benchmark-compare` without a value (the newest run) and the
option not given name nothing, so an empty baselines folder is no error for them."""

from __future__ import annotations

import types

import pytest

from harness.plugin.options import check_named_things


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

"""maintainers/mutation/model_mutants.py: each of issue 46's four semantic mutants fails the model-based tests."""

from __future__ import annotations

import json

import pytest

from maintainers.mutation import model_mutants

pytestmark = pytest.mark.slow  # a copy of the tree and a pytest run per mutant: CI's second pass


def test_every_mutant_of_issue_46_is_killed_by_the_model_based_tests(tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    assert model_mutants.main(["-o", str(out)]) == 0, capsys.readouterr().out
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["operator"] for r in results) == sorted(name for name, *_ in model_mutants.MUTANTS)
    assert {r["outcome"] for r in results} == {"killed"}

"""The committed baselines stay keys of the suites: every case of baselines/NVIDIA_H200/0005_h200-5fcc19b.json is
still collected under the same test id, none orphaned (a renamed test or parameter would leave its history behind).

That run is the nightly of 5fcc19b (its commit_info), which still timed the tutorials' kernels at 8192³; since
cb3bfcf the nightly stops at 4096³ and the weekly `full` profile times those, so today the same ids are the
`full` profile's. Collection needs no GPU (the GPU is hidden: the ids must not depend on one)."""

from __future__ import annotations

import json

import pytest

from tests.support.pytest_runs import ROOT, run_pytest

BASELINE = ROOT / "baselines" / "NVIDIA_H200" / "0005_h200-5fcc19b.json"
PROFILE = "full"


@pytest.mark.slow  # collects the whole suite in a pytest process: `tox -e unit` leaves it out, CI's slow pass runs it
def test_every_case_of_the_h200_baseline_is_still_collected_under_its_id():
    doc = json.loads(BASELINE.read_text())
    assert doc["commit_info"]["id"].startswith("5fcc19b")
    cases = [bench["fullname"] for bench in doc["benchmarks"]]
    result = run_pytest(ROOT, ["suites", "--collect-only", "-q", "-p", "no:cacheprovider", "--kernelwatch-profile",
                               PROFILE], env={"CUDA_VISIBLE_DEVICES": ""}, fresh=True)
    assert result.returncode == 0, result.stdout + result.stderr
    collected = set(result.stdout.splitlines())
    orphaned = [case for case in cases if case not in collected]
    assert len(cases) == 86 and not orphaned, f"{len(orphaned)} cases of {BASELINE.name} not collected: {orphaned}"

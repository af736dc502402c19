"""Accuracy as a history, end to end on the fake GPU, on SQLite and on PostgreSQL (issue 47).

A suite in a git repository checks the suite's own Kahan kernel (kernels/cuda/matmul_02_naive_kahan.cu, compiled
by g++ through tests/plugins/fake_cupy.py: the kernel really computes) in two ways: through the `kernelwatch`
fixture (the plugin's reference check, then timed) and through the `kernelwatch_accuracy` fixture (a correctness
test of the suite's kind). Nightlies (`--benchmark-compare --kernelwatch-history URL`), each at a commit:

* runs 1-4 clean: every check's errors repeat bit for bit, `same` from run 2 on;
* run 5, at a commit that drops the compensation (tests/plugins/no_compensation.py): both checks read
  `less accurate`, fail, and the report gives both errors, the reference's, the ratio and the margin;
  `changes` names the step and its commits, open;
* run 6, at a commit with `Accept-Slowdown: cases=*kahan* ...`: accepted, the run passes;
* run 7: `same`, against run 6's level.
"""

from __future__ import annotations

import re
import shutil
from types import SimpleNamespace

import pytest

from kernelwatch.history.accuracy_chart import accuracy_chart
from kernelwatch.history.cli import main
from kernelwatch.storage.history import open_store
from tests.support.backends import fresh_postgres_database, sqlite_file
from tests.support.fake_suite import output, run
from tests.support.git_repos import commit, git

pytestmark = pytest.mark.slow  # fourteen runs of the plugin, each compiling the kernel with g++

SUITE = '''
import numpy as np
import pytest

from kernelwatch.metrics import relative_error

M, N, K, SEED = 16, 16, 4096, 47
TOLERANCE = (1e-5, 1e-6)


def operands():
    rng = np.random.default_rng(SEED)
    return rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)


def kahan_launch(a, b, c):
    import cupy
    from kernels import compile as compiling  # read at each call: tests.plugins.no_compensation wraps it

    kernel = cupy.RawKernel(compiling.load_source("matmul_02_naive_kahan.cu"), "matmul_naive_kahan")
    args = (a, b, c, np.int32(M), np.int32(N), np.int32(K), np.int32(K), np.int32(N), np.int32(N))
    return lambda: kernel((1, 1), (N, M), args)


@pytest.mark.kernelwatch(tolerance=TOLERANCE, kind="uniform", seed=SEED, flops=2 * M * N * K)
def test_naive_kahan(kernelwatch):
    a, b = operands()
    c = np.empty((M, N), np.float32)
    kernelwatch(kahan_launch(a, b, c), out=c, reference=lambda: a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.gpu
def test_naive_kahan_matches_float64(kernelwatch_accuracy):
    a, b = operands()
    c = np.full((M, N), np.nan, np.float32)
    kahan_launch(a, b, c)()
    errors = relative_error(c, a.astype(np.float64) @ b.astype(np.float64))
    kernelwatch_accuracy.record(errors, tolerance=TOLERANCE, shape=f"{M}x{N}x{K}", kind="uniform", seed=SEED,
                                measure="relative", kernel="naive_kahan")
    assert errors.max_error <= TOLERANCE[0] and errors.avg_error <= TOLERANCE[1], errors
'''
CHECKS = ("test_suite.py::test_naive_kahan", "test_suite.py::test_naive_kahan_matches_float64")
CLEAN, VARIANT_AT, ACCEPTED_AT, RUNS = 4, 5, 6, 7
VARIANT = ["-p", "tests.plugins.no_compensation"]
TRAILER = "Accept-Slowdown: cases=*naive_kahan* compensation dropped: 4 flops a term were too many"


def nightly(folder, url, number, *extra):
    return run(folder, "--fake-gpu-cupy", "--benchmark-compare", f"--kernelwatch-history={url}",
               f"--fake-gpu-seed={number}", *extra)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def life(request, tmp_path_factory):
    """(folder, store URL, {run: pytest result}, {run: commit}, {run: report text})."""
    folder = tmp_path_factory.mktemp(request.param) / "suite"
    folder.mkdir()
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (folder / "test_suite.py").write_text(SUITE)
    (folder / "baselines").mkdir()
    (folder / ".gitignore").write_text("baselines/\nreport.md\n*.sqlite*\n")
    git(folder, "init", "-q", "-b", "main")
    with fresh_postgres_database() if request.param == "postgresql" else sqlite_file(folder.parent) as url:
        results, commits, reports = {}, {}, {}
        for number in range(1, RUNS + 1):
            message = {VARIANT_AT: "drop the compensation of kahan_add",
                       ACCEPTED_AT: f"accept the Kahan-less sum\n\n{TRAILER}"}.get(number)
            commits[number] = commit(folder, number, message)
            results[number] = nightly(folder, url, number, *(VARIANT if number >= VARIANT_AT else ()))
            reports[number] = (folder / "report.md").read_text() if (folder / "report.md").exists() else ""
        yield folder, url, results, commits, reports


def checks(url: str) -> dict[str, list]:
    """Per check, its stored records oldest first (StoredAccuracy)."""
    with open_store(url) as store:
        return {case: list(reversed(found)) for case, found in store.accuracy_history(None, any_profile=True).items()}


def test_clean_runs_record_identical_errors_and_read_same(life):
    folder, url, results, commits, reports = life
    assert [results[n].returncode for n in range(1, CLEAN + 1)] == [0] * CLEAN, output(results[CLEAN])
    stored = checks(url)
    assert sorted(stored) == sorted(CHECKS)
    for case in CHECKS:
        pairs = {(c.record.max_error, c.record.avg_error) for c in stored[case][:CLEAN]}
        assert len(pairs) == 1, (case, pairs)  # bit for bit
        max_error, avg_error = pairs.pop()
        assert 1e-8 < max_error < 2e-7 and 0 < avg_error < max_error  # Kahan: about 6e-8 at K = 4096
        assert [c.record.verdict for c in stored[case][:CLEAN]] == ["new"] + ["same"] * (CLEAN - 1)
        assert [c.record.seed for c in stored[case]] == [47] * RUNS
        assert [c.record.tolerance_max for c in stored[case]] == [1e-5] * RUNS


def test_the_kahan_less_variant_reads_less_accurate_with_its_errors_and_margin(life):
    folder, url, results, commits, reports = life
    result = results[VARIANT_AT]
    assert result.returncode == 1, output(result)
    text = output(result)
    assert "2 failed" in text
    stored = checks(url)
    for case in CHECKS:
        before, after = stored[case][CLEAN - 1].record, stored[case][VARIANT_AT - 1].record
        assert after.verdict == "less accurate" and after.passed  # still within its tolerance
        assert after.max_error > 10 * before.max_error  # about 2.4e-6 against 6e-8
        assert after.reference_max == before.max_error and after.reference == f"history run {CLEAN}"
        assert after.window is not None and [c[0] for c in after.window["commits"]] == [commits[VARIANT_AT]]
        assert f"{case}: less accurate: max {after.max_error:.3g}" in text
    assert "kernelwatch: accuracy changes" in text
    report = reports[VARIANT_AT]
    assert "## Accuracy" in report and "accuracy: 2 less accurate" in report
    row = next(line for line in report.splitlines() if line.startswith(f"| `{CHECKS[1]}` | less accurate"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    after = stored[CHECKS[1]][VARIANT_AT - 1].record
    assert cells[2:5] == [f"{after.max_error:.3g}", f"{after.avg_error:.3g}", f"{after.reference_max:.3g}"]
    assert cells[6] == f"{after.ratio:.3g}x" and cells[7] == "1e-05" and cells[8] == f"{100 * after.margin:.1f}%"


def test_changes_names_the_accuracy_step_and_its_commits(life, capsys):
    folder, url, results, commits, reports = life
    main(["changes", "--history", url])
    out = capsys.readouterr().out
    for case in CHECKS:
        block = out[out.index(f": {case}\n"):]
        block = block[:block.index("\n\n")] if "\n\n" in block else block
        assert f"commits: {commits[CLEAN]}..{commits[VARIANT_AT]}" in block
        assert f"first run after: run {VARIANT_AT}," in block
        assert f"runs after: {VARIANT_AT} failed, {ACCEPTED_AT} accepted, {RUNS} passed" in block
        assert "acknowledged: compensation dropped" in block
    assert re.search(r"less accurate step x\d+(\.\d+)? \(max error\): " + re.escape(CHECKS[0]), out)
    assert "2 accuracy changes; 0 open less accurate steps" in out


def test_the_trailer_accepts_it_and_the_run_after_reads_same_against_the_new_level(life):
    folder, url, results, commits, reports = life
    assert results[ACCEPTED_AT].returncode == 0, output(results[ACCEPTED_AT])
    assert results[RUNS].returncode == 0, output(results[RUNS])
    stored = checks(url)
    for case in CHECKS:
        accepted, after = stored[case][ACCEPTED_AT - 1].record, stored[case][RUNS - 1].record
        assert accepted.verdict == "accepted" and "compensation dropped" in accepted.accepted_reason
        assert after.verdict == "same" and after.reference == f"history run {ACCEPTED_AT}"
        assert (after.max_error, after.avg_error) == (accepted.max_error, accepted.avg_error)


def test_the_dashboard_draws_an_accuracy_series_per_check(life, tmp_path):
    folder, url, results, commits, reports = life
    site = tmp_path / "site"
    assert main(["site", str(site), "--history", url]) == 0
    from kernelwatch.history.site import case_page_name

    page = (site / "cases" / case_page_name(CHECKS[1])).read_text()
    assert "Accuracy" in page and 'class="accuracy-chart"' in page
    states = dict(re.findall(r'class="accuracy-point [^"]*" data-run="(\d+)" data-state="([^"]+)"', page))
    assert [states[str(n)] for n in range(1, RUNS + 1)] == ["passed"] * CLEAN + ["failed", "accepted", "passed"]


def test_a_failed_checks_mark_is_a_triangle_point_up_on_a_level_base():
    """The chart's failed mark (the time chart's red triangle): its apex over the middle of a level base below it."""
    def point(run_id, state, error):
        record = SimpleNamespace(max_error=error, avg_error=error / 10, tolerance_max=1e-3, verdict=state)
        return SimpleNamespace(record=record, state=state, run_id=run_id, started_at="2026-12-06 00:00:00",
                               commit="c" * 40, accepted_reason=None)

    svg = accuracy_chart([point(1, "passed", 1e-5), point(2, "failed", 2e-3)])
    marks = re.findall(r'class="accuracy-point (?:max|avg) failed"[^>]* d="M([\d.]+),([\d.]+) L([\d.]+),([\d.]+) '
                       r'L([\d.]+),([\d.]+) Z"', svg)
    assert len(marks) == 2  # the maximum and the average error
    for apex_x, apex_y, right_x, right_y, left_x, left_y in (map(float, mark) for mark in marks):
        assert right_y == left_y > apex_y and right_x > apex_x
        assert right_x - apex_x == pytest.approx(apex_x - left_x, abs=0.11)


def test_acknowledge_accepts_an_accuracy_step_too(life, tmp_path, capsys):
    """`acknowledge CHECK RUN` on a copy of the story without the trailer's run: the step reads acknowledged."""
    folder, url, results, commits, reports = life
    if not url.startswith("sqlite"):
        pytest.skip("one backend is enough: the acknowledgement's query is the same")
    copy = tmp_path / "copy.sqlite"
    shutil.copy(url.removeprefix("sqlite:///"), copy)
    copy_url = f"sqlite:///{copy}"
    with open_store(copy_url) as store:
        for number in (ACCEPTED_AT, RUNS):
            store.remove_run(number, reason="the story without the trailer")
    assert main(["changes", "--history", copy_url]) == 1  # open: the newest check still fails
    assert "OPEN: if intended" in capsys.readouterr().out
    assert main(["acknowledge", CHECKS[1], str(VARIANT_AT), "--history", copy_url, "--reason", "meant"]) == 0
    main(["changes", "--history", copy_url])
    assert "acknowledged: meant" in capsys.readouterr().out


LIBRARY = '''"""A kernel library of one kernel (the protocol of docs/kernel-library.md): the suite's naive Kahan product."""
from collections import namedtuple
from pathlib import Path

import cupy
import numpy as np

SOURCE = Path(__file__).with_name("naive_kahan.cu")
KERNEL = cupy.RawKernel(SOURCE.read_text(), "matmul_naive_kahan")
Build = namedtuple("Build", "source function launch")


class Matmul:
    def __init__(self, a, b, c):
        self.a, self.b, self.c = a, b, c

    def run(self, stream=None):
        (m, k), n = self.a.shape, self.b.shape[1]
        KERNEL((1, 1), (n, m), (self.a, self.b, self.c, np.int32(m), np.int32(n), np.int32(k), np.int32(k),
                                np.int32(n), np.int32(n)))

    def build(self):
        return build_for("naive_kahan", "x".join(map(str, (*self.a.shape, self.b.shape[1]))))

    def same_case_in(self, library):
        return library.Matmul(self.a, self.b, self.c)


def source_of(build):
    return SOURCE.read_text(), ()


def build_for(kernel, shape):
    if kernel != "naive_kahan":
        raise ValueError(f"unknown kernel {kernel!r}")
    return Build(SOURCE.name, "matmul_naive_kahan", f"grid=(1, 1, 1) shape {shape}")


def kernel_names():
    return ["naive_kahan"]
'''
PROJECT_TEST = '''import numpy as np
import pytest
from kahanlib import Matmul

M, N, K, SEED = 16, 16, 4096, 47


@pytest.mark.kernelwatch(tolerance=(1e-5, 1e-6), kind="uniform", seed=SEED, flops=2 * M * N * K)
def test_naive_kahan(kernelwatch):
    rng = np.random.default_rng(SEED)
    a, b = rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)
    c = np.empty((M, N), np.float32)
    kernelwatch(Matmul(a, b, c), out=c, reference=lambda: a.astype(np.float64) @ b.astype(np.float64))
'''


def test_a_pull_request_that_drops_the_compensation_reads_less_accurate_against_its_base(tmp_path):
    """--kernelwatch-compare-ref: base (with compensation) and head (without) checked on the same inputs in one run."""
    from kernels.compile import load_source
    from tests.plugins.no_compensation import strip_compensation
    from tests.support.pytest_runs import run_pytest

    folder = tmp_path / "project"
    (folder / "kahanlib").mkdir(parents=True)
    (folder / "kahanlib" / "__init__.py").write_text(LIBRARY)
    kernel = folder / "kahanlib" / "naive_kahan.cu"
    kernel.write_text(load_source("matmul_02_naive_kahan.cu"))
    (folder / "test_kahan.py").write_text(PROJECT_TEST)
    (folder / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n'
                                           'kernelwatch_kernels = "kahanlib"\n')
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (folder / ".gitignore").write_text("reports/\n__pycache__/\n")
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "the Kahan product")
    kernel.write_text(strip_compensation(kernel.read_text()))
    git(folder, "commit", "-q", "-am", "drop the compensation")
    report = folder / "report.md"
    result = run_pytest(folder, ["-p", "no:cacheprovider", "--fake-gpu-cupy", "--kernelwatch-compare-ref", "HEAD~1",
                                 f"--kernelwatch-report={report}"])
    text = output(result)
    assert result.returncode == 1 and "1 failed" in text, text
    assert "less accurate than HEAD~1" in text
    section = report.read_text()[report.read_text().index("## Accuracy"):]
    assert "judged against `HEAD~1` on the same inputs in this run" in section and "accuracy: 1 less accurate" in section
    row = next(line for line in section.splitlines() if line.startswith("| `test_kahan.py::test_naive_kahan` |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "less accurate"
    head_max, base_max = float(cells[2]), float(cells[4])
    assert 1e-8 < base_max < 2e-7 and head_max > 10 * base_max  # both pairs: head's and base's
    assert cells[7] == "1e-05" and cells[8].endswith("%")
    # accepted as a slowdown is: --kernelwatch-accept-slowdown (a pull-request label, a trailer)
    accepted = run_pytest(folder, ["-p", "no:cacheprovider", "--fake-gpu-cupy", "--kernelwatch-compare-ref", "HEAD~1",
                                   f"--kernelwatch-report={report}", "--kernelwatch-accept-slowdown", "meant"])
    assert accepted.returncode == 0, output(accepted)
    assert "| `test_kahan.py::test_naive_kahan` | accepted |" in report.read_text()


def test_a_saved_baseline_keeps_the_checks_errors_beside_its_times(tmp_path):
    import json

    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (folder / "test_suite.py").write_text(SUITE)
    saved = run(folder, "--fake-gpu-cupy", "--benchmark-save=first")
    assert saved.returncode == 0, output(saved)
    (baseline,) = (folder / "baselines").glob("*/0001_first.json")
    document = json.loads(baseline.read_text())
    checks = {check["case"]: check for check in document["kernelwatch_accuracy"]}
    assert sorted(checks) == sorted(CHECKS)
    assert [b["fullname"] for b in document["benchmarks"]] == [CHECKS[0]]  # the timed one
    assert checks[CHECKS[1]]["seed"] == 47 and checks[CHECKS[1]]["tolerance_max"] == 1e-5
    assert 1e-8 < checks[CHECKS[1]]["max_error"] < 2e-7
    compared = run(folder, "--fake-gpu-cupy", "--benchmark-compare", "--fake-gpu-seed=2")
    assert compared.returncode == 0 and "1 same" in output(compared), output(compared)


def test_the_correctness_checks_alone_are_recorded_and_judged_without_timing(tmp_path):
    """As maintainers/device/plugin_on_gpu.sh's accuracy part runs the suites: no --benchmark-compare, no timed case."""
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (folder / "test_suite.py").write_text(SUITE)
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    only = ["--fake-gpu-cupy", f"--kernelwatch-history={url}", "-k", "matches_float64"]
    for _ in range(2):
        clean = run(folder, *only)
        assert clean.returncode == 0, output(clean)
    assert "accuracy: 1 same; report: " in output(clean)
    variant = run(folder, *only, *VARIANT)
    assert variant.returncode == 1 and "accuracy: 1 less accurate; report: " in output(variant), output(variant)
    report = (folder / "report.md").read_text()
    assert "## Accuracy" in report and f"| `{CHECKS[1]}` | less accurate |" in report
    with open_store(url) as store:
        assert [run.case_count for run in store.runs()] == [0, 0, 0]  # runs of checks only

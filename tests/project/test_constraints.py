"""Every environment of tox.ini installs exact, recorded versions (issue 11, finding 8).

requirements/constraints-cuda13.txt pins unit, lint and the -cuda13 environments,
requirements/constraints-cuda12.txt the -cuda12 ones; requirements/lock.py regenerates both.
"""

import configparser
import os
import re
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK_OF_GROUP = {"cuda13": "constraints-cuda13.txt", "cuda12": "constraints-cuda12.txt"}
# the factors of the environments each file serves
FACTORS_OF_GROUP = {
    "cuda13": [{"unit"}, {"lint"}, {"bench", "cuda13"}],
    "cuda12": [{"bench", "cuda12"}],
}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(filename: str) -> dict[str, str]:
    """{package: version} of a constraints file (lines of name==version, comments ignored)."""
    found = {}
    for line in (ROOT / "requirements" / filename).read_text().splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()
        if line:
            name, version = line.split("==")
            found[normalized(name)] = version
    return found


def tox_ini() -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "tox.ini")
    return config


def dep_lines(config, section: str) -> list[str]:
    lines = []
    for line in config[section]["deps"].splitlines():
        line = line.strip()
        if reference := re.fullmatch(r"\{\[(.+)\]deps\}", line):
            lines += dep_lines(config, reference.group(1))
        elif line and not line.startswith("#"):
            lines.append(line)
    return lines


def applies(condition: str, factors: set[str]) -> bool:
    """tox's factor condition: alternatives separated by commas, `!` negates."""
    return any((factor[1:] not in factors) if factor.startswith("!") else (factor in factors)
               for factor in condition.split(","))


def required_names(group: str) -> set[str]:
    config = tox_ini()
    names = set()
    for factors in FACTORS_OF_GROUP[group]:
        section = "testenv:unit" if "unit" in factors else "testenv:lint" if "lint" in factors else "testenv"
        for line in dep_lines(config, section):
            condition, _, requirement = line.rpartition(": ") if re.match(r"^!?[\w,!]+: ", line) else ("", "", line)
            if condition and not applies(condition, factors):
                continue
            if requirement.startswith("-"):
                continue
            names.add(normalized(re.match(r"[A-Za-z0-9._-]+", requirement).group(0)))
    return names


@pytest.mark.parametrize("group", sorted(LOCK_OF_GROUP))
def test_every_package_tox_asks_for_is_pinned_exactly(group):
    pinned = pins(LOCK_OF_GROUP[group])
    required = required_names(group)
    assert {"pytest", "pytest-benchmark", "numpy"} <= required
    assert required <= set(pinned), required - set(pinned)


@pytest.mark.parametrize("group", sorted(LOCK_OF_GROUP))
def test_the_lock_holds_the_tested_pytest_and_pytest_benchmark(group):
    pinned = pins(LOCK_OF_GROUP[group])
    # the suite uses pytest-benchmark 5.2 internals; a new minor is a deliberate, tested upgrade
    assert pinned["pytest-benchmark"].startswith("5.2.")
    assert pinned["pytest"].startswith("9.1.")
    assert "tox" in pinned  # .ci/run and the workflows install tox from the same file


def test_every_tox_environment_installs_through_a_constraints_file():
    config = tox_ini()
    testenv = dep_lines(config, "testenv")
    assert "cuda12: -c {toxinidir}/requirements/constraints-cuda12.txt" in testenv
    assert "!cuda12: -c {toxinidir}/requirements/constraints-cuda13.txt" in testenv
    assert "-c {toxinidir}/requirements/constraints-cuda13.txt" in dep_lines(config, "testenv:lint")
    for section in config.sections():
        if section.startswith("testenv:") and "deps" in config[section]:
            assert any("-c {toxinidir}/requirements/constraints-" in line for line in dep_lines(config, section)), section


def test_gpu_environments_get_cupti_matched_to_their_cuda():
    cuda13, cuda12 = pins(LOCK_OF_GROUP["cuda13"]), pins(LOCK_OF_GROUP["cuda12"])
    assert cuda13["cupti-python"] == "13.0.1" and cuda13["nvidia-cuda-cupti"].startswith("13.0.")
    assert cuda12["cupti-python"].startswith("12.") and cuda12["nvidia-cuda-cupti-cu12"].startswith("12.8.")
    assert {"cuda-pathfinder", "pyelftools"} <= set(cuda13) & set(cuda12)


@pytest.mark.skipif("TOX_ENV_NAME" not in os.environ, reason="checks tox's environment; run through tox -e unit")
def test_this_tox_environment_has_exactly_the_locked_versions():
    group = "cuda12" if "cuda12" in os.environ["TOX_ENV_NAME"] else "cuda13"
    pinned = pins(LOCK_OF_GROUP[group])
    installed = {normalized(d.metadata["Name"]): d.version for d in metadata.distributions()}
    checked = {name: installed[name] for name in pinned if name in installed and name not in ("pip", "setuptools")}
    assert {"pytest", "pytest-benchmark", "numpy", "cupy-cuda13x"} & set(checked)
    assert checked == {name: pinned[name] for name in checked}


def tox_requirements(factors: set[str]) -> set[str]:
    """The requirements (with their ranges) tox.ini gives an environment of these factors, unpinned."""
    found = set()
    for line in dep_lines(tox_ini(), "testenv"):
        condition, _, requirement = line.rpartition(": ") if re.match(r"^!?[\w,!]+: ", line) else ("", "", line)
        if (not condition or applies(condition, factors)) and not requirement.startswith("-"):
            found.add(requirement.replace(" ", ""))
    return found


@pytest.mark.parametrize("extra", ["cuda13", "cuda12"])
def test_pyproject_asks_for_what_tox_asks_for_with_the_same_ranges(extra):
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {r.replace(" ", "") for r in project["dependencies"] + project["optional-dependencies"][extra]}
    declared |= {r.replace(" ", "") for r in project["optional-dependencies"]["postgresql"]}
    assert declared == tox_requirements({"bench", extra})
    assert project["scripts"] == {"kernelwatch": "kernelwatch.cli:main"}

"""One sentence, not a traceback, when a script runs outside the environment it needs.

``needs(script, "matplotlib", ...)`` imports each module and, where one is missing, prints which
and how to get it (the tox environment that has it, or pip) and exits with NO_ENVIRONMENT.
``needs_gpu(script)`` does the same where CuPy cannot use a CUDA device, with the reason
kernelwatch.timing.gpu.cuda_available gives (no driver, a driver too old, no device visible, ...).
"""

from __future__ import annotations

import argparse
import importlib
import sys

NO_ENVIRONMENT = 3  # exit status of a script run where what it needs is missing (2 is a usage error)

# the pip name of an import name, where the two differ
PIP_NAMES = {"elftools": "pyelftools", "pynvml": "nvidia-ml-py", "cupy": "cupy-cuda13x (or cupy-cuda12x)",
             "pytest_benchmark": "pytest-benchmark"}


def missing_modules(*modules: str) -> list[str]:
    """The import names among ``modules`` that cannot be imported here."""
    missing = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


def needs(script: str, *modules: str, tox_env: str = "unit") -> None:
    """Exit with one sentence naming what is missing when one of ``modules`` cannot be imported."""
    missing = missing_modules(*modules)
    if missing:
        packages = " ".join(PIP_NAMES.get(m, m) for m in missing)
        sys.exit(_say(f"python -m scripts.{script} needs {', '.join(missing)}: run it through "
                      f"`tox exec -e {tox_env} -- python -m scripts.{script} ...` or `pip install {packages}`"))


def needs_gpu(script: str) -> None:
    """Exit with one sentence when CuPy cannot use a CUDA device here, saying why."""
    from kernelwatch.timing.gpu import cuda_available

    available, why_not = cuda_available()
    if not available:
        sys.exit(_say(f"python -m scripts.{script} needs a CUDA GPU: {why_not} "
                      f"(on a GPU machine, run it through `tox exec -e gpu-cuda13 -- python -m scripts.{script} ...`)"))


def summary(doc: str | None) -> str:
    """A docstring's first paragraph on one line: what a script's --help says it does, never cut mid-sentence."""
    first = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())


def _say(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return NO_ENVIRONMENT


if __name__ == "__main__":  # a helper of the scripts, not one: --help says so
    argparse.ArgumentParser(prog="python -m scripts.environment", description=summary(__doc__) + " A helper that "
                            "the scripts import; it does nothing run alone.").parse_args()

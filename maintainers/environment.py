"""One sentence, not a traceback, when a maintainers' tool runs outside the environment it needs.

``needs(tool, "sqlalchemy", ...)`` imports each module and, where one is missing, prints which
and how to get it (the tox environment that has it, or pip) and exits with NO_ENVIRONMENT; ``tool``
is the tool's module (``maintainers.checks.time_store``), as ``python -m`` runs it.
``needs_gpu(tool)`` does the same where CuPy cannot use a CUDA device, with the reason
kernelwatch.timing.gpu.cuda_available gives (no driver, a driver too old, no device visible, ...).
"""

from __future__ import annotations

import argparse
import importlib
import sys

NO_ENVIRONMENT = 3  # exit status of a tool run where what it needs is missing (2 is a usage error)

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


def needs(tool: str, *modules: str, tox_env: str = "unit") -> None:
    """Exit with one sentence naming what is missing when one of ``modules`` cannot be imported."""
    missing = missing_modules(*modules)
    if missing:
        packages = " ".join(PIP_NAMES.get(m, m) for m in missing)
        sys.exit(_say(f"python -m {tool} needs {', '.join(missing)}: run it through "
                      f"`tox exec -e {tox_env} -- python -m {tool} ...` or `pip install {packages}`"))


def needs_gpu(tool: str) -> None:
    """Exit with one sentence when CuPy cannot use a CUDA device here, saying why."""
    from kernelwatch.timing.gpu import cuda_available

    available, why_not = cuda_available()
    if not available:
        sys.exit(_say(f"python -m {tool} needs a CUDA GPU: {why_not} "
                      f"(on a GPU machine, run it through `tox exec -e gpu-cuda13 -- python -m {tool} ...`)"))


def summary(doc: str | None) -> str:
    """A docstring's first paragraph on one line: what a tool's --help says it does, never cut mid-sentence."""
    first = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())


def _say(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return NO_ENVIRONMENT


if __name__ == "__main__":  # a helper of the tools, not one: --help says so
    argparse.ArgumentParser(prog="python -m maintainers.environment", description=summary(__doc__) + " A helper that "
                            "the tools import; it does nothing run alone.").parse_args()

"""The kernel suite's pytest set-up. The plugin (kernelwatch, installed: its pytest11 entry point loads it)
does the work: its options (--kernelwatch-*), fixtures (kernelwatch_*), verdicts and reports.
pyproject.toml's [tool.pytest.ini_options] names this repository's kernel library (kernelwatch_kernels).
"""

"""One-off measurements behind figures in notes/ and docs/method.md; maintainers/README.md says what each measured.

Run from the repository root as ``python -m maintainers.experiments.NAME`` (most need a GPU and the tox GPU environment).
"""

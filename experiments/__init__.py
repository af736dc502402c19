"""One-off measurements behind figures in NOTES.md and docs/method.md; experiments/README.md says what each measured.

Run from the repository root as ``python -m experiments.NAME`` (most need a GPU and the tox GPU environment).
"""

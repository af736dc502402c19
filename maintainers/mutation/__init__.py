"""Mutation testing of src/kernelwatch/ and kernels/ (tox -e mutation; docs/ci.md, "Mutation testing"): cosmic-ray's
config from pyproject.toml (config), the mutants inside annotations skipped (filter), which test runs which line
(coverage_map) and the replay of mutants on a machine cosmic-ray is not on (replay)."""

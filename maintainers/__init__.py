"""The maintainers' tools of this repository: nothing here is kernelwatch (src/kernelwatch/), whose
user commands are the `kernelwatch` console script's (src/kernelwatch/cli.py).

  checks/       GPU method checks and timings of the suite (Nsight Compute, cause cards, energy,
                overlap under xdist, compute-sanitizer, the nightly's wall time, the store's costs,
                the warptile tuning)
  device/       the runs on a lent GPU machine, step by step, and the tables they end with
  mutation/     mutation testing: cosmic-ray's config, the annotation filter, the coverage map, the replay
  experiments/  one-off measurements behind figures of notes/ and docs/method.md
  support/      what the tools share with tests/ (tests import it from here; nothing imports tests/)

Each Python tool runs from the repository root as ``python -m maintainers.<folder>.<name>`` and each shell
script as ``bash maintainers/<folder>/<name>.sh``; ``--help`` says how (maintainers/README.md lists them).
A Python tool parses its arguments before importing what it needs, so ``--help`` and a usage error
(exit 2) work anywhere; run outside the environment it needs, it says which in one sentence and
exits 3 (maintainers/environment.py).
"""

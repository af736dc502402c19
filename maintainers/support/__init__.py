"""What the maintainers' tools share with tests/: the tools import it from here, and so do the tests, so that
nothing imports tests/ (tests/maintainers/test_tools.py checks it).

  cause_variants     eight broken variants of the suite's own kernels, each with the cause a card must blame
  energy_variant     a test-only add whose energy rises while its time does not (busy_add.cu)
  spin_kernel        the one-thread spin kernel appended after a case to slow it down
  synthetic_history  synthetic stored runs for the history store's tests and timings
  h200_histories     synthetic case histories with the run-to-run noise the H200 shows

It imports kernelwatch and this repository's kernels/, never tests/; nothing of kernelwatch imports it.
"""

"""What a user runs, each as ``python -m scripts.NAME`` from the repository root (``--help`` says how).

summarize, check_overlap, ncu_check, cause_check, energy_check, tune_warptile, nightly_time, time_changes (what
`changes` and `site` cost), time_store (what recording and the reference query cost), the mutation
tools (mutation_config, mutation_coverage, mutation_replay), and the shell scripts run_gpu_suites.sh,
history_gpu_runs.sh and sanitize.sh. One-off
measurements live in experiments/. Every script parses its arguments before importing what it
needs, so ``--help`` and a usage error (exit 2) work anywhere; run outside the environment it
needs, a script says which in one sentence and exits 3 (scripts/environment.py).
"""

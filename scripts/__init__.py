"""What a user runs, each as ``python -m scripts.NAME`` from the repository root (``--help`` says how).

plot_baselines, summarize, check_overlap, ncu_check, tune_warptile, history_bench and
history_benchmark, and the shell scripts run_gpu_suites.sh and sanitize.sh. One-off
measurements live in experiments/. Every script parses its arguments before importing what it
needs, so ``--help`` and a usage error (exit 2) work anywhere; run outside the environment it
needs, a script says which in one sentence and exits 3 (scripts/environment.py).
"""

"""The runs on a lent GPU machine (run_gpu_suites.sh, history_gpu_runs.sh) and the tables they end with
(summarize)."""

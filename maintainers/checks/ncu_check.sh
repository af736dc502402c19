#!/usr/bin/env bash
# Compares the suite's timer (CUPTI spans and held events) with Nsight Compute on a GPU machine
# (see python -m maintainers.checks.ncu_check --help). Clocks are left alone (--clock-control none); caches are flushed per
# kernel, as the suite does. Only the launches between cudaProfilerStart/Stop are profiled
# (--profile-from-start off): marker kernels and the cases' own launches, 5 of each case.
# Usage: bash maintainers/checks/ncu_check.sh [substring of case names]
set -eu
case "${1:-}" in
  -h|--help) echo "usage: bash maintainers/checks/ncu_check.sh [SUBSTRING]   (only the cases whose name holds SUBSTRING; writes \$OUT/ncu-ours.json and \$OUT/ncu.csv, OUT=out by default)"; exit 0;;
esac
OUT=${OUT:-out}
ONLY=${1:-}
mkdir -p "$OUT"
python3 -m maintainers.checks.ncu_check time "$ONLY" > "$OUT/ncu-ours.json"
ncu --profile-from-start off --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv \
    --log-file "$OUT/ncu.csv" python3 -m maintainers.checks.ncu_check launch "$ONLY"
python3 -m maintainers.checks.ncu_check compare "$OUT/ncu-ours.json" "$OUT/ncu.csv" "$ONLY"

#!/usr/bin/env bash
# Compares the suite's timer with Nsight Compute on a GPU machine (see scripts/ncu_check.py).
# Clocks are left alone (--clock-control none); caches are flushed per kernel, as the suite does.
set -eu
OUT=${OUT:-out}
mkdir -p "$OUT"
python3 scripts/ncu_check.py time > "$OUT/ncu-ours.json"
ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv \
    --kernel-name regex:'matmul_|matrix_add|vector_add|gemm' --log-file "$OUT/ncu.csv" \
    python3 scripts/ncu_check.py launch
python3 scripts/ncu_check.py compare "$OUT/ncu-ours.json" "$OUT/ncu.csv"

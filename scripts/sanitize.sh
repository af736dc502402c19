#!/usr/bin/env bash
# Runs the correctness suite at small sizes under compute-sanitizer's memcheck,
# racecheck, initcheck and synccheck. CuPy's memory pool is switched off
# (--no-memory-pool) so that every array is its own cudaMalloc and an
# out-of-bounds access cannot land silently inside a pooled block. memcheck's
# leak check is off: arrays still referenced when Python exits are not leaks
# of a kernel.
#   scripts/sanitize.sh [tool ...]     (default: all four)
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
tools=${*:-memcheck racecheck initcheck synccheck}
# every matrix-multiply kernel on shapes that exercise all edge paths, the adds on odd sizes
select='(test_matmul_matches_float64 and uniform and (-17x17x17 or -33x65x17)) or (test_matrix_add_is_exact and 17x33) or (test_vector_add_is_exact and -17])'
status=0
for tool in $tools; do
  SECONDS=0
  extra=""
  # API errors are CuPy probing driver entry points (cuGetProcAddress), not kernel faults
  [ "$tool" = memcheck ] && extra="--report-api-errors no"
  [ "$tool" = racecheck ] && extra="--racecheck-report all"
  compute-sanitizer --tool "$tool" $extra --error-exitcode 99 \
    --log-file "$OUT/sanitize-$tool.log" \
    python3 -m pytest -p no:cacheprovider -q --no-memory-pool suites/test_matmul_correctness.py \
      suites/test_elementwise_correctness.py -k "$select" > "$OUT/sanitize-$tool.pytest" 2>&1
  rc=$?
  echo "$tool: exit $rc, $(tail -n 1 "$OUT/sanitize-$tool.pytest"), $(grep -c 'ERROR SUMMARY\|========= Error\|Hazard' "$OUT/sanitize-$tool.log") error lines, ${SECONDS}s"
  grep -m 3 'ERROR SUMMARY\|RACECHECK SUMMARY\|Error\|Hazard' "$OUT/sanitize-$tool.log"
  [ $rc -ne 0 ] && status=$rc
done
exit $status

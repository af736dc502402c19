#!/usr/bin/env bash
# Runs the correctness suite at small sizes under compute-sanitizer's memcheck,
# racecheck, initcheck and synccheck. CuPy's memory pool is switched off
# (--kernelwatch-no-memory-pool) so that every array is its own cudaMalloc and an
# out-of-bounds access cannot land silently inside a pooled block. memcheck's
# leak check is off: arrays still referenced when Python exits are not leaks
# of a kernel.
#   maintainers/checks/sanitize.sh [tool ...]     (default: all four)
# Without a usable GPU (or without compute-sanitizer) it says why in one sentence and exits 3.
set -u
tools=${*:-memcheck racecheck initcheck synccheck}
for tool in $tools; do
  case "$tool" in
    memcheck|racecheck|initcheck|synccheck) ;;
    -h|--help) echo "usage: bash maintainers/checks/sanitize.sh [memcheck|racecheck|initcheck|synccheck ...]"; exit 0;;
    *) echo "usage: bash maintainers/checks/sanitize.sh [memcheck|racecheck|initcheck|synccheck ...] (unknown tool: $tool)" >&2; exit 2;;
  esac
done
if ! why=$(python3 -c "import sys; from kernelwatch.timing.gpu import cuda_available; ok, why = cuda_available(); print(why); sys.exit(not ok)"); then
  echo "maintainers/checks/sanitize.sh needs a CUDA GPU: $why" >&2
  exit 3
fi
if ! command -v compute-sanitizer > /dev/null; then
  echo "maintainers/checks/sanitize.sh needs compute-sanitizer (the CUDA toolkit's) on PATH" >&2
  exit 3
fi
OUT=${OUT:-out}
mkdir -p "$OUT"
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
    python3 -m pytest -p no:cacheprovider -q --kernelwatch-no-memory-pool --kernelwatch-require-gpu suites/test_matmul_correctness.py \
      suites/test_elementwise_correctness.py -k "$select" > "$OUT/sanitize-$tool.pytest" 2>&1
  rc=$?
  echo "$tool: exit $rc, $(tail -n 1 "$OUT/sanitize-$tool.pytest"), $(grep -c 'ERROR SUMMARY\|========= Error\|Hazard' "$OUT/sanitize-$tool.log") error lines, ${SECONDS}s"
  grep -m 3 'ERROR SUMMARY\|RACECHECK SUMMARY\|Error\|Hazard' "$OUT/sanitize-$tool.log"
  [ $rc -ne 0 ] && status=$rc
done
exit $status

#!/usr/bin/env bash
# Runs the GPU suites on a machine with an NVIDIA GPU, step by step, and prints
# short tables at the end (errors at n=1000 and 4096, then times and rates).
# Logs, JSON and the markdown report go to $OUT (default: ./out). Uses the
# python3 that has CuPy, pytest, pytest-benchmark and nvidia-ml-py; installs nothing.
#
#   scripts/run_gpu_suites.sh STEP [STEP ...]
#     correctness      the correctness suite (errors logged for the table)
#     record LABEL     nightly timing, saved as this GPU's newest baseline (--benchmark-save)
#     compare          nightly timing with verdicts against the newest baseline
#     slowed KERNEL    KERNEL's timed launch made to run twice: its cases must be flagged
#     quick            pull-request profile with verdicts
#     xdist N          the whole suite with N workers (-n N), then the overlap check
#     sanitize         scripts/sanitize.sh (four compute-sanitizer tools)
#     ncu              scripts/ncu_check.sh (suite timer against Nsight Compute)
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PYTEST="python3 -m pytest -p no:cacheprovider --benchmark-columns=median,iqr,rounds --benchmark-sort=name"
status=0
step() {  # step NAME COMMAND...: run, keep the log, print its tail and wall time
  local name=$1; shift
  echo "=== $name: $*"
  SECONDS=0
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  grep -E "^(FAILED|ERROR)|passed|failed|error|verdicts|baseline|regression|same|OVERLAP|timed cases" "$OUT/$name.log" | tail -n 12
  echo "--- $name: exit $rc, wall ${SECONDS}s"
  [ $rc -ne 0 ] && status=$rc
  return 0
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
while [ $# -gt 0 ]; do
  case "$1" in
    correctness)
      rm -f "$OUT/errors.jsonl"
      KERNEL_SUITE_ERROR_LOG="$OUT/errors.jsonl" step correctness $PYTEST suites -m "gpu and not perf" -q -rfE;;
    record)
      shift
      step record $PYTEST suites -m perf -q -rfE --benchmark-save="$1" --benchmark-json="$OUT/perf-record.json"
      cp baselines/*/*"$1".json "$OUT/" 2>/dev/null;;
    compare)
      step compare $PYTEST suites -m perf -q -rfE --benchmark-compare --benchmark-json="$OUT/perf-compare.json" \
        --benchmark-report="$OUT/report-compare.md";;
    slowed)
      shift
      KERNEL_SUITE_REPEAT="$1:2" step slowed $PYTEST suites/test_perf_matmul.py -m perf -q -rfE \
        -k "test_matmul_time and $1" --benchmark-compare --benchmark-report="$OUT/report-slowed.md";;
    quick)
      step quick $PYTEST suites -m perf --profile quick -q -rfE --benchmark-compare \
        --benchmark-report="$OUT/report-quick.md";;
    xdist)
      shift
      step xdist $PYTEST suites -n "$1" -q -rfE --benchmark-compare --benchmark-json="$OUT/perf-xdist.json" \
        --benchmark-report="$OUT/report-xdist.md"
      step overlap python3 scripts/check_overlap.py "$OUT/perf-xdist.json";;
    sanitize) step sanitize bash scripts/sanitize.sh;;
    ncu) step ncu bash scripts/ncu_check.sh;;
    *) echo "unknown step $1"; exit 2;;
  esac
  shift
done
benches=$(for f in "$OUT"/perf-record.json "$OUT"/perf-compare.json; do [ -e "$f" ] && echo --bench "$f"; done)
python3 scripts/summarize.py --errors "$OUT/errors.jsonl" $benches > "$OUT/tables.md" 2>&1
exit $status

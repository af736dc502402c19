#!/usr/bin/env bash
# Runs the GPU suites on a machine with an NVIDIA GPU and prints short tables
# (errors at n=1000 and 4096, then times and rates). Logs and JSON go to
# $OUT (default: ./out). Uses whatever python3 has CuPy, pytest,
# pytest-benchmark and nvidia-ml-py; installs nothing.
#
#   scripts/run_gpu_suites.sh [correctness] [perf] [perf-quick] [compare] [record NAME]
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PYTEST="python3 -m pytest -p no:cacheprovider"
status=0
run() { echo "+ $*"; "$@" || status=$?; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_event_reasons.active --format=csv
python3 -c "import cupy, numpy, pytest, pytest_benchmark; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'pytest', pytest.__version__, 'pytest-benchmark', pytest_benchmark.__version__)"

while [ $# -gt 0 ]; do
  case "$1" in
    correctness)
      rm -f "$OUT/errors.jsonl"
      SECONDS=0
      KERNEL_SUITE_ERROR_LOG="$OUT/errors.jsonl" run $PYTEST suites -m "gpu and not perf" -q -rfEs \
        --junitxml="$OUT/correctness.xml" 2>&1 | tail -n 40
      echo "correctness wall time: ${SECONDS}s";;
    perf|perf-quick)
      profile=nightly; [ "$1" = perf-quick ] && profile=quick
      SECONDS=0
      run $PYTEST suites -m perf --profile "$profile" -q -rfE --benchmark-json="$OUT/perf-$profile.json" \
        --benchmark-columns=median,iqr,rounds --benchmark-sort=name 2>&1 | tail -n 30
      echo "perf ($profile) wall time: ${SECONDS}s";;
    compare)
      SECONDS=0
      run $PYTEST suites -m perf -q -rfE --benchmark-compare --benchmark-json="$OUT/perf-compare.json" \
        --benchmark-report="$OUT/report.md" --benchmark-columns=median,iqr,rounds 2>&1 | tail -n 30
      echo "compare wall time: ${SECONDS}s";;
    record)
      shift
      SECONDS=0
      run $PYTEST suites -m perf -q -rfE --benchmark-save="$1" --benchmark-json="$OUT/perf-record.json" \
        --benchmark-columns=median,iqr,rounds 2>&1 | tail -n 30
      echo "record wall time: ${SECONDS}s";;
    *) echo "unknown step $1"; exit 2;;
  esac
  shift
done
python3 scripts/summarize.py --errors "$OUT/errors.jsonl" $(for f in "$OUT"/perf-*.json; do [ -e "$f" ] && echo --bench "$f"; done)
exit $status

#!/usr/bin/env bash
# GPU runs of the history store (issue 20) and its change points (issue 21), step by step, with
# short tables at the end. Uses the device's python3; installs only the wheels of .whl/ into
# /tmp/site. Logs and run JSON go to $OUT/hist and are packed into $OUT/hist.tgz; the store
# itself stays where HISTORY says (carry it from one GPU machine to the next, as a runner's
# tool cache keeps it).
#
#   HISTORY=path/history.sqlite scripts/history_gpu_runs.sh STEP [STEP ...]
#     record N          N quick runs of the history subset, recorded (no verdicts)
#     same N            N quick runs judged (--benchmark-compare --history): unmodified code
#     slowed N PCT      N quick runs with every GPU-timed case slowed by PCT% (tests/plugins/slowdown.py)
#     table             per run and per case: what was flagged, against history and against the
#                       newest committed baseline (python -m harness.compare, offline)
#     changepoint REF   12 runs of the change-point subset over the 8 commits REF~7..REF (run 7 at
#                       REF~3), then `harness.history changes`, `bisect` and `site`
set -u
OUT=${OUT:-out}
mkdir -p "$OUT/hist"
WORK=$(cd "$OUT/hist" && pwd)
HISTORY=${HISTORY:-$PWD/.history/history.sqlite}
mkdir -p "$(dirname "$HISTORY")"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
if ! command -v nvidia-smi >/dev/null; then echo "history_gpu_runs.sh: no nvidia-smi: this needs an NVIDIA GPU"; exit 2; fi
[ $# -gt 0 ] || { sed -n '2,18p' "$0"; exit 2; }
nvidia-smi -L
PYTEST="python3 -m pytest -p no:cacheprovider -q -rfE suites -m perf --require-gpu --profile quick"
# GPU-timed cases of 50 µs and more across the kernels, and two host routines (wall clock)
SUBSET="(test_matmul_time and ((1024x1024x1024 and (warptile_128x256 or tiled32 or row_shared or cublas)) \
or (4096x4096x4096 and warptile_128x256))) or (test_add_time and 8192x8192 and (vector_add_vec4 or cupy_add)) \
or (host_routine_time and pinned and (cublas or tiled32))"
CP_CASES="test_matmul_time and ((4096x4096x4096 and warptile_128x256) or (1024x1024x1024 and (tiled32 or cublas))) \
or (test_add_time and 8192x8192 and vector_add_vec4)"
status=0
step() {  # step NAME COMMAND...: run, keep the log, print its last lines and wall time
  local name=$1; shift
  SECONDS=0
  "$@" > "$WORK/$name.log" 2>&1
  local rc=$?
  echo "--- $name: exit $rc, wall ${SECONDS}s: $(grep -E 'passed|failed' "$WORK/$name.log" | tail -n 1)"
  return 0
}
runs() {  # runs PREFIX N ARGS...: N runs of the subset, each its own process
  local prefix=$1 n=$2; shift 2
  local start; start=$(ls "$WORK"/"$prefix"-*.json 2>/dev/null | wc -l)
  for i in $(seq $((start + 1)) $((start + n))); do
    step "$prefix-$i" $PYTEST -k "$SUBSET" --history="$HISTORY" --benchmark-json="$WORK/$prefix-$i.json" "$@"
  done
}
while [ $# -gt 0 ]; do
  case "$1" in
    record) runs record "$2"; shift;;
    same) runs same "$2" --benchmark-compare; shift;;
    slowed) runs slowed "$2" --benchmark-compare -p tests.plugins.slowdown --slow-down="*:$3" \
              --slow-down-spins="$WORK/spins.json"; shift 2;;
    table) python3 -m experiments.history_verdicts "$WORK" | tee "$OUT/history.md";;
    changepoint)
      ref=$2; shift
      cp_store="$WORK/changepoint.sqlite"
      trees=$(mktemp -d)
      # runs 1-6 before the slow commit (REF~3), run 7 at it, runs 8-12 after
      for spec in 7 7 6 6 5 4 3 2 2 1 1 0; do
        sha=$(git rev-parse "$ref~$spec")
        [ -d "$trees/$sha" ] || git worktree add -q --detach "$trees/$sha" "$sha"
        n=$(( $(ls "$WORK"/cp-*.log 2>/dev/null | wc -l) + 1 ))
        (cd "$trees/$sha" && step "cp-$n" $PYTEST -k "$CP_CASES" --history="$cp_store")
        echo "    run $n at $(git log -1 --format='%h %s' "$sha")"
      done
      python3 -m harness.history runs --history "$cp_store" | head -n 14
      python3 -m harness.history changes --history "$cp_store" --newest 6 | tee "$OUT/changes.txt"
      echo "--- changes: exit ${PIPESTATUS[0]}"
      SECONDS=0
      python3 -m harness.history bisect "test_matmul_time and 4096x4096x4096 and warptile_128x256" \
        --good "$ref~7" --bad "$ref" | tee "$OUT/bisect.txt"
      echo "--- bisect: exit ${PIPESTATUS[0]}, wall ${SECONDS}s"
      cp "$cp_store" "$OUT/changepoint.sqlite"
      for t in "$trees"/*; do git worktree remove --force "$t"; done;;
    *) echo "unknown step $1"; exit 2;;
  esac
  shift
done
cp "$HISTORY" "$OUT/history.sqlite" 2>/dev/null
tar czf "$OUT/hist.tgz" -C "$WORK" . && rm -rf "$WORK"
exit $status

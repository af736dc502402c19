#!/usr/bin/env bash
# GPU runs of the history store (issue 20) and its change points (issue 21), step by step, with
# short tables at the end. Uses the device's python3; installs only the wheels of .whl/ into
# /tmp/site. Logs and run JSON go to $OUT/hist and are packed into $OUT/hist.tgz; the store
# itself stays where HISTORY says (carry it from one GPU machine to the next, as a runner's
# tool cache keeps it).
#
#   HISTORY=path/history.sqlite maintainers/device/history_gpu_runs.sh STEP [STEP ...]
#     record N          N quick runs of the history subset, recorded (no verdicts)
#     same N            N quick runs judged (--benchmark-compare --kernelwatch-history): unmodified code
#     slowed N PCT      N quick runs with every GPU-timed case slowed by PCT% (tests/plugins/slowdown.py)
#     table             per run and per case: what was flagged, against history and against the
#                       newest committed baseline (python -m kernelwatch.compare, offline)
#     life              the life of a regression through the nightly's own commands, in a scratch clone of
#                       HEAD: 4 clean nightlies (pytest suites --benchmark-compare --kernelwatch-require-gpu --kernelwatch-history),
#                       then a harmless commit, one that slows warptile_128x256 (8-deep k tiles) and
#                       another harmless one: a nightly, `changes --newest 3`, `site`, `bisect` of the
#                       slowed 4096³ case over the window (node id form) and of an unchanged case
#                       (-k form); then an Accept-Slowdown trailer commit and two nightlies, `changes`,
#                       `site`. Needs a git checkout (.gitbundle is unpacked as run_gpu_suites.sh does)
set -u
usage() { echo "usage: HISTORY=path/history.sqlite bash maintainers/device/history_gpu_runs.sh STEP [STEP ...]   (steps: record N, same N, slowed N PCT, table, life; this script's header says what each does)"; }
case "${1:-}" in
  "") usage >&2; exit 2;;
  -h|--help) usage; exit 0;;
esac
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
if ! command -v nvidia-smi >/dev/null; then echo "maintainers/device/history_gpu_runs.sh needs an NVIDIA GPU: nvidia-smi is not on this machine" >&2; exit 2; fi
. maintainers/device/git_from_bundle.sh
nvidia-smi -L
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
PYTEST="python3 -m pytest -p no:cacheprovider -q -rfE suites -m perf --kernelwatch-require-gpu --kernelwatch-profile quick"
# GPU-timed cases of 50 µs and more across the kernels, and two host routines (wall clock)
SUBSET="(test_matmul_time and ((1024x1024x1024 and (warptile_128x256 or tiled32 or row_shared or cublas)) \
or (4096x4096x4096 and warptile_128x256))) or (test_add_time and 8192x8192 and (vector_add_vec4 or cupy_add)) \
or (host_routine_time and pinned and (cublas or tiled32))"
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
    step "$prefix-$i" $PYTEST -k "$SUBSET" --kernelwatch-history="$HISTORY" --benchmark-json="$WORK/$prefix-$i.json" "$@"
  done
}
while [ $# -gt 0 ]; do
  case "$1" in
    record) runs record "$2"; shift;;
    same) runs same "$2" --benchmark-compare; shift;;
    slowed) runs slowed "$2" --benchmark-compare -p tests.plugins.slowdown --slow-down="*:$3" \
              --slow-down-spins="$WORK/spins.json"; shift 2;;
    table) python3 -m maintainers.experiments.history_verdicts "$WORK" | tee "$OUT/history.md";;
    life)
      demo=$(mktemp -d)/repo
      git clone -q . "$demo"
      store="$WORK/life.sqlite"
      g() { git -C "$demo" -c user.name=suite -c user.email=suite@example.invalid "$@"; }
      life_nightly() {  # life_nightly N: the nightly workflow's command, in the clone
        SECONDS=0
        (cd "$demo" && python3 -m pytest suites --benchmark-compare --kernelwatch-require-gpu -ra -p no:cacheprovider -q \
          --kernelwatch-history="$store" --kernelwatch-profile nightly --benchmark-json="$WORK/life-$1.json" \
          --kernelwatch-report="$WORK/life-$1.md") > "$WORK/life-$1.log" 2>&1
        local rc=$?
        echo "--- nightly $1 at $(g log -1 --format='%h %<(40,trunc)%s'): exit $rc, wall ${SECONDS}s: $(grep -hE '^(Summary|[0-9]+ (passed|failed))' "$WORK/life-$1.md" "$WORK/life-$1.log" 2>/dev/null | tail -n 2 | tr '\n' ' ')"
        grep -E "^(suites/.*: (slower|accepted)|  commits |  bisect: |  accepted: )" "$WORK/life-$1.log" | head -n 12
      }
      life_tools() {  # life_tools NAME: changes and site, as the workflow's next steps
        (cd "$demo" && python3 -m kernelwatch.history changes --newest 3 --history "$store") > "$OUT/changes-$1.txt" 2>&1
        echo "--- changes ($1): exit $?"; tail -n 14 "$OUT/changes-$1.txt"
        (cd "$demo" && python3 -m kernelwatch.history site "$WORK/site-$1" --history "$store") > /dev/null 2>&1
        echo "--- site ($1): exit $?, $(ls "$WORK/site-$1/cases" | wc -l) case pages"
      }
      good=$(g rev-parse HEAD)
      for n in 1 2 3 4; do life_nightly $n; done
      echo "a line of notes" >> "$demo/notes/README.md" && g commit -q -am "notes: a harmless line"
      sed -i 's/                 rm=2, rn=4, bk=16),/                 rm=2, rn=4, bk=8),/' "$demo/kernels/registry.py"
      g diff --quiet -- kernels/registry.py && { echo "life: the slowing edit did not apply"; exit 2; }
      g commit -q -am "warptile_128x256: 8-deep k tiles (fewer registers, smaller shared memory)"
      slow=$(g rev-parse HEAD)
      sed -i '1i // a comment only: the machine code is the same' "$demo/kernels/cuda/matmul_04_tiled.cu"
      g commit -q -am "tiled: a comment"
      bad=$(g rev-parse HEAD)
      life_nightly 5
      life_tools failing
      case="suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-warptile_128x256]"
      SECONDS=0
      (cd "$demo" && python3 -m kernelwatch.history bisect "$case" "${good:0:12}..${bad:0:12}") > "$OUT/bisect-slowed.txt" 2>&1
      echo "--- bisect of the slowed case: exit $?, wall ${SECONDS}s (the slowing commit: ${slow:0:12})"
      cat "$OUT/bisect-slowed.txt"
      SECONDS=0
      (cd "$demo" && python3 -m kernelwatch.history bisect -k "test_matmul_time and 4096x4096x4096 and tiled32" \
        "${good:0:12}..${bad:0:12}") > "$OUT/bisect-unchanged.txt" 2>&1
      echo "--- bisect of an unchanged case: exit $?, wall ${SECONDS}s"; cat "$OUT/bisect-unchanged.txt"
      g commit -q --allow-empty -m "Accept the 8-deep k tiles of warptile_128x256" \
        -m "Accept-Slowdown: 8-deep k tiles for warptile_128x256, measured 3% slower at 4096³, kept for its smaller footprint"
      life_nightly 6
      life_nightly 7
      life_tools accepted
      python3 -m kernelwatch.history runs --history "$store" | head -n 9
      tar czf "$OUT/life-site.tgz" -C "$WORK" site-failing site-accepted life-5.md life-6.md life-7.md
      cp "$store" "$OUT/life.sqlite";;
    *) echo "unknown step $1"; exit 2;;
  esac
  shift
done
cp "$HISTORY" "$OUT/history.sqlite" 2>/dev/null
tar czf "$OUT/hist.tgz" -C "$WORK" . && rm -rf "$WORK"
exit $status

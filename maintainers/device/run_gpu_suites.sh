#!/usr/bin/env bash
# Runs the GPU suites on a machine with an NVIDIA GPU, step by step, and prints
# short tables at the end. Uses the python3 that has CuPy, pytest,
# pytest-benchmark and nvidia-ml-py; installs nothing, except the wheels in
# .whl/ (cupti-python and its needs) into /tmp/site when that folder exists.
# Logs and JSON go to $OUT/work and are packed into $OUT/run.tgz at the end;
# new baseline files and the tables stay beside it (the device tool brings
# back at most 8 files).
#
#   bash maintainers/device/run_gpu_suites.sh STEP [STEP ...]      (from the repository root)
#     correctness        the correctness suite (errors kept in JUnit XML for the table)
#     record LABEL       nightly timing, saved as this GPU's newest baseline (--benchmark-save)
#     compare[:NAME]     nightly timing with verdicts against the newest baseline (NAME: log name)
#     quick[:NAME]       pull-request profile with verdicts
#     sensitivity N PCT  N quick runs as they are, then N with every GPU-timed case slowed by PCT%
#                        (tests/plugins/slowdown.py; each run starts its search at the spins the runs
#                        before it found); the host routines (wall clock) are left out.
#                        `env CASES=EXPR` narrows this step and scratch-baseline to the GPU-timed
#                        cases that also match -k EXPR, and
#                        `env SENSITIVITY_PROFILE=nightly` times its runs as the nightly does
#     scratch-baseline PROFILE N
#                        N runs (PROFILE: quick or nightly) of the GPU-timed cases saved in a scratch
#                        storage, which the steps after it compare against: the newest is their baseline,
#                        all N are the noise model's history (N >= 3 gives it a spread between processes)
#                        and, being runs of the same code on this GPU, pooled into each case's reference
#     baseline-errors    corrupt, missing and concurrent baseline files on a scratch copy
#     ab N               --kernelwatch-compare-ref HEAD: the clean tree (all unchanged), a comment-only change, N runs
#                        of a real ~3% slowdown (warptile_128x256 with 8-deep k tiles instead of 16, the
#                        tuning table's 3.5%), N runs of HEAD against itself timing every case
#                        (--kernelwatch-compare-ref-all); needs a git checkout (a .gitbundle is unpacked if given)
#     xdist N            the whole suite with N workers (-n N), then the overlap check
#     spread N NAME PROFILE EXPR
#                        N runs (PROFILE: quick or nightly) of the GPU cases matching -k EXPR, each a fresh
#                        process; prints how far their medians move between processes (maintainers/experiments/spread_table.py)
#     nightly-time NAME  the nightly as the workflow runs it (pytest suites/ --benchmark-compare), timed by
#                        maintainers/checks/nightly_time.py: its wall time per test family ($OUT/NAME-families.md);
#                        `env CUPY_CACHE_DIR=/tmp/fresh` before it makes the first such run a cold one
#     session-profile    cProfile of a one-case nightly: where the run's own start-up and report go
#     mutation FILE      replays the mutants in FILE (python -m maintainers.mutation.replay export) against the CPU
#                        tests of src/kernelwatch/timing/ and metrics.py, then, for those they leave alive, the GPU
#                        tests of the harness (suites/test_harness_on_gpu.py, test_verdict_gpu.py, the
#                        elementwise correctness suite); `env MUTATION_WORKERS=N` (default 12) copies side by side.
#                        A test that fails here unmutated is left out, and named
#     mutation-mapped FILE  replays the mutants in FILE against the CPU tests of tests/ that ran each one's
#                        statement here (python -m maintainers.mutation.coverage_map: the map is built first, the
#                        tests failing unmutated left out of it); a copy of TMPDIR per worker. Needs coverage.py
#                        (carried in .whl) and, for the tests of --kernelwatch-compare-ref, .gitbundle
#     cards              the cause cards: maintainers/checks/cause_check.py over the eight broken variants (full cards to
#                        $OUT/cause.json, the table to $OUT/cause.md), then a pull request that gives
#                        warptile_128x256 8-deep k tiles, against HEAD with --kernelwatch-diagnose ($OUT/pr-diagnose.md)
#     pr-same REF        the pull-request profile against REF (tox -e pr's command): its verdicts
#     energy             the nightly as the workflow runs it (with its energy cases) into a fresh store, the
#                        energy cases again in a second process against it, maintainers/checks/energy_check.py measure
#                        (every case's joules per launch, NVML's three readings, the variant's A/Bs: a third
#                        process) and `energy_check agree` over the three ($OUT/energy.md, energy.json, traces)
#     energy-ab          the nightly's energy cases timed against HEAD (--kernelwatch-compare-ref-all, --kernelwatch-energy):
#                        base and head measured in interleaved periods, their energy blocks and verdicts written to
#                        JSON ($OUT/energy-ab.json) and the report's energy section ($OUT/energy-ab.md)
#     energy-all         the nightly's timed cases, every one measured for energy (--kernelwatch-energy=all): how long
#                        that takes ($OUT/energy-all.txt, with the report's energy table)
#     phases N           the pinned host routines as the nightly times them, into a fresh store, the tree at a
#                        scratch commit: N runs (its history), three clean runs judged against it, one with the
#                        matrix product inside every routine 10% slower (tests/plugins/host_kernel_slowdown.py),
#                        then a commit whose Accept-Slowdown trailer names the routines and the slowed run twice
#                        more (accepted, then same); each run's phase verdicts, the slowed report's slower cases
#                        and cards, and `changes` over the store ($OUT/phases.md); the checkout is put back
#     nightlies N        N nightlies as the workflow runs them (pytest suites --benchmark-compare --kernelwatch-require-gpu -ra
#                        --kernelwatch-history=STORE --kernelwatch-profile nightly) into a fresh store, then `changes` over it
#                        ($OUT/nightlies.md: the last report's summary and energy table, and `changes`)
#     nightly-card       the nightly's cause card: the tree committed (a scratch commit in this checkout), three
#                        nightlies of warptile_128x256 into a fresh store, then a commit giving it 8-deep k tiles
#                        (the tuning table's 3.5%) and the nightly again: its slower cases and their cards
#                        ($OUT/nightly-card.md); the checkout is put back at the end
#     env VAR=VALUE      export VAR for the steps after this one
#     sanitize           maintainers/checks/sanitize.sh (four compute-sanitizer tools)
#     ncu                maintainers/checks/ncu_check.sh (CUPTI and event timers against Nsight Compute)
set -u
usage() { echo "usage: bash maintainers/device/run_gpu_suites.sh STEP [STEP ...]   (steps: correctness, record LABEL, compare[:NAME], quick[:NAME], sensitivity N PCT, scratch-baseline PROFILE N, baseline-errors, ab N, cards, nightlies N, nightly-card, pr-same REF, energy, energy-ab, energy-all, phases N, xdist N, spread N NAME PROFILE EXPR, nightly-time NAME, session-profile, mutation FILE, mutation-mapped FILE, env VAR=VALUE, sanitize, ncu; the header of this file says what each does)"; }
case "${1:-}" in
  "") usage >&2; exit 2;;
  -h|--help) usage; exit 0;;
esac
if ! command -v nvidia-smi > /dev/null; then
  echo "maintainers/device/run_gpu_suites.sh needs an NVIDIA GPU: nvidia-smi is not on this machine (no NVIDIA driver)" >&2
  exit 3
fi
OUT=${OUT:-out}
WORK="$OUT/work"
mkdir -p "$WORK"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
PYTEST="python3 -m pytest -p no:cacheprovider -q -rfE --benchmark-columns=median,iqr,rounds --benchmark-sort=name"
PERF="$PYTEST suites -m perf --kernelwatch-require-gpu"
GPU_TIMED="test_matmul_time or test_add_time or streams_time"  # the GPU-timed cases (no host routines)
STORE=()  # --benchmark-storage of the steps that compare; scratch-baseline sets it
selected_cases() {  # the -k expression of sensitivity and scratch-baseline: GPU-timed, narrowed by $CASES
  echo "($GPU_TIMED) and (${CASES:-$GPU_TIMED})"
}
status=0
benches=()
step() {  # step NAME COMMAND...: run, keep the log, print its tail and wall time
  local name=$1; shift
  echo "=== $name: $*"
  SECONDS=0
  "$@" > "$WORK/$name.log" 2>&1
  local rc=$?
  grep -E "^(FAILED|ERROR)|passed|failed|error|same|regressed|baseline|saved|timer:|OVERLAP|timed cases" \
    "$WORK/$name.log" | tail -n 8
  echo "--- $name: exit $rc, wall ${SECONDS}s"
  [ $rc -ne 0 ] && status=$rc
  return 0
}
scratch_commit() {  # scratch_commit MESSAGE: the tree as it is, committed in this checkout (a step resets it after)
  git add -u && git add src kernels suites tests maintainers docs && \
    git -c user.name=suite -c user.email=suite@example.invalid -c core.hooksPath=/dev/null commit -q --allow-empty -m "$1"
}
expect_exit() {  # expect_exit CODE NAME COMMAND...: a step that must fail with CODE
  local code=$1 name=$2; shift 2
  "$@" > "$WORK/$name.log" 2>&1
  local rc=$?
  echo "--- $name: exit $rc (expected $code): $(grep -m1 -E 'ERROR|error' "$WORK/$name.log" | cut -c1-200)"
  [ $rc -ne "$code" ] && status=1
  return 0
}

# the tests that judge mutants of src/kernelwatch/timing/ and metrics.py (step mutation)
TIMING_CPU_TESTS="tests/timing/test_gpu.py tests/timing/test_cuda_available.py tests/timing/test_rules.py
  tests/timing/test_spans.py tests/plugin/test_timed_case.py tests/timing/test_timer.py tests/timing/test_ceilings.py
  tests/kernels/test_registry.py tests/ab/test_identity.py tests/verdict/test_against_baseline.py tests/verdict/test_record.py
  tests/storage/test_schema.py tests/test_units.py tests/verdict/test_paired.py tests/verdict/test_stats.py tests/verdict/test_noise.py
  tests/ab/test_against_ref.py tests/storage/test_runs.py tests/kernels/test_streams_plan.py tests/test_metrics.py
  tests/kernels/test_tolerances.py tests/kernels/test_checks.py"
HARNESS_GPU_TESTS="suites/test_harness_on_gpu.py suites/test_verdict_gpu.py suites/test_elementwise_correctness.py"
replay() {  # replay NAME FILE CPU_TESTS GPU_TESTS [OPTION]: maintainers.mutation.replay over FILE, CPU then GPU tests
  local name=$1 file=$2 cpu=$3 gpu=$4 option=${5:-}
  failing() {  # the node ids of the tests that fail unmutated; their messages to the log and the screen
    python3 -m pytest "$@" -q -p no:cacheprovider -p no:randomly -rfE >> "$WORK/$name-unmutated.log" 2>&1
    grep -E "^(FAILED|ERROR) " "$WORK/$name-unmutated.log" | cut -c1-300 >&2
    awk '/^(FAILED|ERROR) / {print $2}' "$WORK/$name-unmutated.log"; : > "$WORK/$name-unmutated.log"
  }
  local left_out deselect cmd
  left_out="$(failing $cpu) $([ -n "$gpu" ] && failing $gpu --kernelwatch-require-gpu)"
  echo "=== $name: tests failing here unmutated, left out: $(echo $left_out)"
  deselect=$(for t in $left_out; do printf -- '--deselect %s ' "$t"; done)
  cmd="python3 -m pytest $(echo $cpu) $deselect -x -q -p no:cacheprovider -p no:randomly"
  [ -n "$gpu" ] && cmd="$cmd && python3 -m pytest $gpu $deselect -x -q -p no:cacheprovider --kernelwatch-require-gpu"
  step "$name" python3 -m maintainers.mutation.replay run "$file" --workers "${MUTATION_WORKERS:-12}" \
    --timeout 300 --test-command "$cmd" -o "$OUT/$name-results.jsonl" $option
  sed -n '/^| module/,$p' "$WORK/$name.log"
}
mapped_replay() {  # mapped_replay NAME FILE: the map of which tests run which lines, then FILE's mutants by it
  local name=$1 file=$2 workers=${MUTATION_WORKERS:-12}
  # the carried wheels (coverage.py among them) into site-packages, not --target alone: the tests'
  # subprocesses set a PYTHONPATH of their own, and there the .pth that starts coverage must find it
  # (without this script's PYTHONPATH, where pip would find them installed already and skip them)
  env -u PYTHONPATH python3 -m pip install -q --no-index --no-deps --no-compile .whl/*.whl
  local map=${MUTATION_MAP:-}  # env MUTATION_MAP=FILE: a map built before on a machine like this one, not a new one
  if [ -z "$map" ]; then
    map="$OUT/$name-map.json"
    step "$name-map" python3 -m maintainers.mutation.coverage_map -o "$map" -- tests -q -p no:cacheprovider -p no:randomly \
      -n "$workers"
  fi
  step "$name" python3 -m maintainers.mutation.replay run "$file" --tests-by-line "$map" \
    --workers "$workers" --timeout "${MUTATION_TIMEOUT:-300}" --private-tmp -o "$OUT/$name-results.jsonl" \
    --test-command "python3 -m pytest {tests} -x -q -p no:cacheprovider -p no:randomly"
  sed -n '/^| module/,$p' "$WORK/$name.log"
}

. maintainers/device/git_from_bundle.sh
nvidia-smi -L
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
hostname
while [ $# -gt 0 ]; do
  case "$1" in
    correctness)
      step correctness $PYTEST suites -m "gpu and not perf" --kernelwatch-require-gpu --junitxml="$WORK/correctness.xml";;
    record)
      shift
      step record $PERF --benchmark-save="$1" --benchmark-json="$WORK/record.json"
      benches+=("$WORK/record.json")
      cp baselines/*/*_"$1".json "$OUT/" 2>/dev/null;;
    compare|compare:*|quick|quick:*)
      kind=${1%%:*} name=${1#*:}
      profile=nightly; [ "$kind" = quick ] && profile=quick
      step "$name" $PERF --kernelwatch-profile $profile --benchmark-compare --benchmark-json="$WORK/$name.json" \
        --kernelwatch-report="$WORK/$name.md"
      benches+=("$WORK/$name.json");;
    sensitivity)
      runs=$2 pct=$3; shift 2
      for i in $(seq 1 "$runs"); do
        step "same-$i" $PERF --kernelwatch-profile "${SENSITIVITY_PROFILE:-quick}" -k "$(selected_cases)" "${STORE[@]}" --benchmark-compare \
          --benchmark-json="$WORK/same-$i.json" --kernelwatch-report="$WORK/same-$i.md"
      done
      for i in $(seq 1 "$runs"); do
        step "slowed-$i" $PERF --kernelwatch-profile "${SENSITIVITY_PROFILE:-quick}" -k "$(selected_cases)" "${STORE[@]}" --benchmark-compare \
          -p tests.plugins.slowdown --slow-down="*:$pct" --slow-down-spins="$WORK/spins.json" \
          --benchmark-json="$WORK/slowed-$i.json" --kernelwatch-report="$WORK/slowed-$i.md"
      done
      python3 -m maintainers.experiments.sensitivity_table "$WORK" --min-us 50 > "$OUT/sensitivity.md" 2>&1
      cat "$OUT/sensitivity.md";;
    scratch-baseline)
      profile=$2 runs=$3; shift 2
      scratch=$(mktemp -d)
      STORE=("--benchmark-storage=file://$scratch/baselines")
      for i in $(seq 1 "$runs"); do
        step "scratch-baseline-$i" $PERF --kernelwatch-profile "$profile" -k "$(selected_cases)" "${STORE[@]}" \
          --benchmark-save="scratch-$i" --benchmark-json="$WORK/scratch-baseline-$i.json"
      done;;
    baseline-errors)
      scratch=$(mktemp -d)
      cp -r baselines "$scratch/"
      slug=$(python3 -c "from kernelwatch.timing.gpu import gpu_info; print(gpu_info().slug)")
      newest=$(ls "$scratch/baselines/$slug"/[0-9]*.json | sort -V | tail -n 1)
      one=(-k "test_add_time and 8192x8192-vector_add_vec4")
      store="--benchmark-storage=file://$scratch/baselines"
      expect_exit 4 missing-named $PERF "${one[@]}" "$store" --benchmark-compare=9999
      cp "$newest" "$scratch/keep.json"
      head -c 300 "$scratch/keep.json" > "$newest"
      expect_exit 4 truncated-newest $PERF "${one[@]}" "$store" --benchmark-compare
      cp "$scratch/keep.json" "$newest"
      ( $PERF "${one[@]}" "$store" --benchmark-save=concurrent > "$WORK/save-a.log" 2>&1 & \
        $PERF "${one[@]}" "$store" --benchmark-save=concurrent > "$WORK/save-b.log" 2>&1; wait )
      echo "--- concurrent saves: $(ls "$scratch"/baselines/*/ | grep -c concurrent) files: $(ls "$scratch"/baselines/*/ | tr '\n' ' ')"
      step compare-scratch $PERF "${one[@]}" "$store" --benchmark-compare;;
    ab)
      runs=$2; shift
      AB="$PYTEST suites -m perf --kernelwatch-profile quick --kernelwatch-require-gpu --kernelwatch-compare-ref HEAD"
      step ab-clean $AB -k "$GPU_TIMED" --kernelwatch-report="$WORK/ab-clean.md"
      # the two edits below are made on committed files only, and undone whatever happens
      if ! git diff --quiet -- kernels/cuda/matmul_08_warptile.cu kernels/registry.py; then
        echo "ab: kernels/registry.py or matmul_08_warptile.cu has uncommitted changes; not touching them"; exit 2
      fi
      trap 'git checkout -q -- kernels/cuda/matmul_08_warptile.cu kernels/registry.py' EXIT
      sed -i '1i // a comment-only change' kernels/cuda/matmul_08_warptile.cu
      step ab-comment $AB -k "$GPU_TIMED" --kernelwatch-report="$WORK/ab-comment.md"
      git checkout -q -- kernels/cuda/matmul_08_warptile.cu
      sed -i 's/rm=2, rn=4, bk=16),/rm=2, rn=4, bk=8),/' kernels/registry.py
      if git diff --quiet -- kernels/registry.py; then
        echo "ab: the slowed configuration was not applied (kernels/registry.py changed?)"; exit 2
      fi
      git diff --stat
      for i in $(seq 1 "$runs"); do
        step "ab-slow-$i" $AB -k "$GPU_TIMED" --kernelwatch-report="$WORK/ab-slow-$i.md"
      done
      git checkout -q -- kernels/registry.py
      for i in $(seq 1 "$runs"); do
        step "ab-all-$i" $AB -k "$GPU_TIMED" --kernelwatch-compare-ref-all --kernelwatch-report="$WORK/ab-all-$i.md"
      done
      python3 -m maintainers.experiments.ab_table "$WORK" > "$OUT/ab.md" 2>&1; cat "$OUT/ab.md";;
    cards)
      step cause-check python3 -m maintainers.checks.cause_check --json "$OUT/cause.json"
      sed -n '/^| variant/,$p' "$WORK/cause-check.log" | tee "$OUT/cause.md"
      if ! git diff --quiet -- kernels/registry.py; then echo "cards: kernels/registry.py has uncommitted changes"; exit 2; fi
      trap 'git checkout -q -- kernels/registry.py' EXIT
      sed -i 's/rm=2, rn=4, bk=16),/rm=2, rn=4, bk=8),/' kernels/registry.py
      step pr-diagnose env KERNELWATCH_PULL_REQUEST=1 $PERF --kernelwatch-profile quick --kernelwatch-compare-ref HEAD --kernelwatch-diagnose \
        -k "test_matmul_time and warptile_128x256" --kernelwatch-report="$OUT/pr-diagnose.md"
      git checkout -q -- kernels/registry.py;;
    energy)
      store="sqlite:///$WORK/energy-history.sqlite"
      cases="test_matmul_time and 4096x4096x4096 and (cublas or warptile_128x256) or test_add_time and matrix_add_2d_vec4"
      step energy-nightly timeout 150 $PYTEST suites --benchmark-compare --kernelwatch-require-gpu -ra --kernelwatch-history="$store" \
        --kernelwatch-profile nightly --benchmark-json="$WORK/energy-nightly.json" --kernelwatch-report="$WORK/energy-nightly.md"
      grep -A12 "energy per launch" "$WORK/energy-nightly.log"
      step energy-second timeout 90 $PERF --kernelwatch-profile nightly --benchmark-compare --kernelwatch-history="$store" -k "$cases" \
        --benchmark-json="$WORK/energy-second.json" --kernelwatch-report="$WORK/energy-second.md"
      grep -A6 "energy per launch" "$WORK/energy-second.log"
      step energy-check timeout 300 python3 -m maintainers.checks.energy_check measure --json "$OUT/energy.json" \
        --traces "$WORK/energy-traces" --ab 10
      python3 -m maintainers.checks.energy_check agree "$WORK/energy-nightly.json" "$WORK/energy-second.json" "$OUT/energy.json" \
        > "$WORK/energy-agree.log" 2>&1
      { sed -n '/^| case | time/,$p' "$WORK/energy-check.log"; echo; cat "$WORK/energy-agree.log"; echo;
        sed -n '/^## Energy/,$p' "$WORK/energy-second.md"; } | tee "$OUT/energy.md"
      tar czf "$OUT/energy-traces.tgz" -C "$WORK" energy-traces;;
    nightlies)
      if ! [[ "${2:-}" =~ ^[1-9][0-9]*$ ]]; then
        echo "nightlies N: N is the number of nightlies, a whole number of 1 or more, not '${2:-}'" >&2
        exit 2
      fi
      store="sqlite:///$WORK/nightlies-history.sqlite"
      for i in $(seq 1 "$2"); do
        step "nightly-$i" timeout 150 $PYTEST suites --benchmark-compare --kernelwatch-require-gpu -ra --kernelwatch-history="$store" \
          --kernelwatch-profile nightly --benchmark-json="$WORK/nightly-$i.json" --kernelwatch-report="$WORK/nightly-$i.md"
        grep -A6 "energy per launch" "$WORK/nightly-$i.log"
      done
      python3 -m kernelwatch.history changes --history="$store" > "$WORK/nightlies-changes.txt" 2>&1
      echo "--- nightlies changes: exit $?"; head -30 "$WORK/nightlies-changes.txt"
      { grep -m1 "^Summary" "$WORK/nightly-$2.md"; sed -n '/^## Energy/,$p' "$WORK/nightly-$2.md";
        echo; echo "## changes"; cat "$WORK/nightlies-changes.txt"; } > "$OUT/nightlies.md"
      shift;;
    nightly-card)
      store="sqlite:///$WORK/card-history.sqlite"
      warptile="test_matmul_time and warptile_128x256"
      started_at=$(git rev-parse HEAD)
      scratch_commit "nightly-card: the tree as it is"
      for i in 1 2 3; do
        step "card-history-$i" $PERF --kernelwatch-profile nightly -k "$warptile" --kernelwatch-energy=none --benchmark-compare --kernelwatch-history="$store"
      done
      sed -i 's/rm=2, rn=4, bk=16),/rm=2, rn=4, bk=8),/' kernels/registry.py
      scratch_commit "nightly-card: warptile_128x256 with 8-deep k tiles"
      step card-slower $PERF --kernelwatch-profile nightly -k "$warptile" --kernelwatch-energy=none --benchmark-compare --kernelwatch-history="$store" \
        --kernelwatch-report="$OUT/nightly-card.md"
      sed -i 's/rm=2, rn=4, bk=8),/rm=2, rn=4, bk=16),/' kernels/registry.py && git reset -q --mixed "$started_at"
      sed -n '/^## Slower cases/,$p' "$OUT/nightly-card.md" | head -60;;
    phases)
      if ! [[ "${2:-}" =~ ^[1-9][0-9]*$ ]]; then
        echo "phases N: N is the number of runs that make the history, a whole number of 1 or more, not '${2:-}'" >&2
        exit 2
      fi
      store="sqlite:///$WORK/phases-history.sqlite"
      routines="test_matmul_host_routine_time and pinned"
      started_at=$(git rev-parse HEAD)
      scratch_commit "phases: the tree as it is"
      for i in $(seq 1 "$2"); do
        step "phases-history-$i" $PERF --kernelwatch-profile nightly -k "$routines" --benchmark-compare --kernelwatch-history="$store"
      done
      # three clean runs; a slowed one (fails, with its window); a commit whose trailer accepts the routines, and
      # the slowed run again (accepted); once more (the accepted run is the new level: same)
      for name in clean-1 clean-2 clean-3 slowed accepted after; do
        extra=(); [[ "$name" =~ ^(slowed|accepted|after)$ ]] && \
          extra=(-p tests.plugins.host_kernel_slowdown --slow-host-kernel='*pinned*:10')
        [ "$name" = accepted ] && scratch_commit "phases: the matrix product inside the pinned routines 10% slower

Accept-Slowdown: cases=*pinned* the phases step's meant 10% slower kernel"
        step "phases-$name" $PERF --kernelwatch-profile nightly -k "$routines" --benchmark-compare --kernelwatch-history="$store" \
          --benchmark-json="$WORK/phases-$name.json" --kernelwatch-report="$WORK/phases-$name.md" "${extra[@]}"
      done
      git reset -q --mixed "$started_at"
      python3 -m kernelwatch.history changes --history="$store" > "$WORK/phases-changes.txt" 2>&1
      echo "--- phases changes: exit $?"; head -40 "$WORK/phases-changes.txt"
      python3 - "$WORK"/phases-{clean-1,clean-2,clean-3,slowed,accepted,after}.json <<'PY' | tee "$OUT/phases.md"
import json, sys
print("| run | routine | end to end | " + " | ".join(f"{p} (x, detectable)" for p in ("HtoD", "kernel", "DtoH", "host")) + " |")
print("|---|---|---|---|---|---|---|")
for path in sys.argv[1:]:
    for b in json.load(open(path))["benchmarks"]:
        info = b["extra_info"]
        verdicts = {v["phase"]: v for v in info.get("phase_verdicts") or []}
        cells = [f"{verdicts[p]['label']} x{verdicts[p]['ratio'] or 0:.3f} ({(verdicts[p]['detectable'] or 0) * 100:.1f}%)"
                 if p in verdicts else "-" for p in ("HtoD", "kernel", "DtoH", "host")]
        name = path.rsplit("phases-", 1)[-1].removesuffix(".json")
        print(f"| {name} | {b['param']} | {info.get('verdict')} x{info.get('ratio') or 0:.3f} | " + " | ".join(cells) + " |")
PY
      sed -n '/^## Slower cases/,$p' "$WORK/phases-slowed.md" >> "$OUT/phases.md"
      { echo; echo "## changes"; cat "$WORK/phases-changes.txt"; } >> "$OUT/phases.md"
      shift;;
    energy-ab)
      cases="test_matmul_time and 4096x4096x4096 and (cublas or warptile_128x256) or test_add_time and matrix_add_2d_vec4"
      step energy-ab timeout 300 env KERNELWATCH_PULL_REQUEST=1 $PERF --kernelwatch-profile quick --kernelwatch-compare-ref HEAD \
        --kernelwatch-compare-ref-all --kernelwatch-energy -k "$cases" --benchmark-json="$OUT/energy-ab.json" \
        --kernelwatch-report="$OUT/energy-ab.md"
      python3 - "$OUT/energy-ab.json" <<'PY'
import json, sys
print("| case | J per launch | 95% interval | energy verdict |")
print("|---|---|---|---|")
for bench in json.load(open(sys.argv[1]))["benchmarks"]:
    info = bench.get("extra_info") or {}
    energy, verdict = info.get("energy") or {}, info.get("energy_verdict") or {}
    print(f"| {bench['name']} | {energy.get('joules_per_launch', '-')} | {energy.get('joules_per_launch_low', '-')}"
          f" to {energy.get('joules_per_launch_high', '-')} | {verdict.get('reason', '-')} |")
PY
      ;;
    energy-all)
      step energy-all timeout 500 $PERF --kernelwatch-profile nightly --kernelwatch-energy=all --benchmark-json="$WORK/energy-all.json" \
        --kernelwatch-report="$WORK/energy-all.md"
      grep -E "^energy of|passed|failed" "$WORK/energy-all.log" | tee "$OUT/energy-all.txt"
      sed -n '/^## Energy/,$p' "$WORK/energy-all.md" >> "$OUT/energy-all.txt";;
    pr-same)
      step pr-same env KERNELWATCH_PULL_REQUEST=1 $PERF --kernelwatch-profile quick --kernelwatch-compare-ref "$2" \
        --kernelwatch-report="$WORK/pr-same.md"
      grep -m1 "^Summary" "$WORK/pr-same.md"; shift;;
    xdist)
      shift
      step xdist $PYTEST suites -n "$1" --kernelwatch-require-gpu --benchmark-compare --benchmark-json="$WORK/xdist.json" \
        --kernelwatch-report="$WORK/xdist.md"
      step overlap python3 -m maintainers.checks.check_overlap "$WORK/xdist.json";;
    spread)
      runs=$2 name=$3 profile=$4 expr=$5; shift 4
      for i in $(seq 1 "$runs"); do
        step "$name-$i" $PERF --kernelwatch-profile "$profile" -k "$expr" --benchmark-json="$WORK/$name-$i.json"
      done
      python3 -m maintainers.experiments.spread_table "$WORK" "$name" | tee -a "$OUT/spread.md";;
    nightly-time)
      name=$2; shift
      step "$name" python3 -m maintainers.checks.nightly_time --slowest 4 -- -q -p no:cacheprovider -rfE \
        --benchmark-json="$WORK/$name.json" --kernelwatch-report="$WORK/$name.md"
      sed -n '/^| family/,$p' "$WORK/$name.log" > "$OUT/$name-families.md"
      grep -m1 "^Summary" "$WORK/$name.md"; sed -n '/^| family/,/wall/p' "$WORK/$name.log"
      benches+=("$WORK/$name.json");;
    session-profile)
      python3 -m cProfile -o "$WORK/session.prof" -m pytest suites -q -p no:cacheprovider --kernelwatch-require-gpu \
        --benchmark-compare -k "test_add_time and 8192x8192-vector_add_vec4" > "$WORK/session-profile.log" 2>&1
      python3 -c "import pstats,sys; pstats.Stats(sys.argv[1]).sort_stats('cumulative').print_stats(28)" \
        "$WORK/session.prof" | grep -E "^ +[0-9]" | cut -c1-150 | tee "$OUT/session-profile.txt";;
    mutation)
      replay mutation "$2" "$TIMING_CPU_TESTS" "$HARNESS_GPU_TESTS"; shift;;
    mutation-mapped)
      mapped_replay mutation-mapped "$2"; shift;;
    env)
      shift
      export "${1?env needs VAR=VALUE}"; echo "=== env: $1";;
    sanitize) OUT="$WORK" step sanitize bash maintainers/checks/sanitize.sh;;
    ncu) OUT="$WORK" step ncu timeout 300 bash maintainers/checks/ncu_check.sh;;
    *) echo "unknown step $1" >&2; usage >&2; exit 2;;
  esac
  shift
done
errors=(); [ -e "$WORK/correctness.xml" ] && errors=(--errors "$WORK/correctness.xml")
if [ ${#errors[@]} -gt 0 ] || [ ${#benches[@]} -gt 0 ]; then  # steps with no tables of their own: no tables.md
  python3 -m maintainers.device.summarize "${errors[@]}" $(for b in "${benches[@]}"; do echo --bench "$b"; done) \
    > "$OUT/tables.md" 2>&1
fi
tar czf "$OUT/run.tgz" -C "$WORK" . && rm -rf "$WORK"
exit $status

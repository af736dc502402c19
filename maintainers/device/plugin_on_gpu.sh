#!/usr/bin/env bash
# kernelwatch on a lent GPU machine, as its users meet it: the installed wheel, this repository's suite through
# the nightly's command, the examples in a fresh virtual environment outside the repository, and the cause card
# of a real slowdown through `kernelwatch compare`. Prints one table at the end; logs, JSON and a recorded
# baseline go to $OUT (the device tool brings back at most 8 files: the logs are packed into $OUT/plugin.tgz).
#
#   bash maintainers/device/plugin_on_gpu.sh PART [PART ...]      (from the repository root)
#     suite      the nightly as the workflow runs it (pytest suites --benchmark-compare --kernelwatch-require-gpu
#                --kernelwatch-history=STORE), then, where this GPU model has no baseline, one recorded the README's
#                way (pytest suites -m perf --benchmark-save=LABEL, LABEL: <model>-<commit>), then the nightly
#                three more times against it and this GPU's own history, then `kernelwatch changes` on the store
#     examples   examples/cupy, triton and torch, each copied outside the repository as a git repository of its
#                own and run in a fresh virtual environment (the machine's torch, triton and cupy, kernelwatch
#                from .whl): a baseline saved, three runs judged; then examples/cupy's kernel reads 1/11 of a
#                vector more (3% more bytes, a real change to its source), committed: judged slower, named by
#                `kernelwatch changes`, then accepted by an Accept-Slowdown commit; the library kernels that
#                CUPTI counted for the torch and triton callables
#     record N   N more baseline runs of this GPU model, recorded the README's way (LABEL: <model>-<commit>): runs of
#                the same code give the noise model a spread between processes (one run has none)
#     nightlies N  N nightlies as the workflow runs them against the baselines, into a fresh store (their JUnit XML
#                and JSON in the logs, for `python -m maintainers.checks.nightly_time` and the spread between runs)
#     card       warptile_128x256 with 8-deep k tiles (the tuning table's 3.5%), committed, timed, and
#                `kernelwatch compare` of this GPU's newest baseline against that run: the cause card
#     accuracy   in a scratch clone: the correctness suites (matmul, elementwise, host routines; $ACCURACY_K narrows
#                them with -k) twice with --kernelwatch-history, then per check whether its (max, avg) error pair
#                repeated bit for bit ($OUT/accuracy-repeat.txt); then kahan_add's compensation removed from
#                kernels/cuda/common.cuh (tests/plugins/no_compensation.py), committed, and the Kahan kernels' checks
#                run a third time: naive_kahan and row_shared should read `less accurate` ($OUT/accuracy.md)
#
# Needs: .whl/ with the kernelwatch wheel (python3 -m pip wheel --no-deps . -w .whl) and the dependencies the
# machine lacks, and .gitbundle (git bundle create .gitbundle main) for the commits.
set -u
usage() { echo "usage: bash maintainers/device/plugin_on_gpu.sh PART [PART ...]   (parts: suite, examples, record N, nightlies N, card, accuracy; the header of this file says what each does)"; }
case "${1:-}" in
  "") usage >&2; exit 2;;
  -h|--help) usage; exit 0;;
esac
if ! command -v nvidia-smi > /dev/null; then
  echo "maintainers/device/plugin_on_gpu.sh needs an NVIDIA GPU: nvidia-smi is not on this machine" >&2
  exit 3
fi
nvidia-smi -L
OUT=${OUT:-out}
mkdir -p "$OUT/work"
OUT=$(cd "$OUT" && pwd) WORK=$(cd "$OUT/work" && pwd)  # absolute: the examples run in folders of their own
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
REPO=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site || exit 3
. maintainers/device/git_from_bundle.sh
GIT=(git -c user.name=kernelwatch -c user.email=kernelwatch@example.invalid -c core.hooksPath=/dev/null)
PYTEST=(python3 -m pytest -p no:cacheprovider -q -rfE)
rows=()
row() { rows+=("$(printf '| %s | %s | %s | %s |' "$1" "$2" "$3" "$4")"); }
verdicts() {  # the terminal summary's verdict counts ("1 slower, 3 same; report: ...") of a log, without the report
  grep -E "; report: " "$1" | tail -n 1 | sed -E 's/; report: .*//'
}
run_step() {  # run_step NAME COMMAND...: the log in $WORK/NAME.log; sets rc and secs
  local name=$1; shift
  SECONDS=0
  "$@" > "$WORK/$name.log" 2>&1
  rc=$? secs=$SECONDS
  echo "=== $name: exit $rc in ${secs}s: $(verdicts "$WORK/$name.log") $(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$WORK/$name.log" | tail -n 1)"
}

slug_of_this_gpu() {  # the GPU's baseline folder, named as the plugin names it (kernelwatch.timing.gpu.gpu_slug)
  python3 -c "import pynvml as n; from kernelwatch.timing.gpu import gpu_slug; n.nvmlInit()
print(gpu_slug(n.nvmlDeviceGetName(n.nvmlDeviceGetHandleByIndex(0))))"
}

label_of() {  # label_of SLUG: a baseline's label, <model>-<commit> (NVIDIA_H100_80GB_HBM3 at 3f6b67b: h100-3f6b67b)
  echo "$(echo "$1" | sed -E 's/^NVIDIA_//; s/_.*//' | tr 'A-Z' 'a-z')-$(git rev-parse --short HEAD)"
}

suite() {
  local store="sqlite:///$WORK/suite-history.sqlite"
  local slug; slug=$(slug_of_this_gpu)
  local nightly=("${PYTEST[@]}" suites --benchmark-compare --kernelwatch-require-gpu -ra --kernelwatch-history="$store"
                 --kernelwatch-profile nightly)
  run_step nightly-1 "${nightly[@]}" --benchmark-json="$WORK/nightly-1.json" --kernelwatch-report="$WORK/nightly-1.md"
  row "suite" "nightly 1 (the workflow's command)" "exit $rc, ${secs} s" "$(verdicts "$WORK/nightly-1.log")"
  if ! ls baselines/"$slug"/*.json > /dev/null 2>&1; then
    record 1  # no baseline of this GPU model: one, the README's way
  fi
  for i in 2 3 4; do
    run_step "nightly-$i" "${nightly[@]}" --benchmark-json="$WORK/nightly-$i.json" --kernelwatch-report="$WORK/nightly-$i.md"
    row "suite" "nightly $i" "exit $rc, ${secs} s" "$(verdicts "$WORK/nightly-$i.log"); $(grep -m1 '^References' "$WORK/nightly-$i.md")"
  done
  python3 -m kernelwatch.history changes --history "$store" > "$WORK/suite-changes.txt" 2>&1
  row "suite" "kernelwatch changes" "exit $?" "$(tail -n 1 "$WORK/suite-changes.txt")"
}

examples() {
  # a fresh venv of its own, kernelwatch and its dependencies installed in it from .whl; the machine's python3
  # (itself a venv) lends it torch, triton and cupy through a .pth file, after the venv's own packages
  local machine; machine=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -rf /tmp/kw-venv /tmp/projects
  python3 -m venv --without-pip /tmp/kw-venv \
    && echo "$machine" > "$(/tmp/kw-venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/machine.pth" \
    && env -u PYTHONPATH python3 -m pip --python /tmp/kw-venv/bin/python install -q --no-index --no-deps --no-compile .whl/*.whl \
    || { row examples "fresh venv" "failed" ""; return; }
  local py=(env -u PYTHONPATH /tmp/kw-venv/bin/python)
  for example in ${EXAMPLES:-cupy triton torch}; do  # env EXAMPLES=cupy: that one alone
    local project="/tmp/projects/$example" store="sqlite:////tmp/projects/$example.sqlite"
    mkdir -p /tmp/projects && cp -r "examples/$example" "$project" && cd "$project" || return
    "${GIT[@]}" init -q -b main && "${GIT[@]}" add -A && "${GIT[@]}" commit -qm "the example"
    local judged=(-m pytest -p no:cacheprovider -q -ra --benchmark-compare --kernelwatch-history="$store")
    run_step "$example-1" "${py[@]}" "${judged[@]}" --benchmark-save=first
    local seen="1: $(verdicts "$WORK/$example-1.log")"
    for i in 2 3 4; do
      "${GIT[@]}" commit -q --allow-empty -m "run $i"
      run_step "$example-$i" "${py[@]}" "${judged[@]}" --benchmark-json="$WORK/$example-$i.json"
      seen+="; $i: $(verdicts "$WORK/$example-$i.log")"
    done
    row "example $example" "saved, then 3 runs judged" "exit $rc" "$seen"
    if [ "$example" != cupy ]; then
      row "example $example" "kernels CUPTI counted" "" "$("${py[@]}" -c "import json,sys; b=json.load(open(sys.argv[1]))['benchmarks'][0]['extra_info']; print(b.get('launched_kernels'), b.get('timer'))" "$WORK/$example-4.json" | cut -c1-220)"
    else
      # 3% more bytes from memory: the first eleventh of the threads also reads x half a vector away (long out
      # of L2 by then: 1/11 of one vector, 1/33 of the three moved) and adds 0 times it, which the compiler keeps
      # (0 * NaN is NaN): the result is unchanged, the kernel about 3% slower. (A first try, one thread in 88
      # reading x[(i + n/2) % n], read scattered sectors and paid two modulos: 20.6% slower on GPU-81d72889.)
      python3 - <<'PY'
from pathlib import Path
source = Path("saxpy/saxpy.cu")
line = "out[i] = a * x[i] + y[i];"
assert line in source.read_text(), "the example's kernel line moved: update this step"
source.write_text(source.read_text().replace(line, "out[i] = a * x[i] + y[i] + (i < n / 11 ? 0.0f * x[i + n / 2] : 0.0f);"))
PY
      "${GIT[@]}" commit -qam "saxpy: the first eleventh of the threads reads one more element"
      run_step cupy-slower "${py[@]}" "${judged[@]}"
      row "example cupy" "slower source, committed" "exit $rc" "$(verdicts "$WORK/cupy-slower.log"): $(grep -m1 -oE 'performance regression: [^(]*\([0-9.]+x\)' "$WORK/cupy-slower.log")"
      "${py[@]}" -m kernelwatch.history changes --history "$store" > "$WORK/cupy-changes.txt" 2>&1
      row "example cupy" "kernelwatch changes" "exit $?" "$(grep -m1 -i 'slower' "$WORK/cupy-changes.txt" | cut -c1-160)"
      "${GIT[@]}" commit -q --allow-empty -m "saxpy: the extra read is meant" -m "Accept-Slowdown: cases=*test_saxpy* the extra read is meant"
      run_step cupy-accepted "${py[@]}" "${judged[@]}"
      row "example cupy" "Accept-Slowdown commit" "exit $rc" "$(verdicts "$WORK/cupy-accepted.log")"
    fi
    cd "$REPO" || return
  done
}

record() {  # record N
  local slug label; slug=$(slug_of_this_gpu) label=$(label_of "$slug")
  for i in $(seq 1 "$1"); do
    run_step "record-$i" "${PYTEST[@]}" suites -m perf --benchmark-save="$label" --kernelwatch-require-gpu
    row "record" "baseline run $i ($label)" "exit $rc, ${secs} s" "$(ls baselines/"$slug"/ | tr '\n' ' ')"
  done
  cp baselines/"$slug"/*_"$label".json "$OUT/" 2>/dev/null
}

nightlies() {  # nightlies N
  local store="sqlite:///$WORK/nightlies-history.sqlite"
  for i in $(seq 1 "$1"); do
    run_step "again-$i" "${PYTEST[@]}" suites --benchmark-compare --kernelwatch-require-gpu -ra \
      --kernelwatch-history="$store" --kernelwatch-profile nightly --kernelwatch-report="$WORK/again-$i.md" \
      --junitxml="$WORK/again-$i.xml" --benchmark-json="$WORK/again-$i.json"
    row "nightlies" "nightly $i against the baselines" "exit $rc, ${secs} s" \
      "$(verdicts "$WORK/again-$i.log"); $(grep -m1 '^References' "$WORK/again-$i.md"); $(grep -E '^FAILED' "$WORK/again-$i.log" | cut -c8-90 | tr '\n' ' ')"
  done
}

card() {
  local slug; slug=$(slug_of_this_gpu)
  local baseline; baseline=$(ls baselines/"$slug"/*.json 2>/dev/null | tail -n 1)
  [ -n "$baseline" ] || { row card "no baseline for $slug" "" ""; return; }
  local started_at; started_at=$(git rev-parse HEAD)
  sed -i 's/rm=2, rn=4, bk=16),/rm=2, rn=4, bk=8),/' kernels/registry.py
  "${GIT[@]}" commit -qam "card: warptile_128x256 with 8-deep k tiles"
  run_step card-run "${PYTEST[@]}" suites -m perf -k "test_matmul_time and warptile_128x256" --kernelwatch-require-gpu \
    --benchmark-json="$WORK/card-run.json"
  python3 -m kernelwatch.compare "$baseline" "$WORK/card-run.json" --allow-partial --report "$OUT/card.md" \
    > "$WORK/card-compare.txt" 2>&1
  row card "kernelwatch compare $(basename "$baseline") card-run.json" "exit $?" \
    "$(grep -m1 -E '^1\. ' "$OUT/card.md" | cut -c1-160)"
  git reset -q --hard "$started_at"
}

accuracy() {
  local clone="$WORK/accuracy-clone" store="sqlite:///$WORK/accuracy.sqlite" narrow=()
  [ -n "${ACCURACY_K:-}" ] && narrow=(-k "$ACCURACY_K")
  rm -rf "$clone" && git clone -q "$REPO" "$clone" || { row accuracy "git clone" "failed" ""; return; }
  local suites=(suites/test_matmul_correctness.py suites/test_elementwise_correctness.py suites/test_host_routines.py)
  for n in 1 2; do
    # not in a subshell: run_step sets rc and secs for the row (a part run alone has them set nowhere else)
    cd "$clone" && run_step "accuracy-clean-$n" "${PYTEST[@]}" "${suites[@]}" "${narrow[@]}" --kernelwatch-require-gpu \
      --kernelwatch-history="$store" --kernelwatch-report="$WORK/accuracy-clean-$n.md"; cd "$REPO" || return
    row accuracy "clean run $n (correctness suites)" "exit $rc in ${secs}s" \
      "$(grep -m1 -E '^accuracy: ' "$WORK/accuracy-clean-$n.log" || grep -E 'passed|failed' "$WORK/accuracy-clean-$n.log" | tail -n 1)"
  done
  python3 - "$store" > "$OUT/accuracy-repeat.txt" <<'PY'
import sys
from kernelwatch.storage.history import open_store
with open_store(sys.argv[1], create=False) as store:
    history = store.accuracy_history(None, any_profile=True)
same = differ = 0
for case, checks in sorted(history.items()):
    pairs = [(c.record.max_error, c.record.avg_error) for c in reversed(checks)][:2]
    repeated = len(pairs) == 2 and pairs[0] == pairs[1]
    same += repeated
    differ += not repeated
    print(f"{'bit for bit' if repeated else 'DIFFERS    '} {case}: " + " then ".join(
        f"max {m!r} avg {a!r}" for m, a in pairs))
print(f"{same} checks repeated their error pair bit for bit, {differ} did not")
PY
  row accuracy "error pairs of the two clean runs" "$(tail -n 1 "$OUT/accuracy-repeat.txt")" \
    "$(grep -m3 '^DIFFERS' "$OUT/accuracy-repeat.txt" | cut -c1-200 | tr '\n' ' ')"
  (cd "$clone" && python3 -m tests.plugins.no_compensation kernels/cuda/common.cuh \
    && "${GIT[@]}" commit -qam "kahan_add without its compensation (accuracy part of plugin_on_gpu.sh)") \
    || { row accuracy "Kahan-less commit" "failed" ""; return; }
  cd "$clone" && run_step accuracy-kahan-less "${PYTEST[@]}" suites/test_matmul_correctness.py \
    -k "test_matmul_matches_float64 and (naive_kahan or row_shared)${ACCURACY_K:+ and ($ACCURACY_K)}" \
    --kernelwatch-require-gpu --kernelwatch-history="$store" --kernelwatch-report="$OUT/accuracy.md"; cd "$REPO" || return
  row accuracy "Kahan-less naive_kahan and row_shared" "exit $rc in ${secs}s (1 expected)" \
    "$(grep -m1 -E '^accuracy: ' "$WORK/accuracy-kahan-less.log"); e.g. $(grep -m1 -E ': less accurate: ' "$WORK/accuracy-kahan-less.log" | cut -c1-200)"
  (cd "$clone" && python3 -m kernelwatch.history changes --history "$store" > "$WORK/accuracy-changes.txt" 2>&1)
  row accuracy "kernelwatch changes" "exit $? (1: open less accurate steps)" "$(tail -n 1 "$WORK/accuracy-changes.txt")"
}

while [ $# -gt 0 ]; do
  case "$1" in
    suite|examples|card|accuracy) "$1";;
    record|nightlies)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "$1 N: N is a whole number of 1 or more, not '${2:-}'" >&2; exit 2; }
      "$1" "$2"; shift;;
    *) echo "unknown part '$1'"; usage >&2; exit 2;;
  esac
  shift
done
tar -czf "$OUT/plugin.tgz" -C "$OUT" work
echo
echo "| part | step | result | verdicts and figures |"
echo "| --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"

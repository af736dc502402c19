#!/usr/bin/env bash
# kernelwatch adopted as another project adopts it, on a CPU: the wheel built from this checkout, installed with
# its dependencies into a fresh virtual environment outside the repository, and examples/cupy copied to a folder
# of its own as a git repository. It prints what the issue of the installable plugin asks to see: the wheel's
# contents, the plugin's options in `pytest --help`, `import kernels` failing, the project collected, skipped
# without a GPU and refused with --benchmark-compare (exit 4); then, on the test-only fake GPU (tests/plugins,
# copied beside the project, not this checkout on sys.path), new, same, same, same, a 3% slowdown `slower` with
# its commit window, `kernelwatch changes` naming it, and an Accept-Slowdown commit accepting it: on SQLite, and
# on PostgreSQL where $KERNELWATCH_TEST_POSTGRES names a server (eval "$(.ci/postgres.sh start)").
#
#   bash maintainers/checks/adoption.sh [FOLDER]     (from the repository root; FOLDER: where to work, default a new temporary one)
set -u
usage() { echo "usage: bash maintainers/checks/adoption.sh [FOLDER]   (from the repository root; the header says what it shows)"; }
case "${1:-}" in -h|--help) usage; exit 0;; esac
REPO=$PWD
WORK=${1:-$(mktemp -d /tmp/kernelwatch-adoption.XXXXXX)}
case "$WORK" in "$REPO"*) echo "FOLDER must lie outside the repository" >&2; exit 2;; esac
# a folder of an earlier run would keep its venv, where pip takes the older wheel of the same version as installed
if [ -n "$(ls -A "$WORK" 2>/dev/null)" ]; then echo "FOLDER $WORK is not empty: name a new or empty one" >&2; exit 2; fi
mkdir -p "$WORK" && cd "$WORK" || exit 2
status=0
check() {  # check WHAT EXPECTED-EXIT COMMAND...: run, print the exit and the lines that matter
  local what=$1 expected=$2; shift 2
  "$@" > out.log 2>&1
  local rc=$?
  printf '%-58s exit %s (expected %s)\n' "$what" "$rc" "$expected"
  [ "$rc" = "$expected" ] || { status=1; tail -n 20 out.log; }
}
python3 -m pip wheel -q --no-deps "$REPO" -w wheel || exit 1
echo "== the wheel: $(ls wheel)"
python3 -m zipfile -l wheel/kernelwatch-*.whl | awk 'NR > 1 {print $1}' | cut -d/ -f1 | sort | uniq -c
python3 -m venv venv && venv/bin/python -m pip install -q -c "$REPO/requirements/constraints-cuda13.txt" \
  "$(ls wheel/kernelwatch-*.whl)[cuda13,postgresql]" || exit 1
check "pytest --help lists the plugin's options" 0 venv/bin/python -m pytest --help
grep -E "^kernelwatch:|--kernelwatch-history" out.log | head -n 3
check "import kernels (not this repository's: none in the wheel)" 1 venv/bin/python -c "import kernels"
tail -n 1 out.log
mkdir -p plugins/tests/plugins && cp "$REPO"/tests/plugins/{fake_gpu,fake_cupy}.py plugins/tests/plugins/ \
  && touch plugins/tests/__init__.py plugins/tests/plugins/__init__.py
GIT=(git -c user.name=adopter -c user.email=adopter@example.invalid)
project() {  # a fresh copy of examples/cupy, a git repository of its own
  rm -rf project && cp -r "$REPO/examples/cupy" project && cd project && "${GIT[@]}" init -q -b main \
    && "${GIT[@]}" add -A && "${GIT[@]}" commit -qm "the example" && cd ..
}
project
cd project
check "the project collects" 0 ../venv/bin/python -m pytest --collect-only -q
check "without a GPU its test skips, saying why" 0 env CUDA_VISIBLE_DEVICES= ../venv/bin/python -m pytest -rs
grep -m1 "SKIPPED" out.log
check "--benchmark-compare without a GPU" 4 env CUDA_VISIBLE_DEVICES= ../venv/bin/python -m pytest --benchmark-compare
grep -m1 "ERROR" out.log
cd ..
FAKE=(-p tests.plugins.fake_gpu --fake-gpu-cupy)
stores=("sqlite:///$WORK/history.sqlite")
if [ -n "${KERNELWATCH_TEST_POSTGRES:-}" ]; then  # a new database of its own on that server
  stores+=("$(venv/bin/python - "$KERNELWATCH_TEST_POSTGRES" <<'PY'
import sys, uuid
import sqlalchemy as sa
url = sa.engine.make_url(sys.argv[1])
name = f"adoption_{uuid.uuid4().hex[:12]}"
with sa.create_engine(url, isolation_level="AUTOCOMMIT").connect() as connection:
    connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
print(url.set(database=name).render_as_string(hide_password=False))
PY
)")
fi
for url in "${stores[@]}"; do
  echo "== on the fake GPU, the store ${url%%:*}"
  project
  cd project
  run() { PYTHONPATH="$WORK/plugins" ../venv/bin/python -m pytest -p no:cacheprovider "${FAKE[@]}" --benchmark-compare \
            --kernelwatch-history="$url" "$@"; }
  verdicts() { grep -E "; report: " out.log | sed 's/; report: .*//'; }
  check "run 1, saved as the baseline" 0 run --fake-gpu-seed=1 --benchmark-save=first; echo "   $(verdicts)"
  for i in 2 3 4; do
    "${GIT[@]}" commit -q --allow-empty -m "change $i"
    check "run $i" 0 run --fake-gpu-seed="$i"; echo "   $(verdicts)"
  done
  sed -i 's/THREADS = 256/THREADS = 128/' saxpy/__init__.py && "${GIT[@]}" commit -qam "saxpy: 128 threads a block"
  check "run 5, the launch changed and 3% slower" 1 run --fake-gpu-seed=5 --fake-gpu-slowdown='*test_saxpy*:1.03'
  echo "   $(verdicts)"; grep -E "^(FAILED|test_saxpy.py::test_saxpy: slower)|commits since|saxpy: 128" out.log | head -n 4
  check "kernelwatch changes names it" 1 ../venv/bin/kernelwatch changes --history "$url"
  grep -m2 -E "slower|test_saxpy" out.log
  "${GIT[@]}" commit -q --allow-empty -m "saxpy: the slowdown is meant" -m "Accept-Slowdown: cases=*test_saxpy* 128 threads a block"
  check "run 6, after an Accept-Slowdown commit" 0 run --fake-gpu-seed=6 --fake-gpu-slowdown='*test_saxpy*:1.03'
  echo "   $(verdicts)"
  cd ..
done
echo "adoption: $([ $status = 0 ] && echo "every step as expected" || echo "a step differed (above)") in $WORK"
exit $status

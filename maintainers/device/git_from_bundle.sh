# Sourced by the device scripts (run_gpu_suites.sh, history_gpu_runs.sh): the lent device machine gets a
# copy of the working tree without its history, so .git, which lacks the carried bundle's commit, is
# rebuilt from .gitbundle (git bundle create .gitbundle main); the working tree stays as it is.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then  # run rather than sourced: say how it is used
  echo "usage: . maintainers/device/git_from_bundle.sh   (sourced from the repository root by run_gpu_suites.sh and history_gpu_runs.sh)"
  case "${1:-}" in -h|--help) exit 0;; *) exit 2;; esac
fi
bundled=$([ -f .gitbundle ] && git bundle list-heads .gitbundle refs/heads/main 2>/dev/null | cut -d' ' -f1)
if [ -n "$bundled" ] && ! git cat-file -e "$bundled^{commit}" 2>/dev/null; then
  rm -rf .git && git init -q && git fetch -q .gitbundle 'refs/heads/*:refs/heads/*' \
    && git symbolic-ref HEAD refs/heads/main && git reset -q && echo "git: $(git rev-parse --short HEAD)"
fi

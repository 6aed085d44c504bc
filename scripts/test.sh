#!/usr/bin/env bash
# Runs the test tiers (README "Tests"), each as its own ctest run so that the cheap ones answer first.
#   scripts/test.sh                 the default tier: unit, then e2e
#   scripts/test.sh TIER...         unit | e2e | integration | slow | default | all (unit e2e integration slow)
# Environment: CTWIN_BUILD (default ./build), CTWIN_TEST_JOBS (ctest -j; default 2, 3 for integration,
# whose tests mostly wait on their processes). Exit 1 if any tier failed; every tier asked for still runs.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTWIN_BUILD:-$here/build}"
[ $# -eq 0 ] && set -- default
tiers=()
for t in "$@"; do
  case "$t" in
    default) tiers+=(unit e2e) ;;
    all) tiers+=(unit e2e integration slow) ;;
    unit | e2e | integration | slow) tiers+=("$t") ;;
    *) echo "test.sh: unknown tier '$t' (unit, e2e, integration, slow, default, all)" >&2; exit 2 ;;
  esac
done
[ -f "$build/CTestTestfile.cmake" ] || { echo "test.sh: no tests in $build: run scripts/setup.sh --all first" >&2; exit 2; }
failed=()
summary=()
for t in "${tiers[@]}"; do
  jobs="${CTWIN_TEST_JOBS:-2}"
  [ "$t" = integration ] && jobs="${CTWIN_TEST_JOBS:-3}"
  echo "== tier $t (ctest -L '^$t\$' -j$jobs)"
  start=$(date +%s)
  ctest --test-dir "$build" --output-on-failure -j"$jobs" -L "^$t\$" || failed+=("$t")
  summary+=("$t $(( $(date +%s) - start )) s")
done
(IFS=,; echo "== tiers (wall): ${summary[*]}")
if ((${#failed[@]})); then
  echo "== failed: ${failed[*]}"
  exit 1
fi

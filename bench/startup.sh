#!/usr/bin/env bash
# Start-up of `ctwin run`: the whole process (load the scenario, price the checkpoints, one trial,
# print) for the default scenario, best of N runs, each engine, with a warm cache (a first run
# fills it). Issue 20's goal: 50 ms.
#   bash bench/startup.sh [BUILD_DIR] [RUNS]      (default: build 10)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
runs="${2:-10}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export CTWIN_CACHE_DIR="$work/cache"
for engine in native simgrid; do
  "$build/ctwin" run "$here/scenarios/default.json" --trials 1 --engine "$engine" >/dev/null  # warms the cache
  python3 - "$build/ctwin" "$here/scenarios/default.json" "$engine" "$runs" <<'PY'
import subprocess, sys, time
binary, scenario, engine, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
best = float("inf")
for _ in range(runs):
    start = time.perf_counter()
    subprocess.run([binary, "run", scenario, "--trials", "1", "--engine", engine], stdout=subprocess.DEVNULL, check=True)
    best = min(best, time.perf_counter() - start)
print(f"{engine:8s} best of {runs}: {best * 1000:.1f} ms")
PY
done

#!/usr/bin/env bash
# The checkpoint storage model's cost as the job grows: the default scenario scaled to N nodes (and
# its spares tenfold beyond 10k nodes), one trial, wall time and peak memory of `ctwin run` on each
# engine. The native engine prices transfers in closed form; the SimGrid engine simulates one
# symmetric slice (the busiest server and its writers) per state, in a cache of its own here.
#   bash bench/storage_model_scale.sh [BUILD_DIR] [NODES...]     (default: build 1248 16384 12480 999000)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"; shift || true
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1248 16384 12480 999000)
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export CTWIN_CACHE_DIR="$work/cache"
printf '%-8s %-8s %10s %12s\n' nodes engine wall_s peak_MB
for n in "${sizes[@]}"; do
  python3 - "$here/scenarios/default.json" "$work/default.json" "$n" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[3])
if n > 10000: d["cluster"]["spare_nodes"] = 10 * d["cluster"].get("spare_nodes", 0)
d["cluster"]["nodes"] = n + d["cluster"].get("spare_nodes", 0); d["job"]["nodes"] = n
json.dump(d, open(sys.argv[2], "w"))
PY
  for engine in native simgrid; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$build/ctwin" run "$work/default.json" --trials 1 --engine "$engine" \
      >/dev/null 2>"$work/err" || { tail -2 "$work/err"; }
    read -r wall kb <"$work/time"
    printf '%-8s %-8s %10s %12s\n' "$n" "$engine" "$wall" "$((kb / 1024))"
  done
done

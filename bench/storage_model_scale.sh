#!/usr/bin/env bash
# The SimGrid checkpoint I/O model's cost as the job grows: the default scenario scaled to N nodes,
# one trial, wall time and peak memory of `ctwin run` (the storage model runs every node's writer).
#   bash bench/storage_model_scale.sh [BUILD_DIR] [NODES...]     (default: build 1248 4096 16384)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"; shift || true
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1248 4096 16384)
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
printf '%-8s %10s %12s\n' nodes wall_s peak_MB
for n in "${sizes[@]}"; do
  python3 - "$here/scenarios/default.json" "$work/default.json" "$n" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[3])
d["cluster"]["nodes"] = n + d["cluster"].get("spare_nodes", 0); d["job"]["nodes"] = n
json.dump(d, open(sys.argv[2], "w"))
PY
  /usr/bin/time -f "%e %M" -o "$work/time" "$build/ctwin" run "$work/default.json" --trials 1 >/dev/null 2>"$work/err" ||
    { tail -2 "$work/err"; }
  read -r wall kb <"$work/time"
  printf '%-8s %10s %12s\n' "$n" "$wall" "$((kb / 1024))"
done

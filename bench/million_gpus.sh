#!/usr/bin/env bash
# The default scenario scaled to N job nodes (8 GPUs each; spares scaled alike), 1,000 trials with
# the rates drawn (the default) and held exact: wall time and peak memory of each `ctwin run`
# (issue 52). GNU time.
#
#   bash bench/million_gpus.sh [BUILD] [JOB_NODES...]     (default: build 1248 12480 124800)
set -euo pipefail
build=${1:-build}
shift || true
sizes=("${@:-1248 12480 124800}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-12s %-10s %10s %10s\n' "GPUs" "rates" "wall s" "peak MiB"
for nodes in ${sizes[@]}; do
  python3 - "$here/scenarios/default.json" "$work/s.json" "$nodes" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
spares = max(1, n * d["cluster"]["spare_nodes"] // d["job"]["nodes"])
d["job"]["nodes"], d["cluster"]["spare_nodes"], d["cluster"]["nodes"] = n, spares, n + spares
json.dump(d, open(sys.argv[2], "w"))
PY
  for rates in on off; do
    /usr/bin/time -f "%e %M" -o "$work/t" "$build/ctwin" run "$work/s.json" --trials 1000 --rate-uncertainty "$rates" >/dev/null
    read -r wall kb <"$work/t"
    printf '%-12s %-10s %10s %10.0f\n' "$((nodes * 8))" "$([ $rates = on ] && echo drawn || echo exact)" "$wall" "$((kb / 1024))"
  done
done

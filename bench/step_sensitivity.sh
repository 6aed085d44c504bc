#!/usr/bin/env bash
# `ctwin step --sensitivity` cold (an empty step cache) on the shipped workloads, and the range
# each prints beside its point (issue 49: <= 2 s cold on the 16k full scenario).
#   bash bench/step_sensitivity.sh [build/ctwin]
set -euo pipefail
bin=${1:-build/ctwin}
cd "$(dirname "$0")/.."
printf '| scenario | cold wall | CPU | point | range | fields | refused |\n|---|---:|---:|---:|---|---:|---:|\n'
for name in llama3_405b_16k_full megascale_175b moe_8x22b_ep; do
  cache=$(mktemp -d)
  json=$(mktemp)
  times=$( { CTWIN_CACHE_DIR=$cache /usr/bin/time -f "%e %U %S" "$bin" step "scenarios/$name.json" --sensitivity --json "$json" >/dev/null; } 2>&1 | tail -1)
  read -r wall user sys <<<"$times"
  python3 - "$name" "$wall" "$user" "$sys" "$json" <<'PY'
import json, sys
name, wall, user, sys_s, path = sys.argv[1:]
r = json.load(open(path))
s, g = r["sensitivity"], r["range"]
refused = sum(1 for f in s["fields"] for v in f["values"] if "excluded" in v)
print("| %s | %.2f s | %.2f s | %.3f s | %.3f .. %.3f s (%s; model %.1f %%) | %d | %d |" % (
    name, float(wall), float(user) + float(sys_s), r["step_s"], g["min_s"], g["max_s"], ", ".join(g["assumed_fields"]) or "none",
    100 * g["model_error"], len(s["fields"]), refused))
PY
  rm -rf "$cache" "$json"
done

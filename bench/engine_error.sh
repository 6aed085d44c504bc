#!/usr/bin/env bash
# The native engine's approximation error, as `ctwin run --engine both` reports it: on the 16k
# full scenario as shipped, then (the stress case) flash-checkpointed over its fabric (30 GB per GPU every 5 min, 400 GB/s servers)
# beside a 3 s data-parallel reduction: tests/sim/test_engines_physics.cpp's case. Then the same
# with --contention off (the engines agree), in a cache of its own.
#   bash bench/engine_error.sh [BUILD_DIR] [TRIALS]      (default: build 200)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
trials="${2:-200}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export CTWIN_CACHE_DIR="$work/cache"
python3 - "$here/scenarios/llama3_405b_16k_full.json" "$work/flash.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["checkpoint"].update({"mechanism": "flash", "snapshot_time": "2s", "persist_every": 1, "memory_restore_time": "20s",
                        "size_per_gpu": "30GB"})
s["cluster"]["storage"].update({"write_bandwidth": "400GB/s", "network_bandwidth": "3.2Tbps"})
s["job"]["dp_reduction"] = {"time": "3s", "exposed": "0.5s"}
s["policies"]["checkpoint"] = {"type": "fixed", "interval": "5min"}
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
echo "the shipped scenario as it is (flash, the step model's reduction):"
"$build/ctwin" run "$here/scenarios/llama3_405b_16k_full.json" --trials "$trials" --engine both | sed -n '/native approximation error/,/goodput/p'
echo "the stress case:"
"$build/ctwin" run "$work/flash.json" --trials "$trials" --engine both | sed -n '/native approximation error/,$p'
echo "--contention off:"
"$build/ctwin" run "$work/flash.json" --trials "$trials" --engine both --contention off | grep goodput | tail -1
grep -h -B3 'persist movers=2048 spines_down=0 contention=1' "$work"/cache/transfer-*.json | grep -E '"us"|training_speed'

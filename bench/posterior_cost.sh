#!/usr/bin/env bash
# The cost of drawing from a posterior (issue 48): one fleet of bench/learning_curve.py (its first:
# drawn from the prior, 1,024 nodes, 90 days of its own event log), calibrated two ways on that
# log: each class from its own count (--prior none: a Gamma draw a class, as a calibrated scenario
# drew before) and pooled with the population prior (a lognormal draw a group and the fleet factor).
# Each run over the next 30 days, 10,000 trials, one worker, rates drawn, interleaved R times; CPU
# seconds (user + sys), medians, and their ratio (goal: pooled / own counts <= 1.1), and the same per
# simulated interruption.
#   bash bench/posterior_cost.sh BUILD_DIR [REPEATS]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
repeats=${2:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$here"
python3 bench/learning_curve.py --fleets 1 --build "$build" --out "$work" > /dev/null 2>&1
for way in own pooled; do
  prior=()
  [ "$way" = own ] && prior=(--prior none)
  "$build/ctwin" calibrate "$work/fleet_0_day90.csv" --base "$work/base.json" "${prior[@]}" --out "$work/$way.json" > /dev/null
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["job"]["horizon"] = "30d"; json.dump(d, open(sys.argv[1], "w"))' "$work/$way.json"
done
cpu() {  # CPU seconds of one run
  /usr/bin/time -f "%U %S" "$build/ctwin" run "$work/$1.json" --trials 10000 --jobs 1 --json "$work/$1_run.json" 2>&1 >/dev/null |
    tail -1 | awk '{ printf "%.3f\n", $1 + $2 }'
}
own=() pooled=()
for ((i = 0; i < repeats; i++)); do
  own+=("$(cpu own)")
  pooled+=("$(cpu pooled)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
m_own=$(median "${own[@]}")
m_pooled=$(median "${pooled[@]}")
stops() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["interruptions_per_run"]["mean"])' "$1"; }
s_own=$(stops "$work/own_run.json")
s_pooled=$(stops "$work/pooled_run.json")
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs"
echo "ctwin run of one fleet calibrated on 90 days, next 30 days, 10,000 trials, --jobs 1, rates drawn, $repeats runs each (interleaved): CPU seconds, median"
echo "  own counts (--prior none)  $m_own  ($s_own interruptions a run)"
echo "  pooled with the prior      $m_pooled  ($s_pooled interruptions a run)"
awk -v a="$m_pooled" -v b="$m_own" 'BEGIN { printf "  ratio pooled / own        %.3f (goal <= 1.1)\n", a / b }'
awk -v a="$m_pooled" -v b="$m_own" -v sa="$s_pooled" -v sb="$s_own" 'BEGIN { printf "  per interruption          %.3f\n", (a / sa) / (b / sb) }'

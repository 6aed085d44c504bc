#!/usr/bin/env bash
# The cost of rate uncertainty (issue 37): `ctwin run scenarios/default.json`, 10,000 trials, one
# worker, with the rates drawn per trial (--rate-uncertainty on) against held exact (off), run
# interleaved R times each in the same session; CPU time (user + sys) of each, the medians and
# their ratio (goal: on / off <= 1.3), and the same per simulated interruption: the drawn fleets
# are worse on average (a lognormal's mean is above its median), so a run simulates more faults.
#   bash bench/rate_uncertainty.sh BUILD_DIR [REPEATS]
set -euo pipefail
build=${1:?build dir}
repeats=${2:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scenario="$here/scenarios/default.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu() {  # CPU seconds of one run
  /usr/bin/time -f "%U %S" "$build/ctwin" run "$scenario" --trials 10000 --jobs 1 --rate-uncertainty "$1" --json "$work/$1.json" 2>&1 >/dev/null |
    tail -1 | awk '{ printf "%.3f\n", $1 + $2 }'
}
on=() off=()
for ((i = 0; i < repeats; i++)); do
  off+=("$(cpu off)")
  on+=("$(cpu on)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
m_on=$(median "${on[@]}")
m_off=$(median "${off[@]}")
stops() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["interruptions_per_run"]["mean"])' "$1"; }
s_on=$(stops "$work/on.json")
s_off=$(stops "$work/off.json")
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs"
echo "ctwin run default, 10,000 trials, --jobs 1, $repeats runs each (interleaved): CPU seconds, median"
echo "  --rate-uncertainty off  $m_off  ($s_off interruptions a run)"
echo "  --rate-uncertainty on   $m_on  ($s_on interruptions a run)"
awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "  ratio on / off          %.3f (goal <= 1.3)\n", a / b }'
awk -v a="$m_on" -v b="$m_off" -v sa="$s_on" -v sb="$s_off" 'BEGIN { printf "  per interruption        %.3f\n", (a / sa) / (b / sb) }'

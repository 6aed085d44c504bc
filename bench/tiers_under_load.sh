#!/usr/bin/env bash
# The test tiers beside two busy loops (issue 34): the default tier RUNS times in a row (default 3),
# then the integration tier once, each with `yes > /dev/null` running twice beside it. Prints each
# run's verdict and wall time; exit 1 if any run failed. The loops are stopped however it ends.
#   bash bench/tiers_under_load.sh [RUNS]        (after bash scripts/setup.sh --all)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-3}"
yes >/dev/null & busy1=$!
yes >/dev/null & busy2=$!
trap 'kill $busy1 $busy2 2>/dev/null' EXIT
log="${CTWIN_LOAD_LOG:-$(mktemp -d)}"
mkdir -p "$log"
echo "two busy loops (pids $busy1 $busy2) on $(nproc) cores; logs in $log"
status=0
results=()
for i in $(seq 1 "$runs") integration; do
  tier=default
  [ "$i" = integration ] && tier=integration
  start=$(date +%s)
  if bash "$here/scripts/test.sh" "$tier" >"$log/$tier-$i.log" 2>&1; then verdict=passed; else verdict=FAILED; status=1; fi
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  results+=("$tier run $i: $verdict in $(($(date +%s) - start)) s (load average $load)")
  echo "${results[-1]}"
  grep -E "tests passed|tests failed|^[0-9/ ]*Test +#.*(Failed|Timeout)" "$log/$tier-$i.log" | head -20
done
printf '%s\n' "${results[@]}" >"$log/summary.txt"
exit $status

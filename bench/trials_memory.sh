#!/usr/bin/env bash
# Peak memory of `ctwin run` in the number of trials (issue 37 item 6): the default scenario with a
# JSON report, and with the per-trial CSV too (streamed), at each N given (default 10,000 and
# 100,000; add 1000000 for the million, ~80 s each).
#   bash bench/trials_memory.sh BUILD_DIR [N ...]
set -euo pipefail
build=${1:?build dir}
shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10000 100000)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs"
printf '%10s %12s %10s %20s %10s\n' trials "peak MB" "wall s" "peak MB with --csv" "wall s"
for n in "${counts[@]}"; do
  /usr/bin/time -f "%M %e" -o "$work/t" "$build/ctwin" run "$here/scenarios/default.json" --trials "$n" --json "$work/r.json" >/dev/null
  read -r kb wall <"$work/t"
  /usr/bin/time -f "%M %e" -o "$work/t" "$build/ctwin" run "$here/scenarios/default.json" --trials "$n" --json "$work/r.json" --csv "$work/r.csv" >/dev/null
  read -r kb_csv wall_csv <"$work/t"
  [ "$(($(wc -l <"$work/r.csv") - 1))" -eq "$n" ] || { echo "the CSV does not hold $n trials" >&2; exit 1; }
  printf '%10d %12.0f %10s %20.0f %10s\n' "$n" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" "$wall" \
    "$(awk -v k="$kb_csv" 'BEGIN { print k / 1024 }')" "$wall_csv"
done

#!/usr/bin/env bash
# Peak memory of `ctwin run` in the number of trials (issue 37 item 6): the default scenario with a
# JSON report, at each N given (default 10,000 and 100,000; add 1000000 for the million, ~80 s).
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
printf '%10s %12s %10s\n' trials "peak MB" "wall s"
for n in "${counts[@]}"; do
  /usr/bin/time -f "%M %e" -o "$work/t" "$build/ctwin" run "$here/scenarios/default.json" --trials "$n" --json "$work/r.json" >/dev/null
  read -r kb wall <"$work/t"
  printf '%10d %12.0f %10s\n' "$n" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" "$wall"
done

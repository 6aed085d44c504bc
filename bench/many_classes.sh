#!/usr/bin/env bash
# A trial's cost in the number of fault classes (issue 37 item 7): the default scenario with N more
# classes (each a copy of gpu_faulty, so the faults grow with N too), exponential and Weibull, one
# trial, one worker; CPU seconds of the run, less the same run's `ctwin check` (reading the file).
# Linear in N is the goal: a doubling of N should cost about twice, not four times.
#   bash bench/many_classes.sh BUILD_DIR
set -euo pipefail
build=${1:?build dir}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{ printf "%.3f\n", $1 + $2 }'; }
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs"
printf '%-12s %8s %14s %14s\n' form classes "trial CPU s" "x last"
for form in exponential weibull; do
  last=""
  for n in 1000 2000 4000 8000; do
    python3 - "$here/scenarios/default.json" "$work/s.json" "$n" "$form" <<'PY'
import copy, json, sys
s = json.load(open(sys.argv[1]))
base = s["faults"][0]
for i in range(int(sys.argv[3])):
    f = copy.deepcopy(base)
    f["name"] = "c%d" % i
    f.pop("xid", None)
    f.pop("rate_uncertainty", None)
    if sys.argv[4] == "weibull":
        f["distribution"] = "weibull"
        f["weibull_shape"] = 0.8
    s["faults"].append(f)
json.dump(s, open(sys.argv[2], "w"))
PY
    run=$(cpu "$build/ctwin" run "$work/s.json" --trials 1 --jobs 1)
    read_only=$(cpu "$build/ctwin" check "$work/s.json")
    t=$(awk -v a="$run" -v b="$read_only" 'BEGIN { printf "%.3f", a - b }')
    ratio=$([ -n "$last" ] && awk -v a="$t" -v b="$last" 'BEGIN { printf "%.2f", a / b }' || echo "")
    printf '%-12s %8d %14s %14s\n' "$form" "$n" "$t" "$ratio"
    last=$t
  done
done

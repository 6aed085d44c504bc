#!/usr/bin/env bash
# Writes every report ctwin makes for every scenario under scenarios/ and src/tests/scenarios/ into OUT:
# run (summary, JSON, CSV, event log, timeline), sweep, optimize, compare (text, JSON, CSV, SVG),
# and for the scenarios that need them the SimGrid engine, the step model, calibrate and validate.
# The same seeds every time, so two builds that behave the same write the same bytes.
#
#   src/tests/golden/record_reports.sh CTWIN OUT          record
#   src/tests/golden/check_reports.sh CTWIN               compare with src/tests/golden/reports/
set -euo pipefail
bin=$(realpath "$1")
out=$(realpath -m "$2")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rm -rf "$out"
mkdir -p "$out"
# Paths in the reports are relative (src/..., name/...), so the bytes do not depend on where OUT is.
cd "$out"
ln -s "$root" src

# Each report's text goes to a file; stderr too, so a failure is part of what is compared.
record() {  # record DIR NAME COMMAND...
  local dir=$1 name=$2
  shift 2
  local rc=0
  "$@" >"$dir/$name.txt" 2>"$dir/$name.err" || rc=$?
  echo "exit $rc" >>"$dir/$name.txt"
}

trials=40  # per point, for the decision tools: enough to exercise them, cheap enough to run often
for scenario in src/scenarios/*.json src/tests/scenarios/*.json; do
  name=$(basename "$scenario" .json)
  d="$name"
  mkdir -p "$d"
  record "$d" check "$bin" check "$scenario"
  record "$d" run "$bin" run "$scenario" --jobs 2 --json "$d/run.json" --csv "$d/run.csv" --events "$d/events.csv" \
    --timeline "$d/timeline.json"
  record "$d" sweep "$bin" sweep "$scenario" --trials $trials --jobs 2 --set /policies/checkpoint/interval=10min,1h \
    --set /restart/overhead=2min,10min --json "$d/sweep.json" --csv "$d/sweep.csv" --svg "$d/sweep.svg"
  record "$d" optimize "$bin" optimize "$scenario" --trials $trials --jobs 2 --points 5 --json "$d/optimize.json" \
    --csv "$d/optimize.csv" --svg "$d/optimize.svg"
  record "$d" compare "$bin" compare "$scenario" --trials $trials --jobs 2 \
    --variant 'daly:/policies/checkpoint={"type":"daly"}' --variant 'short:/policies/checkpoint/interval=10min' \
    --json "$d/compare.json" --csv "$d/compare.csv" --svg "$d/compare.svg"
  if grep -q '"workload"' "$scenario"; then
    record "$d" step "$bin" step "$scenario" --json "$d/step.json"
    record "$d" step_degraded "$bin" step "$scenario" --nic 0=0.25 --slow-gpu 3=0.5
  fi
done

# Both engines on the scenario whose storage shares its fabric: SimGrid's report and the native
# engine's approximation error.
record "llama3_405b_16k_full" run_both "$bin" run src/scenarios/llama3_405b_16k_full.json --engine both --trials 8 \
  --json "llama3_405b_16k_full/run_both.json"

# The SimGrid engine on the small scenarios (transfers priced on the fabric; here the star, alike).
for scenario in src/tests/scenarios/minimal.json src/tests/scenarios/features.json src/tests/scenarios/policies.json; do
  name=$(basename "$scenario" .json)
  record "$name" run_simgrid "$bin" run "$scenario" --engine simgrid --trials 8 --json "$name/run_simgrid.json" \
    --events "$name/events_simgrid.csv"
done

# Combinations of policies.
record "policies" choose "$bin" optimize src/tests/scenarios/policies.json --trials $trials --jobs 2 \
  --choose /policies/elastic/mode=wait,shrink --choose /policies/precheck/enabled=true,false \
  --json "policies/choose.json" --csv "policies/choose.csv" --svg "policies/choose.svg"

# Calibration from the test traces, and a run's event log held against its scenario.
mkdir -p calibrate/plots
record "calibrate" fleet "$bin" calibrate src/tests/traces/fleet.journal src/tests/traces/jobs.sacct src/tests/traces/incidents.csv \
  --year 2024 --out "calibrate/fleet.json" --report "calibrate/fleet_report.json" --plots "calibrate/plots"
record "calibrate" dmesg "$bin" calibrate src/tests/traces/gpu-017.dmesg --year 2024 --out "calibrate/dmesg.json"
record "calibrate" steps "$bin" calibrate src/tests/traces/megatron_train.log --base src/tests/scenarios/minimal.json \
  --out "calibrate/steps.json" --report "calibrate/steps_report.json"
record "features" validate "$bin" validate src/tests/scenarios/features.json --against "features/events.csv" \
  --trials $trials --json "features/validate.json"
record . catalog "$bin" catalog --json -
rm src

#!/usr/bin/env bash
# The decision figures quoted in README.md and BENCHMARKS.md, reproduced:
#  - Daly's worked optima found by `ctwin optimize` (simulation only; the bracket is not centred);
#  - the default scenario's optimum interval, and its goodput against the scenario's 30 min;
#  - the default scenario with 8 spares instead of 32;
#  - the remediation policies of tests/scenarios/policies.json: the best combination;
#  - the public runs compared with their published figures.
#   bench/decisions.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
ctwin="${1:-build}/ctwin"
for case in "24h 39min 293min" "6h 19min 143min" "15min 182s 1365s"; do
  set -- $case
  echo "== Daly, M = $1"
  "$ctwin" optimize "bench/scenarios/daly_$1.json" --trials 300 --points 21 --from "$2" --to "$3" --seed 7 | tail -2
done
echo "== default scenario: the optimum interval"
"$ctwin" optimize scenarios/default.json --trials 100 --points 15 | tail -2
echo "== default scenario: checkpoint interval x spares"
"$ctwin" sweep scenarios/default.json --trials 50 --set /policies/checkpoint/interval=5min,10min,30min \
  --set /cluster/spare_nodes=8,32 | sed -n '3,10p'
echo "== policies fixture: elastic mode x straggler eviction x precheck"
"$ctwin" optimize tests/scenarios/policies.json --choose /policies/elastic/mode=wait,shrink \
  --choose /policies/stragglers/evict=true,false --choose /policies/precheck/enabled=true,false | sed -n '3,14p'
for s in bloom176b opt175b byterobust_9600; do
  echo "== $s"
  "$ctwin" run "scenarios/$s.json" | sed -n '/compared with/,$p'
done

#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/CMakeLists.txt, clang, ASan + UBSan) and runs each on
# a corpus seeded from the repository's own scenarios and traces plus tests/fuzz/seeds/.
#   tests/fuzz/run.sh BUILD_DIR --seconds N     each fuzzer for N seconds (the default tier)
#   tests/fuzz/run.sh BUILD_DIR --runs N        each fuzzer for N inputs (the slow tier: 1000000)
# Prints one line per fuzzer (inputs run, speed, corpus, findings); exit 1 on any finding, with the
# input under BUILD_DIR/artifacts/; exit 77 (skipped) where clang or its libFuzzer is missing.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:?usage: run.sh BUILD_DIR --seconds N | --runs N}"
mode="${2:---seconds}"
amount="${3:-5}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz: skipped: clang++ is not installed (Debian: clang libclang-rt-14-dev)"
  exit 77
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "fuzz: skipped: clang++ has no libFuzzer here (Debian: libclang-rt-14-dev)"
  exit 77
fi

mkdir -p "$build"
if ! cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE= >"$build/configure.log" 2>&1 ||
   ! cmake --build "$build" -j "$(nproc)" >"$build/build.log" 2>&1; then
  tail -30 "$build/configure.log" "$build/build.log"
  echo "fuzz: the harnesses do not build"
  exit 1
fi

# Each fuzzer's seeds: the repository's own inputs of its kind, then tests/fuzz/seeds/NAME.
seed() {
  local name="$1"; shift
  mkdir -p "$build/corpus/$name"
  for f in "$@" "$here/seeds/$name"/*; do [ -f "$f" ] && cp -n "$f" "$build/corpus/$name/" ; done
}
seed scenario "$root"/scenarios/*.json "$root"/scenarios/policies/*.json "$root"/tests/scenarios/*.json
seed units
seed xid_log "$root"/tests/traces/*.journal "$root"/tests/traces/*.dmesg "$root"/tests/traces/*.syslog
seed sacct "$root"/tests/traces/*.sacct
seed step_csv
seed megatron_log "$root"/tests/traces/megatron_train.log
seed incident_table "$root"/tests/traces/incidents.csv "$root"/calibration/data/*.csv
seed event_log
seed calibrate "$root"/tests/traces/*.journal "$root"/tests/traces/*.dmesg "$root"/tests/traces/*.sacct "$root"/tests/traces/incidents.csv \
  "$root"/tests/traces/megatron_train.log "$root"/calibration/data/*.csv "$here"/seeds/event_log/*

if [ "$mode" = "--runs" ]; then limit=(-runs="$amount"); else limit=(-max_total_time="$amount"); fi
mkdir -p "$build/artifacts"
status=0
printf '%-16s %12s %10s %8s  %s\n' fuzzer inputs "inputs/s" corpus findings
for name in scenario units xid_log sacct step_csv megatron_log incident_table event_log calibrate; do
  max_len=4096
  [ "$name" = scenario ] && max_len=65536
  # calibrate end to end fits every class of every input (~150 inputs/s, 200x a reader): a fiftieth
  # of the inputs, so the slow tier's million stays within its hour.
  runs=("${limit[@]}")
  [ "$name" = calibrate ] && [ "$mode" = "--runs" ] && runs=(-runs="$((amount / 50))")
  log="$build/$name.log"
  "$build/fuzz_$name" "${runs[@]}" -max_len="$max_len" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$name-" "$build/corpus/$name" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(ls "$build/corpus/$name" | wc -l)
  if [ $rc -eq 0 ]; then findings=0; else findings="1 (exit $rc, see $log)"; status=1; fi
  printf '%-16s %12s %10s %8s  %s\n' "$name" "${runs:-?}" "${speed:-?}" "$corpus" "$findings"
  [ $rc -ne 0 ] && grep -m5 -E "ERROR|runtime error|SUMMARY|uncaught|terminate" "$log"
done
exit $status

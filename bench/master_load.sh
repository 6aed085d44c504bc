#!/usr/bin/env bash
# The job master's cost per agent: `ctwin live master` with N fake agents (bench/fake_agents.cpp,
# the agent's own link, reporting at 1 Hz) on this machine; the master's CPU (utime + stime from
# /proc over a steady window) and its peak memory (VmHWM).
#   bash bench/master_load.sh [AGENTS] [SECONDS]      (default 1000 agents, a 30 s window)
# FAKE_AGENTS=PATH runs another build's ctwin_fake_agents against this build's master (to tell the
# master's share of a change from the agents').
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
agents="${1:-1000}"
window="${2:-30}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-master-load-XXXXXX")"
export CTWIN_JOB_TOKEN="bench-token-0123456789abcdef"
printf '{"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1h"}}}\n' > "$work/policy.json"
"$here/build/ctwin-live" master --policy "$work/policy.json" --nnodes "$agents" --bind 127.0.0.1:0 --port-file "$work/port" \
  --journal "$work/journal.json" --events "$work/job.csv" --report-interval 1s --agent-timeout 60s --no-metrics 2> "$work/master.log" &
master=$!
trap ' kill $master ${fake:-} 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
# At most 3,000 agents per process: each holds three descriptors, and a process may have 20,000.
fakes=()
for first in $(seq 0 3000 $((agents - 1))); do
  n=$(( agents - first < 3000 ? agents - first : 3000 ))
  "${FAKE_AGENTS:-$here/build/ctwin_fake_agents}" --master "127.0.0.1:$(cat "$work/port")" --first "$first" --agents "$n" --seconds $((window + 300)) \
    > "$work/fake-$first.log" 2> "$work/fake-$first.err" &
  fakes+=($!)
done
fake="${fakes[*]}"
# Rendezvous, then the job runs: measure once every agent runs.
running() { local total=0 n; for log in "$work"/fake-*.log; do n=$(tail -1 "$log" 2>/dev/null | sed -n 's/.*running=\([0-9]*\).*/\1/p'); total=$((total + ${n:-0})); done; echo $total; }
t_start=$(date +%s.%N)
for _ in $(seq 1500); do [ "$(running)" -ge "$agents" ] && break; sleep 0.2; done
[ "$(running)" -ge "$agents" ] || { echo "the agents never all ran: $(running)/$agents"; tail -3 "$work"/fake-*.err; exit 1; }
echo "all $agents agents running $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t_start" "$(date +%s.%N)") s after they started"
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$master/stat"; }
c0=$(cpu); t0=$(date +%s.%N)
sleep "$window"
c1=$(cpu); t1=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$master/status")
python3 - "$agents" "$c0" "$c1" "$t0" "$t1" "$ticks" "$hwm" <<'PY'
import sys
agents, c0, c1, t0, t1, ticks, hwm_kb = int(sys.argv[1]), *map(float, sys.argv[2:7]), int(sys.argv[7])
core = (c1 - c0) / ticks / (t1 - t0)
print(f"{agents} agents at 1 Hz: master CPU {100 * core:.2f}% of one core ({1e6 * core / agents:.1f} us of CPU per report), "
      f"peak memory {hwm_kb / 1024:.1f} MiB; at this cost per report, 10,000 agents would take {100 * core * 10000 / agents:.1f}% of a core")
PY
# Requests the agents gave up on (each agent says so at most once in 30 s): connects that timed out, answers that never came.
echo "the agents' \"no answer\" lines: $(cat "$work"/fake-*.err | grep -c 'no answer' || true)"

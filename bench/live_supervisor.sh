#!/usr/bin/env bash
# The supervisor's recovery on this machine (CPU state; bench/gpu.sh does it on a GPU): the
# synthetic trainer crashes in step 25 (checkpoints every 10), `ctwin live run` restarts it, and it
# restores step 20 from shared memory. For each state size: the time from the crash to running
# again, of which the restore itself, the restore's rate against memcpy (ckpt-bench in the same
# run), and the lost progress; the ledger must add up to the wall time.
#   bash bench/live_supervisor.sh [SIZE...]      (default 256MiB 1GiB; /dev/shm needs 2x each)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ctwin="$here/build/ctwin"
work="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-sup-XXXXXX")"
trap 'rm -rf "$work"; rm -f /dev/shm/ctwin-flash-bench-sup-$$-*' EXIT
printf '{"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1min"}, "hang_detection": {"minimum": "30s"}}}\n' \
  > "$work/policy.json"
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(256MiB 1GiB)
printf '%-8s %12s %12s %14s %12s %10s\n' state recovery_s restore_s restore_GB/s of_memcpy lost_s
for size in "${sizes[@]}"; do
  memcpy=$("$ctwin" live ckpt-bench --backend cpu --size "$size" --iterations 2 --persist-dir "$work" --json "$work/bench.json" >/dev/null &&
           python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['h2d_ceiling_bytes_per_s'] / 1e9)" "$work/bench.json" || echo 0)
  rm -rf "$work/persist" && mkdir -p "$work/persist"
  "$ctwin" live run --policy "$work/policy.json" --events "$work/events.csv" --name "bench-sup-$$" --persist-dir "$work/persist" \
    --no-nvml --no-metrics -- "$here/build/ctwin-synthetic-trainer" --state-bytes "$size" --gemms-per-step 0 --step-ms 50 \
    --steps 40 --checkpoint-every 10 --crash-at-step 25 > "$work/run.txt" 2>&1
  python3 - "$work/events.csv" "$size" "$memcpy" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
fault = next(float(r["time_s"]) for r in rows if r["kind"] == "fault")
restore = next(r for r in rows if r["kind"] == "restore" and float(r["time_s"]) > fault)
running = next(float(r["time_s"]) for r in rows if r["kind"] == "running" and float(r["time_s"]) > fault)
seconds = float(re.search(r"seconds=([0-9.]+)", restore["detail"]).group(1))
lost = float(re.search(r"lost_s=([0-9.]+)", restore["detail"]).group(1))
assert "source=memory step=20" in restore["detail"], restore["detail"]
ledger = {r["detail"].split("=")[0]: r["detail"].split("=")[1] for r in rows if r["kind"] == "ledger"}
wall = rows[-1]["time_s"]
to_us = lambda s: int(s.replace(".", ""))
assert sum(to_us(v) for v in ledger.values()) == to_us(wall), "the ledger does not add up"
size = sys.argv[2]
n = float(re.match(r"[0-9.]+", size).group(0)) * {"MiB": 2**20, "GiB": 2**30}[re.search(r"[MG]iB", size).group(0)]
rate = n / seconds / 1e9
memcpy = float(sys.argv[3])
print(f"{size:8s} {running - fault:12.4f} {seconds:12.4f} {rate:14.2f} {rate / memcpy if memcpy else 0:12.2f} {lost:10.4f}")
PY
done

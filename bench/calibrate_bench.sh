#!/usr/bin/env bash
# Issue 6's benchmark: `ctwin calibrate` on one million kernel-log lines (journalctl short-iso,
# 2,000 hosts, one line in 20 an Xid, the rest other kernel messages), and on a million-line event
# log. Prints wall time and peak memory (GNU time).
#   bash bench/calibrate_bench.sh [LINES]
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk -v n="$lines" 'BEGIN {
  srand(1);
  split("79 48 94 63 74 31 13", codes, " ");
  for (i = 0; i < n; ++i) {
    t = int(i * 90 * 86400 / n);
    day = int(t / 86400); s = t % 86400;
    host = sprintf("gpu-%04d", int(rand() * 2000));
    stamp = sprintf("2025-%02d-%02dT%02d:%02d:%02d+0000", 1 + int(day / 30), 1 + day % 30, int(s / 3600), int(s % 3600 / 60), s % 60);
    if (rand() < 0.05)
      printf "%s %s kernel: NVRM: Xid (PCI:0000:%02x:00): %s, pid=%d, name=python, fault\n", stamp, host, int(rand() * 8) * 16 + 24, codes[1 + int(rand() * 7)], int(rand() * 30000);
    else
      printf "%s %s kernel: [%d.%06d] mlx5_core 0000:%02x:00.0: link state changed\n", stamp, host, t, i % 1000000, int(rand() * 8);
  }
}' > "$dir/fleet.journal"
echo >&2 "kernel log: $(wc -l < "$dir/fleet.journal") lines, $(du -h "$dir/fleet.journal" | cut -f1)"
/usr/bin/time -f "  calibrate: %e s wall, %M KiB peak" ./build/ctwin calibrate "$dir/fleet.journal" --out "$dir/cal.json" --report "$dir/fits.json" > /dev/null

# An event log of about the same length, from the simulator (one long trial of a large job).
cat > "$dir/big.json" <<'JSON'
{"schema_version": 1, "name": "big",
 "cluster": {"nodes": 2048, "gpus_per_node": 8, "gpu": {"model": "H100", "peak_bf16": "989TFLOP/s"}, "spare_nodes": 48},
 "job": {"nodes": 2000, "step_time": "10s", "horizon": "5000d"},
 "faults": [{"name": "gpu", "rate": "0.5/gpu-year", "effect": "crash", "xid": 79, "detection": "10s", "recovery": {"action": "reboot", "duration": "10min"}}],
 "checkpoint": {"save_time": "30s", "restore_time": "1min"}, "restart": {"overhead": "5min"},
 "spares": {"repair_time": "2d"}, "policies": {"checkpoint": {"type": "fixed", "interval": "2h"}}}
JSON
./build/ctwin run "$dir/big.json" --trials 1 --events "$dir/events.csv" > /dev/null
echo "event log: $(wc -l < "$dir/events.csv") lines" >&2
/usr/bin/time -f "  calibrate: %e s wall, %M KiB peak" ./build/ctwin calibrate "$dir/events.csv" --base "$dir/big.json" --out "$dir/cal2.json" > /dev/null

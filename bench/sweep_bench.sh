#!/usr/bin/env bash
# Issue 4's benchmark: a 20-point checkpoint-interval sweep x 1,000 trials of the 16,384-GPU
# scenario on 2 workers. Prints the wall time and trials per second.
#   bench/sweep_bench.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
values=$(python3 -c "print(','.join(f'{round(300*1.2**i)}s' for i in range(20)))")
start=$(date +%s.%N)
"$build/ctwin" sweep scenarios/llama3_405b_16k.json --trials 1000 --jobs 2 --set "/policies/checkpoint/interval=$values" \
  --json /dev/null > /tmp/ctwin_sweep_bench.txt
end=$(date +%s.%N)
python3 - "$start" "$end" <<'PY'
import sys
wall = float(sys.argv[2]) - float(sys.argv[1])
print(f"20 points x 1,000 trials = 20,000 trials of llama3_405b_16k on 2 workers: {wall:.2f} s wall, {20000 / wall:.0f} trials/s")
PY
tail -3 /tmp/ctwin_sweep_bench.txt

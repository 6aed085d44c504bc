#!/usr/bin/env bash
# Issue 4's benchmark: a 20-point checkpoint-interval sweep x 1,000 trials of the 16,384-GPU
# scenario. Wall time and trials per second on 2 threads; then the same sweep on 1 thread, and on
# 2 MPI ranks of 1 thread each (when mpirun is installed), in the same run, as ratios.
#   [TRIALS=1000] bench/sweep_bench.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
values=$(python3 -c "print(','.join(f'{round(300*1.2**i)}s' for i in range(20)))")
trials="${TRIALS:-1000}"
sweep=(sweep scenarios/llama3_405b_16k.json --trials "$trials" --set "/policies/checkpoint/interval=$values")
seconds() {  # wall seconds of a command, its stdout kept in $out/$1.txt
  local name="$1"; shift
  local start end
  start=$(date +%s.%N)
  "$@" --json "$out/$name.json" > "$out/$name.txt"
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.3f}')"
}
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
threads2=$(seconds threads2 "$build/ctwin" "${sweep[@]}" --jobs 2)
threads1=$(seconds threads1 "$build/ctwin" "${sweep[@]}" --jobs 1)
echo "20 points x $trials trials of llama3_405b_16k"
python3 -c "print(f'  1 process, 2 threads: {$threads2:.2f} s wall, {(20 * $trials) / $threads2:.0f} trials/s')"
python3 -c "print(f'  1 process, 1 thread:  {$threads1:.2f} s wall, {(20 * $trials) / $threads1:.0f} trials/s')"
if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  ranks2=$(seconds ranks2 mpirun -np 2 --oversubscribe "$build/ctwin" "${sweep[@]}" --jobs 1)
  cmp -s "$out/ranks2.json" "$out/threads1.json" && same="identical to" || same="DIFFERENT from"
  python3 -c "print(f'  2 MPI ranks x 1 thread: {$ranks2:.2f} s wall, {(20 * $trials) / $ranks2:.0f} trials/s; 1 thread / 2 ranks = {$threads1 / $ranks2:.2f}x; results $same 1 process')"
fi
tail -3 "$out/threads2.txt"

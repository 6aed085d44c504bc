#!/usr/bin/env bash
# `mpirun -np 2 ctwin sweep|optimize` gives, byte for byte, what one process gives: rank 0 gathers
# every trial in order. Run by ctest when OpenMPI is installed.
#   tests/mpi_same_as_one_process.sh CTWIN MPIEXEC SCENARIO
set -euo pipefail
ctwin="$1" mpiexec="$2" scenario="$3"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
for ranks in 1 2; do
  launch=("$mpiexec" -np "$ranks" --oversubscribe)
  "${launch[@]}" "$ctwin" sweep "$scenario" --trials 61 --jobs 1 --set /policies/checkpoint/interval=20min,40min \
    --set /cluster/spare_nodes=0,2 --json "$out/sweep$ranks.json" > "$out/sweep$ranks.txt"
  "${launch[@]}" "$ctwin" optimize "$scenario" --trials 31 --points 6 --ci-target 0.001 --max-trials 124 --jobs 1 \
    --json "$out/optimize$ranks.json" > "$out/optimize$ranks.txt"
done
"$ctwin" sweep "$scenario" --trials 61 --jobs 2 --set /policies/checkpoint/interval=20min,40min \
  --set /cluster/spare_nodes=0,2 --json "$out/sweep_plain.json" > /dev/null
for f in sweep1.json sweep1.txt optimize1.json optimize1.txt; do
  cmp "$out/$f" "$out/${f/1/2}" || { echo "2 ranks differ from 1 in $f"; diff "$out/$f" "$out/${f/1/2}" | head; exit 1; }
done
cmp "$out/sweep1.json" "$out/sweep_plain.json" || { echo "mpirun -np 1 differs from a plain run"; exit 1; }
grep -q '"trials": 61' "$out/sweep2.json"
echo "2 ranks = 1 rank = 1 process, byte for byte (sweep and optimize)"

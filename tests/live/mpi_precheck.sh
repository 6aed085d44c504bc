#!/usr/bin/env bash
# `mpirun -np 4 ctwin-live precheck --backend cpu`: the ranks meet over MPI (as NCCL's unique id
# does on GPU nodes) and the hung rank 3 is found faulty. Run by ctest when OpenMPI is installed.
#   tests/live/mpi_precheck.sh CTWIN_LIVE MPIEXEC
set -uo pipefail
ctwin="$1" mpiexec="$2"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
"$mpiexec" -np 4 --oversubscribe "$ctwin" precheck --backend cpu --allreduce-bytes 4MiB --timeout 2s \
  --min-of-best 0.5 --inject 3:hang --json "$out/report.json" > "$out/table.txt"
code=$?
cat "$out/table.txt"
[ "$code" -eq 1 ] || { echo "expected exit 1 (the controller evicts the hung rank), got $code"; exit 1; }
grep -q '"faulty": \[' "$out/report.json" || exit 1
python3 - "$out/report.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["policy"]["faulty"] == [3], r["policy"]
# The hung rank is the one found faulty. The others' GEMM speeds are a loaded CPU's (a rank once
# measured 43% of the best beside the rest of the integration tier): a straggler verdict among them
# is speed, not what this test is about.
verdicts = [x["verdict"] for x in r["ranks"]]
assert verdicts[3] == "faulty" and "faulty" not in verdicts[:3], verdicts
PY
echo "4 MPI ranks: rank 3 found faulty"

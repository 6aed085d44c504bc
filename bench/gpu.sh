#!/usr/bin/env bash
# All GPU checks of live mode on a bare GPU machine (CMake, the CUDA toolkit and NCCL; no Debian
# packages, no network): builds live/ on its own (the CUDA plugin, the flash checkpoint engine and
# ctwin-gpu-check), then per GPU: bf16 GEMM burn-in against the best cuBLAS figure over a size
# sweep, the GEMM result check, HBM and PCIe bandwidth, NCCL all-reduce; the flash checkpoint
# benchmark against the PCIe and disk ceilings; the Python (ctypes) round trip. Judges the targets:
# snapshot >= 80% of device->host, restore >= 80% of host->device, burn-in within 10% of the best.
# Where the full ctwin is built (./build/ctwin), also `ctwin live precheck` over every GPU.
#   bash bench/gpu.sh [OUT_DIR]      (NCCL_HOME=... when NCCL is not beside CUDA)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${OUT:-$here/bench/results/gpu}}"
mkdir -p "$out"
build="$here/build-gpu"
cmake -S "$here/live" -B "$build" -DWITH_CUDA=ON -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 \
  || { tail -20 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true

persist="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-gpu-XXXXXX")"
trap 'rm -rf "$persist"' EXIT
"$build/ctwin-gpu-check" "$persist" "${CKPT_BYTES:-4294967296}" > "$out/gpu_check.json" 2> "$out/gpu_check.txt"
code=$?
cat "$out/gpu_check.txt"
[ $code -eq 3 ] && { echo "no usable GPU here (exit 3): nothing measured"; exit 3; }
[ $code -ne 0 ] && { echo "ctwin-gpu-check failed ($code)"; exit 1; }

python3 "$here/tests/live/flash_ctypes_test.py" "$build" > "$out/ctypes.txt" 2>&1 && echo "ctypes round trip: passed" \
  || { echo "ctypes round trip: FAILED"; cat "$out/ctypes.txt"; }

if [ -x "$here/build/ctwin" ]; then
  "$here/build/ctwin" live precheck --json "$out/precheck.json" | tee "$out/precheck.txt"
  "$here/build/ctwin" live ckpt-bench --persist-dir "$persist" --size 4GiB --json "$out/ckpt_bench.json"
fi

python3 - "$out/gpu_check.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = True
def judge(name, value, target):
    global ok
    passed = value >= target
    ok &= passed
    print(f"  {name:44s} {value:7.3f}  (target >= {target})  {'pass' if passed else 'FAIL'}")
print(f"driver CUDA {r['driver']}, runtime {r['runtime']}")
for g in r["gpus"]:
    print(f"GPU {g['index']} {g['name']}: GEMM 8192 {g['gemm_8192_tflops']} TFLOP/s, best {g['gemm_best_tflops']} at n={g['gemm_best_n']}; "
          f"HBM {g['hbm_copy_gb_s']} GB/s; PCIe {g['h2d_gb_s']}/{g['d2h_gb_s']} GB/s; check {g['gemm_mismatches']}/{g['gemm_non_finite']}")
    judge(f"GPU {g['index']} burn-in / best cuBLAS", g["burn_in_of_best"], 0.90)
    ok &= g["gemm_mismatches"] == 0 and g["gemm_non_finite"] == 0
c = r["ckpt_bench"]
judge("snapshot / device->host", c["snapshot_of_d2h"], 0.80)
judge("restore from memory / host->device", c["restore_of_h2d"], 0.80)
print(f"  persist / write+fsync                        {c['persist_of_disk']:7.3f}  (no target)")
sys.exit(0 if ok else 1)
PY

#!/usr/bin/env bash
# All GPU checks of live mode on a bare GPU machine (CMake, the CUDA toolkit and NCCL; no Debian
# packages, no network): builds live/ on its own (the CUDA plugin, the flash checkpoint engine and
# ctwin-gpu-check), then per GPU: bf16 GEMM burn-in against the best cuBLAS figure over a size
# sweep, the GEMM result check, HBM and PCIe bandwidth, NCCL all-reduce; the flash checkpoint
# benchmark against the PCIe and disk ceilings; the Python (ctypes) round trip. Judges the targets:
# snapshot >= 80% of device->host, restore >= 80% of host->device, burn-in within 10% of the best.
# Then the synthetic trainer on GPU 0: crashed on purpose, relaunched, restored from shared memory
# and checked stripe by stripe. Then `ctwin-live precheck` over every GPU, `ctwin-live ckpt-bench`,
# and supervised synthetic runs (`ctwin-live run`) with a crash and a hang.
#
# The whole live side builds here from the working tree alone. Its header-only dependencies
# (nlohmann/json, Boost, Eigen, CLI11; 14 MB) travel with the tree as a bundle: on a machine with
# Debian's packages run `bash scripts/bundle_live_deps.sh build-deps`, and carry the ignored
# folder `build-deps` to the GPU machine (the device tool's `carry: ["build-deps"]`); this script
# uses it when it is there (or $CTWIN_DEPS_DIR), else the system's headers.
#   bash bench/gpu.sh [OUT_DIR]      (NCCL_HOME=... when NCCL is not beside CUDA)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${OUT:-$here/bench/results/gpu}}"
mkdir -p "$out"
build="$here/build-gpu"
deps="${CTWIN_DEPS_DIR:-$here/build-deps}"
deps_flag=()
[ -f "$deps/include/nlohmann/json.hpp" ] && deps_flag=(-DCTWIN_DEPS_DIR="$deps")
cmake -S "$here/live" -B "$build" -DWITH_CUDA=ON -DCMAKE_BUILD_TYPE=Release "${deps_flag[@]}" > "$out/configure.log" 2>&1 \
  || { tail -20 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
# How the toolchain linked the C++ runtime into the library trainers load (it once came in statically).
ldd "$build/libctwin_flash.so" | grep -q "libstdc++" && echo "libctwin_flash.so: the C++ runtime shared" \
  || echo "libctwin_flash.so: the C++ runtime linked in statically (kept local by checkpoint/flash_exports.map)"

persist="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-gpu-XXXXXX")"
trap 'rm -rf "$persist"' EXIT
"$build/ctwin-gpu-check" "$persist" "${CKPT_BYTES:-4294967296}" > "$out/gpu_check.json" 2> "$out/gpu_check.txt"
code=$?
cat "$out/gpu_check.txt"
[ $code -eq 3 ] && { echo "no usable GPU here (exit 3): nothing measured"; exit 3; }
[ $code -ne 0 ] && { echo "ctwin-gpu-check failed ($code)"; exit 1; }

if PYTHONFAULTHANDLER=1 python3 "$here/tests/live/flash_ctypes_test.py" "$build" > "$out/ctypes.txt" 2>&1; then
  echo "ctypes round trip: passed"
else
  echo "ctypes round trip: FAILED"; cat "$out/ctypes.txt"
  if command -v cuda-gdb > /dev/null; then  # a native backtrace of the writer (cuda-gdb debugs host code too)
    mkdir -p "$persist/py-shm" "$persist/py-disk"
    cuda-gdb -batch -ex run -ex bt -ex "info sharedlibrary" --args python3 "$here/tests/live/flash_ctypes_test.py" "$build" \
      --writer "$persist/py-shm" "$persist/py-disk" > "$out/ctypes_gdb.txt" 2>&1
    grep -A25 "SIGSEGV" "$out/ctypes_gdb.txt" | head -40
  fi
fi
python3 "$here/tests/live/section_timer_gpu_test.py" "$build" 2>&1 | tee "$out/section_timer.txt"

# The synthetic trainer on the GPU, by hand: attempt 0 crashes in step 25, attempt 1 must restore
# step 20 from shared memory (the trainer checks the state it gets back) and finish.
trainer="$build/ctwin-synthetic-trainer"
args=(--device cuda:0 --state-bytes "${TRAINER_BYTES:-4GiB}" --gemm-n 8192 --gemms-per-step 4 --steps 40 --checkpoint-every 10
      --name "gpu-bench-$$" --persist-dir "$persist" --crash-at-step 25)
CTWIN_ATTEMPT=0 "$trainer" "${args[@]}" > "$out/trainer0.txt" 2>&1
crashed=$?
CTWIN_ATTEMPT=1 "$trainer" "${args[@]}" > "$out/trainer1.txt" 2>&1
resumed=$?
rm -f /dev/shm/ctwin-flash-gpu-bench-$$-r0-s*
if [ $crashed -ne 0 ] && [ $resumed -eq 0 ] && grep -q "attempt 1 starts at step 20 (memory)" "$out/trainer1.txt"; then
  echo "synthetic trainer on GPU: crashed (exit $crashed), restored step 20 from memory, state checked, finished"
else
  echo "synthetic trainer on GPU: FAILED (exit $crashed then $resumed)"; cat "$out/trainer0.txt" "$out/trainer1.txt"
fi

live="$build/ctwin-live"
if [ -x "$live" ]; then
  "$live" precheck --json "$out/precheck.json" | tee "$out/precheck.txt"
  "$live" ckpt-bench --persist-dir "$persist" --size 4GiB --json "$out/ckpt_bench.json"
  mkdir -p "$persist/run" "$persist/hang"  # folders of their own: a run adopts the checkpoints it finds
  printf '{"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1min"}, "hang_detection": {"minimum": "20s"}}}\n' \
    > "$out/policy.json"
  "$live" run --policy "$out/policy.json" --events "$out/live_events.csv" --name "gpu-run-$$" \
    --persist-dir "$persist/run" --metrics 127.0.0.1:0 -- "$trainer" --device cuda:0 --state-bytes "${TRAINER_BYTES:-4GiB}" \
    --gemm-n 8192 --gemms-per-step 4 --steps 60 --checkpoint-every 10 --crash-at-step 25 | tee "$out/live_run.txt"
  "$live" run --policy "$out/policy.json" --events "$out/live_events_hang.csv" --name "gpu-hang-$$" \
    --persist-dir "$persist/hang" --metrics 127.0.0.1:0 -- "$trainer" --device cuda:0 --state-bytes "${TRAINER_BYTES:-4GiB}" \
    --gemm-n 8192 --gemms-per-step 4 --steps 60 --checkpoint-every 10 --hang-at-step 35 | tee "$out/live_run_hang.txt"
  # The GPT example on the GPU: flash checkpoints of CUDA tensors from Python, its sections timed by
  # CUDA events, a crash in step 25 restored from shared memory.
  mkdir -p "$persist/gpt"
  CTWIN_PYTHONPATH="$build" "$live" run --policy "$out/policy.json" --events "$out/gpt_events.csv" --name "gpu-gpt-$$" \
    --persist-dir "$persist/gpt" -- python3 "$here/examples/gpt/train.py" --steps 40 --checkpoint-every 10 --width 512 \
    --heads 8 --layers 4 --context 256 --batch 16 --vocab 512 --crash-at-step 25 2>&1 | tail -8 | tee "$out/gpt_run.txt"
  rm -f /dev/shm/ctwin-flash-gpu-run-$$-r0-s* /dev/shm/ctwin-flash-gpu-hang-$$-r0-s* /dev/shm/ctwin-flash-gpu-gpt-$$-r0-s*
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
    print(f"GPU {g['index']} {g['name']} (sm_{g['sm'].replace('.', '')}): GEMM 8192 {g['gemm_8192_tflops']} TFLOP/s, best {g['gemm_best_tflops']} at n={g['gemm_best_n']}; "
          f"HBM {g['hbm_copy_gb_s']} GB/s; PCIe {g['h2d_gb_s']}/{g['d2h_gb_s']} GB/s; check {g['gemm_mismatches']}/{g['gemm_non_finite']}")
    judge(f"GPU {g['index']} burn-in / best cuBLAS", g["burn_in_of_best"], 0.90)
    ok &= g["gemm_mismatches"] == 0 and g["gemm_non_finite"] == 0
for i, n in enumerate(r.get("nvml", [])):
    print(f"GPU {i} in NVML (the labels of its metrics): UUID {n['uuid']}, pci_bus_id {n['pci_bus_id']}, model {n['model']}")
c = r["ckpt_bench"]
judge("snapshot / device->host", c["snapshot_of_d2h"], 0.80)
judge("restore from memory / host->device", c["restore_of_h2d"], 0.80)
print(f"  persist / write+fsync                        {c['persist_of_disk']:7.3f}  (no target)")
sys.exit(0 if ok else 1)
PY

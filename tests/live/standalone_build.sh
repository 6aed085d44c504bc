#!/usr/bin/env bash
# The node side builds and runs on a machine without Debian's development packages, as a bare GPU
# machine is (a compiler, CMake and CUDA/NCCL only). In a private mount namespace (unshare -rm),
# the headers and CMake packages of Boost, Eigen, nlohmann/json, CLI11, PCG, SimGrid, OpenMPI, OpenSSL,
# cpp-httplib and prometheus-cpp, libsimgrid itself and OpenMPI's compiler wrappers are covered by
# empty mounts (the GPU machine of 2026-11-27 had none of the transport's: a build that assumed
# them failed to link there); then:
#   1. without the header bundle, `cmake -S live` fails (the packages are really out of sight);
#   2. with it (scripts/bundle_live_deps.sh), `cmake -S live` builds the whole live side;
#   3. ctwin-live links no SimGrid, runs a CPU precheck, and supervises a crashing synthetic
#      trainer back to the end of its run.
# Skipped (77) where no mount namespace can be made.
#   standalone_build.sh SOURCE_ROOT WORK_DIR
set -uo pipefail
root=$(cd "$1" && pwd)
work=$2
if ! unshare -rm true 2>/dev/null; then
  echo "skipped: this machine cannot make a private mount namespace (unshare -rm)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
bash "$root/scripts/bundle_live_deps.sh" "$work/deps" || exit 1

cat >"$work/inside.sh" <<'INSIDE'
set -uo pipefail
root=$1 work=$2
for d in /usr/include/boost /usr/include/eigen3 /usr/include/nlohmann /usr/include/CLI /usr/include/simgrid /usr/include/xbt \
         /usr/include/smpi /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/cmake /usr/share/cmake/CLI11 \
         /usr/share/cmake/nlohmann_json /usr/share/eigen3 /usr/share/openmpi /usr/include/openssl /usr/include/prometheus; do
  [ -d "$d" ] && mount -t tmpfs none "$d"
done
for f in /usr/lib/x86_64-linux-gnu/libsimgrid.so* /usr/bin/mpicc /usr/bin/mpicxx /usr/bin/mpic++ /usr/bin/mpiCC /usr/bin/mpiexec \
         /usr/bin/mpirun /usr/include/httplib.h /usr/lib/x86_64-linux-gnu/pkgconfig/cpp-httplib.pc /usr/share/pkgconfig/cpp-httplib.pc \
         /usr/include/pcg_random.hpp /usr/include/pcg_extras.hpp /usr/include/pcg_uint128.hpp; do
  [ -e "$f" ] && mount --bind /dev/null "$f"
done
[ -e /usr/include/boost/version.hpp ] && { echo "FAIL: Boost is still visible"; exit 1; }

echo "== 1. without the bundle, the configuration must fail"
if cmake -S "$root/live" -B "$work/no-bundle" -DWITH_CUDA=OFF >"$work/no-bundle.log" 2>&1; then
  echo "FAIL: configured without the bundle: the packages are not hidden"; exit 1
fi
grep -m1 -E "Could not find|Could NOT find|not found" "$work/no-bundle.log"

echo "== 2. with the bundle: cmake -S live"
# A unity build (8 files a compilation): half the compile time of the separate files. What this test
# checks, that nothing outside the bundle is needed, holds the same; that each file includes what
# it uses is checked by the main build, which compiles each file alone.
cmake -S "$root/live" -B "$work/build" -DCTWIN_DEPS_DIR="$work/deps" -DWITH_CUDA="${CTWIN_STANDALONE_CUDA:-OFF}" -DCMAKE_UNITY_BUILD=ON \
  >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; echo "FAIL: configure"; exit 1; }
cmake --build "$work/build" -j "${CTWIN_STANDALONE_JOBS:-2}" >"$work/build.log" 2>&1 \
  || { grep -m5 -E "error" "$work/build.log"; tail -20 "$work/build.log"; echo "FAIL: build"; exit 1; }
for t in ctwin-live ctwin-synthetic-trainer ctwin-gpu-check libctwin_flash.so; do
  [ -e "$work/build/$t" ] || { echo "FAIL: $t was not built"; exit 1; }
done

echo "== 3. ctwin-live runs"
ldd "$work/build/ctwin-live" | tee "$work/ldd.txt"
grep -qiE "simgrid|ns3|gfortran" "$work/ldd.txt" && { echo "FAIL: ctwin-live links the simulator's libraries"; exit 1; }
"$work/build/ctwin-live" precheck --backend cpu --ranks 2 --gemm-n 64 --gemm-iterations 2 --check-n 32 \
  --copy-bytes 1MiB --allreduce-bytes 1MiB --min-of-best 0.2 --timeout 60s >"$work/precheck.txt" 2>&1 \
  || { cat "$work/precheck.txt"; echo "FAIL: precheck"; exit 1; }
mkdir -p "$work/persist"
"$work/build/ctwin-live" run --policy "$root/scenarios/policies/live.json" --events "$work/events.csv" --no-nvml --no-metrics \
  --name "standalone-$$" --persist-dir "$work/persist" -- "$work/build/ctwin-synthetic-trainer" --state-bytes 1MiB \
  --steps 30 --step-ms 5 --checkpoint-every 5 --crash-at-step 12 >"$work/run.txt" 2>&1
code=$?
rm -f /dev/shm/ctwin-flash-standalone-$$-r0-s*
[ $code -eq 0 ] || { cat "$work/run.txt"; echo "FAIL: ctwin-live run exited $code"; exit 1; }
grep -q ",restore,,source=memory step=10" "$work/events.csv" || { cat "$work/events.csv"; echo "FAIL: no restore of step 10"; exit 1; }
grep -q "no cpp-httplib or OpenSSL" "$work/configure.log" || { echo "FAIL: the transport's packages were not hidden"; exit 1; }
"$work/build/ctwin-live" --help | grep -qE "^  (master|agent) " && { echo "FAIL: master/agent offered without their transport"; exit 1; }
echo "standalone live build: built without the packages, no SimGrid linked, precheck and supervised restart pass"
INSIDE
unshare -rm bash "$work/inside.sh" "$root" "$work"

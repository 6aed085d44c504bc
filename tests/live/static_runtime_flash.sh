#!/usr/bin/env bash
# libctwin_flash.so with the C++ runtime linked in statically, as a GPU machine's toolchain once
# built it, loaded into a Python that carries its own (numpy, torch): the ctypes round trip must
# pass. It failed so on the GPU machine (the persister crashed formatting the manifest) and here
# (a persisted step could not be read back) while the library exported its runtime's symbols;
# checkpoint/flash_exports.map keeps them private. Integration tier (a build of its own).
#   static_runtime_flash.sh SOURCE_ROOT WORK_DIR      exit 77: no static libstdc++ or no NumPy
set -uo pipefail
root=$(cd "$1" && pwd)
work=$2
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "skipped: no NumPy for /usr/bin/python3"; exit 77; }
[ -n "$(g++ -print-file-name=libstdc++.a | grep /)" ] && [ -f "$(g++ -print-file-name=libstdc++.a)" ] \
  || { echo "skipped: no static libstdc++ (libstdc++.a)"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
cmake -S "$root/live" -B "$work/build" -DWITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_SHARED_LINKER_FLAGS="-static-libstdc++ -static-libgcc" > "$work/configure.log" 2>&1 \
  || { tail -20 "$work/configure.log"; echo "FAIL: configure"; exit 1; }
cmake --build "$work/build" --target ctwin_flash -j "${CTWIN_STANDALONE_JOBS:-2}" > "$work/build.log" 2>&1 \
  || { grep -m5 error "$work/build.log"; echo "FAIL: build"; exit 1; }
lib="$work/build/libctwin_flash.so"
ldd "$lib" | grep -q "libstdc++" && { echo "FAIL: the C++ runtime is still shared: nothing checked"; exit 1; }
exported=$(nm -D --defined-only "$lib" | grep ' [TWDBV] ' | grep -vc ' ctwin_flash_')
[ "$exported" -eq 0 ] || { echo "FAIL: $exported symbols besides the C API exported"; exit 1; }
PYTHONFAULTHANDLER=1 /usr/bin/python3 "$root/tests/live/flash_ctypes_test.py" "$work/build" > "$work/ctypes.txt" 2>&1 \
  || { cat "$work/ctypes.txt"; echo "FAIL: the ctypes round trip with a static C++ runtime"; exit 1; }
cat "$work/ctypes.txt"
echo "static runtime: libctwin_flash.so with libstdc++ inside passes the ctypes round trip beside NumPy and torch"
rm -rf "$work"

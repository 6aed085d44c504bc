#!/usr/bin/env bash
# Bundles the header-only libraries the node side includes (nlohmann/json, Boost, Eigen, CLI11, PCG),
# exactly the headers its sources reach, so that `cmake -S live -DCTWIN_DEPS_DIR=DIR` builds on a
# machine that has only a compiler, CMake and CUDA/NCCL (a bare GPU machine: bench/gpu.sh).
#   bash scripts/bundle_live_deps.sh DIR        (run where the Debian packages are installed)
# The set comes from the compiler's own dependency lists (-M) over every source the live build
# compiles, plus Boost's configuration folders whole (they pick headers by compiler version).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: bundle_live_deps.sh DIR}"
cxx="${CXX:-c++}"
mkdir -p "$out/include"
include=$(cd "$out/include" && pwd)

sources=$(cd "$root" && ls core/*.cpp models/*.cpp policies/*.cpp live/*/*.cpp)
# Each source's dependencies, then the headers under the four libraries' folders.
deps=$(cd "$root" && for s in $sources; do
  "$cxx" -std=c++20 -M -I. -I/usr/include/eigen3 "$s"
done | tr ' \\' '\n\n' | grep -E '^/usr/include/((boost|eigen3/Eigen|nlohmann|CLI)/|pcg_)' | sort -u)

copy() {  # copy SOURCE_ROOT RELATIVE
  mkdir -p "$include/$(dirname "$2")"
  cp "$1/$2" "$include/$2"
}
count=0
for header in $deps; do
  case "$header" in
    /usr/include/eigen3/*) copy /usr/include/eigen3 "${header#/usr/include/eigen3/}" ;;
    *) copy /usr/include "${header#/usr/include/}" ;;
  esac
  count=$((count + 1))
done
# Boost chooses its compiler and standard-library headers by version: take those folders whole.
for folder in boost/config boost/predef; do
  [ -d "/usr/include/$folder" ] && mkdir -p "$include/$folder" && cp -r "/usr/include/$folder/." "$include/$folder/"
done
echo "bundle_live_deps.sh: $count headers (+ Boost's configuration) in $out/include, $(du -sh "$out" | cut -f1)"

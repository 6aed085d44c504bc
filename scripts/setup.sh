#!/usr/bin/env bash
# Installs what ctwin needs from Debian 12 packages (only what is missing), then builds in Release.
#   scripts/setup.sh            install + configure + build ctwin (what a forecast needs) into ./build
#   scripts/setup.sh --all      the same, then everything else: ctwin-live, the tools, tests and benchmarks
#   scripts/setup.sh --no-build install only
# Runs as root, or through sudo when it is available.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in
  --no-build) ;;
  --all) targets=() ;;  # the default target: all
  "") targets=(--target ctwin) ;;
  *) echo "setup.sh: unknown option '$1' (--all, --no-build)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake pkg-config git
  libsimgrid-dev                # event engine, platform, network and disk models
  libboost-graph-dev            # topology
  libboost-math-dev             # distributions and special functions for fitting
  libboost-random-dev           # distributions that give the same numbers on every platform
  libpcg-cpp-dev                # PCG64: a random stream seeded in constant time (a trial seeds a dozen)
  libboost-dev                  # Boost.Asio/Beast: the live master's asynchronous HTTP server
  libeigen3-dev                 # linear algebra for fitting
  nlohmann-json3-dev            # scenarios and reports
  catch2                        # tests (v2)
  libcli11-dev                  # command line
  libopenmpi-dev openmpi-bin    # trials over machines: mpirun -np N ctwin sweep ...
  python3                       # scripts/convert_public_traces.py
  clang libclang-rt-14-dev      # the fuzzers of tests/fuzz (libFuzzer, ASan, UBSan)
  jupyter-nbconvert python3-ipykernel python3-matplotlib python3-numpy  # notebooks/, run headless by the tests
  python3-pandas                # Calculon imports it: bench/calculon_crosscheck.py runs Calculon as a reference
  python3-jsonschema            # tests/schema_check.py: every JSON in and out against docs/schema/
  librsvg2-bin                  # rsvg-convert: tests/plots_check.py renders every plot the CLI writes
  libcpp-httplib-dev            # live master <-> agent transport (HTTP/1.1 + JSON; README "Dependencies")
  prometheus-cpp-dev            # live metrics (counters, gauges, the text format)
  prometheus                    # promtool: the tests check the metrics' text format
  python3-torch                 # examples/ trainer: real PyTorch DDP (gloo on CPU) under the live master
  slurm-wlm                     # deploy/slurm: the slow-tier test runs the sbatch job on a real single-host Slurm
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "setup.sh: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup.sh: all packages present"
fi

[ "${1:-}" = "--no-build" ] && exit 0

jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$here/build" -j "$jobs" "${targets[@]}"

#!/usr/bin/env bash
# Live mode on the CPU backend, for machines without a GPU: the flash checkpoint engine's
# throughput as ratios to memcpy and write+fsync measured in the same run (BENCHMARKS.md).
#   bash bench/live_cpu.sh [SIZE]        (default 1GiB; /dev/shm needs twice SIZE)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
persist="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-ckpt-XXXXXX")"
trap 'rm -rf "$persist"' EXIT
"$here/build/ctwin" live ckpt-bench --backend cpu --size "${1:-1GiB}" --persist-dir "$persist"

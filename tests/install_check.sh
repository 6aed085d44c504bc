#!/usr/bin/env bash
# `cmake --install` gives a usable prefix: the programs run from it, ctwin_flash.py loads its
# library from it, and the example trainer finds ctwin_flash there.
#   bash tests/install_check.sh BUILD_DIR
set -euo pipefail
build="$1"
prefix="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-install-XXXXXX")"
trap 'rm -rf "$prefix"; rm -f /dev/shm/ctwin-flash-install-check-$$-*' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
cd "$prefix"
bin/ctwin run share/ctwin/scenarios/default.json --trials 5 > run.txt
grep -q "ctwin forecast: default" run.txt
bin/ctwin-live master --help | grep -q -- "--nnodes"
bin/ctwin-live agent --help | grep -q -- "--master"
/usr/bin/python3 -c "
import sys; sys.path.insert(0, 'lib/ctwin/python')
import ctwin_flash
ckpt = ctwin_flash.FlashCheckpoint('install-check-$$')
buf = bytearray(b'x' * 4096); ckpt.register('b', buf, 'dtype=uint8 shape=4096'); ckpt.save(1); ckpt.close()"
grep -q "lib\", \"ctwin\", \"python\"" share/ctwin/gpt/train.py
echo "install: a usable prefix at $prefix"

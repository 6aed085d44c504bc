#!/usr/bin/env bash
# `cpack -G DEB` gives a package that installs and runs: built from the build folder, installed
# with dpkg into a scratch root (its own dpkg database; the host's libraries serve the binaries),
# then `ctwin run` with no argument forecasts the installed default scenario from any folder.
#   bash tests/package_check.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-deb-XXXXXX")"
trap 'rm -rf "$work"' EXIT
command -v dpkg-shlibdeps > /dev/null || { echo "package: dpkg-shlibdeps missing (dpkg-dev)"; exit 77; }

(cd "$build" && cpack -G DEB -B "$work/out" > "$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb="$(ls "$work"/out/ctwin_*.deb)"
dpkg-deb --field "$deb" Package Version Depends > "$work/fields"
grep -q "^Package: ctwin$" "$work/fields"
grep -q "^Version: " "$work/fields"
grep -q "^Depends: .*libsimgrid" "$work/fields"   # found from the binaries by dpkg-shlibdeps
dpkg-deb --contents "$deb" > "$work/contents"
dpkg-deb --ctrl-tarfile "$deb" | tar -t > "$work/control-files"
if grep -qE "postinst|prerm|postrm|preinst" "$work/control-files"; then echo "package: maintainer scripts in $deb"; exit 1; fi
for f in ./usr/bin/ctwin ./usr/bin/ctwin-live ./usr/bin/ctwin-synthetic-trainer ./usr/lib/ctwin/python/ctwin_flash.py ./usr/lib/ctwin/python/ctwin_ranks.py ./usr/lib/ctwin/python/ctwin_store.py \
         ./usr/lib/ctwin/python/libctwin_flash.so \
         ./usr/share/ctwin/scenarios/default.json ./usr/share/ctwin/gpt/train.py ./usr/share/doc/ctwin/scenario.md \
         ./usr/share/doc/ctwin/copyright ./usr/share/doc/ctwin/LICENSE; do
  grep -q " $f$" "$work/contents" || { echo "package: $f missing from $deb"; exit 1; }
done

root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status"
# The scratch root's database knows no other package: its dependencies are the host's.
dpkg --root="$root" --force-depends --force-not-root --log=/dev/null -i "$deb" > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; exit 1; }
dpkg --root="$root" -s ctwin | grep -q "^Status: install ok installed$"

cd "$work"   # no scenarios/ here: the default is the installed one
"$root/usr/bin/ctwin" --version | grep -q "ctwin $(sed -n 's/^Version: //p' "$work/fields")"
"$root/usr/bin/ctwin" run --trials 5 --json "$work/report.json" > run.txt
grep -q "ctwin forecast: default" run.txt
grep -q '"goodput"' "$work/report.json"
PYTHONPATH="$root/usr/lib/ctwin/python" /usr/bin/python3 -c "import ctwin_flash; ctwin_flash.FlashCheckpoint('deb-check-$$').close()"
# An installed notebook runs as it is, from its folder, with the standard kernel, on the package's
# files (here under the scratch root: $CTWIN_ROOT and $CTWIN_BIN say where /usr is).
if [ -x /usr/bin/jupyter-nbconvert ] && /usr/bin/python3 -c "import ipykernel, matplotlib, numpy" 2>/dev/null; then
  (cd "$root/usr/share/doc/ctwin" && CTWIN_ROOT="$root/usr/share/ctwin" CTWIN_BIN="$root/usr/bin/ctwin" MPLCONFIGDIR="$work/mpl" \
     /usr/bin/jupyter-nbconvert --to notebook --execute --output-dir "$work" --output forecasting.executed forecasting.ipynb \
     > "$work/nbconvert.log" 2>&1) || { cat "$work/nbconvert.log"; echo "package: the installed forecasting notebook failed"; exit 1; }
  echo "package: the installed forecasting notebook executed"
fi
rm -f /dev/shm/ctwin-flash-deb-check-$$-*
echo "package: $(basename "$deb") installs into a scratch root and runs"

#!/usr/bin/env bash
# Every report of every scenario (tests/golden/record_reports.sh) against the digests recorded in
# tests/golden/reports.sha256. Some reports are tens of megabytes (a 9,600-GPU run's timeline), so
# the repository keeps their SHA-256, not the files; to see a difference, record both builds and
# diff the folders.
#
#   tests/golden/check_reports.sh CTWIN [WORK_DIR]          exit 1 and the files that differ
#   tests/golden/check_reports.sh CTWIN [WORK_DIR] --bless   record new digests (a deliberate change)
set -euo pipefail
bin=$1
work=${2:-$(mktemp -d)}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CTWIN_CACHE_DIR="$work/step-cache"  # cold: the step model runs, as on a fresh machine
bash "$here/record_reports.sh" "$bin" "$work/reports"
(cd "$work/reports" && find . -type f | LC_ALL=C sort | xargs sha256sum) >"$work/reports.sha256"
if [ "${3:-}" = "--bless" ]; then
  cp "$work/reports.sha256" "$here/reports.sha256"
  echo "recorded $(wc -l <"$here/reports.sha256") digests in $here/reports.sha256"
  exit 0
fi
if ! diff -u "$here/reports.sha256" "$work/reports.sha256" >"$work/reports.diff"; then
  echo "reports differ from tests/golden/reports.sha256 (reports in $work/reports):"
  # Each file whose digest changed, once: the lines the digests' diff adds name them.
  grep '^+[0-9a-f]\{64\}' "$work/reports.diff" | awk '{print "  differs:", $2}' | head -60
  exit 1
fi
echo "all $(wc -l <"$here/reports.sha256") reports identical"

#!/usr/bin/env bash
# Every report of every scenario (tests/golden/record_reports.sh), as readable text
# (golden_text.py), against tests/golden/reports/: a change shows as a diff of what changed.
#
#   tests/golden/check_reports.sh CTWIN [WORK_DIR]          exit 1 and the diff
#   tests/golden/check_reports.sh CTWIN [WORK_DIR] --bless   record the new text (a deliberate change)
set -euo pipefail
bin=$1
work=${2:-$(mktemp -d)}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CTWIN_CACHE_DIR="$work/step-cache"  # cold: the step model runs, as on a fresh machine
bash "$here/record_reports.sh" "$bin" "$work/reports"
rm -rf "$work/golden"
python3 "$here/golden_text.py" "$work/reports" "$work/golden"
if [ "${3:-}" = "--bless" ]; then
  rm -rf "$here/reports"
  cp -r "$work/golden" "$here/reports"
  echo "recorded $(ls "$here/reports" | wc -l) golden files ($(cat "$here"/reports/* | grep -c '^=== ') reports) in $here/reports"
  exit 0
fi
if ! diff -ru "$here/reports" "$work/golden" >"$work/golden.diff"; then
  echo "reports differ from tests/golden/reports/ (the new ones in $work/reports; the whole diff in $work/golden.diff):"
  head -300 "$work/golden.diff"
  [ "$(wc -l <"$work/golden.diff")" -gt 300 ] && echo "... $(($(wc -l <"$work/golden.diff") - 300)) lines more in $work/golden.diff"
  exit 1
fi
echo "all $(cat "$here"/reports/* | grep -c '^=== ') reports identical to tests/golden/reports/ ($(ls "$here/reports" | wc -l) files)"

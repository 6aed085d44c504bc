#!/usr/bin/env bash
# Calibrates from the public records in calibration/data: converts them (checking the committed
# tables are current), then runs `ctwin calibrate` on each. Results in build/public-calibration/.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/convert_public_traces.py --check
out=build/public-calibration
mkdir -p "$out"
./build/ctwin calibrate calibration/data/bloom176b_incidents.csv --out "$out/bloom176b.json" --report "$out/bloom176b_report.json"
./build/ctwin calibrate calibration/data/byterobust_incident_table.csv --out "$out/byterobust.json" --report "$out/byterobust_report.json"

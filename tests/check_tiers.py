#!/usr/bin/env python3
"""Every test registered with ctest carries exactly one tier label (unit, e2e, integration, slow),
so that the README's tier commands together run every test once, and a new test says what it costs.

    check_tiers.py CTEST BUILD_DIR     exit 0, or 1 naming each test with no tier or with two
"""
import json
import subprocess
import sys

TIERS = {"unit", "e2e", "integration", "slow"}
FLOORS = {"core", "models", "policies", "trial", "sim", "report", "calibration", "live", "cli"}


def main():
    ctest, build = sys.argv[1], sys.argv[2]
    listing = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True, check=True)
    tests = json.loads(listing.stdout)["tests"]
    wrong, count = [], {t: 0 for t in sorted(TIERS)}
    for test in tests:
        labels = set()
        for prop in test.get("properties", []):
            if prop["name"] == "LABELS":
                labels.update(prop["value"])
        tiers = labels & TIERS
        if len(tiers) != 1:
            wrong.append("  %s: %s" % (test["name"], ", ".join(sorted(tiers)) if tiers else "no tier"))
            continue
        tier = tiers.pop()
        count[tier] += 1
        # The unit tier's guard: support/fixtures.cpp refuses to start a program under CTWIN_TEST_TIER=unit.
        environment = [v for prop in test.get("properties", []) if prop["name"] == "ENVIRONMENT" for v in prop["value"]]
        if tier == "unit" and test["name"].split(":")[0] in FLOORS and "CTWIN_TEST_TIER=unit" not in environment:
            wrong.append("  %s: a unit test without CTWIN_TEST_TIER=unit (it could start a program unseen)" % test["name"])
    print("%d tests: %s" % (len(tests), ", ".join("%s %d" % kv for kv in count.items())))
    if wrong:
        print("tests without exactly one tier label (unit, e2e, integration, slow), or unguarded:\n" + "\n".join(wrong))
        return 1
    if count["unit"] == 0:
        print("no unit test at all: the floors' tests were not discovered")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

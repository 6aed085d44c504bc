"""The calibration round trip (issue 37): calibrate event logs the twin itself wrote from a known
scenario, and compare what comes back with the truth. For trials 0..N-1 of SCENARIO (default 30):
`ctwin run --events --timeline-trial i --rate-uncertainty off`, then `ctwin calibrate` of that log over the same base.
Passes when the true rate lies inside the reported interval in at least 90 % of the class fits, and
no rate written into a calibrated scenario is more than 2x off for a class with 10 events or more.
Every class of the scenario is exponential, so a class written as a Weibull is a false alarm.
    python3 round_trip.py CTWIN SCENARIO [--trials 30]"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

PER_YEAR = {"year": 1.0, "day": 365.0, "hour": 8760.0}


def per_component_year(text):
    """'0.06106/gpu-year' -> 0.06106 (per gpu-year); '5.064e-4/node-day' -> per node-year."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*/\s*(gpu|node)-(year|day|hour)\s*", text)
    if not m:
        raise ValueError("a rate this test does not read: %r" % text)
    return float(m.group(1)) * PER_YEAR[m.group(3)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ctwin")
    parser.add_argument("scenario")
    parser.add_argument("--trials", type=int, default=30)
    a = parser.parse_args()
    truth = {f["name"]: per_component_year(f["rate"]) for f in json.load(open(a.scenario))["faults"]}
    fits = covered = 0
    off, weibull, trends = [], [], []
    with tempfile.TemporaryDirectory(prefix="ctwin-round-trip-") as work:
        events, out, report = (os.path.join(work, n) for n in ("events.csv", "calibrated.json", "report.json"))
        for trial in range(a.trials):
            # The rates held exact: the truth each log comes from is the scenario's rate itself.
            subprocess.run([a.ctwin, "run", a.scenario, "--events", events, "--timeline-trial", str(trial), "--trials", str(trial + 1),
                            "--rate-uncertainty", "off"],
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run([a.ctwin, "calibrate", events, "--base", a.scenario, "--out", out, "--report", report], check=True,
                           stdout=subprocess.DEVNULL)
            written = {f["name"]: f for f in json.load(open(out))["faults"]}
            for c in json.load(open(report))["classes"]:
                name, true_rate = c["class"], truth.get(c["class"])
                if true_rate is None:
                    continue
                interval = c["rate_per_%s_year" % c["component"]]
                fits += 1
                covered += interval["lower"] <= true_rate <= interval["upper"]
                rate = per_component_year(written[name]["rate"])
                if c["count"] >= 10 and not 0.5 <= rate / true_rate <= 2:
                    off.append("trial %d %s: %d events, written %.4g, truth %.4g (%s)" % (trial, name, c["count"], rate, true_rate, c["rate_from"]))
                if written[name].get("distribution") == "weibull":
                    weibull.append("trial %d %s: %s" % (trial, name, c.get("shape_choice", {}).get("reason", "")))
                if "trend" in written[name]:
                    trends.append("trial %d %s: %s" % (trial, name, c.get("trend_warning", "")))
    print("%d class fits over %d trials: the true rate inside the interval in %d (%.1f %%)" % (fits, a.trials, covered, 100.0 * covered / fits))
    print("written as a Weibull (false alarms: every class is exponential): %d" % len(weibull))
    for line in weibull:
        print("  " + line)
    # Holm keeps each trial's family-wise error at 5 %: a trend written in more than 1 trial of 10 is too many.
    print("written with a trend in time (false alarms: every rate is constant): %d" % len(trends))
    for line in trends:
        print("  " + line)
    print("written more than 2x off with 10 events or more: %d" % len(off))
    for line in off:
        print("  " + line)
    ok = covered >= 0.9 * fits and not off and len(trends) <= max(1, a.trials // 10)
    print("passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

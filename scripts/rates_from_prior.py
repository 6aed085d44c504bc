#!/usr/bin/env python3
"""A scenario's grouped classes to the population prior's forecast for a fleet like its own, with
no data of its own: `ctwin calibrate --base SCENARIO` with no traces, its rates and uncertainties
written back into SCENARIO in place, every other byte kept (the shipped scenarios keep one class a
line). How scenarios/default.json's rates are made from scenarios/priors/public_fleets.json.

    python3 scripts/rates_from_prior.py [--build build] [--prior PRIOR] SCENARIO
Standard library only."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario")
    p.add_argument("--build", default="build")
    p.add_argument("--prior", default="scenarios/priors/public_fleets.json")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "prior.json")
        r = subprocess.run([os.path.join(a.build, "ctwin"), "calibrate", "--base", a.scenario, "--prior", a.prior, "--out", out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(r.stdout + r.stderr)
        with open(out) as f:
            pooled = {c.get("name", c.get("use")): c for c in json.load(f)["faults"]}
    with open(a.scenario) as f:
        text = f.read()
    written = 0
    for name, c in pooled.items():
        if "group" not in c:
            continue
        u = c["rate_uncertainty"]
        new = '"rate": "%s", "rate_uncertainty": {"sigma": %s, "fleet_sigma": %s, "prior": "%s"}' % (c["rate"], u["sigma"], u["fleet_sigma"], u["prior"])
        pattern = re.compile(r'(\{"name": "%s",[^\n]*?)"rate": "[^"]+", "rate_uncertainty": \{[^}]*\}' % re.escape(name))
        text, n = pattern.subn(lambda m: m.group(1) + new, text)
        if n != 1:
            sys.exit("%s: class %s: its rate and rate_uncertainty are not on its first line" % (a.scenario, name))
        written += 1
    json.loads(text)
    with open(a.scenario, "w") as f:
        f.write(text)
    print("%s: %d classes from the prior %s" % (a.scenario, written, a.prior))


if __name__ == "__main__":
    main()

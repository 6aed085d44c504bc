#!/usr/bin/env python3
"""The twin learns its fleet (issue 48): fleets drawn from the population prior, each simulated at
its own (known) rates on 1,024 nodes, calibrated on 0, 1, 7, 30 and 90 days of its own event log,
then the next 30 days forecast. Per point: how often the truth (the interruptions the fleet's log
shows in those 30 days) falls inside the forecast's 90% interval of one run, and the median width
of that interval (p95/p5).

    python3 bench/learning_curve.py [--fleets 50] [--build build] [--out DIR] [--trials 1000]

1. A fleet: a draw of the prior's parameters (scenarios/priors/public_fleets.json), its fleet factor
   and each group's own factor: its five group rates, as `draw_fleet_rates` (models/fleet_prior)
   draws them. Its classes take Llama 3's split within each group (scenarios/default.json's rates),
   held exact: `truth.json`.
2. `ctwin run truth.json --trials 1 --events log.csv` over 120 days: the fleet's own history.
3. For each point T: the log cut at T (an `end` row there), `ctwin calibrate cut.csv --base B`
   (B: default.json on 1,024 nodes; T = 0: no traces, the prior alone), then `ctwin run` of the
   calibrated scenario over 30 days: its interruptions' p5 and p95 against the log's in (T, T + 30 d].
Standard library only; exit 0 when every point meets the goal (>= 85% inside; median p95/p5 <= 3 at 30 days)."""

import argparse
import csv
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

DAY = 86400.0
POINTS = [0, 1, 7, 30, 90]
GROUPS = ["gpu", "gpu_memory", "network", "host", "software"]


def per_day(rate):
    """'0.0636/gpu-year' -> (per component-day, component)."""
    value, unit = rate.split("/")
    component, per = unit.split("-")
    days = {"hour": 1 / 24, "day": 1, "week": 7, "year": 365}[per.rstrip("s")]  # a year as ctwin reads it
    return float(value) / days, component


def draw_fleet(prior, rng, hbm_gb=80.0):
    """Each group's rate per component-day (GPU-days for gpu and gpu_memory, node-days else)."""
    d = prior["draws"]
    i = rng.randrange(len(d["sigma_fleet"]))
    u = rng.gauss(0, d["sigma_fleet"][i])
    rates = {}
    for g in GROUPS:
        x = d["beta_hbm"][i] * math.log(hbm_gb / prior.get("hbm_reference_gb", 80)) if g == "gpu_memory" else 0
        rates[g] = math.exp(d["mu"][g][i] + x + u + rng.gauss(0, d["sigma_group"][i]))
    return rates


class Bench:
    def __init__(self, a):
        self.a = a
        self.ctwin = os.path.abspath(os.path.join(a.build, "ctwin"))
        self.dir = a.out or tempfile.mkdtemp(prefix="ctwin-learning-")
        os.makedirs(self.dir, exist_ok=True)
        with open(a.prior) as f:
            self.prior = json.load(f)
        with open(a.base) as f:
            base = json.load(f)
        base["name"] = "learning_curve_base"
        base["cluster"]["nodes"] = a.nodes + base["cluster"].get("spare_nodes", 0)
        base["job"]["nodes"] = a.nodes
        base["job"]["horizon"] = "%dd" % (max(POINTS) + 30)
        base["job"].pop("steps", None)
        base["job"].pop("tokens", None)
        base.setdefault("simulation", {})["trials"] = a.trials
        self.base = base
        self.base_path = os.path.join(self.dir, "base.json")
        self.write(self.base_path, base)
        gpus = base["cluster"]["gpus_per_node"]
        # Each grouped class's share of its group, in the group's units (Llama 3's split).
        totals = {}
        self.shares = {}
        for f in base["faults"]:
            if "group" not in f or per_day(f["rate"])[1] not in ("gpu", "node"):
                continue  # (a fabric part's class is not pooled: calibrate leaves it to its own count)
            r, component = per_day(f["rate"])
            in_group = r * (gpus if component == "gpu" and f["group"] not in ("gpu", "gpu_memory") else 1)
            in_group /= gpus if component == "node" and f["group"] in ("gpu", "gpu_memory") else 1
            self.shares[f["name"]] = in_group
            totals[f["group"]] = totals.get(f["group"], 0) + in_group
        for f in base["faults"]:
            if f["name"] in self.shares:
                self.shares[f["name"]] /= totals[f["group"]]

    @staticmethod
    def write(path, doc):
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)

    def run(self, *args):
        r = subprocess.run([self.ctwin, *map(str, args)], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("ctwin %s: exit %d\n%s%s" % (" ".join(map(str, args)), r.returncode, r.stdout, r.stderr))
        return r

    def truth(self, k, rates):
        """The fleet's scenario: its rates, held exact."""
        doc = json.loads(json.dumps(self.base))
        doc["name"] = "fleet_%d" % k
        gpus = doc["cluster"]["gpus_per_node"]
        for f in doc["faults"]:
            f.pop("rate_uncertainty", None)
            if f["name"] not in self.shares:
                continue
            g = f["group"]
            _, component = per_day(f["rate"])
            r = rates[g] * self.shares[f["name"]]  # per group component-day
            if component == "gpu" and g not in ("gpu", "gpu_memory"):
                r /= gpus
            if component == "node" and g in ("gpu", "gpu_memory"):
                r *= gpus
            f["rate"] = "%.6g/%s-day" % (r, component)
        path = os.path.join(self.dir, "fleet_%d_truth.json" % k)
        self.write(path, doc)
        return path

    def fleet(self, k):
        rng = random.Random(self.a.seed * 1000003 + k)
        rates = draw_fleet(self.prior, rng)
        truth = self.truth(k, rates)
        log = os.path.join(self.dir, "fleet_%d.csv" % k)
        self.run("run", truth, "--trials", 1, "--seed", 1000 + k, "--events", log, "--jobs", 1)
        with open(log) as f:
            rows = [r for r in csv.DictReader(f) if r["kind"] != "ledger"]
        interruptions = [float(r["time_s"]) for r in rows if r["kind"] == "interrupted"]
        out = []
        for t in POINTS:
            cal = os.path.join(self.dir, "fleet_%d_day%d.json" % (k, t))
            traces = []
            if t > 0:
                cut = os.path.join(self.dir, "fleet_%d_day%d.csv" % (k, t))
                with open(cut, "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=["time_s", "node", "gpu", "kind", "code", "detail"], lineterminator="\n")
                    w.writeheader()
                    for r in rows:
                        if float(r["time_s"]) <= t * DAY and r["kind"] != "end":
                            w.writerow(r)
                    w.writerow({"time_s": "%.6f" % (t * DAY), "node": "", "gpu": "", "kind": "end", "code": "", "detail": ""})
                traces = [cut]
            self.run("calibrate", *traces, "--base", self.base_path, "--out", cal)
            with open(cal) as f:
                doc = json.load(f)
            doc["job"]["horizon"] = "30d"
            self.write(cal, doc)
            report = cal.replace(".json", "_run.json")
            self.run("run", cal, "--trials", self.a.trials, "--seed", 7 + k, "--json", report, "--jobs", 1)
            with open(report) as f:
                i = json.load(f)["interruptions_per_run"]
            seen = sum(1 for x in interruptions if t * DAY < x <= (t + 30) * DAY)
            out.append({"fleet": k, "day": t, "truth": seen, "p5": i["p5"], "p95": i["p95"], "inside": i["p5"] <= seen <= i["p95"],
                        "ratio": i["p95"] / i["p5"] if i["p5"] > 0 else float("inf"),
                        "rates_per_1000_days": {g: rates[g] * 1000 for g in GROUPS}})
        return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fleets", type=int, default=50)
    p.add_argument("--build", default="build")
    p.add_argument("--prior", default="scenarios/priors/public_fleets.json")
    p.add_argument("--base", default="scenarios/default.json")
    p.add_argument("--nodes", type=int, default=1024)
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out")
    a = p.parse_args()
    bench = Bench(a)
    results = []
    for k in range(a.fleets):
        results += bench.fleet(k)
        print("fleet %d of %d" % (k + 1, a.fleets), file=sys.stderr, flush=True)
    print("learning curve: %d fleets drawn from %s, %d nodes, the next 30 days forecast after T days of the fleet's own log"
          % (a.fleets, a.prior, a.nodes))
    print("  T (days)   truth inside the 90% interval   median p95/p5")
    ok = True
    for t in POINTS:
        at = [r for r in results if r["day"] == t]
        inside = sum(r["inside"] for r in at) / len(at)
        ratio = statistics.median(r["ratio"] for r in at)
        print("  %8d   %6.1f%% (%d of %d)                %8.2f" % (t, 100 * inside, sum(r["inside"] for r in at), len(at), ratio))
        ok &= inside >= 0.85
        if t == 30:
            ok &= ratio <= 3
    with open(os.path.join(bench.dir, "learning_curve.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("  goal: >= 85%% inside at every point, median p95/p5 <= 3 after 30 days: %s (files in %s)" % ("met" if ok else "NOT met", bench.dir))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How a forecast's cost grows with the cluster (issue 52): the default scenario scaled to N job
nodes of 8 GPUs (spares scaled alike), 1,000 trials, rates drawn (the default) and held exact.

Each row is `ctwin run --trials 1000` on the default 2 workers: its wall time, CPU time (user +
sys, both workers), peak resident memory, and the mean interruptions a run. The cost per simulated
interruption is the run's CPU time less that of a 1-trial run of the same scenario (start-up:
loading, the fabric's domains, the first trial), over the interruptions the other 999 trials had.
With --repeat N each row is run N times, turn about with its 1-trial run, and the medians shown
(the start-up is most of a small cluster's CPU time: one run's noise is most of its difference).

    python3 bench/million_gpus.py [BUILD] [--nodes 125 1248 12480 124800] [--trials 1000] [--repeat 3]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scaled(nodes, path):
    d = json.load(open(os.path.join(here, "scenarios", "default.json")))
    spares = max(1, nodes * d["cluster"]["spare_nodes"] // d["job"]["nodes"])
    d["job"]["nodes"], d["cluster"]["spare_nodes"], d["cluster"]["nodes"] = nodes, spares, nodes + spares
    json.dump(d, open(path, "w"))


def run(ctwin, scenario, trials, rates, report):
    """One run in a child of its own: (wall s, CPU s, peak MiB, interruptions per run)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    # A fresh process per run, so its peak is its own (RUSAGE_CHILDREN's maxrss is the largest child's).
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]).returncode; "
            "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(u.ru_maxrss); sys.exit(r)")
    out = subprocess.run([sys.executable, "-c", code, ctwin, "run", scenario, "--trials", str(trials),
                          "--rate-uncertainty", rates, "--json", report],
                         stdout=subprocess.PIPE, check=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_mib = int(out.stdout.strip().splitlines()[-1]) / 1024
    mean = json.load(open(report))["interruptions_per_run"]["mean"]
    return wall, cpu, peak_mib, mean


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--nodes", type=int, nargs="+", default=[125, 1248, 12480, 124800])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ctwin = os.path.join(args.build, "ctwin")
    print("| GPUs | rates | wall s | CPU s | peak MiB | interruptions a run | ns per interruption |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        scenario, report = os.path.join(work, "s.json"), os.path.join(work, "r.json")
        for nodes in args.nodes:
            scaled(nodes, scenario)
            for rates in ("on", "off"):
                rows = []
                for _ in range(max(1, args.repeat)):
                    _, cpu1, _, mean1 = run(ctwin, scenario, 1, rates, report)
                    wall, cpu, peak, mean = run(ctwin, scenario, args.trials, rates, report)
                    rows.append((wall, cpu, peak, (cpu - cpu1) / max(1e-9, mean * args.trials - mean1)))
                wall, cpu, peak, marginal = (statistics.median(r[k] for r in rows) for k in range(4))
                print(f"| {nodes * 8:,} | {'drawn' if rates == 'on' else 'exact'} | {wall:.2f} | {cpu:.2f} | "
                      f"{peak:.0f} | {mean:,.1f} | {marginal * 1e9:.0f} |", flush=True)


if __name__ == "__main__":
    main()

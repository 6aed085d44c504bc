#!/usr/bin/env python3
"""How much fleets differ (issue 37, item 2): a random-effects fit of the log hardware-interruption
rate per node-day over the public fleets in scenarios/sources/fleet_hardware_rates.csv.

Each fleet's log rate y_i = ln(k_i / E_i) has within-fleet variance 1 / k_i (Poisson, delta method);
the between-fleet variance tau^2 is DerSimonian and Laird's moment estimate. tau is the lognormal
sigma the shipped scenarios put on their hardware classes (rate_uncertainty.fleet_sigma). Also:
each fleet held out in turn, where its count falls in the predictive distribution of the others'
fit (a Poisson-lognormal, by simulation), and where it falls in the shipped scenario's (median the
Llama 3 rate, sigma tau): the held-out check the issue asks for, on the fleets there are.

    python3 bench/fleet_spread.py [scenarios/sources/fleet_hardware_rates.csv]
"""
import csv
import math
import random
import sys


def dersimonian_laird(rows):
    y = [math.log(r["k"] / r["E"]) for r in rows]
    w = [r["k"] for r in rows]  # 1 / variance
    sw = sum(w)
    mean = sum(wi * yi for wi, yi in zip(w, y)) / sw
    q = sum(wi * (yi - mean) ** 2 for wi, yi in zip(w, y))
    c = sw - sum(wi * wi for wi in w) / sw
    tau2 = max(0.0, (q - (len(rows) - 1)) / c) if c > 0 else 0.0
    ws = [1 / (1 / wi + tau2) for wi in w]
    mu = sum(wi * yi for wi, yi in zip(ws, y)) / sum(ws)
    return mu, math.sqrt(tau2), math.sqrt(1 / sum(ws)), q


def predictive_rank(count, exposure, log_median, sigma, draws=200000, seed=1):
    """P(K < count) + P(K = count) / 2 for K ~ Poisson(E exp(log_median + sigma Z))."""
    rng = random.Random(seed)
    below = equal = 0
    for _ in range(draws):
        lam = exposure * math.exp(log_median + sigma * rng.gauss(0, 1))
        # Poisson by inversion in logs (lam up to a few thousand here)
        k, p = 0, math.exp(-lam) if lam < 700 else 0.0
        if p == 0.0:  # normal approximation for large means
            k = max(0, round(rng.gauss(lam, math.sqrt(lam))))
        else:
            u, cum = rng.random(), p
            while u > cum:
                k += 1
                p *= lam / k
                cum += p
        below += k < count
        equal += k == count
    return (below + equal / 2) / draws


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "scenarios/sources/fleet_hardware_rates.csv"
    rows = [{"fleet": r["fleet"], "gpu": r["gpu"], "k": float(r["hardware_interruptions"]), "E": float(r["nodes"]) * float(r["days"])}
            for r in csv.DictReader(open(path))]
    print("%-12s %-10s %6s %10s %14s" % ("fleet", "gpu", "count", "node-days", "per node-day"))
    for r in rows:
        print("%-12s %-10s %6.0f %10.0f %14.3g" % (r["fleet"], r["gpu"], r["k"], r["E"], r["k"] / r["E"]))
    mu, tau, se, q = dersimonian_laird(rows)
    print("\nall fleets: median rate %.3g per node-day (se of its log %.2f), between-fleet sigma tau = %.2f (Q = %.1f on %d df)"
          % (math.exp(mu), se, tau, q, len(rows) - 1))
    same = [r for r in rows if r["gpu"].startswith("A100")]
    if len(same) >= 2:
        _, tau_a100, _, _ = dersimonian_laird(same)
        print("A100 fleets only (one generation): tau = %.2f" % tau_a100)
    llama = next(r for r in rows if r["fleet"].startswith("llama3"))
    print("\nheld out          rank in the others' fit   rank in the shipped scenario (Llama 3's rate, sigma %.2f)" % tau)
    for i, r in enumerate(rows):
        others = rows[:i] + rows[i + 1:]
        m, t, s, _ = dersimonian_laird(others)
        own = predictive_rank(r["k"], r["E"], m, math.hypot(t, s))
        shipped = predictive_rank(r["k"], r["E"], math.log(llama["k"] / llama["E"]), tau)
        print("%-16s  %8.3f (tau %.2f)            %8.3f" % (r["fleet"], own, t, shipped))
    print("\n(a rank within 0.05..0.95 is inside the 90% predictive interval)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""An efficiency preset for torchtitan (PyTorch FSDP2) on A100 80GB in BF16, fitted on torchtitan's
own published table (scenarios/sources/torchtitan_fsdp2_a100.csv, 64 A100 80GB) and checked on
the rows it was not fitted on. Prints a Markdown table (docs/step-time.md).

  /usr/bin/python3 bench/fit_torchtitan.py [build/ctwin] [--max-error 0.15]
                                           [--fit "llama3-8b/selective op,llama3-70b/full,llama2-13b/no"]

Rows: only those whose activation checkpointing maps onto `recompute` ("no", "selective op",
"full"; torchtitan's "selective layer" has no counterpart) and whose layout fits in 80 GiB under
the step model's memory (Llama 2 70B with selective op at one sequence does not: 89 GiB of
activations). Five rows remain, at three model sizes (h 4,096, 5,120, 8,192). Each runs as
bench/validate_fsdp.py builds it (ZeRO-3, the assumed fabric: NVLink 300 GB/s, a 200 Gb/s NIC a
GPU, one leaf), with the `a100-bf16` preset's other fields (attention at the layers' efficiency;
`dp_overlap` plays no part under ZeRO-3) and three of its own:

  gemm, bandwidth         always fitted (bandwidth: the achieved share of the simulated collectives)
  gemm_half_hidden (h1/2) the width law gemm * h / (h + h1/2): kept only if the fit with it
                          predicts the held-back rows better (smaller RMS error over them, all the
                          held-back rows counted: the worst is the 13B selective op row either way,
                          see below) than the fit without it on the same rows, and its
                          asymptote stays at or below 0.85 of peak (what cuBLAS's BF16 GEMMs
                          reach on A100; above it the law absorbs something else)

Fitted on one row of each size (by default the first row of each size in the table that maps:
Llama 3 8B selective op, Llama 3 70B full, Llama 2 13B no checkpointing); the other exact rows
are predicted. The fit minimises the RMS relative error of tokens/s/GPU on the fitted rows:
 1. on a bandwidth grid (0.50 to 1.00 by 0.05), each fitted row's efficiency that reproduces its
    published figure is found by root-finding (only h * gemm / (h + h1/2) matters to one row);
    gemm (and h1/2) then follow by linear least squares on 1/efficiency against 1/h;
    each grid point is run forward and the best kept;
 2. a pattern search refines (gemm, bandwidth), or (the efficiencies at h 4,096 and 8,192,
    bandwidth) for the law, on the forward runs, down to 0.0003 in efficiency and 0.0025 in
    bandwidth; the law's search also starts from the one-efficiency fit (h1/2 0), which it
    contains. About 400-600 `ctwin step` runs in all, 15-20 s.
With --max-error, exits 1 when a predicted row misses by more.

What the table cannot show: torchtitan's "selective op" checkpointing recomputes every second
matrix product of the forward (its policy saves the outputs of mm and SDPA except every other mm),
where `recompute: selective` recomputes only the attention core; the step model runs the two
13B rows (no checkpointing, selective op) within 0.1 % of each other, the table 13 % apart.
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

from validate_fsdp import SHAPES, scenario
from validate_h100 import ROOT, arguments

PRESET = "a100-bf16"
EXACT = ("no", "selective op", "full")
GPUS_PER_NODE = 8
BANDWIDTHS = [round(0.50 + 0.05 * i, 2) for i in range(11)]
H1, H2 = 4096.0, 8192.0  # the widths at which the law's efficiencies are searched


PLAUSIBLE_GEMM = 0.85  # the largest GEMM efficiency an A100's BF16 kernels reach


def size(model):
    return model.split("-")[1]


class Runner:
    """`ctwin step` on one row at given efficiencies, tokens/s/GPU (None when it does not run)."""

    def __init__(self, binary, work):
        self.binary, self.work, self.calls, self.cache = binary, work, 0, {}

    def run(self, row, gemm, bandwidth, half=0.0):
        s = scenario(row, 3)
        eff = {"preset": PRESET, "gemm": gemm, "bandwidth": bandwidth}
        if half > 0:
            eff["gemm_half_hidden"] = half
        s["workload"]["efficiency"] = eff
        path, out = os.path.join(self.work, "s.json"), os.path.join(self.work, "step.json")
        with open(path, "w") as f:
            json.dump(s, f)
        self.calls += 1
        run = subprocess.run([self.binary, "step", path, "--json", out], capture_output=True, text=True)
        if run.returncode != 0:
            return None, run.stderr.strip().split(": ")[-1]
        with open(out) as f:
            result = json.load(f)
        return result["tokens_per_s"] / result["gpus"], ""

    def tokens(self, i, row, achieved, bandwidth):
        """Tokens/s/GPU at the layers' achieved efficiency (gemm at h1/2 0: the same step)."""
        key = (i, round(achieved, 7), round(bandwidth, 6))
        if key not in self.cache:
            self.cache[key] = self.run(row, min(1.0, achieved), bandwidth)[0]
        return self.cache[key]

    def inverse(self, i, row, bandwidth, published, lo=0.2, hi=1.0):
        """The achieved efficiency at which the row runs at its published rate (None if none up to 1)."""
        flo, fhi = self.tokens(i, row, lo, bandwidth), self.tokens(i, row, hi, bandwidth)
        if fhi < published:
            return None
        if flo > published:
            return lo
        side = 0
        for _ in range(40):  # Illinois: regula falsi that halves the stale end
            e = lo + (published - flo) * (hi - lo) / (fhi - flo)
            f = self.tokens(i, row, e, bandwidth)
            if abs(f / published - 1) < 2e-4 or hi - lo < 1e-6:
                return e
            if f < published:
                lo, flo = e, f
                if side < 0:
                    fhi = published + (fhi - published) / 2
                side = -1
            else:
                hi, fhi = e, f
                if side > 0:
                    flo = published - (published - flo) / 2
                side = 1
        return e


def achieved(gemm, half, h):
    return gemm * h / (h + half)


def law_from(e1, e2):
    """gemm, h1/2 whose law passes through e1 at h 4,096 and e2 at h 8,192 (None if out of bounds)."""
    y = (1 / e1 - 1 / e2) / (1 / H1 - 1 / H2)
    x = 1 / e2 - y / H2
    if y < 0 or x < 1 or x <= 0:
        return None
    return 1 / x, y / x


def least_squares(points, law):
    """gemm, h1/2 minimising the relative misfit of 1/e = (1 + h1/2 / h) / gemm over (h, e) points."""
    if not law:
        g = sum(1 / e for _, e in points) / sum(1 / e ** 2 for _, e in points)
        return min(1.0, g), 0.0
    # minimise sum (e (x + y / h) - 1)^2: the normal equations in x, y
    a11 = sum(e * e for h, e in points)
    a12 = sum(e * e / h for h, e in points)
    a22 = sum(e * e / h / h for h, e in points)
    b1 = sum(e for h, e in points)
    b2 = sum(e / h for h, e in points)
    det = a11 * a22 - a12 * a12
    if len({h for h, _ in points}) < 2 or abs(det) < 1e-30:
        return least_squares(points, False)
    x, y = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
    if y <= 0:
        return least_squares(points, False)
    if x < 1:  # gemm at most 1: refit h1/2 alone with gemm 1
        y = max(0.0, sum(e * (1 - e) / h for h, e in points) / a22)
        x = 1.0
    return 1 / x, y / x


def fit(runner, fit_rows, law, seed=None):
    """(gemm, h1/2, bandwidth, RMS relative error on the fitted rows)."""
    def errors(gemm, half, bandwidth):
        out = []
        for i, r, h, published in fit_rows:
            t = runner.tokens(i, r, achieved(gemm, half, h), bandwidth)
            out.append(math.inf if t is None else t / published - 1)
        return out

    def rms(gemm, half, bandwidth):
        return math.sqrt(sum(e * e for e in errors(gemm, half, bandwidth)) / len(fit_rows))

    best = None
    for b in BANDWIDTHS:
        points = [(h, runner.inverse(i, r, b, published)) for i, r, h, published in fit_rows]
        points = [(h, e) for h, e in points if e is not None]
        if not points:
            continue
        gemm, half = least_squares(points, law)
        score = rms(gemm, half, b)
        if best is None or score < best[0]:
            best = (score, gemm, half, b)
    score, gemm, half, b = best
    # Pattern search on the forward runs.
    if law:
        p = [achieved(gemm, half, H1), achieved(gemm, half, H2), b]
        to_law = lambda q: law_from(q[0], q[1])
        steps, floors = [0.02, 0.02, 0.02], [0.0003, 0.0003, 0.0025]
    else:
        p = [gemm, b]
        steps, floors = [0.02, 0.02], [0.0003, 0.0025]

    def score_of(q):
        if q[-1] <= 0 or q[-1] > 1 or any(v <= 0 for v in q[:-1]):
            return math.inf
        if law:
            gh = to_law(q)
            return math.inf if gh is None else rms(gh[0], gh[1], q[-1])
        return math.inf if q[0] > 1 else rms(q[0], 0.0, q[-1])

    def search(p, steps):
        current = score_of(p)
        while True:
            improved = False
            for k in range(len(p)):
                if steps[k] <= floors[k]:
                    continue
                for sign in (1, -1):
                    q = list(p)
                    q[k] += sign * steps[k]
                    s = score_of(q)
                    if s < current - 1e-9:
                        p, current, improved = q, s, True
                        break
            if not improved:
                if all(s <= f for s, f in zip(steps, floors)):
                    return current, p
                steps = [max(f, s / 2) if s > f else s for s, f in zip(steps, floors)]

    current, p = search(p, steps)
    if law and seed is not None:  # the law holds the one efficiency (h1/2 0): start there too
        other = search([seed[0], seed[0], seed[2]], [0.02, 0.02, 0.02])
        if other[0] < current:
            current, p = other
    if law:
        gemm, half = to_law(p)
    else:
        gemm, half = p[0], 0.0
    # As a preset would state them.
    gemm, half, b = round(gemm, 4), float(round(half)), round(p[-1], 3)
    return gemm, half, b, rms(gemm, half, b)


def main():
    args, max_error = arguments()
    choice = "llama3-8b/selective op,llama3-70b/full,llama2-13b/no"
    if "--fit" in args:
        at = args.index("--fit")
        choice = args[at + 1]
        del args[at:at + 2]
    binary = args[0] if args else os.path.join(ROOT, "build", "ctwin")
    with open(os.path.join(ROOT, "scenarios", "sources", "torchtitan_fsdp2_a100.csv")) as f:
        rows = list(csv.DictReader(f))
    wanted = [tuple(c.split("/", 1)) for c in choice.split(",")]
    started = time.time()
    with tempfile.TemporaryDirectory() as work:
        runner = Runner(binary, work)
        usable, why = [], {}
        for i, r in enumerate(rows):
            if r["activation_checkpointing"] not in EXACT:
                why[i] = "not used: no exact checkpointing (run as selective)"
            elif runner.run(r, 0.7, 1.0)[0] is None:
                why[i] = "not used: does not fit in 80 GiB"
            else:
                usable.append(i)
        fitted = []
        for model, ac in wanted:
            hits = [i for i in usable if rows[i]["model"] == model and rows[i]["activation_checkpointing"] == ac]
            if not hits:
                print(f"fit_torchtitan: no usable row {model}/{ac}", file=sys.stderr)
                return 2
            fitted.append(hits[0])
        predicted = [i for i in usable if i not in fitted]
        if len(fitted) < 2 or not predicted:
            print("fit_torchtitan: too few exact rows to fit and predict", file=sys.stderr)
            return 2
        fit_rows = [(i, rows[i], float(SHAPES[rows[i]["model"]][1]), float(rows[i]["tokens_per_s_per_gpu"])) for i in fitted]
        fits = {False: fit(runner, fit_rows, False)}
        fits[True] = fit(runner, fit_rows, True, seed=fits[False])

        results = {}
        for law, (gemm, half, b, _) in fits.items():
            results[law] = {i: runner.run(r, gemm, b, half)[0] for i, r in enumerate(rows)
                            if i in usable or why[i].startswith("not used: no exact")}

        def worst_mean(law):
            errs = [abs(results[law][i] / float(rows[i]["tokens_per_s_per_gpu"]) - 1) for i in predicted]
            return max(errs), sum(errs) / len(errs), math.sqrt(sum(e * e for e in errs) / len(errs))

        # h1/2 is kept only when it predicts the held-back rows better: a smaller RMS error over them
        # ... and only when its asymptote is a GEMM efficiency an A100 reaches (cuBLAS BF16 tops
        # out near 85 % of peak): above that the law is absorbing something else.
        law_kept = worst_mean(True)[2] < worst_mean(False)[2] and fits[True][1] > 0 and fits[True][0] <= PLAUSIBLE_GEMM
        chosen, other = law_kept, not law_kept
        calls, elapsed = runner.calls, time.time() - started

    def cell(law, i, published):
        t = results[law].get(i)
        if t is None:
            return "does not fit | -"
        return f"{t:.0f} | {100 * (t / published - 1):+.1f} %"

    other_name = "without h½" if law_kept else "with h½"
    print(f"| model | h | seq | batch/GPU | AC | published tokens/s/GPU | predicted | error | {other_name} | error | role |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for i, r in enumerate(rows):
        published = float(r["tokens_per_s_per_gpu"])
        role = "fitted" if i in fitted else "predicted" if i in predicted else why[i]
        print(f"| {r['model']} | {SHAPES[r['model']][1]} | {r['seq_len']} | {r['local_batch']} | {r['activation_checkpointing']} | "
              f"{published:.0f} | {cell(chosen, i, published)} | {cell(other, i, published)} | {role} |")

    def line(law):
        gemm, half, b, score = fits[law]
        worst, mean, rms = worst_mean(law)
        law_text = f"gemm_half_hidden {half:.0f}" if law else "gemm_half_hidden none (0)"
        return (f"gemm {gemm:.4f}, {law_text}, bandwidth {b:.3f}; RMS error on the fitted rows {100 * score:.1f} %; "
                f"predicted: worst {100 * worst:.1f} %, mean {100 * mean:.1f} %, RMS {100 * rms:.1f} %")

    print(f"\n- fitted on {len(fitted)} rows ({', '.join(rows[i]['model'] + ' ' + rows[i]['activation_checkpointing'] for i in fitted)}), "
          f"predicted {len(predicted)}; the rest of `{PRESET}` kept (attention at the layers' efficiency)")
    print(f"- preset ({'with' if law_kept else 'without'} h½): {line(chosen)}")
    print(f"- {other_name}: {line(other)}")
    print(f"- h½ {'kept' if law_kept else 'dropped'}: with it the held-back rows' RMS error is "
          f"{100 * worst_mean(True)[2]:.1f} %, without it {100 * worst_mean(False)[2]:.1f} %")
    print(f"- {calls} `ctwin step` runs, {elapsed:.1f} s")
    worst = worst_mean(chosen)[0]
    if max_error is not None and worst > max_error:
        print(f"fit_torchtitan: a predicted row misses by {100 * worst:.1f} %, over {100 * max_error:.0f} %", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The flash attention kernel's efficiency by pass, mask, head dimension and sequence (issue 38
item 3), from FlashAttention-3's published H100 figures (scenarios/sources/fa3_h100_attention.csv).

  /usr/bin/python3 bench/fit_flash_kernels.py

Each published series (a pass, a mask, a head dimension) gets the law the step model uses for the
attention core: efficiency(c) = E c / (c + c_half) of the H100's 989 TFLOP/s dense BF16 peak at a
chunk of c tokens. 1 / efficiency is linear in 1 / c, so the fit is least squares there. Fitted on
three lengths (512, 2,048, 8,192), the other three (1,024, 4,096, 16,384) are predicted. Then the
forward without the mask, fitted on all six of the paper's lengths, predicts PyTorch's own
measurement of the same kernel (pytorch/benchmark PR 2391). Last, what the head dimension does
where the paper gives two of them. The lines to put in a scenario's `efficiency` for causal
training at head dimension 128 close the output.
"""
import csv
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEAK_TFLOPS = 989.0  # H100 SXM5, dense BF16/FP16
FIT_LENGTHS = {512, 2048, 8192}


def fit(seq, eff):
    """E and c_half of efficiency = E c / (c + c_half), least squares in 1 / efficiency."""
    inverse, slope = np.linalg.lstsq(np.column_stack([np.ones_like(seq), 1 / seq]), 1 / eff, rcond=None)[0]
    return 1 / inverse, slope / inverse


def law(e, half, seq):
    return e * seq / (seq + half)


def main():
    rows = list(csv.DictReader(open(os.path.join(ROOT, "scenarios", "sources", "fa3_h100_attention.csv"))))
    series = {}
    for r in rows:
        key = (r["pass"], r["causal"] == "true", int(r["head_dim"]), "paper" if r["source"].startswith("Shah") else "pytorch")
        series.setdefault(key, []).append((int(r["seq_len"]), float(r["tflops"]) / PEAK_TFLOPS))
    print("series (pass, mask, head dim)        E       c_half   fitted on 512/2k/8k; predicted 1k/4k/16k: error")
    worst = 0.0
    fitted_all = {}
    for key, points in sorted(series.items()):
        if key[3] != "paper":
            continue
        seq = np.array([p[0] for p in points], dtype=float)
        eff = np.array([p[1] for p in points])
        chosen = np.array([s in FIT_LENGTHS for s in seq])
        e, half = fit(seq[chosen], eff[chosen])
        errors = law(e, half, seq[~chosen]) / eff[~chosen] - 1
        worst = max(worst, float(np.max(np.abs(errors))))
        fitted_all[key] = fit(seq, eff)
        name = f"{key[0]}, {'causal' if key[1] else 'no mask'}, {key[2]}"
        print(f"  {name:33s} {e:.4f}  {half:7.0f}   " + "  ".join(f"{int(s)}: {100 * x:+.1f}%" for s, x in zip(seq[~chosen], errors)))
    print(f"  worst predicted length: {100 * worst:.1f}%")

    forward = fitted_all[("forward", False, 128, "paper")]
    measured = series[("forward", False, 128, "pytorch")]
    errors = [law(*forward, s) / eff - 1 for s, eff in measured]
    print("\nthe paper's forward (no mask, head dim 128; all six lengths: E %.4f, c_half %.0f) against PyTorch's measurement:" % forward)
    print("  " + "  ".join(f"{s}: {100 * x:+.1f}%" for (s, _), x in zip(measured, errors)) + f"   (mean {100 * np.mean(np.abs(errors)):.1f}%)")

    print("\nthe head dimension, at 16k tokens (the paper's two panels of one pass and mask):")
    for (p, causal, small, large) in [("backward", False, 64, 128), ("forward", True, 128, 256)]:
        a = dict(series[(p, causal, small, "paper")])[16384]
        b = dict(series[(p, causal, large, "paper")])[16384]
        print(f"  {p}, {'causal' if causal else 'no mask'}: head dim {large} runs {100 * (b / a - 1):+.1f}% faster than {small}")

    fwd = fitted_all[("forward", True, 128, "paper")]
    bwd = fitted_all[("backward", False, 128, "paper")]
    ratio = fitted_all[("forward", True, 128, "paper")][0] / fitted_all[("forward", False, 128, "paper")][0]
    print("\ncausal training at head dimension 128 (the backward is published without the mask only):")
    print(f'  "attention": {fwd[0]:.4f}, "attention_half_seq": {fwd[1]:.0f}, "attention_backward": {bwd[0]:.4f}, "attention_backward_half_seq": {bwd[1]:.0f}')
    print(f"  (the mask costs the forward {100 * (1 - ratio):.1f}% at long chunks and most at short ones; the backward's would add to it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The step model on H100 in BF16 and FP8: NVIDIA's dgxc-benchmarking v25.04 table (Llama 3.1 8B,
70B and 405B on DGX H100 with NeMo, BF16 and FP8 side by side, each with its TP/PP/CP/DP/VP and
batch; scenarios/sources/dgxc_llama31_h100_v2504.csv). Prints Markdown tables (docs/step-time.md).

  /usr/bin/python3 bench/validate_dgxc.py [build/ctwin] [--max-error 0.15]

BF16: the GEMM efficiency and the exposed share of communication are fitted, as validate_h100.py
does for FP8, on one row of each size (8B on 8 GPUs, 70B on 64, 405B on 512), and every other BF16
row is predicted. FP8: the `h100-fp8` preset (fitted on NeMo 24.07's table) is run as it is on
dgxc's FP8 rows, which it never saw. With --max-error, exits 1 when a predicted BF16 row misses by
more than that, or when the `h100-bf16` preset is not this fit (within 0.5 %).

The model shapes are Llama 3.1's (config.json of meta-llama/Llama-3.1-8B, -70B, -405B); the
405B proxy rows have fewer layers (the table's `layers`). As in the FP8 fit, context-parallel
ring steps hide behind the chunk's attention (cp_overlap 1, as Transformer Engine overlaps them).
"""
import csv
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

from validate_h100 import ROOT, arguments, step, verdict

SHAPES = {  # hidden, heads, kv_heads, ffn_hidden, vocab
    "llama3.1-8b": (4096, 32, 8, 14336, 128256),
    "llama3.1-70b": (8192, 64, 8, 28672, 128256),
    "llama3.1-405b": (16384, 128, 8, 53248, 128256),
    "llama3.1-405b-proxy": (16384, 128, 8, 53248, 128256),
}
FIT = {("llama3.1-8b", 8), ("llama3.1-70b", 64), ("llama3.1-405b", 512)}


def rows_of(path):
    out = []
    for r in csv.DictReader(open(path)):
        hidden, heads, kv, ffn, vocab = SHAPES[r["model"]]
        r.update(hidden=hidden, heads=heads, kv_heads=kv, ffn_hidden=ffn, vocab=vocab, gated_mlp="true")
        # 126 layers on 8 x 8 stages (30 on 4 x 8): NeMo counts the embedding and the loss as a
        # layer each (account_for_embedding/loss_in_pipeline_split), the only split that divides.
        chunks = int(r["pp"]) * (int(r["vp"]) if r["vp"] not in ("", "NA") else 1)
        if int(r["pp"]) > 1 and int(r["layers"]) % chunks and (int(r["layers"]) + 2) % chunks == 0:
            r.update(embedding_as_layer="true", loss_as_layer="true")
        out.append(r)
    return out


def main():
    args, max_error = arguments()
    binary = args[0] if args else os.path.join(ROOT, "build", "ctwin")
    rows = rows_of(os.path.join(ROOT, "scenarios", "sources", "dgxc_llama31_h100_v2504.csv"))
    bf16 = [r for r in rows if r["precision"] == "bf16"]
    fp8 = [r for r in rows if r["precision"] == "fp8"]
    parts, published, preset_steps = [], [], []
    with tempfile.TemporaryDirectory() as work:
        for r in bf16:
            full = step(binary, r, 1, 1, work)
            half = step(binary, r, 0.5, 1, work)
            a = half["step_s"] - full["step_s"]
            parts.append((a, full["step_s"] - a))
            published.append(float(r["step_s"]))
            try:  # what a BF16 H100 scenario that states no efficiency gets (none before the preset)
                preset_steps.append(step(binary, r, None, None, work, preset=True, quiet=True)["step_s"])
            except subprocess.CalledProcessError:
                preset_steps.append(float("nan"))
        fp8_steps = [step(binary, r, None, None, work, preset=True)["step_s"] for r in fp8]
    fit = [i for i, r in enumerate(bf16) if (r["model"], int(r["gpus"])) in FIT]
    x, y = np.linalg.lstsq(np.array([parts[i] for i in fit]), np.array([published[i] for i in fit]), rcond=None)[0]
    header = "| model | GPUs | TP | PP | CP | VP | published step | simulated step | error | role |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    print("BF16 (fitted and predicted)\n")
    print(header)
    worst = preset_gap = 0
    for i, r in enumerate(bf16):
        simulated = parts[i][0] * x + parts[i][1] * y
        preset_gap = max(preset_gap, abs(preset_steps[i] / simulated - 1)) if not math.isnan(preset_steps[i]) else math.inf
        error = simulated / published[i] - 1
        role = "fitted" if i in fit else "predicted"
        if role == "predicted":
            worst = max(worst, abs(error))
        print(f"| {r['model']} | {r['gpus']} | {r['tp']} | {r['pp']} | {r['cp']} | {r['vp']} | {published[i]:.2f} s | "
              f"{simulated:.2f} s | {100 * error:+.1f} % | {role} |")
    print(f"\n- H100 BF16: GEMM efficiency {1 / x:.4f}, exposed communication factor (1 - overlap) / bandwidth {y:.4f}; "
          f"worst predicted error {100 * worst:.1f} %")
    print(f"- preset h100-bf16 (no efficiency stated): within {100 * preset_gap:.2f} % of the fitted step on every BF16 row")
    print("\nFP8 with the h100-fp8 preset (fitted on NeMo 24.07; none of these rows seen)\n")
    print(header)
    worst_fp8 = 0
    for r, simulated in zip(fp8, fp8_steps):
        error = simulated / float(r["step_s"]) - 1
        worst_fp8 = max(worst_fp8, abs(error))
        print(f"| {r['model']} | {r['gpus']} | {r['tp']} | {r['pp']} | {r['cp']} | {r['vp']} | {float(r['step_s']):.2f} s | "
              f"{simulated:.2f} s | {100 * error:+.1f} % | predicted |")
    print(f"\n- h100-fp8 on dgxc's FP8 rows: worst error {100 * worst_fp8:.1f} %")
    return verdict("validate_dgxc", "h100-bf16", worst, preset_gap, max_error)


if __name__ == "__main__":
    sys.exit(main())

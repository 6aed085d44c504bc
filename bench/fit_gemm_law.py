#!/usr/bin/env python3
"""GEMM efficiency as a function of the work (issue 38 item 2), fitted across model sizes on
MosaicML's MPT benchmark table (H100 80GB BF16, FSDP; scenarios/sources/mosaicml_mpt_h100_bf16.csv),
single-node rows up to 2,048 tokens (longer sequences are the attention's question).

  /usr/bin/python3 bench/fit_gemm_law.py [build/ctwin]

The law: a layer's matrix products grow as h², its memory-bound element-wise work (norms,
activations, residuals, casts: the bytes Korthikanti et al. count per layer, 34·s·b·h without
tensor parallelism) as h, so the layers run at gemm · h / (h + h_half) of peak. Each row is run
through `ctwin step` at gemm 1 (compute A at peak) and 1/2 (the rest, R = step - 2A... the
exposed communication), so the step is A · (1 + h_half / h) / gemm + R: linear in 1 / gemm and
h_half / gemm. Fitted by least squares on the rows of three sizes (760m, 3b, 13b at their shortest
sequence), predicting every other row; beside it, one efficiency fitted on the same rows (the law
with h_half = 0), as the presets do.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHAPES = {  # layers, d_model, heads (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml; NumParams checks them)
    "760m": (24, 1536, 12), "1b": (24, 2048, 16), "3b": (32, 2560, 20), "7b": (32, 4096, 32),
    "13b": (40, 5120, 40), "30b": (48, 7168, 56), "70b": (80, 8192, 64),
}
FIT = {("760m", 512), ("3b", 512), ("13b", 1024)}


def scenario(row, gemm):
    layers, hidden, heads = SHAPES[row["model"]]
    gpus = int(row["gpus"])
    return {
        "schema_version": 1, "name": "mpt-" + row["model"],
        "cluster": {"nodes": gpus // 8, "gpus_per_node": 8, "gpu": {"model": "H100-SXM5-80GB", "peak_bf16": "989TFLOP/s"}},
        "job": {"nodes": gpus // 8, "horizon": "1d"},
        "workload": {"model": {"layers": layers, "hidden": hidden, "heads": heads, "vocab": 50368, "seq_len": int(row["seq_len"])},
                     "parallel": {"micro_batch": int(row["micro_batch"]), "global_batch": int(row["global_batch"]), "zero_stage": 3,
                                  "recompute": "full" if row["activation_checkpointing"] == "true" else "none"},
                     "efficiency": {"gemm": gemm, "bandwidth": 1},
                     "fabric": {"nvlink": "450GB/s", "nic": "400Gbps"}},
        "faults": [], "checkpoint": {"save_time": "1min", "restore_time": "1min"}, "restart": {"overhead": "1min"},
        "policies": {"checkpoint": {"type": "fixed", "interval": "1h"}},
    }


def step(binary, row, gemm, work, attention=None):
    """The row's step time at this GEMM efficiency (and attention efficiency, when given)."""
    path, out = os.path.join(work, "s.json"), os.path.join(work, "step.json")
    s = scenario(row, gemm)
    if attention is not None:
        s["workload"]["efficiency"]["attention"] = attention
    with open(path, "w") as f:
        json.dump(s, f)
    subprocess.run([binary, "step", path, "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)["step_s"]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ctwin")
    rows = [r for r in csv.DictReader(open(os.path.join(ROOT, "scenarios", "sources", "mosaicml_mpt_h100_bf16.csv")))
            if int(r["gpus"]) == 8 and int(r["seq_len"]) <= 2048]
    a, rest, published, hidden = [], [], [], []
    with tempfile.TemporaryDirectory() as work:
        for r in rows:
            full, half = step(binary, r, 1, work), step(binary, r, 0.5, work)
            a.append(half - full)
            rest.append(2 * full - half)
            tokens = int(r["global_batch"]) * int(r["seq_len"])
            published.append(tokens / (float(r["tokens_per_s_per_gpu"]) * int(r["gpus"])))
            hidden.append(SHAPES[r["model"]][1])
    a, rest, published, hidden = map(np.array, (a, rest, published, hidden))
    fit = [i for i, r in enumerate(rows) if (r["model"], int(r["seq_len"])) in FIT]
    target = published - rest
    x, y = np.linalg.lstsq(np.column_stack([a, a / hidden])[fit], target[fit], rcond=None)[0]
    gemm, half = 1 / x, y / x
    flat = np.linalg.lstsq(a[fit, None], target[fit], rcond=None)[0][0]
    law = a * (x + y / hidden) + rest
    one = a * flat + rest
    print("| model | h | seq | micro-batch | AC | published step | law | error | one efficiency | error | role |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    worst_law = worst_one = 0
    for i, r in enumerate(rows):
        e_law, e_one = law[i] / published[i] - 1, one[i] / published[i] - 1
        role = "fitted" if i in fit else "predicted"
        if role == "predicted":
            worst_law, worst_one = max(worst_law, abs(e_law)), max(worst_one, abs(e_one))
        print(f"| {r['model']} | {hidden[i]} | {r['seq_len']} | {r['micro_batch']} | {r['activation_checkpointing']} | {published[i]:.3f} s | "
              f"{law[i]:.3f} s | {100 * e_law:+.1f} % | {one[i]:.3f} s | {100 * e_one:+.1f} % | {role} |")
    print(f"\n- law: gemm {gemm:.4f}, gemm_half_hidden {half:.0f}; worst predicted error {100 * worst_law:.1f} %")
    print(f"- one efficiency ({1 / flat:.4f}) on the same rows: worst predicted error {100 * worst_one:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())

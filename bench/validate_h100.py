#!/usr/bin/env python3
"""The step model on H100: NVIDIA's published NeMo table (24.07, DGX-H100, FP8), fitted on three
rows of different sizes and predicting the six others, then two rows of a later release never
fitted on (Megatron-Bridge, NeMo 26.04.01: Llama 3 70B and 405B with their own layouts). Prints a Markdown table (docs/step-time.md).

  /usr/bin/python3 bench/validate_h100.py [build/ctwin] [scenarios/sources/nemo_h100_fp8_2407.csv]
                                          [scenarios/sources/megatron_bridge_h100_fp8.csv] [--max-error 0.15]

With --max-error, exits 1 when a predicted row misses by more than that, or when the `h100-fp8`
preset (what an H100 FP8 scenario that states no efficiency gets) is not this fit: every row is
also run with no efficiency stated and must land within 0.5% of the fitted step. The test tier
runs it so.

Each row becomes a scenario: the model's shape, NeMo's layout (TP, PP, CP, virtual stages, micro
and global batch, sequence parallelism with TP, the distributed optimizer), FP8 GEMMs, and a DGX
H100 fabric (NVLink 450 GB/s, one 400 Gb/s NIC a GPU, 32 nodes a leaf). As for MegaScale, the
step is A / gemm + B x y with A and B from `ctwin step` (at GEMM efficiency 1 and 1/2) and
y = (1 - overlap) / bandwidth share: linear in the two unknowns, fitted by least squares on the
fit rows. Context-parallel ring steps hide behind the chunk's attention (cp_overlap 1, as
Transformer Engine overlaps them).
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
FIT = {("GPT3-20B", 64), ("LLAMA2-70B", 64), ("GPT3-175B", 128)}


def scenario(row, gemm, bandwidth, preset=False):
    gpus = int(row["gpus"])
    tp, pp, cp = int(row["tp"]), int(row["pp"]), int(row["cp"])
    model = {"layers": int(row["layers"]), "hidden": int(row["hidden"]), "heads": int(row["heads"]),
             "kv_heads": int(row["kv_heads"]), "ffn_hidden": int(row["ffn_hidden"]),
             "gated_mlp": row["gated_mlp"] == "true", "vocab": int(row["vocab"]), "seq_len": int(row["seq_len"])}
    parallel = {"tp": tp, "pp": pp, "cp": cp, "virtual_stages": int(row["vp"]) if row["vp"] not in ("", "NA") else 1,
                "micro_batch": int(row["micro_batch"]),
                "global_batch": int(row["global_batch"]), "sequence_parallel": tp > 1,
                "recompute": row.get("recompute") or "selective"}
    if row.get("stage_layers"):
        parallel["stage_layers"] = [int(n) for n in row["stage_layers"].split()]
    for field in ("embedding_as_layer", "loss_as_layer"):
        if row.get(field) == "true":
            parallel[field] = True
    return {
        "schema_version": 1, "name": row["model"].lower(),
        "cluster": {"nodes": gpus // 8, "gpus_per_node": 8,
                    "gpu": {"model": "H100-SXM5-80GB", "peak_bf16": "989TFLOP/s", "peak_fp8": "1979TFLOP/s"}},
        "job": {"nodes": gpus // 8, "horizon": "1d"},
        "workload": {"model": model, "parallel": parallel, "precision": row.get("precision", "fp8"),
                     **({} if preset else {"efficiency": {"gemm": gemm, "bandwidth": bandwidth, "cp_overlap": 1}}),
                     "fabric": {"nvlink": "450GB/s", "nic": "400Gbps", "nodes_per_leaf": 32}},
        "faults": [], "checkpoint": {"save_time": "1min", "restore_time": "1min"}, "restart": {"overhead": "1min"},
        "policies": {"checkpoint": {"type": "fixed", "interval": "1h"}},
    }


def step(binary, row, gemm, bandwidth, work, preset=False, quiet=False):
    path = os.path.join(work, "s.json")
    out = os.path.join(work, "step.json")
    with open(path, "w") as f:
        json.dump(scenario(row, gemm, bandwidth, preset), f)
    subprocess.run([binary, "step", path, "--json", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL if quiet else None)
    with open(out) as f:
        return json.load(f)


def arguments():
    """The positional arguments and --max-error (None when not given)."""
    args = sys.argv[1:]
    max_error = None
    if "--max-error" in args:
        at = args.index("--max-error")
        max_error = float(args[at + 1])
        del args[at:at + 2]
    return args, max_error


def main():
    args, max_error = arguments()
    binary = args[0] if len(args) > 0 else os.path.join(ROOT, "build", "ctwin")
    table = args[1] if len(args) > 1 else os.path.join(ROOT, "scenarios", "sources", "nemo_h100_fp8_2407.csv")
    newer = args[2] if len(args) > 2 else os.path.join(ROOT, "scenarios", "sources", "megatron_bridge_h100_fp8.csv")
    with open(table) as f:
        rows = list(csv.DictReader(f))
    with open(newer) as f:
        later = list(csv.DictReader(f))
    for r in later:
        r["later"] = True
    rows += later
    parts, published, memory, preset_steps = [], [], [], []
    with tempfile.TemporaryDirectory() as work:
        for row in rows:
            full = step(binary, row, 1, 1, work)
            half = step(binary, row, 0.5, 1, work)
            a = half["step_s"] - full["step_s"]
            parts.append((a, full["step_s"] - a))
            memory.append(full["memory_per_gpu_bytes"]["total"] / (1 << 30))
            preset_steps.append(step(binary, row, None, None, work, preset=True)["step_s"])
            tokens = int(row["global_batch"]) * int(row["seq_len"])
            published.append(tokens / (float(row["tokens_per_s_per_gpu"]) * int(row["gpus"])))
        fit = [i for i, r in enumerate(rows) if (r["model"], int(r["gpus"])) in FIT]
        x, y = np.linalg.lstsq(np.array([parts[i] for i in fit]), np.array([published[i] for i in fit]), rcond=None)[0]
        print("| model | GPUs | TP | PP | CP | VP | published step | simulated step | error | memory per GPU | role |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        worst = preset_gap = 0
        for i, r in enumerate(rows):
            simulated = parts[i][0] * x + parts[i][1] * y
            if r.get("later"):  # what a user gets: the preset, run through the whole model
                simulated = preset_steps[i]
            else:
                preset_gap = max(preset_gap, abs(preset_steps[i] / simulated - 1))
            error = simulated / published[i] - 1
            role = "fitted" if i in fit else "predicted (Megatron-Bridge 26.04)" if r.get("later") else "predicted"
            if role != "fitted":
                worst = max(worst, abs(error))
            print(f"| {r['model']} | {r['gpus']} | {r['tp']} | {r['pp']} | {r['cp']} | {r['vp']} | {published[i]:.3f} s | "
                  f"{simulated:.3f} s | {100 * error:+.1f} % | {memory[i]:.1f} GiB | {role} |")
    print(f"\n- H100 (FP8 GEMMs): GEMM efficiency {1 / x:.4f}, exposed communication factor (1 - overlap) / bandwidth {y:.4f}; "
          f"worst predicted error {100 * worst:.1f} %")
    print(f"- preset h100-fp8 (no efficiency stated): within {100 * preset_gap:.2f} % of the fitted step on every NeMo 24.07 row; "
          "the Megatron-Bridge rows are run with the preset")
    return verdict("validate_h100", "h100-fp8", worst, preset_gap, max_error)


def verdict(script, preset, worst, preset_gap, max_error):
    """Exit status: 1 when a predicted row misses by more than max_error, or the preset is not the fit."""
    if max_error is not None and worst > max_error:
        print(f"{script}: a predicted row misses by {100 * worst:.1f} %, over {100 * max_error:.0f} %", file=sys.stderr)
        return 1
    if max_error is not None and preset_gap > 0.005:
        print(f"{script}: the {preset} preset is {100 * preset_gap:.2f} % off this fit: update models/efficiency_presets.cpp",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

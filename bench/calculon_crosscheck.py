#!/usr/bin/env python3
"""ctwin's step model beside Calculon's on MegaScale's strong-scaling rows (docs/step-time.md).

Calculon (calculon-ai/calculon, Isaev et al., SC'23) is a public analytical model; this runs it
from its own checkout as a reference, with nothing fitted: its A100 system file and its GPT-3 175B
model, in the layout ctwin assumes for the rows (TP 8 x PP 8, DP over the rest, micro-batch 1, no
recomputation, no interleaving, the optimizer sharded over DP as Megatron's distributed optimizer
does). ctwin runs `ctwin step --json` on scenarios/megascale_175b.json at each row's width and
batch, with the efficiencies fitted there (two rows). Prints a Markdown table.

  /usr/bin/python3 bench/calculon_crosscheck.py CALCULON_CHECKOUT [build/ctwin]

Needs python3-numpy and python3-pandas (Calculon imports them) and a Calculon checkout
(git clone https://github.com/calculon-ai/calculon).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def calculon_row(checkout, gpus, batch, work):
    execution = {
        "num_procs": gpus, "tensor_par": 8, "pipeline_par": 8, "data_par": gpus // 64,
        "tensor_par_net": 0, "pipeline_par_net": 1, "data_par_net": 1,
        "batch_size": batch, "microbatch_size": 1, "datatype": "float16",
        "fused_activation": True, "attention_type": "multihead", "activation_recompute": "none",
        "pipeline_interleaving": 1, "optimizer_sharding": True, "tensor_par_comm_type": "ar",
        "tensor_par_overlap": "none", "seq_par_ag_redo": False, "data_par_overlap": False,
        "weight_offload": False, "activations_offload": False, "optimizer_offload": False, "training": True,
    }
    exe_path = os.path.join(work, f"exe_{gpus}_{batch}.json")
    stats_path = os.path.join(work, f"stats_{gpus}_{batch}.json")
    with open(exe_path, "w") as f:
        json.dump(execution, f)
    subprocess.run(["/usr/bin/python3", os.path.join(checkout, "bin", "calculon"), "llm",
                    os.path.join(checkout, "models", "gpt3-175B.json"), exe_path,
                    os.path.join(checkout, "systems", "a100_80g.json"), stats_path],
                   check=True, env=dict(os.environ, PYTHONPATH=checkout), stdout=subprocess.DEVNULL)
    with open(stats_path) as f:
        stats = json.load(f)
    return stats["total_time"], stats["proc_mem_tier1_cap_req"]


def ctwin_row(binary, gpus, batch, work):
    with open(os.path.join(ROOT, "scenarios", "megascale_175b.json")) as f:
        scenario = json.load(f)
    scenario["cluster"]["nodes"] = gpus // 8
    scenario["job"]["nodes"] = gpus // 8
    scenario["workload"]["parallel"]["global_batch"] = batch
    path = os.path.join(work, f"scenario_{gpus}_{batch}.json")
    out = os.path.join(work, f"step_{gpus}_{batch}.json")
    with open(path, "w") as f:
        json.dump(scenario, f)
    subprocess.run([binary, "step", path, "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        step = json.load(f)
    return step["step_s"], step["memory_per_gpu_bytes"]["total"]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    checkout = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "ctwin")
    rows = []
    with open(os.path.join(ROOT, "scenarios", "sources", "megascale_175b_mfu.csv")) as f:
        for r in csv.DictReader(f):
            if r["method"] == "Megatron-LM":
                rows.append(r)
    gib = float(1 << 30)
    print("| batch | GPUs | published step | ctwin (fitted on 2 rows) | error | Calculon (nothing fitted) | error |"
          " ctwin memory | Calculon memory |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        for r in rows:
            gpus, batch, published = int(r["gpus"]), int(r["batch_size"]), float(r["iteration_time_s"])
            c_step, c_mem = calculon_row(checkout, gpus, batch, work)
            t_step, t_mem = ctwin_row(binary, gpus, batch, work)
            print(f"| {batch} | {gpus} | {published:.2f} s | {t_step:.2f} s | {100 * (t_step / published - 1):+.1f} % | "
                  f"{c_step:.2f} s | {100 * (c_step / published - 1):+.1f} % | {t_mem / gib:.1f} GiB | {c_mem / gib:.1f} GiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

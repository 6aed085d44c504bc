#!/usr/bin/env python3
"""The attention core at its own efficiency (issue 38 item 3), fitted with the GEMM law across
sequence lengths on MosaicML's MPT benchmark table (H100 80GB BF16, FSDP on one node,
512 to 65,536 tokens; scenarios/sources/mosaicml_mpt_h100_bf16.csv).

  /usr/bin/python3 bench/fit_attention.py [build/ctwin]

The step is A_g (1 + h_half / h) / gemm + A_a (1 + c_half / c) / attention + R, where A_g is the
layers' matrix products and A_a the flash kernel's score and value products at peak (causal: the
masked half skipped), c the chunk of sequence one kernel sees, and R the rest (exposed
communication). `ctwin step` gives A_g, A_a and R for each row (at gemm and attention 1, each
halved in turn). Fitted on the rows of three sizes (760M, 3B, 13B): the GEMM law on their
shortest sequences, the attention on all of them; every row of the other sizes (1B, 7B, 30B) is
predicted. Beside it, the GEMM law alone (attention at the layers' efficiency, as before),
fitted on the same short rows. MPT's heads are all 128 wide (llm-foundry sets n_heads so), so the head
dimension is fixed here.
"""
import csv
import os
import sys
import tempfile

import numpy as np

from fit_gemm_law import FIT as GEMM_FIT, ROOT, SHAPES, step

FIT_SIZES = {"760m", "3b", "13b"}


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ctwin")
    rows = [r for r in csv.DictReader(open(os.path.join(ROOT, "scenarios", "sources", "mosaicml_mpt_h100_bf16.csv")))
            if int(r["gpus"]) == 8]
    rows.sort(key=lambda r: (SHAPES[r["model"]][1], int(r["seq_len"])))
    ag, aa, rest, published, hidden, chunk = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as work:
        for r in rows:
            t11 = step(binary, r, 1, work, attention=1)
            g = step(binary, r, 0.5, work, attention=1) - t11
            a = step(binary, r, 1, work, attention=0.5) - t11
            ag.append(g), aa.append(a), rest.append(t11 - g - a)
            published.append(int(r["global_batch"]) * int(r["seq_len"]) / (float(r["tokens_per_s_per_gpu"]) * int(r["gpus"])))
            hidden.append(SHAPES[r["model"]][1]), chunk.append(int(r["seq_len"]))
    ag, aa, rest, published, hidden, chunk = map(np.array, (ag, aa, rest, published, hidden, chunk))
    fit = np.array([r["model"] in FIT_SIZES for r in rows])
    short = np.array([(r["model"], int(r["seq_len"])) in GEMM_FIT for r in rows])
    target = published - rest
    # Unconstrained, the four terms trade against each other (a negative c_half): fit in turn.
    # The GEMM law on the short rows of the three sizes (as bench/fit_gemm_law.py), with the
    # attention priced as last fitted; then the attention on every row of those sizes, c_half on a
    # grid from 0 (a constant efficiency) and 1/attention by least squares; until they settle.
    g = np.array([1 / 0.7, 0.0])
    a = np.array([1 / 0.7, 0.0])
    for _ in range(20):
        g = np.linalg.lstsq(np.column_stack([ag, ag / hidden])[short], (target - aa * (a[0] + a[1] / chunk))[short], rcond=None)[0]
        residual = target - ag * (g[0] + g[1] / hidden)
        best = None
        for c_half in np.concatenate([[0.0], np.geomspace(16, 65536, 200)]):
            basis = aa * (1 + c_half / chunk)
            inverse = float(np.dot(basis[fit], residual[fit]) / np.dot(basis[fit], basis[fit]))
            miss = float(np.sum((basis[fit] * inverse - residual[fit]) ** 2))
            if best is None or miss < best[0]:
                best = (miss, inverse, c_half)
        a = np.array([best[1], best[1] * best[2]])
    with_attention = ag * (g[0] + g[1] / hidden) + aa * (a[0] + a[1] / chunk) + rest
    y = np.linalg.lstsq(np.column_stack([ag + aa, (ag + aa) / hidden])[short], target[short], rcond=None)[0]
    without = (ag + aa) * (y[0] + y[1] / hidden) + rest
    x = [g[0], g[1], a[0], a[1]]
    print("| model | h | seq | AC | published step | GEMM law + attention | error | GEMM law alone | error | role |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---|")
    worst = [0, 0]
    errors = [[], []]
    for i, r in enumerate(rows):
        e1, e2 = with_attention[i] / published[i] - 1, without[i] / published[i] - 1
        role = "fitted" if fit[i] else "predicted"
        if not fit[i]:
            worst = [max(worst[0], abs(e1)), max(worst[1], abs(e2))]
            errors[0].append(abs(e1)), errors[1].append(abs(e2))
        print(f"| {r['model']} | {hidden[i]} | {chunk[i]} | {r['activation_checkpointing']} | {published[i]:.3f} s | {with_attention[i]:.3f} s | "
              f"{100 * e1:+.1f} % | {without[i]:.3f} s | {100 * e2:+.1f} % | {role} |")
    gemm, attention = 1 / x[0], 1 / x[2]
    print(f"\n- with attention: gemm {gemm:.4f}, gemm_half_hidden {x[1] / x[0]:.0f}, attention {attention:.4f}, "
          f"attention_half_seq {x[3] / x[2]:.0f}; predicted rows: worst {100 * worst[0]:.1f} %, mean {100 * np.mean(errors[0]):.1f} %")
    print(f"- GEMM law alone: gemm {1 / y[0]:.4f}, gemm_half_hidden {y[1] / y[0]:.0f}; predicted rows: worst {100 * worst[1]:.1f} %, "
          f"mean {100 * np.mean(errors[1]):.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())

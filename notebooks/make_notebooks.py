#!/usr/bin/python3
"""Writes the notebooks from the cells below (plain source, reviewable in diffs). Run it after
editing a cell; notebooks/run.sh executes them headless. Outputs are never committed. Figures
show inline (and are saved beside the executed copy); each cell has a stable id."""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

SETUP = '''\
%matplotlib inline
import json, os, pathlib, shutil, subprocess, tempfile
import numpy as np
import matplotlib.pyplot as plt

def find_root():
    """ctwin's sources above the working folder (a checkout), else the installed package's data."""
    if os.environ.get("CTWIN_ROOT"):
        return pathlib.Path(os.environ["CTWIN_ROOT"]).resolve()
    here = pathlib.Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "scenarios" / "default.json").is_file() and (folder / "calibration" / "data").is_dir():
            return folder
    return pathlib.Path("/usr/share/ctwin")

ROOT = find_root()
CTWIN = os.environ.get("CTWIN_BIN") or next(
    (str(p) for p in (ROOT / "build" / "ctwin",) if p.is_file()), shutil.which("ctwin") or "/usr/bin/ctwin")
OUT = pathlib.Path(os.environ.get("CTWIN_NOTEBOOK_OUT") or tempfile.mkdtemp())
OUT.mkdir(parents=True, exist_ok=True)

def ctwin(*args):
    """Runs ctwin; a failure stops the notebook with its output."""
    r = subprocess.run([CTWIN, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ctwin {' '.join(map(str, args))}: exit {r.returncode}\\n{r.stdout}{r.stderr}")
    return r.stdout

def load(path):
    return json.loads(pathlib.Path(path).read_text())'''

CALIBRATION = [
    ("markdown", """\
# Calibration: from traces to a scenario, and back

Three steps, each a `ctwin` command:

1. **Round trip.** The simulator writes a year's event log for 128 nodes from known parameters
   (GPU faults with a Weibull shape of 0.7, node crashes at 3 per node-year). `ctwin calibrate`
   fits them back; the plot compares the fitted lifetime CDFs with the Kaplan-Meier one.
2. **Public records.** BLOOM-176B's logbook and ByteRobust's incident table
   (`calibration/data/`): rates by class with their 95% intervals.
3. **Validation.** `ctwin validate` simulates the traced year with the calibrated scenario and
   judges the run's figures against the spread of single trials."""),
    ("code", SETUP),
    ("code", '''\
truth = load(ROOT / "tests/scenarios/minimal.json")
truth.update(name="roundtrip", simulation={"trials": 1, "seed": 4})
truth["cluster"].update(nodes=128, spare_nodes=0)
truth["job"] = {"nodes": 128, "step_time": "10s", "horizon": "365d"}
truth["faults"] = [
    {"name": "gpu_xid79", "rate": "2/gpu-year", "distribution": "weibull", "weibull_shape": 0.7, "effect": "crash",
     "xid": 79, "detection": "10s", "recovery": {"action": "reboot", "duration": "10min"}},
    {"name": "node_crash", "rate": "3/node-year", "effect": "crash", "detection": "30s",
     "recovery": {"action": "reboot", "duration": "5min"}},
]
(OUT / "truth.json").write_text(json.dumps(truth, indent=2))
ctwin("run", OUT / "truth.json", "--events", OUT / "events.csv")
print(ctwin("calibrate", OUT / "events.csv", "--base", OUT / "truth.json", "--out", OUT / "calibrated.json",
            "--report", OUT / "report.json"))
report = load(OUT / "report.json")
classes = {c["class"]: c for c in report["classes"]}'''),
    ("code", '''\
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, name, true_shape in zip(axes, ["gpu_xid79", "node_crash"], [0.7, 1.0]):
    c = classes[name]
    cdf = c["lifetime_cdf"]
    ax.step(cdf["hours"], cdf["empirical"], where="post", label="Kaplan-Meier", color="black")
    ax.plot(cdf["hours"], cdf["weibull"], label=f"Weibull, shape {c['weibull']['shape']['estimate']:.2f}")
    ax.plot(cdf["hours"], cdf["exponential"], "--", label="exponential")
    top = max(max(cdf[k]) for k in ("empirical", "weibull", "exponential"))
    ax.set_ylim(0, 1.0 if top > 0.8 else 1.15 * top)  # from the data: at fleet scale few parts fail
    ax.set_xscale("log"); ax.set_xlabel("hours"); ax.set_ylabel("fraction failed"); ax.set_title(f"{name} (true shape {true_shape})")
    ax.legend()
fig.savefig(OUT / "lifetimes.png", dpi=80)
plt.show()

# The notebook is also a test: the truth lies inside each interval.
shape = classes["gpu_xid79"]["weibull"]["shape"]
assert shape["lower"] < 0.7 < shape["upper"], shape
assert classes["gpu_xid79"]["weibull"]["shape_one_p_value"] < 1e-6
rate = classes["node_crash"]["rate_per_node_year"]
assert rate["lower"] < 3 < rate["upper"], rate'''),
    ("code", '''\
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
for ax, table, title in zip(axes, ["bloom176b_incidents.csv", "byterobust_incident_table.csv"], ["BLOOM-176B", "ByteRobust"]):
    name = table.split(".")[0]
    ctwin("calibrate", ROOT / "calibration/data" / table, "--out", OUT / f"{name}.json", "--report", OUT / f"{name}_report.json")
    rows = load(OUT / f"{name}_report.json")["classes"]
    for i, c in enumerate(rows):
        r = c["rate_per_" + c["component"] + "_year"]
        ax.errorbar([i], [r["estimate"]], yerr=[[r["estimate"] - r["lower"]], [r["upper"] - r["estimate"]]],
                    fmt="o", color="tab:blue" if c["component"] == "gpu" else "tab:orange", capsize=3)
    ax.set_xticks(range(len(rows)), [c["class"] for c in rows], rotation=60, ha="right")
    ax.set_yscale("log"); ax.set_ylabel("per component-year (blue GPU, orange node)"); ax.set_title(title + ": rates with 95% intervals")
    for c in rows:
        r = c["rate_per_" + c["component"] + "_year"]
        print(f"{title:11s} {c['class']:18s} {c['count']:9.2f}  {r['estimate']:.3g} [{r['lower']:.3g}, {r['upper']:.3g}] /{c['component']}-year"
              f"  width {r['upper'] / r['lower']:.3g}x")
fig.tight_layout(); fig.savefig(OUT / "public_rates.png", dpi=80)
plt.show()'''),
    ("code", '''\
print(ctwin("validate", OUT / "calibrated.json", "--against", OUT / "events.csv", "--trials", 100, "--json", OUT / "validate.json"))
rows = load(OUT / "validate.json")["verdicts"][0]["rows"]  # the first question's: could the twin have produced it
total = next(r for r in rows if r["metric"] == "interruptions_per_day" and "class" not in r)
assert total["verdict"] == "inside", total'''),
]

WHAT_IF = [
    ("markdown", """\
# What-if for my cluster: checkpoint interval × spare nodes

Start from a calibrated scenario, here BLOOM-176B's logbook calibrated onto its cluster
(`ctwin calibrate calibration/data/bloom176b_incidents.csv --base scenarios/bloom176b.json`;
put your own traces and your own cluster there). Then:

1. sweep the checkpoint interval against the number of spare nodes on common random numbers and
   plot the goodput surface, the scenario's current setting marked;
2. put the ledger of the best setting beside the current one: where the hours go."""),
    ("code", SETUP),
    ("code", '''\
ctwin("calibrate", ROOT / "calibration/data/bloom176b_incidents.csv", "--base", ROOT / "scenarios/bloom176b.json",
      "--out", OUT / "calibrated.json")
scenario = load(OUT / "calibrated.json")
current = (scenario["policies"]["checkpoint"]["interval"], scenario["cluster"].get("spare_nodes", 0))
intervals = ["1h", "2h", "3h", "6h", "12h"]
spares = [0, 1, 2, 3, 4]  # the cluster has 52 nodes for a 48-node job
ctwin("sweep", OUT / "calibrated.json", "--trials", 20, "--set", "/policies/checkpoint/interval=" + ",".join(intervals),
      "--set", "/cluster/spare_nodes=" + ",".join(map(str, spares)), "--json", OUT / "surface.json")
points = load(OUT / "surface.json")["points"]
surface = np.array([p["goodput"]["mean"] for p in points]).reshape(len(intervals), len(spares))
fig, ax = plt.subplots(figsize=(7, 4.5))
image = ax.imshow(surface.T, origin="lower", cmap="viridis", aspect="auto")
ax.set_xticks(range(len(intervals)), intervals); ax.set_yticks(range(len(spares)), spares)
ax.set_xlabel("checkpoint interval"); ax.set_ylabel("spare nodes")
for i in range(len(intervals)):
    for j in range(len(spares)):
        ax.text(i, j, f"{surface[i, j]:.3f}", ha="center", va="center", color="white" if surface[i, j] < surface.mean() else "black")
best_i, best_j = np.unravel_index(surface.argmax(), surface.shape)
ax.add_patch(plt.Rectangle((best_i - 0.5, best_j - 0.5), 1, 1, fill=False, edgecolor="red", lw=2))
ax.set_title(f"goodput, 20 trials a cell (red: best; current {current[0]}, {current[1]} spares)")
fig.colorbar(image, label="goodput (ETTR)")
fig.tight_layout(); fig.savefig(OUT / "surface.png", dpi=80)
plt.show()
best = (intervals[best_i], spares[best_j])
print("best:", best, f"{surface.max():.4f}", "  current:", current)
# Spares pay for themselves here: at every interval, 4 spares beat none (paired on the same faults).
assert all(surface[i, spares.index(4)] > surface[i, 0] for i in range(len(intervals))), surface'''),
    ("code", '''\
ledgers = {}
for label, (interval, spare) in {"current": current, "best": best}.items():
    variant = dict(scenario, name=f"what-if-{label}")
    variant["policies"] = dict(scenario["policies"], checkpoint=dict(scenario["policies"]["checkpoint"], interval=interval))
    variant["cluster"] = dict(scenario["cluster"], spare_nodes=spare)
    (OUT / f"{label}.json").write_text(json.dumps(variant))
    ctwin("run", OUT / f"{label}.json", "--trials", 20, "--json", OUT / f"{label}_run.json")
    ledgers[label] = load(OUT / f"{label}_run.json")["ledger_hours"]
categories = [k for k in ledgers["current"] if k != "productive"]
fig, ax = plt.subplots(figsize=(8, 4))
y = np.arange(len(categories))
for offset, label in [(-0.2, "current"), (0.2, "best")]:
    ax.barh(y + offset, [ledgers[label][k] for k in categories], height=0.4, label=f"{label}: {ledgers[label]['productive']:.0f} h productive")
ax.set_yticks(y, categories); ax.set_xlabel("hours (mean over trials)"); ax.legend(); ax.set_title("where the time goes besides training")
fig.tight_layout(); fig.savefig(OUT / "ledgers.png", dpi=80)
plt.show()
horizon_h = float(scenario["job"]["horizon"].removesuffix("d")) * 24
for label, ledger in ledgers.items():
    assert abs(sum(ledger.values()) - horizon_h) < 1e-6, (label, sum(ledger.values()))  # every hour accounted for
assert ledgers["best"]["productive"] >= ledgers["current"]["productive"] - 1e-9 or best == current'''),
]

FORECASTING = [
    ("markdown", """\
# Forecasting: goodput against the checkpoint interval, and where the time goes

On the default scenario (9,984 GPUs for 54 days, Llama 3's fault mix), 20 trials per point:

1. `ctwin sweep` of the fixed checkpoint interval, and `ctwin optimize` for the best one with its
   bootstrap interval;
2. `ctwin run`'s ledger: every hour of wall time by category."""),
    ("code", SETUP),
    ("code", '''\
scenario = ROOT / "scenarios/default.json"
intervals = ["2min", "4min", "8min", "16min", "32min", "64min"]
ctwin("sweep", scenario, "--set", "/policies/checkpoint/interval=" + ",".join(intervals), "--trials", 20, "--json", OUT / "sweep.json")
ctwin("optimize", scenario, "--trials", 20, "--json", OUT / "optimize.json")
points = load(OUT / "sweep.json")["points"]
best = load(OUT / "optimize.json")["best"]
minutes = [float(p["settings"]["/policies/checkpoint/interval"].removesuffix("min")) for p in points]
mean = np.array([p["goodput"]["mean"] for p in points])
low = mean - [p["goodput"]["ci95_low"] for p in points]
high = [p["goodput"]["ci95_high"] for p in points] - mean
fig, ax = plt.subplots(figsize=(7, 4))
ax.errorbar(minutes, mean, yerr=[low, high], fmt="o-", capsize=3, label="sweep (95% CI)")
best_min = best["interval_s"] / 60
ax.axvspan(best["ci95_low_s"] / 60, best["ci95_high_s"] / 60, color="gray", alpha=0.2)
ax.axvline(best_min, color="gray", ls="--", label=f"optimum {best_min:.1f} min (95% CI shaded)")
ax.set_xscale("log"); ax.set_xlabel("checkpoint interval (min)"); ax.set_ylabel("goodput (ETTR)"); ax.legend()
fig.savefig(OUT / "goodput_vs_interval.png", dpi=80)
plt.show()
# Too frequent and too rare both cost: the optimum lies strictly inside the swept range.
assert minutes[0] < best_min < minutes[-1]
assert mean.argmax() not in (0, len(mean) - 1)'''),
    ("code", '''\
ctwin("run", scenario, "--trials", 20, "--json", OUT / "run.json")
run = load(OUT / "run.json")
ledger = run["ledger_hours"]
fig, ax = plt.subplots(figsize=(8, 4))
names = [k for k in ledger if k != "productive"]
ax.barh(names, [ledger[k] for k in names])
ax.set_xlabel("hours of the 54-day run (mean over trials)"); ax.set_title(f"where the time goes besides {ledger['productive']:.0f} productive hours")
fig.tight_layout(); fig.savefig(OUT / "ledger.png", dpi=80)
plt.show()
for k, v in ledger.items():
    print(f"{k:22s} {v:9.2f} h")
# Exact accounting: the categories add up to the wall time.
assert abs(sum(ledger.values()) - 54 * 24) < 1e-6'''),
]


def notebook(name, cells):
    return {
        "cells": [
            {"cell_type": kind, "id": f"{name}-{i}", "metadata": {}, "source": text.splitlines(keepends=True),
             **({"execution_count": None, "outputs": []} if kind == "code" else {})}
            for i, (kind, text) in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


if __name__ == "__main__":
    for name, cells in [("calibration", CALIBRATION), ("forecasting", FORECASTING), ("what_if", WHAT_IF)]:
        (HERE / f"{name}.ipynb").write_text(json.dumps(notebook(name, cells), indent=1) + "\n")
        print(f"wrote notebooks/{name}.ipynb")

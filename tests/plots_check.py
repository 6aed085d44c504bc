#!/usr/bin/env python3
"""Every plot the CLI writes, rendered with rsvg-convert (librsvg) and read back for what a reader
needs: a title and both axis labels, tick labels that are round numbers or round durations, the
category names on a category axis, the optimum and the current setting marked, the paired
differences drawn against their baseline, CDFs on 0..1, no fit drawn through degenerate data, and
no NaN or infinity anywhere.

  /usr/bin/python3 tests/plots_check.py BUILD/ctwin      (exit 77: no rsvg-convert)
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
NS = "{http://www.w3.org/2000/svg}"
DURATION = re.compile(r"^[0-9]+(\.[0-9]+)? (s|min|h|d)$")
failures = []


def significant_digits(label):
    digits = label.lstrip("-").replace(".", "")
    if "e" in digits:
        digits = digits.split("e")[0]
    return len(digits.strip("0")) if digits.strip("0") else 1


def texts(root, cls):
    return [(t.text or "") for t in root.iter(NS + "text") if t.get("class") == cls]


def check_svg(path, expect=()):
    name = path.name
    body = path.read_text()
    if re.search(r"\b(nan|inf|NaN|Inf)\b", body):
        failures.append(f"{name}: NaN or infinity in the SVG")
    png = path.with_suffix(".png")
    render = subprocess.run(["rsvg-convert", "-o", str(png), str(path)], capture_output=True, text=True)
    if render.returncode != 0 or not png.exists() or png.stat().st_size < 1000:
        failures.append(f"{name}: rsvg-convert failed: {render.stderr.strip()}")
    root = ET.fromstring(body)
    for cls in ("title", "xlabel", "ylabel"):
        if not any(t.strip() for t in texts(root, cls)):
            failures.append(f"{name}: no {cls}")
    yticks = texts(root, "ytick")
    if len(yticks) < 3:
        failures.append(f"{name}: {len(yticks)} y ticks")
    def round_tick(axis, label, durations):
        if not label or (durations and DURATION.match(label)):
            return
        try:
            float(label)
        except ValueError:
            failures.append(f"{name}: {axis} tick {label!r} is neither a number nor a duration")
            return
        if significant_digits(label) > 3:
            failures.append(f"{name}: {axis} tick {label!r} is not round")

    for label in yticks:
        round_tick("y", label, False)
    if not texts(root, "xtick") and not texts(root, "xcategory"):
        failures.append(f"{name}: an x axis without ticks or categories")
    for label in texts(root, "xtick"):
        round_tick("x", label, True)
    for want in expect:
        if want.startswith("marker:") and not any(want[7:] in t for t in texts(root, "marker")):
            failures.append(f"{name}: no marker saying {want[7:]!r}")
        if want.startswith("category:") and want[9:] not in texts(root, "xcategory"):
            failures.append(f"{name}: no category {want[9:]!r} on the x axis")
        if want.startswith("legend:") and not any(want[7:] in t for t in texts(root, "legend")):
            failures.append(f"{name}: no legend entry {want[7:]!r}")
        if want.startswith("no-legend:") and any(want[10:] in t for t in texts(root, "legend")):
            failures.append(f"{name}: a legend entry {want[10:]!r} it should not have")
        if want.startswith("level:") and not any(want[6:] in t for t in texts(root, "level")):
            failures.append(f"{name}: no level line saying {want[6:]!r}")
        if want.startswith("title:") and not any(want[6:] in t for t in texts(root, "title")):
            failures.append(f"{name}: no panel titled {want[6:]!r}")
        if want == "cdf" and any(not 0 <= float(t) <= 1 for t in yticks):
            failures.append(f"{name}: a CDF axis beyond 0..1: {yticks}")


def main():
    if not shutil.which("rsvg-convert"):
        print("plots: rsvg-convert missing (librsvg2-bin): skipped")
        return 77
    ctwin = os.path.abspath(sys.argv[1])
    scen = ROOT / "tests" / "scenarios"
    traces = ROOT / "tests" / "traces"
    with tempfile.TemporaryDirectory() as work:
        w = pathlib.Path(work)
        os.environ["CTWIN_CACHE_DIR"] = str(w / "step-cache")

        def run(*args):
            out = subprocess.run([ctwin, *map(str, args)], cwd=work, capture_output=True, text=True)
            if out.returncode != 0:
                failures.append(f"ctwin {' '.join(map(str, args))}: exit {out.returncode}: {out.stderr.strip()[-400:]}")

        run("sweep", scen / "minimal.json", "--trials", 12, "--set", "/policies/checkpoint/interval=10min,30min,1h,2h",
            "--set", "/restart/overhead=2min,10min", "--svg", w / "sweep.svg")
        run("sweep", scen / "policies.json", "--trials", 12, "--set", "/policies/elastic/mode=wait,shrink", "--svg", w / "sweep_categories.svg")
        run("optimize", scen / "minimal.json", "--trials", 12, "--points", 6, "--svg", w / "optimize.svg")
        run("optimize", scen / "policies.json", "--trials", 12, "--choose", "/policies/elastic/mode=wait,shrink",
            "--choose", "/policies/precheck/enabled=true,false", "--svg", w / "choose.svg")
        run("compare", scen / "minimal.json", "--trials", 12, "--variant", 'daly:/policies/checkpoint={"type":"daly"}',
            "--variant", "short:/policies/checkpoint/interval=10min", "--svg", w / "compare.svg")
        (w / "fleet").mkdir()
        run("calibrate", traces / "fleet.journal", traces / "jobs.sacct", traces / "incidents.csv", "--year", 2024,
            "--out", w / "fleet.json", "--plots", w / "fleet")
        # A run's event log: lifetimes per class and repair times that are all one value (no fit).
        run("run", scen / "features.json", "--trials", 1, "--events", w / "events.csv")
        (w / "events").mkdir()
        run("calibrate", w / "events.csv", "--base", scen / "features.json", "--out", w / "events.json", "--plots", w / "events")

        expectations = {
            "sweep.svg": ["legend:restart overhead (/restart/overhead) = 2min", "legend:restart overhead (/restart/overhead) = 10min", "marker:best"],
            "sweep_categories.svg": ["category:wait", "category:shrink"],
            # optimize and compare: the paired difference above the goodputs, a level at zero for the baseline.
            "optimize.svg": ["marker:optimum", "marker:current", "title:paired trial by trial", "level:the scenario's own"],
            "choose.svg": ["category:wait, true", "category:shrink, false", "marker:best", "title:paired trial by trial",
                           "level:the best"],
            "compare.svg": ["category:baseline", "category:daly", "category:short", "title:paired trial by trial",
                            "level:the baseline"],
            "repair_hours.svg": ["cdf", "no-legend:lognormal"],
            "recovery_hours.svg": ["cdf"],
        }
        plots = sorted(w.glob("*.svg")) + sorted((w / "fleet").glob("*.svg")) + sorted((w / "events").glob("*.svg"))
        for path in plots:
            expect = list(expectations.get(path.name, []))
            if path.name.startswith("lifetimes_"):
                expect += ["cdf", "legend:weibull fit"]
            check_svg(path, expect)
        for must in ("sweep.svg", "optimize.svg", "choose.svg", "compare.svg", "repair_hours.svg", "rates_gpu.svg"):
            if not any(p.name == must for p in plots):
                failures.append(f"{must}: not written")
    for f in failures:
        print("plots:", f, file=sys.stderr)
    if failures:
        return 1
    print(f"plots: {len(plots)} plots render and read well")
    return 0


if __name__ == "__main__":
    sys.exit(main())

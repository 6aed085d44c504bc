#!/usr/bin/python3
"""Turn the public BLOOM-176B logbook and ByteRobust's incident table into incident tables that
`ctwin calibrate` reads (class,count,exposure,unit,effect,source).

Every source row is either converted or excluded with a reason, and an unknown row stops the
script, so a changed source cannot slip through. Dated events become counts over the exposure
of the period they fall in. A vague statement ("every week or so one GPU dies") becomes a rate
times the exposure of the period it describes: an implied count, flagged as such, never dated
events. Standard library only.

  scripts/convert_public_traces.py            write calibration/data/*_incidents.csv
  scripts/convert_public_traces.py --check    exit 1 if the committed tables are stale
"""
import csv
import io
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "calibration" / "data" / "sources"
OUT = ROOT / "calibration" / "data"

# ---- BLOOM-176B (tr11), Jean Zay: 48 nodes x 8 A100-80GB from launch to the 48 -> 24 switch ----
BLOOM_NODES, BLOOM_GPUS_PER_NODE = 48, 8
BLOOM_START = datetime(2022, 3, 11, 19, 42, tzinfo=timezone.utc)  # 11:42am PST
BLOOM_END = datetime(2022, 7, 4, tzinfo=timezone.utc)              # the day's switch; time not given
STATEMENT_FROM = datetime(2022, 4, 1, tzinfo=timezone.utc)         # "2022-04-XX": from April on

# (date, event_type) -> (class, effect, component) or an exclusion reason.
BLOOM_ROWS = {
    ("2022-03-11", "launch"): "not a fault: sets the period and the fleet",
    ("2022-03-14", "config change"): "planned: a configuration change",
    ("2022-03-18", "status"): "not a fault: throughput and checkpoint figures",
    ("2022-03-21", "unexpected interruption"): ("gpu_failure", "crash", "gpu"),
    ("2022-03-22", "unexpected interruption"): ("facility_outage", "crash", "node"),
    ("2022-03-24", "planned restart"): "planned: a software fix",
    ("2022-03-28", "planned restart(s)"): "planned: software fixes",
    ("2022-03-30", "planned restart"): "planned: a software change",
    ("2022-04-04", "planned restart"): "planned: a software change",
    ("2022-04-06", "planned restarts (2)"): "planned: software changes",
    ("2022-04-12", "training anomaly (no restart)"): "no interruption: a loss spike that recovered",
    ("2022-04-XX", "recurring unexpected interruptions"): ("gpu_failure", "crash", "gpu"),
    ("2022-04-28", "degradation (fail-slow)"): ("gpu_slow", "slow", "gpu"),
    ("2022-04-30", "unexpected hang"): ("software_hang", "hang", "node"),
    ("2022-05-09", "unexpected hang"): ("software_hang", "hang", "node"),
    ("2022-05-18", "unexpected hang"): ("software_hang", "hang", "node"),
    ("2022-05-18", "ops note"): "not a fault: Slurm settings",
    ("2022-06-28", "milestone"): "not a fault",
    ("2022-07-04", "planned reconfiguration"): "planned: ends the period (48 -> 24 nodes)",
}


def days(a, b):
    return (b - a) / timedelta(days=1)


def bloom(rows):
    period = days(BLOOM_START, BLOOM_END)
    per = {"gpu": BLOOM_NODES * BLOOM_GPUS_PER_NODE, "node": BLOOM_NODES}
    out, notes, dated = [], [], {}
    for number, row in enumerate(rows, start=2):
        key = (row["date"], row["event_type"])
        if key not in BLOOM_ROWS:
            sys.exit(f"bloom176b_tr11_events.csv line {number}: no decision for {key}; add one to BLOOM_ROWS")
        decision = BLOOM_ROWS[key]
        if isinstance(decision, str):
            notes.append(f"line {number} ({row['date']}, {row['event_type']}): excluded, {decision}")
            continue
        name, effect, component = decision
        if row["date"] == "2022-04-XX":
            # "'Every week or so' one GPU dies": one per week over April 1 to the end of the period.
            weeks = days(STATEMENT_FROM, BLOOM_END) / 7
            out.append((name, round(weeks, 2), round(per[component] * days(STATEMENT_FROM, BLOOM_END), 1), component + "-days",
                        effect, f"implied: 'every week or so one GPU dies' x {weeks:.2f} weeks (2022-04-01 to 2022-07-04); "
                        f"BLOOM chronicles line {number}"))
            continue
        when = datetime.fromisoformat(row["date"]).replace(tzinfo=timezone.utc)
        # A GPU failure before April is a dated count over March; after, the statement covers it.
        if name == "gpu_failure":
            assert when < STATEMENT_FROM
            out.append((name, 1, round(per[component] * days(BLOOM_START, STATEMENT_FROM), 1), component + "-days", effect,
                        f"dated {row['date']}, over launch to 2022-04-01; BLOOM chronicles line {number}"))
            continue
        dated.setdefault((name, effect, component), []).append(f"{row['date']} (line {number})")
    for (name, effect, component), when in dated.items():
        out.append((name, len(when), round(per[component] * period, 1), component + "-days", effect,
                    "dated " + " ".join(when) + "; BLOOM chronicles"))
    header = [
        "BLOOM-176B (tr11) on Jean Zay, from calibration/data/sources/bloom176b_tr11_events.csv",
        "(bigscience-workshop/bigscience train/tr11-176B-ml/chronicles.md, commit b43180a, 2022-07-04).",
        f"Period: 2022-03-11 19:42 UTC to 2022-07-04 00:00 UTC = {period:.2f} days on {BLOOM_NODES} nodes x "
        f"{BLOOM_GPUS_PER_NODE} A100-80GB; exposure in GPU-days or node-days of that fleet.",
        "An implied count (a rate statement times its period) carries the statement's vagueness on top of",
        "the Poisson interval that calibrate reports: read it as the order of magnitude.",
    ] + notes
    return header, out


# ---- ByteRobust (SOSP'25) Table 1: incidents over three months on a platform of >200k GPUs ----
BR_GPUS, BR_DAYS, BR_GPUS_PER_NODE = 200_000, 3 * 365.25 / 12, 8
BR_ROWS = {  # symptom -> (class, effect, component) or an exclusion reason
    "CUDA Error": ("cuda_error", "crash", "gpu"),
    "CPU Overload": ("cpu_overload", "crash", "node"),
    "CPU OOM": ("cpu_oom", "crash", "node"),
    "Insufficient Disk Space": ("disk_space", "crash", "node"),
    "Infiniband Error": ("infiniband_error", "crash", "node"),
    "Filesystem Mount": ("filesystem_mount", "crash", "node"),
    "HDFS Error": ("hdfs_error", "crash", "node"),
    "Container Error": ("container_error", "crash", "node"),
    "OS Kernel Panic": ("kernel_panic", "crash", "node"),
    "GPU Memory Error": ("gpu_memory_error", "crash", "gpu"),
    "External Service Error": ("external_service", "crash", "node"),
    "GPU Unavailable": ("gpu_unavailable", "crash", "gpu"),
    "Disk Fault": ("disk_fault", "crash", "node"),
    "Job Hang": ("job_hang", "hang", "node"),
    "MFU Decline": ("mfu_decline", "slow", "node"),
    "NaN value": ("nan_value", "sdc", "gpu"),
    "Code/Data Adjustment": "planned: manual restarts to change code or data",
    "SUM of table rows": "a total, not a category",
}


def byterobust(rows):
    gpu_days = BR_GPUS * BR_DAYS
    exposure = {"gpu": gpu_days, "node": gpu_days / BR_GPUS_PER_NODE}
    out, notes = [], []
    for number, row in enumerate(rows, start=2):
        symptom = row["incident_symptom"]
        if symptom not in BR_ROWS:
            sys.exit(f"byterobust_incidents.csv line {number}: no decision for {symptom!r}; add one to BR_ROWS")
        decision = BR_ROWS[symptom]
        if isinstance(decision, str):
            notes.append(f"line {number} ({row['category']}, {symptom}, {row['count']}): excluded, {decision}")
            continue
        name, effect, component = decision
        out.append((name, int(row["count"]), round(exposure[component], 1), component + "-days", effect,
                    f"{row['category']} '{symptom}'; ByteRobust Table 1, line {number}"))
    header = [
        "ByteRobust (Wan et al., SOSP'25, arXiv 2509.16293) Table 1, from calibration/data/sources/byterobust_incidents.csv.",
        f"Exposure: three months ({BR_DAYS:.2f} days) of a platform of >200k GPUs = {gpu_days:.4g} GPU-days, "
        f"node-days at {BR_GPUS_PER_NODE} GPUs per node (an assumption).",
        "Two biases, opposite ways: '>200k' makes the GPU count a floor (rates too high), and not every GPU",
        "ran LLM training all the time (rates too low). Counts are incidents of 778,135 jobs, not hardware",
        "faults. The table's explicit rows sum to 39,687; its text says 38,236.",
    ] + notes
    return header, out


def render(header, rows):
    text = io.StringIO()
    for line in header:
        text.write("# " + line + "\n")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["class", "count", "exposure", "unit", "effect", "source"])
    writer.writerows(rows)
    return text.getvalue()


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for source, convert, target in [("bloom176b_tr11_events.csv", bloom, "bloom176b_incidents.csv"),
                                    ("byterobust_incidents.csv", byterobust, "byterobust_incident_table.csv")]:
        with open(SOURCES / source, newline="") as f:
            text = render(*convert(list(csv.DictReader(f))))
        path = OUT / target
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(path)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        sys.exit("stale (run scripts/convert_public_traces.py): " + ", ".join(stale))


if __name__ == "__main__":
    main()

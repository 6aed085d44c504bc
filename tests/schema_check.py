#!/usr/bin/env python3
"""Every JSON ctwin reads or writes against its schema in docs/schema/ (draft 2020-12, Debian's
python3-jsonschema): the shipped scenarios and policy files, then the output of every command
that writes JSON, made here from small scenarios. Also shows the schemas are not vacuous: a
scenario with a misspelt field, a wrong unit or a missing section fails.

  /usr/bin/python3 tests/schema_check.py BUILD/ctwin
"""
import glob
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from jsonschema import Draft202012Validator, RefResolver

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "docs" / "schema"
failures = []


def validator(name):
    path = SCHEMAS / f"{name}.schema.json"
    schema = json.loads(path.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, resolver=RefResolver(path.as_uri(), schema))


def check(name, document, label):
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    for e in errors[:5]:
        failures.append(f"{label}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
    return not errors


def check_file(name, path):
    return check(name, json.loads(pathlib.Path(path).read_text()), os.path.relpath(path, ROOT) if str(path).startswith(str(ROOT)) else path)


def main():
    ctwin = os.path.abspath(sys.argv[1])
    scenarios = sorted(glob.glob(str(ROOT / "scenarios" / "*.json")) + glob.glob(str(ROOT / "tests" / "scenarios" / "*.json")) +
                       glob.glob(str(ROOT / "bench" / "scenarios" / "*.json")))
    for path in scenarios:
        check_file("scenario", path)
    for path in glob.glob(str(ROOT / "scenarios" / "policies" / "*.json")):
        check_file("policy", path)

    # Not vacuous: each of these breaks a scenario the loader also refuses.
    minimal = json.loads((ROOT / "tests" / "scenarios" / "minimal.json").read_text())
    for why, edit in [("a misspelt section", lambda d: d.update(chekpoint=d.pop("checkpoint"))),
                      ("a duration without a unit", lambda d: d["restart"].update(overhead=600)),
                      ("an unknown rate unit", lambda d: d["faults"][0].update(rate="1/gpu-month")),
                      ("no policies", lambda d: d.pop("policies")),
                      ("an unknown remediation", lambda d: d["faults"][0]["recovery"].update(action="pray"))]:
        broken = json.loads(json.dumps(minimal))
        edit(broken)
        if not list(validator("scenario").iter_errors(broken)):
            failures.append(f"the scenario schema accepts {why}")

    def ctwin_run(*args):
        out = subprocess.run([ctwin, *args], cwd=work, capture_output=True, text=True)
        if out.returncode != 0:
            failures.append(f"ctwin {' '.join(args)}: exit {out.returncode}: {out.stderr.strip()[-500:]}")
        return out

    with tempfile.TemporaryDirectory() as work:
        os.environ["CTWIN_CACHE_DIR"] = os.path.join(work, "step-cache")
        feat, mini, pol = (str(ROOT / "tests" / "scenarios" / f"{n}.json") for n in ("features", "minimal", "policies"))
        mega = str(ROOT / "scenarios" / "megascale_175b.json")
        j = lambda name: os.path.join(work, name)
        # `--schema` at the root of a scenario is for editors: the loader takes it.
        with_schema = dict(minimal, **{"$schema": str(SCHEMAS / "scenario.schema.json")})
        pathlib.Path(j("with_schema.json")).write_text(json.dumps(with_schema))
        ctwin_run("check", j("with_schema.json"))
        outputs = [
            ("run", ["run", feat, "--trials", "6", "--json", j("run.json"), "--events", j("events.csv"), "--timeline", j("timeline.json")], "run.json"),
            ("run", ["run", feat, "--trials", "4", "--engine", "both", "--json", j("run_both.json")], "run_both.json"),
            ("run", ["run", mega, "--trials", "4", "--json", j("run_workload.json")], "run_workload.json"),
            # The tail and the assumed fields' ranges; the features scenario has no rate_uncertainty: skipped fields too.
            ("run", ["run", feat, "--trials", "8", "--sensitivity", "--json", j("run_sensitivity.json")], "run_sensitivity.json"),
            ("sweep", ["sweep", mini, "--trials", "10", "--set", "/policies/checkpoint/interval=30min,1h", "--json", j("sweep.json")], "sweep.json"),
            ("optimize", ["optimize", mini, "--trials", "10", "--points", "5", "--json", j("optimize.json")], "optimize.json"),
            ("optimize", ["optimize", pol, "--trials", "10", "--choose", "/policies/elastic/mode=wait,shrink", "--json", j("choose.json")], "choose.json"),
            ("compare", ["compare", mini, "--trials", "10", "--variant", 'daly:/policies/checkpoint={"type":"daly"}', "--json", j("compare.json")], "compare.json"),
            ("step", ["step", mega, "--json", j("step.json")], "step.json"),
            ("step", ["step", str(ROOT / "scenarios" / "llama3_405b_16k_full.json"), "--sensitivity", "--json", j("step_sensitivity.json")],
             "step_sensitivity.json"),
            ("validate", ["validate", feat, "--against", j("events.csv"), "--trials", "10", "--json", j("validate.json")], "validate.json"),
            ("calibrate-report", ["calibrate", str(ROOT / "tests/traces/fleet.journal"), str(ROOT / "tests/traces/jobs.sacct"),
                                  str(ROOT / "tests/traces/incidents.csv"), "--year", "2024", "--out", j("fitted.json"), "--report", j("fits.json")], "fits.json"),
            ("calibrate-report", ["calibrate", str(ROOT / "tests/traces/megatron_train.log"), "--base", mini, "--out", j("steps.json"),
                                  "--report", j("steps_report.json")], "steps_report.json"),
            # A per-node step log with stages: its slow node written into the scenario as a class.
            ("calibrate-report", ["calibrate", str(ROOT / "tests/traces/node_steps.csv"), "--base", mini, "--out", j("node_steps.json"),
                                  "--report", j("node_steps_report.json")], "node_steps_report.json"),
            ("scenario", None, "node_steps.json"),
            # An event log (the twin's own, with Weibull fits and model choices), and dmesg beside sacct.
            ("calibrate-report", ["calibrate", j("events.csv"), "--base", feat, "--out", j("from_events.json"), "--report", j("events_report.json")],
             "events_report.json"),
            ("calibrate-report", ["calibrate", str(ROOT / "tests/traces/gpu-017.dmesg"), str(ROOT / "tests/traces/jobs.sacct"), "--year", "2024",
                                  "--out", j("from_dmesg.json"), "--report", j("dmesg_report.json")], "dmesg_report.json"),
            # Kernel logs as journald exports them (`journalctl -k -o json`), beside sacct.
            ("calibrate-report", ["calibrate", str(ROOT / "tests/traces/fleet-json.journal"), str(ROOT / "tests/traces/jobs.sacct"),
                                  "--out", j("from_journald.json"), "--report", j("journald_report.json")], "journald_report.json"),
            # Pooled with the population prior: a kernel log against the default's grouped classes, the
            # prior alone (no traces), and the twin loop's master log (classes without groups).
            ("calibrate-report", ["calibrate", str(ROOT / "tests/traces/gpu-017.dmesg"), "--base", str(ROOT / "scenarios/default.json"),
                                  "--out", j("pooled.json"), "--report", j("pooled_report.json")], "pooled_report.json"),
            ("scenario", None, "pooled.json"),
            ("calibrate-report", ["calibrate", "--base", str(ROOT / "scenarios/default.json"), "--out", j("prior_only.json"),
                                  "--report", j("prior_only_report.json")], "prior_only_report.json"),
            ("calibrate-report", ["calibrate", str(ROOT / "tests/traces/twin_loop_job.csv"), "--base", str(ROOT / "scenarios/twin_loop.json"),
                                  "--out", j("twin_loop_cal.json"), "--report", j("twin_loop_report.json")], "twin_loop_report.json"),
            ("prior", ["prior", str(ROOT / "scenarios/sources/fleet_class_counts.csv"), "--iterations", "400", "--no-holdouts",
                       "--out", j("prior.json")], "prior.json"),
            ("scenario", None, "fitted.json"),
            ("scenario", None, "steps.json"),
            ("faults", ["faults", feat, "--until", "30d", "--json", j("faults.json")], "faults.json"),
            ("timeline", None, "timeline.json"),
            ("timeline", ["timeline", j("events.csv"), "--out", j("timeline_log.json")], "timeline_log.json"),
            ("precheck", ["live", "precheck", "--backend", "cpu", "--ranks", "2", "--gemm-n", "64", "--check-n", "32",
                          "--copy-bytes", "1MiB", "--allreduce-bytes", "1MiB", "--json", j("precheck.json")], "precheck.json"),
            ("ckpt-bench", ["live", "ckpt-bench", "--backend", "cpu", "--size", "4MiB", "--iterations", "1",
                            "--persist-dir", work, "--json", j("ckpt.json")], "ckpt.json"),
        ]
        for name, args, output in outputs:
            if args:
                ctwin_run(*args)
            if os.path.exists(j(output)):
                check_file(name, j(output))
            else:
                failures.append(f"{output}: not written")
        # A log without its ledger rows and naming a class the scenario lacks: figures "not in trace".
        rows = [r for r in pathlib.Path(j("events.csv")).read_text().splitlines() if ",ledger," not in r]
        rows.insert(-1, rows[-1].split(",")[0] + ",node-1,,interrupted,,cosmic_ray")
        pathlib.Path(j("events_no_ledger.csv")).write_text("\n".join(rows) + "\n")
        ctwin_run("validate", feat, "--against", j("events_no_ledger.csv"), "--trials", "10", "--json", j("validate_no_ledger.json"))
        check_file("validate", j("validate_no_ledger.json"))
        check_file("prior", ROOT / "scenarios" / "priors" / "public_fleets.json")
        ctwin_run("catalog", "--json", j("catalog.json"))
        check_file("catalog", j("catalog.json"))

    for f in failures:
        print("schema:", f, file=sys.stderr)
    if failures:
        return 1
    print(f"schema: {len(scenarios)} scenarios, the policy files and {len(outputs) + 1} outputs match docs/schema/")
    return 0


if __name__ == "__main__":
    sys.exit(main())

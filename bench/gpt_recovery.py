"""Fault to the first new step of every rank, for examples/gpt (PyTorch DDP over gloo on this CPU)
under `ctwin live master` and one agent per node on 127.0.0.1, by restart path (issue 51):
  relaunch      the trainer under torchrun, the policy's mechanism `relaunch` (every process new);
  ranks         the trainer forked by build/ctwin_ranks.py, relaunched (every process new);
  warm_standby  the same, each agent with --warm-standby and the mechanism `warm_standby`: every node's
                next attempt runs in a ctwin_ranks.py started ahead (its imports done);
  in_process    ctwin_ranks.py, the mechanism `in_process` (the healthy ranks rejoin in their processes,
                the failed one is forked again from the warm launcher).
The fault: node 1's first rank aborts in step 100 of 150 (os.abort), a few seconds into the run: a
warm standby started a second into an attempt has done its imports by then. The recovery runs from the abort (the
trainer's own stamp) to the last rank's first step done after it; each run also checks that every
rank took the same first step, that the ledger adds up to the wall time and that the job finishes.
    python3 bench/gpt_recovery.py [BUILD] [--layouts 2x1 4x2] [--paths relaunch ranks warm_standby in_process] [--repeat 3]
The master runs with --report-interval 0.2s; the hang timeout is 3 s."""

import argparse
import os
import re
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "live"))
import cluster_test as ct  # noqa: E402

CRASH = re.compile(r"gpt: injected crash in step (\d+) at ([\d.]+)")
FIRST = re.compile(r"gpt: rank (\d+) attempt (\d+) first step (\d+) done at ([\d.]+)")


PATHS = {"relaunch": ("ddp", ct.POLICY, "relaunch"), "ranks": ("ranks", ct.POLICY, "relaunch"),
         "warm_standby": ("ranks", ct.WARM_STANDBY_POLICY, "warm_standby"), "in_process": ("ranks", ct.IN_PROCESS_POLICY, "in_process")}


def one(build, path, nnodes, nproc):
    trainer, policy, expected = PATHS[path]
    job = ct.Job(os.path.abspath(build), "bench-%s" % path, nnodes, trainer, policy)
    job.nproc = nproc
    job.steps = 150
    try:
        job.start_master(extra=["--max-restarts", "3"])
        for n in range(nnodes):
            job.start_agent(str(n), n, ["--crash-at-step", "100"] if n == 1 else [], extra=["--warm-standby"] if path == "warm_standby" else [])
        ledger, rows = ct.finish_and_check(job, 1)
        restart = [r for r in rows if r["kind"] == "restart"]
        took = restart[0]["detail"].split("path=")[1].split()[0] if "path=" in restart[0]["detail"] else "relaunch"
        ct.check(took == expected, "the restart took the %s path" % took, job)
        crash_at, firsts = None, {}
        for name in os.listdir(job.dir):
            if name.startswith("agent-") and name.endswith(".log"):
                text = open(job.path(name)).read()
                for m in CRASH.finditer(text):
                    crash_at = float(m.group(2))
                for m in FIRST.finditer(text):
                    if int(m.group(2)) > 0:  # a later attempt: after the restart
                        firsts[int(m.group(1))] = (int(m.group(3)), float(m.group(4)))
        ct.check(crash_at is not None and len(firsts) == nnodes * nproc, "the fault or a rank's first step is missing: %s" % firsts, job)
        steps = {s for s, _ in firsts.values()}
        ct.check(len(steps) == 1, "the ranks' first steps differ: %s" % firsts, job)
        start_up = next(float(r["time_s"]) for r in rows if r["kind"] == "running")  # the first generation's launch, charged to restart too
        return max(t for _, t in firsts.values()) - crash_at, steps.pop(), ledger["restart"] - start_up
    finally:
        job.stop_everything()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build", nargs="?", default=os.path.join(here, "..", "build"))
    p.add_argument("--layouts", nargs="+", default=["2x1", "4x2"], help="NODESxRANKS")
    p.add_argument("--paths", nargs="+", default=["relaunch", "ranks", "warm_standby", "in_process"], choices=sorted(PATHS))
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    print("%-7s %-13s %s" % ("layout", "path", "fault -> every rank's first new step (s), each run; median"))
    for layout in a.layouts:
        nnodes, nproc = (int(x) for x in layout.split("x"))
        for path in a.paths:
            times = []
            for _ in range(a.repeat):
                seconds, step, restart = one(a.build, path, nnodes, nproc)
                times.append(seconds)
            print("%-7s %-13s %s; median %.2f (first step %d; the ledger's restart less the start-up: %.2f s)"
                  % (layout, path, " ".join("%.2f" % t for t in times), statistics.median(times), step, restart), flush=True)


if __name__ == "__main__":
    sys.exit(main())

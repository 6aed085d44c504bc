"""Time from a fault to every rank running again, under `ctwin live master` with N agents on this
machine (127.0.0.1, each agent with its own shared-memory folder), the synthetic trainer (20 ms
steps, 4 MiB of state, a checkpoint every 10 steps). For each fault and N: from the fault (its
row in the master's job log) to the `running` row of the next generation, and its parts from the
ledger: detection (the hang timeout, the agent timeout), diagnosis (every node stopped and said
what it holds), restart (relaunch to restored).
    python3 bench/live_cluster_recovery.py [BUILD] [--nodes 2 4 8] [--faults crash hang node_loss]
The master runs with --report-interval 0.2s --agent-timeout 5s; the policy's hang timeout is 3 s."""

import argparse
import datetime
import os
import signal
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "live"))
import cluster_test as ct  # noqa: E402


def one(build, fault, nnodes):
    job = ct.Job(os.path.abspath(build), "bench-" + fault, nnodes, "synthetic")
    job.steps = 400
    killed_at = None
    try:
        job.start_master()
        for n in range(nnodes):
            # On node rank 0, whose lines keep the job's ledger: the synthetic trainers are not in lockstep,
            # so a fault elsewhere would leave rank 0 stepping on until the master stops it.
            faults = {"crash": ["--crash-at-step", "60"], "hang": ["--hang-at-step", "60"]}.get(fault, []) if n == 0 else []
            job.start_agent(str(n), n, faults)
        if fault == "node_loss":
            job.start_agent("spare", None, spare=True)
            job.wait_for("steps", lambda s: s["phase"] == "running" and s["step"] >= 60)
            victim = "0"
            killed_at = time.time()  # the synthetic trainers are not in lockstep: the others step on, so the loss's time is ours
            os.killpg(job.agents[victim].pid, signal.SIGKILL)
            job.agents[victim].wait()
            del job.agents[victim]
        job.wait_for("the restart", lambda s: s["generation"] >= 2 and s["phase"] == "running" and s["step"] >= 0, timeout=120)
        time.sleep(1)
        job.master.send_signal(signal.SIGTERM)
        job.master.wait(30)
        rows = job.rows(job.path("job.csv"))
        t_fault = next(float(r["time_s"]) for r in rows if r["kind"] == "fault")
        if fault == "node_loss":
            utc = next(r["detail"] for r in rows if r["kind"] == "start").split()[0][4:]
            start = datetime.datetime.fromisoformat(utc.replace("Z", "+00:00")).timestamp()
            t_fault = killed_at - start
        t_detected = next(float(r["time_s"]) for r in rows if r["kind"] == "detected")
        t_diagnosed = next(float(r["time_s"]) for r in rows if r["kind"] == "diagnosed")
        t_running = next(float(r["time_s"]) for r in rows if r["kind"] == "running" and float(r["time_s"]) > t_fault)
        return t_running - t_fault, t_detected - t_fault, t_diagnosed - t_detected, t_running - t_diagnosed
    finally:
        job.stop_everything()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build", nargs="?", default=os.path.join(here, "..", "build"))
    p.add_argument("--nodes", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--faults", nargs="+", default=["crash", "hang", "node_loss"])
    a = p.parse_args()
    print("%-10s %6s %12s %12s %12s %12s" % ("fault", "agents", "recovery_s", "detection_s", "diagnosis_s", "restart_s"))
    for fault in a.faults:
        for n in a.nodes:
            total, detection, diagnosis, restart = one(a.build, fault, n)
            print("%-10s %6d %12.3f %12.3f %12.3f %12.3f" % (fault, n, total, detection, diagnosis, restart), flush=True)


if __name__ == "__main__":
    sys.exit(main())

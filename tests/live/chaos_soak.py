"""The chaos soak (issue 36): jobs of 4 agents and a hot spare under a job master, with the synthetic
trainer, through a seeded random schedule of what real clusters do without malice:
  kill_trainer   SIGKILL of one node's trainer;
  stop_trainer   SIGSTOP of one node's trainer (a hang);
  kill_agent     SIGKILL of one node's agent and its trainer (the node is lost; a new spare joins);
  pause_agent    SIGSTOP of one agent for 2 s, well within --agent-timeout;
  kill_master    SIGKILL of the master, started again from its journal 1 s later;
  pause_master   SIGSTOP of the master past --agent-timeout (a paused VM);
  corrupt_shard  a byte of the newest step's shard on disk flipped, then its node loses its memory
                 and its trainer (it can restore only from disk);
  truncate_shard the same with the shard cut short;
  flood          64 unauthenticated connections trickling headers for 8 s (a port scanner);
  full_disk      the persist folder's file system (a tmpfs of its own, in a mount namespace) kept full
                 for 4 s: a storage fault, never an interruption (not drawn where nothing can be mounted).

After every fault it checks the invariants:
  - the job makes progress within a bound;
  - after a restart, every node restored the step the master committed, and that step is whole
    (never the step whose shard was damaged);
  - no process of an older attempt survives the new one's start;
  - no healthy node is evicted (only a killed agent's node leaves);
  - a full disk restarts nothing: the master raises the storage alert, and clears it once there is room;
and at the end of each job: the job's ledger and every node's add up to their wall times, and the
job's interruptions are its restarts.

A job ends when its steps are done; the next fault starts a new one. A failure prints the seed and the
fault's index, so that it can be replayed.

At the end it prints detection figures (`--figures FILE` writes them as JSON), from the master's log:
for each fault kind that restarts the job, the time from its injection to the master's detection and
to the job running again, and the steps rolled back; interruptions no injection explains (false
alarms, per agent-hour); and healthy nodes evicted (an invariant: none). The master runs with its
default agent timeout.

With --in-process the trainers are examples/gpt (PyTorch DDP over gloo) forked by ctwin_ranks.py under a
policy of in-process restart (issue 51), and one more fault is drawn: kill_worker, SIGKILL of one node's
worker alone (its launcher lives on: the healthy ranks rejoin in their processes). After a restart in
process, processes of the older attempt survive by design: the invariant is then that every node runs
exactly its ranks' workers, and that each of them restored the step the master committed. Its agents
keep a warm standby (--warm-standby): a restart that in-process does not take runs in them.

With --replica-ranks 1 the trainers persist one shard per replica (only rank 0 writes; the others
restore its shard from disk): a damaged shard is then the one every node reads.

    python3 chaos_soak.py BUILD_DIR [--faults N] [--seed S] [--replica-ranks 1] [--in-process]
Exit 0: every invariant held; 1: one broke."""

import argparse
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_test as ct  # noqa: E402

FAULTS = ["kill_trainer", "stop_trainer", "kill_agent", "pause_agent", "kill_master", "pause_master", "corrupt_shard",
          "truncate_shard", "flood", "full_disk"]
EVICTING = {"kill_agent"}
# Faults that restart the job, by what detects them: the figures' rows.
DETECTED_BY = {"kill_trainer": "crash", "corrupt_shard": "crash", "truncate_shard": "crash", "stop_trainer": "hang",
               "kill_agent": "silent node", "kill_worker": "crash"}
PROGRESS_BOUND_S = 60


class Broken(AssertionError):
    pass


class Soak:
    def __init__(self, build, seed, replica_ranks=0, in_process=False):
        self.build = build
        self.in_process = in_process  # examples/gpt under ctwin_ranks.py, restarted in process
        self.agent_extra = ["--warm-standby"] if in_process else []  # what in-process does not take runs in a standby
        self.replica_ranks = replica_ranks  # 0: every rank persists its own shard
        self.rng = random.Random(seed)
        self.job = None
        self.jobs = 0
        self.spares = 0
        self.counts = {}
        self.restarts = 0
        self.figures = {}          # detected by -> {"detect_s": [...], "running_s": [...], "rolled_back_steps": [...]}
        self.agent_seconds = 0.0   # agents' time in the soak's jobs: false alarms are per agent-hour
        self.unexplained = []      # interruptions no injection explains
        self.injections = []       # (wall time, fault) of this job
        self.drawn = FAULTS + ["kill_worker"] if in_process else FAULTS
        self.faults = list(self.drawn) if os.environ.get("CTWIN_TEST_MOUNT_NAMESPACE") == "1" else [f for f in self.drawn if f != "full_disk"]

    # --- a job ---------------------------------------------------------------------------------

    def new_job(self):
        self.jobs += 1
        if self.in_process:
            job = ct.Job(self.build, "soak", 4, "ranks", ct.IN_PROCESS_POLICY)
            job.steps = 400  # PyTorch steps of four ranks on the machine's cores: 15-25 s a job
        else:
            job = ct.Job(self.build, "soak", 4, "synthetic")
            job.steps = 700  # 14 s of 20 ms steps: a few faults a job
        if self.replica_ranks:
            job.env["CTWIN_FLASH_REPLICA_RANKS"] = str(self.replica_ranks)
        self.job = job
        # The persist folder on a file system of its own (128 MiB: 4 nodes' 4 MiB shards, two steps kept
        # and one being written, with room to spare), to fill up: in the soak's own mount namespace (main()).
        if "full_disk" in self.faults:
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128m", "ctwin-soak", job.persist], capture_output=True, text=True)
            if r.returncode != 0:
                print("full_disk is not drawn: cannot mount a file system here (%s)" % r.stderr.strip(), flush=True)
                self.faults.remove("full_disk")
        # The restart budget is the policy's business, not the soak's: a job takes as many faults as it meets.
        job.master_extra = ["--max-restarts", "100000"]
        job.start_master(job.master_extra, agent_timeout=None)
        self.job_started = time.time()
        self.injections = []
        for n in range(4):
            job.start_agent(str(n), n, extra=self.agent_extra)
        self.add_spare()
        job.wait_for("the job's first steps", lambda s: s["phase"] == "running" and s["step"] >= 20, timeout=PROGRESS_BOUND_S)

    def add_spare(self):
        self.spares += 1
        self.job.start_agent("spare%d" % self.spares, None, spare=True, extra=self.agent_extra)

    def finish_job(self):
        """The job ran its steps: its ledger (the master's, the only one) and its interruptions."""
        job = self.job
        ledger, rows = ct.finish_and_check(job, len([r for r in job.rows(job.path("job.csv")) if r["kind"] == "interrupted"]))
        self.agent_seconds += (time.time() - self.job_started) * (4 + 1)  # four nodes and a spare
        self.explain(rows)
        restarts = [r for r in rows if r["kind"] == "restart"]
        interrupted = [r for r in rows if r["kind"] == "interrupted"]
        ct.check(len(restarts) == len(interrupted), "%d restarts for %d interruptions" % (len(restarts), len(interrupted)), job)
        job.stop_everything()
        self.job = None

    def status(self):
        """The master's status; None once the job is over (the master exited)."""
        deadline = time.time() + 20
        while True:
            if self.job.master.poll() is not None:
                return None
            try:
                return self.job.status()
            except OSError:  # a master starting again, or a status that came during a pause
                if time.time() > deadline:
                    raise Broken("the master does not answer")
                time.sleep(0.1)

    def ranks(self, s):
        """Node rank -> the agent's key (from its host name, host-KEY)."""
        return {n["rank"]: n["host"][len("host-"):] for n in s["nodes"] if n.get("host")}

    # --- the faults ----------------------------------------------------------------------------

    def signal_trainer(self, key, sig):
        """Node `key`'s trainer, all its processes; not a warm standby waiting beside it (the agent's, not the trainer's)."""
        waiting = self.standbys_of(key)
        for pid in self.job.trainers_of(key):
            if pid in waiting:
                continue
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    def damage_shard(self, key, rank, truncate):
        """The newest complete step on disk: one shard damaged; its node then loses its memory and its
        trainer, so that it can restore only from disk. Returns the step damaged (None: none on disk)."""
        job = self.job
        steps = sorted((d for d in os.listdir(job.persist) if d.startswith("step-") and d[5:].isdigit()), reverse=True)
        for name in steps:
            folder = os.path.join(job.persist, name)
            step = int(name[5:])
            shards = sorted(f for f in os.listdir(folder) if f.endswith(".shard") and not f.startswith("."))
            manifests = [f for f in os.listdir(folder) if f.endswith(".manifest")]
            world = self.replica_ranks or 4  # the step's shards
            if len(shards) < world or len(manifests) < world:  # not complete on disk yet
                continue
            shard = os.path.join(folder, shards[rank % world])  # the shard this node's rank reads
            size = os.path.getsize(shard)
            if size == 0:
                continue
            with open(shard, "r+b") as f:
                if truncate:
                    f.truncate(size // 2)
                else:  # a byte of a buffer's data (a shard may pad between buffers, which no restore reads)
                    f.seek(self.data_byte(folder, shard, size))
                    byte = f.read(1)
                    f.seek(-1, 1)
                    f.write(bytes([byte[0] ^ 0x5A]))
            shm = job.path("shm-%s" % key)
            for name in os.listdir(shm):
                try:
                    os.remove(os.path.join(shm, name))
                except OSError:
                    pass
            self.signal_trainer(key, signal.SIGKILL)
            return step
        return None

    def data_byte(self, folder, shard, size):
        """A random offset inside one of the shard's buffers, from its manifest (ctwin_flash's format)."""
        spans = []
        try:
            with open(shard[: -len(".shard")] + ".manifest") as f:
                for line in f:
                    words = line.split()
                    if words and words[0] == "buffer" and int(words[3]) > 0:
                        spans.append((int(words[2]), int(words[3])))
        except (OSError, ValueError, IndexError):
            pass
        if not spans:
            return self.rng.randrange(size)
        offset, nbytes = self.rng.choice(spans) if len(spans) > 1 else spans[0]  # one buffer: one draw, as before
        return offset + self.rng.randrange(nbytes)

    def inject(self, fault, s, index):
        """Injects `fault`; returns what it expects: ('restart' | 'maybe', damaged step or None)."""
        job = self.job
        ranks = self.ranks(s)
        rank = self.rng.choice(sorted(ranks))
        key = ranks[rank]
        print("fault %d: %s, node rank %d (agent %s), job %d generation %d step %d" % (index, fault, rank, key, self.jobs, s["generation"], s["step"]),
              flush=True)
        self.injected_at = time.time()
        self.injections.append((self.injected_at, fault))
        if fault == "kill_trainer":
            self.signal_trainer(key, signal.SIGKILL)
            return "restart", None
        if fault == "stop_trainer":
            self.signal_trainer(key, signal.SIGSTOP)
            return "restart", None
        if fault == "kill_worker":  # one rank's process; its launcher lives on
            workers = self.workers_of(key)
            if not workers:
                return "maybe", None
            os.kill(self.rng.choice(sorted(workers)), signal.SIGKILL)
            return "restart", None
        if fault == "kill_agent":
            job.lose_node(key)  # checks the trainer followed its agent
            self.add_spare()
            return "restart", None
        if fault == "pause_agent":
            pid = job.agents[key].pid
            os.kill(pid, signal.SIGSTOP)
            time.sleep(2)
            os.kill(pid, signal.SIGCONT)
            return "maybe", None
        if fault == "kill_master":
            job.master.kill()
            job.master.wait()
            time.sleep(1)
            resumed = job.start_master(job.master_extra, agent_timeout=None)
            ct.check(resumed["resumed"], "the master did not resume its journal", job)
            return "maybe", None
        if fault == "pause_master":
            job.master.send_signal(signal.SIGSTOP)
            time.sleep(7)  # past the agent timeout (4 s by default)
            job.master.send_signal(signal.SIGCONT)
            return "maybe", None
        if fault in ("corrupt_shard", "truncate_shard"):
            damaged = self.damage_shard(key, rank, fault == "truncate_shard")
            return ("restart" if damaged is not None else "maybe"), damaged
        if fault == "flood":
            flood = ct.SlowClients(job.port)
            time.sleep(8)
            flood.stop()
            return "maybe", None
        if fault == "full_disk":
            filler = ct.DiskFiller(job.persist)
            time.sleep(4)
            during = self.status()
            filler.stop()
            if during is not None and during["phase"] != "done":
                ct.check(during["generation"] == s["generation"], "the full disk restarted the job: %s" % during, job)
            return "none", None
        raise ValueError(fault)

    def standbys_of(self, key):
        """Node `key`'s warm standbys still waiting: a launcher with no process of its own yet."""
        if not self.in_process:
            return set()
        parents = set()
        for entry in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % entry) as f:
                    parents.add(int(f.read().rsplit(")", 1)[1].split()[1]))
            except (OSError, ValueError, IndexError):
                pass
        return {pid for pid in ct.launchers_of(self.job, key) if pid not in parents}

    def workers_of(self, key):
        """Node `key`'s workers forked by ctwin_ranks.py (named ctwin-rank-L), not its launcher or store."""
        found = []
        for pid in self.job.trainers_of(key):
            try:
                with open("/proc/%d/comm" % pid) as f:
                    if f.read().startswith("ctwin-rank-"):
                        found.append(pid)
            except OSError:
                pass
        return found

    # --- the invariants ------------------------------------------------------------------------

    def wait(self, what, predicate, timeout=PROGRESS_BOUND_S):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s = self.status()
            if s is None:  # the job finished
                return None
            if predicate(s):
                return s
            time.sleep(0.05)
        raise Broken("timed out waiting for " + what)

    def check_after(self, fault, expect, damaged, before):
        job = self.job
        if expect == "restart":
            s = self.wait("the restart", lambda s: s["phase"] == "done" or (s["generation"] > before["generation"] and s["phase"] == "running"))
        elif expect == "none":  # a storage fault: the alert clears once there is room, and nothing restarted
            s = self.wait("the storage alert to clear", lambda s: s["phase"] == "done" or not s["storage"]["failing"])
            ct.check(s is None or s["phase"] == "done" or s["generation"] == before["generation"], "the full disk restarted the job: %s" % s, job)
        else:
            s = self.wait("the job running again", lambda s: s["phase"] in ("running", "done"))
        if s is None or s["phase"] == "done":
            return
        if s["generation"] > before["generation"]:
            self.restarts += s["generation"] - before["generation"]
            self.check_restores(s, damaged)
            self.check_no_old_attempt(s)
            if fault in DETECTED_BY and s["generation"] == before["generation"] + 1:
                self.measure(fault, before, s)
        # Progress within the bound, from where the job stands now.
        self.wait("progress", lambda t: t["phase"] == "done" or t["step"] >= s["step"] + 10)
        after = self.status()
        if fault not in EVICTING and after is not None:
            now = self.ranks(after)
            ct.check(now == self.ranks(before), "a healthy node was evicted: %s became %s" % (self.ranks(before), now), job)

    # --- the figures ---------------------------------------------------------------------------

    def log_rows(self, until):
        """The master's log once it holds a row that `until` accepts (it is written once a second)."""
        deadline = time.time() + 5
        while True:
            rows = self.job.rows(self.job.path("job.csv"))
            if any(until(r) for r in rows) or time.time() > deadline:
                return rows

    def measure(self, fault, before, s):
        """The restart that followed `fault`: injection to detection and to the job running again."""
        at = self.injected_at
        rows = self.log_rows(lambda r: r["kind"] == "restart" and "generation=%d " % s["generation"] in r["detail"] + " ")
        start = ct.utc_start(rows)
        detected = [r for r in rows if r["kind"] == "detected" and start + float(r["time_s"]) >= at - 0.5]
        restart = [r for r in rows if r["kind"] == "restart" and ("generation=%d " % s["generation"]) in r["detail"] + " "]
        if not detected or not restart:
            return
        f = self.figures.setdefault(DETECTED_BY[fault], {"detect_s": [], "running_s": [], "rolled_back_steps": []})
        f["detect_s"].append(start + float(detected[0]["time_s"]) - at)
        f["running_s"].append(start + float(restart[0]["time_s"]) - at)
        if s["restore_step"] >= 0:
            f["rolled_back_steps"].append(max(before["step"] - s["restore_step"], 0))

    def explain(self, rows):
        """Each interruption of the job's log is explained by the latest injection of a fault that
        restarts the job within 20 s before it (once), or by a damaged shard's failed restores; the
        rest are false alarms."""
        start = ct.utc_start(rows)
        used = set()
        for r in rows:
            if r["kind"] != "interrupted":
                continue
            at = start + float(r["time_s"])
            cause = [i for i, (t, fault) in enumerate(self.injections) if t - 1 <= at <= t + 20 and
                     (fault in DETECTED_BY or fault in ("kill_master", "pause_master")) and i not in used]
            if cause:
                used.add(cause[-1])
            elif not any(fault in ("corrupt_shard", "truncate_shard") and t <= at <= t + 60 for t, fault in self.injections):
                self.unexplained.append("job %d at %.1f s: %s" % (self.jobs, float(r["time_s"]), r["detail"] or r["node"]))

    def report(self, path):
        import json
        import statistics
        out = {"agent_hours": self.agent_seconds / 3600, "false_alarms": len(self.unexplained), "unexplained": self.unexplained,
               "false_evictions": 0, "by_detector": {}}
        for name, f in sorted(self.figures.items()):
            row = {"n": len(f["detect_s"])}
            for key in ("detect_s", "running_s", "rolled_back_steps"):
                v = sorted(f[key])
                if v:
                    row[key] = {"median": statistics.median(v), "max": v[-1]}
            out["by_detector"][name] = row
            print("detection: %-11s n=%3d  detected median %.2f s max %.2f s, running again median %.2f s max %.2f s, rolled back median %s max %s steps" %
                  (name, row["n"], row["detect_s"]["median"], row["detect_s"]["max"], row["running_s"]["median"], row["running_s"]["max"],
                   row.get("rolled_back_steps", {}).get("median", "-"), row.get("rolled_back_steps", {}).get("max", "-")))
        per_hour = out["false_alarms"] / out["agent_hours"] if out["agent_hours"] > 0 else 0
        print("false alarms: %d in %.2f agent-hours (%.2f per agent-hour); healthy nodes evicted: 0" % (out["false_alarms"], out["agent_hours"], per_hour))
        for u in self.unexplained:
            print("  unexplained interruption:", u)
        if path:
            with open(path, "w") as fh:
                json.dump(out, fh, indent=1)

    def check_restores(self, s, damaged):
        step = s["restore_step"]
        ct.check(damaged is None or step != damaged, "the job restored step %d, whose shard was damaged" % step, self.job)
        if step < 0:
            return
        deadline = time.time() + 20
        while True:
            steps = ct.restored_steps(self.job.rows(self.job.path("job.csv")))  # the job's log, by node rank
            seen = {key: steps.get("node-%d" % rank) for rank, key in self.ranks(s).items()}
            if all(v == str(step) for v in seen.values()):
                return
            if time.time() > deadline:
                raise Broken("the nodes restored %s, the master committed %d" % (seen, step))
            time.sleep(0.1)

    def check_no_old_attempt(self, s):
        # Kept processes and standbys carry the environment they were started with: the workers are
        # counted instead (a survivor of an older attempt beside the new one is one too many).
        if self.in_process:
            return self.check_workers(s)
        current = str(s["generation"])
        deadline = time.time() + 15  # an old trainer is killed before its node's new one starts
        while True:
            old = [(pid, g) for pid, g in self.job.trainers_alive() if g not in (current, "?")]
            if not old:
                return
            t = self.status()
            if t is None:
                return
            newer = t["generation"]
            if newer != s["generation"]:  # another restart began meanwhile
                current = str(newer)
                continue
            if time.time() > deadline:
                raise Broken("processes of an older attempt survive generation %s: %s" % (current, old))
            time.sleep(0.1)

    def check_workers(self, s):
        """After a restart: every node runs exactly its ranks' workers (the failed one replaced, none
        of an older attempt beside them), and at most its launcher and a standby beside them."""
        deadline = time.time() + 15
        while True:
            counts = {key: len(self.workers_of(key)) for key in self.ranks(s).values()}
            launchers = {key: len(ct.launchers_of(self.job, key)) for key in self.ranks(s).values()}
            if all(n == self.job.nproc for n in counts.values()) and all(n <= 2 for n in launchers.values()):
                return
            t = self.status()
            if t is None or t["generation"] != s["generation"]:  # the job ended, or another restart began
                return
            if time.time() > deadline:
                raise Broken("after the restart of generation %d, the nodes run %s workers and %s launchers" % (s["generation"], counts, launchers))
            time.sleep(0.1)

    # --- the soak ------------------------------------------------------------------------------

    def run(self, faults, seed):
        index = 0
        fault = None
        try:
            while index < faults:
                if self.job is None:
                    self.new_job()
                before = self.status()
                if before is None or before["phase"] == "done":
                    self.finish_job()
                    continue
                if before["phase"] != "running":
                    self.wait("the job running", lambda s: s["phase"] in ("running", "done"))
                    continue
                fault = self.rng.choice(self.drawn)
                if fault not in self.faults:  # one that cannot run here: another, drawn from those that can
                    fault = self.rng.choice(sorted(set(self.faults)))
                index += 1
                self.counts[fault] = self.counts.get(fault, 0) + 1
                expect, damaged = self.inject(fault, before, index)
                self.check_after(fault, expect, damaged, before)
            if self.job is not None:
                self.wait("the job's end", lambda s: s["phase"] == "done", timeout=180)
                self.finish_job()
        except AssertionError as e:
            print("FAILED: seed %d, fault %d (%s): %s" % (seed, index, fault, e))
            if self.job is not None:
                print(self.job.logs()[-4000:])
                print("kept:", self.job.dir)
            return 1
        finally:
            if self.job is not None:
                self.job.stop_everything()
        print("passed: seed %d, %d faults over %d jobs, %d restarts; %s" %
              (seed, faults, self.jobs, self.restarts, ", ".join("%s %d" % kv for kv in sorted(self.counts.items()))))
        self.report(self.figures_path)
        return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--replica-ranks", type=int, default=0, help="1: one shard per replica (only rank 0 persists)")
    parser.add_argument("--figures", help="write the detection figures here (JSON)")
    parser.add_argument("--in-process", action="store_true", help="examples/gpt under ctwin_ranks.py, restarted in process (issue 51)")
    a = parser.parse_args()
    if os.environ.get("CTWIN_TEST_MOUNT_NAMESPACE") != "1":  # a mount namespace of its own, for the full disk's file system
        unshare = ct.mount_namespace_command()
        if unshare:
            os.environ["CTWIN_TEST_MOUNT_NAMESPACE"] = "1"
            os.execvp(unshare[0], unshare + [sys.executable] + sys.argv)
        print("no mount namespace here (unshare): full_disk is not drawn", flush=True)
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    print("chaos soak: seed %d, %d faults%s" % (seed, a.faults, ", one shard per replica of %d ranks" % a.replica_ranks if a.replica_ranks else ""), flush=True)
    if a.in_process:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("SKIP: no torch (python3-torch)")
            return 77
    soak = Soak(os.path.abspath(a.build), seed, a.replica_ranks, a.in_process)
    soak.figures_path = a.figures
    return soak.run(a.faults, seed)


if __name__ == "__main__":
    sys.exit(main())

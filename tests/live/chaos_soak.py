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

With --replica-ranks 1 the trainers persist one shard per replica (only rank 0 writes; the others
restore its shard from disk): a damaged shard is then the one every node reads.

    python3 chaos_soak.py BUILD_DIR [--faults N] [--seed S] [--replica-ranks 1]
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
PROGRESS_BOUND_S = 60


class Broken(AssertionError):
    pass


class Soak:
    def __init__(self, build, seed, replica_ranks=0):
        self.build = build
        self.replica_ranks = replica_ranks  # 0: every rank persists its own shard
        self.rng = random.Random(seed)
        self.job = None
        self.jobs = 0
        self.spares = 0
        self.counts = {}
        self.restarts = 0
        self.faults = list(FAULTS) if os.environ.get("CTWIN_TEST_MOUNT_NAMESPACE") == "1" else [f for f in FAULTS if f != "full_disk"]

    # --- a job ---------------------------------------------------------------------------------

    def new_job(self):
        self.jobs += 1
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
        job.start_master(job.master_extra)
        for n in range(4):
            job.start_agent(str(n), n)
        self.add_spare()
        job.wait_for("the job's first steps", lambda s: s["phase"] == "running" and s["step"] >= 20, timeout=PROGRESS_BOUND_S)

    def add_spare(self):
        self.spares += 1
        self.job.start_agent("spare%d" % self.spares, None, spare=True)

    def finish_job(self):
        """The job ran its steps: its ledger, every node's, and its interruptions."""
        job = self.job
        ledger, rows = ct.finish_and_check(job, len([r for r in job.rows(job.path("job.csv")) if r["kind"] == "interrupted"]))
        restarts = [r for r in rows if r["kind"] == "restart"]
        interrupted = [r for r in rows if r["kind"] == "interrupted"]
        ct.check(len(restarts) == len(interrupted), "%d restarts for %d interruptions" % (len(restarts), len(interrupted)), job)
        for key in job.agents:
            path = job.path("node-%s.csv" % key)
            if os.path.exists(path) and any(r["kind"] == "end" for r in job.rows(path)):
                ct.ledger_adds_up(job, path)
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
        for pid in self.job.trainers_of(key):
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
                else:
                    f.seek(self.rng.randrange(size))
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

    def inject(self, fault, s, index):
        """Injects `fault`; returns what it expects: ('restart' | 'maybe', damaged step or None)."""
        job = self.job
        ranks = self.ranks(s)
        rank = self.rng.choice(sorted(ranks))
        key = ranks[rank]
        print("fault %d: %s, node rank %d (agent %s), job %d generation %d step %d" % (index, fault, rank, key, self.jobs, s["generation"], s["step"]),
              flush=True)
        if fault == "kill_trainer":
            self.signal_trainer(key, signal.SIGKILL)
            return "restart", None
        if fault == "stop_trainer":
            self.signal_trainer(key, signal.SIGSTOP)
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
            resumed = job.start_master(job.master_extra)
            ct.check(resumed["resumed"], "the master did not resume its journal", job)
            return "maybe", None
        if fault == "pause_master":
            job.master.send_signal(signal.SIGSTOP)
            time.sleep(7)  # --agent-timeout is 5 s
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
            ct.check(s["phase"] == "done" or s["generation"] == before["generation"], "the full disk restarted the job: %s" % s, job)
        else:
            s = self.wait("the job running again", lambda s: s["phase"] in ("running", "done"))
        if s is None or s["phase"] == "done":
            return
        if s["generation"] > before["generation"]:
            self.restarts += s["generation"] - before["generation"]
            self.check_restores(s, damaged)
            self.check_no_old_attempt(s)
        # Progress within the bound, from where the job stands now.
        self.wait("progress", lambda t: t["phase"] == "done" or t["step"] >= s["step"] + 10)
        after = self.status()
        if fault not in EVICTING and after is not None:
            now = self.ranks(after)
            ct.check(now == self.ranks(before), "a healthy node was evicted: %s became %s" % (self.ranks(before), now), job)

    def check_restores(self, s, damaged):
        step = s["restore_step"]
        ct.check(damaged is None or step != damaged, "the job restored step %d, whose shard was damaged" % step, self.job)
        if step < 0:
            return
        deadline = time.time() + 20
        while True:
            seen = {}
            for rank, key in self.ranks(s).items():
                path = self.job.path("node-%s.csv" % key)
                restores = [r for r in self.job.rows(path) if r["kind"] == "restore"] if os.path.exists(path) else []
                seen[key] = restores[-1]["detail"].split("step=")[1].split()[0] if restores else None
            if all(v == str(step) for v in seen.values()):
                return
            if time.time() > deadline:
                raise Broken("the nodes restored %s, the master committed %d" % (seen, step))
            time.sleep(0.1)

    def check_no_old_attempt(self, s):
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
                fault = self.rng.choice(FAULTS)
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
        return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--replica-ranks", type=int, default=0, help="1: one shard per replica (only rank 0 persists)")
    a = parser.parse_args()
    if os.environ.get("CTWIN_TEST_MOUNT_NAMESPACE") != "1":  # a mount namespace of its own, for the full disk's file system
        unshare = ct.mount_namespace_command()
        if unshare:
            os.environ["CTWIN_TEST_MOUNT_NAMESPACE"] = "1"
            os.execvp(unshare[0], unshare + [sys.executable] + sys.argv)
        print("no mount namespace here (unshare): full_disk is not drawn", flush=True)
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    print("chaos soak: seed %d, %d faults%s" % (seed, a.faults, ", one shard per replica of %d ranks" % a.replica_ranks if a.replica_ranks else ""), flush=True)
    return Soak(os.path.abspath(a.build), seed, a.replica_ranks).run(a.faults, seed)


if __name__ == "__main__":
    sys.exit(main())

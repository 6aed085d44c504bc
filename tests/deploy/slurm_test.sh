#!/usr/bin/env bash
# deploy/slurm/ctwin-job.sbatch on a real Slurm (Debian's slurm-wlm) that this test starts and
# stops: slurmctld and three slurmd, each a node name on 127.0.0.1 (auth/none: nothing leaves
# this host). Job 1: two nodes, the master on the first, an agent per node through srun, the
# synthetic trainer crashing once on node rank 1. Checks: the job finished (every node), one
# interruption, one restart from a step both nodes held, the ledger adds up, no trainer left.
# Job 2: three nodes, the third a hot spare (CTWIN_SPARES=1); node rank 1 is lost (its agent and
# trainer killed); the spare takes rank 1 from the shared checkpoints, the job completes.
#   bash tests/deploy/slurm_test.sh BUILD_DIR          exit 0 passed, 1 failed, 77 skipped (no Slurm, not root)
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null || { echo "SKIP: no slurm-wlm"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: slurmd runs jobs as their users only as root"; exit 77; }

work="$(mktemp -d "${TMPDIR:-/tmp}/ctwin-slurm-XXXXXX")"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctl_port=$(free_port); d1=$(free_port); d2=$(free_port); d3=$(free_port)
cleanup() {
  [ -f "$work/conf" ] && SLURM_CONF="$work/slurm.conf" scancel --quiet --full --user root 2>/dev/null || true
  for p in "$work"/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
  sleep 1
  for p in "$work"/*.pid; do [ -f "$p" ] && kill -9 "$(cat "$p")" 2>/dev/null || true; done
  pkill -9 -f "$work" 2>/dev/null || true
  rm -f /dev/shm/ctwin-flash-ctwin-"${jobid:-none}"-*
  [ "${keep:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/state" "$work/spool" "$work/ckpt"
cat > "$work/slurm.conf" <<CONF
ClusterName=ctwin-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctl_port
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$d1 CPUs=1 State=UNKNOWN
NodeName=node2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$d2 CPUs=1 State=UNKNOWN
NodeName=node3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$d3 CPUs=1 State=UNKNOWN
PartitionName=test Nodes=node[1-3] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
touch "$work/conf"
export SLURM_CONF="$work/slurm.conf"
slurmctld -c -f "$SLURM_CONF"
for n in node1 node2 node3; do slurmd -N "$n" -f "$SLURM_CONF"; done
for _ in $(seq 100); do
  [ "$(sinfo -h -o '%T' 2>/dev/null | grep -c idle || true)" -ge 1 ] && [ "$(sinfo -h -N -o '%T' | grep -c idle)" -eq 3 ] && break
  sleep 0.3
done
sinfo -N || true
[ "$(sinfo -h -N -o '%T' | grep -c idle)" -eq 3 ] || { echo "FAILED: the Slurm nodes never came up"; tail -20 "$work"/*.log; keep=1; exit 1; }

# Waits (at most 5 min) for job $jobid to end; its state in $state.
wait_for_job() {
  for _ in $(seq 600); do
    state=$(scontrol show job "$jobid" -o 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
    sleep 0.5
  done
  echo "job $jobid: $state"
}

# The job, as a user would submit it.
export CTWIN_JOB_TOKEN="slurm-test-token-0123456789"
printf '{"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}, "hang_detection": {"factor": 5, "minimum": "5s"}}}\n' > "$work/policy.json"
cd "$work"
jobid=$(CTWIN_BIN="$build/ctwin-live" CTWIN_POLICY="$work/policy.json" CTWIN_PERSIST_DIR="$work/ckpt" \
  CTWIN_MASTER_PORT=$(free_port) CTWIN_TRAINER_PORT=$(free_port) CTWIN_METRICS=127.0.0.1:0 \
  CTWIN_AGENT_OPTIONS="--no-nvml --no-metrics" \
  sbatch --parsable --nodes 2 --output "$work/job.out" "$here/deploy/slurm/ctwin-job.sbatch" \
  "$build/ctwin-synthetic-trainer" --steps 150 --step-ms 20 --checkpoint-every 10 --state-bytes 1MiB --crash-at-step 60 --fault-rank 1)
echo "submitted job $jobid"
wait_for_job
cat "$work/job.out"
fail() { echo "FAILED: $*"; keep=1; tail -30 "$work"/slurmctld.log; exit 1; }
[ "$state" = COMPLETED ] || fail "the job ended $state"
events="$work/ckpt/job-events.csv"
[ -f "$events" ] || fail "no job event log"
python3 - "$events" "$work/ckpt" <<'PY' || fail "the job's log"
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
kinds = [r["kind"] for r in rows]
assert kinds.count("interrupted") == 1, kinds
assert kinds.count("restart") == 1, kinds
start = next(r for r in rows if r["kind"] == "start")
assert "host=node1" in start["detail"] or "host=" in start["detail"], start
end = next(r for r in rows if r["kind"] == "end")
ledger = [r["detail"].split("=") for r in rows if r["kind"] == "ledger"]
total = sum(round(float(v) * 1e6) for _, v in ledger)
assert abs(total - round(float(end["time_s"]) * 1e6)) <= len(ledger), (total, end)
# Both nodes restored the step the master committed: node rank 0's is the job's restore row, node
# rank 1's its agent's row in the same log (the job's one set of books; no agent writes its own).
assert not [f for f in os.listdir(sys.argv[2]) if f.endswith(".csv") and f != "job-events.csv"], os.listdir(sys.argv[2])
steps = set()
for n in (0, 1):
    mine = [r for r in rows if r["node"] == "node-%d" % n and (r["kind"] == "restore" or r["detail"].startswith("restored "))]
    steps.add(mine[-1]["detail"].split("step=")[1].split()[0])
assert len(steps) == 1, steps
print("job log: one interruption, one restart, both nodes restored step", steps.pop(), "; the ledger adds up")
PY
grep -q "every node finished at step 150" "$work/job.out" || fail "the master did not finish the job"
left=$(pgrep -f "$work/ckpt" || true)
[ -z "$left" ] || fail "processes left: $left"
echo "passed: the sbatch job on a real Slurm (job $jobid)"

# Job 2: a lost node replaced by the spare. Its agent and trainer die together, as with the node.
mkdir -p "$work/ckpt2"
jobid=$(CTWIN_BIN="$build/ctwin-live" CTWIN_POLICY="$work/policy.json" CTWIN_PERSIST_DIR="$work/ckpt2" CTWIN_SPARES=1 \
  CTWIN_MASTER_PORT=$(free_port) CTWIN_TRAINER_PORT=$(free_port) CTWIN_METRICS=127.0.0.1:0 \
  CTWIN_MASTER_OPTIONS="--agent-timeout 4s" CTWIN_AGENT_OPTIONS="--no-nvml --no-metrics" \
  sbatch --parsable --nodes 3 --output "$work/job2.out" "$here/deploy/slurm/ctwin-job.sbatch" \
  "$build/ctwin-synthetic-trainer" --steps 400 --step-ms 20 --checkpoint-every 10 --state-bytes 1MiB)
echo "submitted job $jobid (a spare)"
for _ in $(seq 600); do  # until the job has saved a checkpoint
  grep -q ",checkpoint,," "$work/ckpt2/job-events.csv" 2>/dev/null && break
  sleep 0.1
done
agent=""  # node rank 1's agent: the one on SLURM_NODEID 1 (it asks for its node id's rank)
for p in $(pgrep -f -- "agent .*--persist-dir $work/ckpt2" || true); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_NODEID=1" && { agent=$p; break; }
done
[ -n "$agent" ] || fail "no agent holds node rank 1"
kill -STOP "$agent"; pkill -9 -P "$agent" || true; kill -9 "$agent"
echo "node rank 1 lost (agent $agent killed with its trainer)"
wait_for_job
cat "$work/job2.out"
[ "$state" = COMPLETED ] || fail "the job with a lost node ended $state"
python3 - "$work/ckpt2" <<'PY' || fail "the lost node's job log"
import csv, os, sys
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "job-events.csv"))))
lost = [r for r in rows if r["kind"] == "interrupted"]
assert len(lost) == 1 and lost[0]["detail"].startswith("node_lost"), [(r["kind"], r["detail"]) for r in rows]
assert any(r["kind"] == "restart" for r in rows), [r["kind"] for r in rows]
# The spare (the allocation's third node, SLURM_NODEID 2) ran rank 1 from a checkpoint.
restores = [r["detail"] for r in rows if r["node"] == "node-1" and r["detail"].startswith("restored ")]
assert restores, [(r["node"], r["kind"], r["detail"]) for r in rows]
print("job log: node rank 1 lost; the spare restored", restores[-1])
PY
# Both nodes' trainers (node rank 0 and the spare) ran to the end, and the master ended the job.
[ "$(grep -c "the trainer finished at step 400" "$work/job2.out")" -eq 2 ] || fail "the trainers did not both finish"
grep -q "ctwin master: every node finished at step 400" "$work/job2.out" || fail "the master did not hear the job's last step"
left=$(pgrep -f "$work/ckpt2" || true)
[ -z "$left" ] || fail "processes left: $left"
echo "passed: a lost node replaced by a spare under Slurm (job $jobid)"

"""Starts a trainer the way torchrun starts its workers: each in a session of its own, with the
inherited descriptors closed, LOCAL_RANK set; exits with the first worker's failure.
With --orphans FILE it also leaves a process behind in a session of its own (a dataloader worker,
a stray NCCL proxy) and notes its pid; it first checks that the previous attempt's is gone.

    python3 torchrun_like.py [--orphans FILE] -- COMMAND ...
"""
import os
import subprocess
import sys

args = sys.argv[1:]
orphans = None
if args[:1] == ["--orphans"]:
    orphans, args = args[1], args[2:]
if args[:1] == ["--"]:
    args = args[1:]
if orphans:
    if os.path.exists(orphans):
        for pid in open(orphans).read().split():
            try:
                os.kill(int(pid), 0)
                with open(orphans + ".survivors", "a") as f:
                    f.write(pid + "\n")
            except ProcessLookupError:
                pass
    stray = subprocess.Popen(["sleep", "1000"], start_new_session=True, close_fds=True)
    with open(orphans, "a") as f:
        f.write(f"{stray.pid}\n")
worker = subprocess.Popen(args, start_new_session=True, close_fds=True, env=dict(os.environ, LOCAL_RANK="0"))
sys.exit(worker.wait() and 1)

"""A trainer that says done, then takes SECONDS to exit (its last persist, its collectives'
teardown, torchrun's exit barrier): silence after `done` is not a hang.
    python3 slow_exit_trainer.py SECONDS"""
import os
import socket
import sys
import time

path = os.environ["CTWIN_HEARTBEAT_SOCKET"]
beat = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
beat.sendto(b"restored -1 none 0 rank=0", path)
for step in range(1, 11):
    time.sleep(0.05)
    beat.sendto(f"step {step} 0.05 rank=0".encode(), path)
beat.sendto(b"done 10 rank=0", path)
time.sleep(float(sys.argv[1]))

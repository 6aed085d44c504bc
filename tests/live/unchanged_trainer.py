"""A trainer not changed for ctwin: it prints its progress as Megatron-LM (stdout) or a tqdm bar
(stderr, redrawn with '\\r') does, keeps its step in a file every 10 steps (its checkpoint), crashes
once in its first attempt, and resumes from the file.

    python3 unchanged_trainer.py megatron|tqdm STATE_FILE STEPS CRASH_AT
"""
import os
import sys
import time

style, state, steps, crash_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
start = int(open(state).read()) if os.path.exists(state) else 0
attempt = int(os.environ.get("CTWIN_ATTEMPT", "0"))
if style == "tqdm":
    sys.stderr.write(f"\r  0%|          | {start}/{steps} [00:00<?, ?it/s]")
    sys.stderr.flush()
for step in range(start + 1, steps + 1):
    time.sleep(0.02)
    if attempt == 0 and step == crash_at:
        sys.exit(1)  # dies in the step: it never lands
    if style == "megatron":
        print(f" iteration {step:8d}/{steps:8d} | consumed samples: {8 * step:10d} | "
              f"elapsed time per iteration (ms): 20.0 | loss: 2.0E+00 |", flush=True)
    else:
        sys.stderr.write(f"\r{100 * step // steps:3d}%|##        | {step}/{steps} [00:01<00:01, 50.00it/s, loss=2.0]")
        sys.stderr.flush()
    if step % 10 == 0:
        with open(state, "w") as f:
            f.write(str(step))

"""One shard per replica (issue 36, item 8) against every rank persisting its own: a plain-DDP job of
WORLD ranks on this machine, each a process with STATE bytes of state, saves 3 checkpoints; measured
per mode, in the same run: the bytes of one checkpoint on disk and the wall time from the saves until every rank's
`wait_persisted` returned (the checkpoint is durable for the whole job). Both modes write to the
same folder's file system from the same shared-memory folder.
    python3 bench/one_shard_per_replica.py BUILD_DIR [--world 4] [--state-mib 256] [--persist-dir DIR]"""

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import time


def rank_main(build, persist, shm, rank, world, replica_ranks, state_bytes, start, out):
    sys.path.insert(0, build)
    from ctwin_flash import FlashCheckpoint

    state = bytearray(range(256)) * (state_bytes // 256)  # replicas hold the same state
    ckpt = FlashCheckpoint("bench", persist_dir=persist, rank=rank, world=world, shm_dir=shm, replica_ranks=replica_ranks)
    ckpt.register("state", state)
    durable = []
    for step in (1, 2, 3):
        start.wait()  # every rank saves together, as a DDP job does
        t0 = time.monotonic()
        ckpt.save(step)
        assert ckpt.wait_persisted(step, timeout=600)
        durable.append(time.monotonic() - t0)
    ckpt.close()
    out.put((rank, durable))


def run(build, persist_root, shm_root, world, replica_ranks, state_bytes):
    persist = tempfile.mkdtemp(dir=persist_root, prefix="bench-persist-")
    shm = tempfile.mkdtemp(dir=shm_root, prefix="ctwin-bench-")
    try:
        start, out = multiprocessing.Barrier(world), multiprocessing.Queue()
        procs = [multiprocessing.Process(target=rank_main, args=(build, persist, shm, r, world, replica_ranks, state_bytes, start, out))
                 for r in range(world)]
        for p in procs:
            p.start()
        results = dict(out.get(timeout=900) for _ in procs)
        for p in procs:
            p.join()
            assert p.exitcode == 0, "a rank failed"
        newest = os.path.join(persist, max(d for d in os.listdir(persist) if d.startswith("step-")))
        disk = sum(os.path.getsize(os.path.join(newest, f)) for f in os.listdir(newest))  # one checkpoint's bytes
        # Per checkpoint: the job is durable when its slowest rank's wait returned.
        per_step = [max(results[r][i] for r in results) for i in range(3)]
        return disk, sorted(per_step)[1]
    finally:
        shutil.rmtree(persist, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--world", type=int, default=4)
    parser.add_argument("--state-mib", type=int, default=256)
    parser.add_argument("--persist-dir", default=tempfile.gettempdir())
    parser.add_argument("--shm-dir", default="/dev/shm")
    a = parser.parse_args()
    build = os.path.abspath(a.build)
    print("world %d, %d MiB of state per rank, plain DDP (replicas hold the same state); persist to %s" % (a.world, a.state_mib, a.persist_dir))
    rows = []
    for label, replica_ranks in (("every rank persists", 0), ("one shard per replica", 1)):
        disk, seconds = run(build, a.persist_dir, a.shm_dir, a.world, replica_ranks, a.state_mib << 20)
        rows.append((label, disk, seconds))
        print("%-24s %8.0f MiB on disk per checkpoint   durable %.2f s after the save (median of 3)" % (label, disk / 2**20, seconds))
    print("ratio: %.2fx the bytes, %.2fx the time to durable" % (rows[0][1] / rows[1][1], rows[0][2] / rows[1][2]))


if __name__ == "__main__":
    main()

"""The flash checkpoint engine from Python (ctwin_flash.py over ctypes), as a trainer would use it:
one process saves and dies without closing; a second restores from shared memory; with the memory
gone, from disk. NumPy arrays are used when NumPy is installed.
    python3 flash_ctypes_test.py BUILD_DIR"""

import os
import shutil
import subprocess
import sys
import tempfile

build = os.path.abspath(sys.argv[1])
sys.path.insert(0, build)
from ctwin_flash import FlashCheckpoint, FlashCheckpointError, Supervisor  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None


def buffers(step):
    data = bytearray((i * 7 + step) % 251 for i in range(1 << 16))
    arrays = [data]
    if numpy is not None:
        arrays.append(numpy.arange(10000, dtype=numpy.float32) * step)
    return arrays


def attach(ckpt, arrays):
    for i, a in enumerate(arrays):
        ckpt.register(f"buffer.{i}", a)


def writer(shm, disk):
    ckpt = FlashCheckpoint("pyjob", persist_dir=disk, shm_dir=shm)
    arrays = buffers(7)
    attach(ckpt, arrays)
    ckpt.save(7)
    assert ckpt.wait_persisted(7, timeout=60)
    os._exit(0)  # dies without close(): the snapshot must outlive the process


def restore(shm, disk):
    arrays = [bytearray(len(a)) if isinstance(a, bytearray) else a * 0 for a in buffers(7)]
    with FlashCheckpoint("pyjob", persist_dir=disk, shm_dir=shm) as ckpt:
        attach(ckpt, arrays)
        step, source = ckpt.restore()
    want = buffers(7)
    same = all((bytes(a) == bytes(b)) if isinstance(a, bytearray) else bool((a == b).all()) for a, b in zip(arrays, want))
    return step, source, same


def failed_persist_after_another_engine(shm):
    """Engine A persists steps 1-5 and closes; engine B (another job, another folder) fails its
    first persist. B must say so: a GCC 12 miscompile of the persister once carried A's step 5
    into B through the reused thread stack, and B reported step 1 as persisted (issue 17)."""
    a_dir, b_dir = tempfile.mkdtemp(prefix="ctwin-py-a-"), tempfile.mkdtemp(prefix="ctwin-py-b-")
    try:
        data = bytearray(1 << 16)
        with FlashCheckpoint("jobA", persist_dir=a_dir, shm_dir=shm) as a:
            a.register("b", data)
            for step in range(1, 6):
                a.save(step)
                assert a.wait_persisted(step, timeout=60)
        with open(os.path.join(b_dir, "step-000000000001"), "w") as blocker:  # its folder cannot be made
            blocker.write("in the way")
        with FlashCheckpoint("jobB", persist_dir=b_dir, shm_dir=shm) as b:
            b.register("b", data)
            b.save(1)
            try:
                done = b.wait_persisted(1, timeout=60)
                raise AssertionError(f"a failed persist was reported as done ({done}), persisted_step {b.persisted_step}")
            except FlashCheckpointError as e:
                assert e.kind == "persist" and "cannot create" in str(e), e
            assert b.persisted_step is None, b.persisted_step
    finally:
        shutil.rmtree(a_dir, ignore_errors=True)
        shutil.rmtree(b_dir, ignore_errors=True)


def failures_recorded(folder):
    """A worker's own record of its failure (ctwin_flash.record_failures): a fatal signal's traceback
    and an uncaught exception, each in its rank's file in $CTWIN_FAULT_DIR, written as it happens."""
    code = ("import os, sys; sys.path.insert(0, %r); from ctwin_flash import Supervisor; Supervisor(path='')\n"
            "def step():\n    %s\nstep()\n")
    env = dict(os.environ, CTWIN_FAULT_DIR=folder, RANK="5")
    aborted = subprocess.run([sys.executable, "-c", code % (build, "os.abort()")], env=env, capture_output=True)
    assert aborted.returncode == -6, aborted
    fatal = open(os.path.join(folder, "rank-5.fatal")).read()
    assert fatal.startswith("Fatal Python error: Aborted") and 'line 3 in step' in fatal, fatal
    raised = subprocess.run([sys.executable, "-c", code % (build, "raise RuntimeError('Connection closed by peer')")],
                            env=dict(env, RANK="6"), capture_output=True)
    assert raised.returncode == 1 and b"Connection closed by peer" in raised.stderr, raised  # the usual traceback too
    error = open(os.path.join(folder, "rank-6.error")).read().splitlines()
    assert error == ["RuntimeError: Connection closed by peer", "<string>:3 in step"], error
    assert os.path.getsize(os.path.join(folder, "rank-6.fatal")) == 0  # no fatal signal there
    ok = subprocess.run([sys.executable, "-c", code % (build, "pass")], env=dict(env, RANK="7"), capture_output=True)
    assert ok.returncode == 0 and not os.path.exists(os.path.join(folder, "rank-7.error")), ok


def state_dict_checked():
    """A checkpoint on disk reads back as a state_dict from its manifest alone, and a byte changed
    in its shard, or a shard cut short, is an error rather than wrong weights. Needs torch."""
    import torch
    from ctwin_flash import read_state_dict
    disk = tempfile.mkdtemp(prefix="ctwin-py-sd-")
    shm = tempfile.mkdtemp(prefix="ctwin-py-sd-", dir="/dev/shm")
    try:
        weight, bias = torch.arange(12, dtype=torch.float32).reshape(3, 4), torch.ones(5, dtype=torch.int64)
        with FlashCheckpoint("sdjob", persist_dir=disk, shm_dir=shm) as ckpt:
            ckpt.register_tensor("model.weight", weight)
            ckpt.register_tensor("model.bias", bias)
            ckpt.save(3)
            assert ckpt.wait_persisted(3, timeout=60)
        state = read_state_dict(disk, 3)
        assert torch.equal(state["model.weight"], weight) and torch.equal(state["model.bias"], bias), state
        folder = os.path.join(disk, "step-%012d" % 3)
        shard = [os.path.join(folder, n) for n in os.listdir(folder) if not n.endswith(".manifest")]
        assert len(shard) == 1, os.listdir(folder)
        with open(shard[0], "r+b") as f:
            f.seek(8)
            byte = f.read(1)
            f.seek(8)
            f.write(bytes([byte[0] ^ 0x40]))
        for changed in ("a flipped bit", "a shard cut short"):
            try:
                read_state_dict(disk, 3)
                raise AssertionError(f"{changed} was read back")
            except FlashCheckpointError as e:
                assert e.kind == "persist" and shard[0] in str(e), e
            os.truncate(shard[0], os.path.getsize(shard[0]) - 1)
        # The job's step restored on a node whose memory is gone: the error names the shard and why.
        fresh = tempfile.mkdtemp(prefix="ctwin-py-sd-", dir="/dev/shm")
        os.environ["CTWIN_RESTORE_STEP"] = "3"
        try:
            with FlashCheckpoint("sdjob", persist_dir=disk, shm_dir=fresh) as ckpt:
                ckpt.register_tensor("model.weight", torch.zeros(3, 4))
                ckpt.register_tensor("model.bias", torch.zeros(5, dtype=torch.int64))
                try:
                    ckpt.restore()
                    raise AssertionError("a shard cut short was restored")
                except FlashCheckpointError as e:
                    assert "cannot restore the job's step 3: step 3: " + shard[0] + ": shorter than its manifest says" in str(e), e
        finally:
            del os.environ["CTWIN_RESTORE_STEP"]
            shutil.rmtree(fresh, ignore_errors=True)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)


def section_timer_on_cpu(path):
    """A step's timed parts add up into one section, sent when a later step starts or at done()."""
    import socket
    import time

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(path)
    sup = Supervisor(path, rank=1)
    timer = sup.section_timer(group=2, device="cpu")
    assert not timer.on_gpu
    for _ in range(2):
        with timer.time(8):
            time.sleep(0.05)
    listener.setblocking(False)
    try:
        raise AssertionError(f"a step still open was sent: {listener.recv(4096)}")
    except BlockingIOError:
        pass
    listener.setblocking(True)
    with timer.time(9):
        pass
    words = listener.recv(4096).decode().split()
    assert words[0:2] == ["section", "8"] and words[3:] == ["2", "rank=1"], words
    assert float(words[2]) >= 0.1, words  # both parts (each slept 50 ms)
    sup.done(9)
    assert listener.recv(4096).decode().startswith("section 9 0.0")
    assert listener.recv(4096).decode() == "done 9 rank=1"
    listener.close()
    os.remove(path)


def main():
    shm = tempfile.mkdtemp(prefix="ctwin-py-", dir="/dev/shm")
    disk = tempfile.mkdtemp(prefix="ctwin-py-")
    try:
        subprocess.run([sys.executable, __file__, build, "--writer", shm, disk], check=True)
        step, source, same = restore(shm, disk)
        assert (step, source, same) == (7, "memory", True), (step, source, same)
        for name in os.listdir(shm):  # the node lost its memory
            os.remove(os.path.join(shm, name))
        step, source, same = restore(shm, disk)
        assert (step, source, same) == (7, "disk", True), (step, source, same)
        try:
            FlashCheckpoint("bad/name", shm_dir=shm)
            raise AssertionError("a bad name was accepted")
        except FlashCheckpointError as e:
            assert e.kind == "usage" and "bad/name" in str(e), e
        failed_persist_after_another_engine(shm)
        # The heartbeat helper speaks the supervisor's protocol: datagrams to a Unix socket.
        import socket
        path = os.path.join(shm, "heartbeat")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(path)
        sup = Supervisor(path, rank=3)
        sup.restored(None, "none")
        sup.step(8, 0.25)
        sup.checkpoint(8, 0.01)
        sup.done(8)
        lines = [listener.recv(4096).decode() for _ in range(4)]
        assert lines == ["restored -1 none 0.000000 rank=3", "step 8 0.250000 rank=3", "checkpoint 8 0.010000 rank=3",
                         "done 8 rank=3"], lines
        listener.close()
        os.remove(path)
        section_timer_on_cpu(path)
        sup.step(9, 0.25)  # the supervisor is gone: no exception, training goes on
        assert Supervisor(path="").rank == 0
        failures_recorded(shm)
        try:
            import torch  # noqa: F401
            state_dict_checked()
            checked = "a state_dict read back from disk, a changed shard refused"
        except ImportError:
            checked = "no torch: the state_dict reader not run"
        print(f"ctypes round trip: memory then disk, step 7 ({'with' if numpy else 'without'} NumPy); {checked}")
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--writer":
        writer(sys.argv[3], sys.argv[4])
    else:
        main()

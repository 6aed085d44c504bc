"""Flash checkpoints from Python: a ctypes wrapper of ctwin's libctwin_flash.so.

    from ctwin_flash import FlashCheckpoint
    ckpt = FlashCheckpoint("job42", persist_dir="/ckpt", rank=rank, world=world)
    for name, tensor in model.state_dict().items():
        ckpt.register(name, tensor)            # CUDA tensors are copied by the CUDA plugin
    step, source = ckpt.restore()              # (None, "none") when there is nothing yet
    ...
    ckpt.save(step)                            # returns once the state is in shared memory
    ckpt.close()                               # waits for the background persist

Buffers may be torch tensors (contiguous), NumPy arrays (C-contiguous), bytearrays or ctypes
arrays. Registered objects are kept alive by the wrapper; their memory must not move.
"""

import ctypes
import json
import os
import sys
import time

_SOURCES = {0: "none", 1: "memory", 2: "disk"}
_KINDS = {1: "usage", 2: "shared memory", 3: "persist", 4: "device", 5: "timeout"}


class FlashCheckpointError(RuntimeError):
    def __init__(self, kind, message):
        super().__init__(f"{_KINDS.get(kind, 'error')}: {message}")
        self.kind = _KINDS.get(kind, "error")


def _load(path=None):
    here = os.path.dirname(os.path.abspath(__file__))
    lib = ctypes.CDLL(path or os.environ.get("CTWIN_FLASH_LIBRARY") or os.path.join(here, "libctwin_flash.so"))
    lib.ctwin_flash_open.restype = ctypes.c_void_p
    lib.ctwin_flash_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p]
    lib.ctwin_flash_open_replicas.restype = ctypes.c_void_p
    lib.ctwin_flash_open_replicas.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                              ctypes.c_int]
    lib.ctwin_flash_register.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.ctwin_flash_register_described.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                   ctypes.c_char_p]
    lib.ctwin_flash_save.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_double)]
    lib.ctwin_flash_restore.restype = ctypes.c_int64
    lib.ctwin_flash_restore.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    lib.ctwin_flash_restorable.restype = ctypes.c_int
    lib.ctwin_flash_restorable.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int]
    lib.ctwin_flash_restore_step.restype = ctypes.c_int64
    lib.ctwin_flash_restore_step.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int)]
    lib.ctwin_flash_wait_persisted.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_double]
    lib.ctwin_flash_persisted_step.restype = ctypes.c_int64
    lib.ctwin_flash_persisted_step.argtypes = [ctypes.c_void_p]
    lib.ctwin_flash_persist_failing.restype = ctypes.c_int
    lib.ctwin_flash_persist_failing.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]
    lib.ctwin_flash_error.restype = ctypes.c_char_p
    lib.ctwin_flash_error.argtypes = [ctypes.c_void_p]
    lib.ctwin_flash_close.argtypes = [ctypes.c_void_p]
    lib.ctwin_flash_crc32c.restype = ctypes.c_uint32
    lib.ctwin_flash_crc32c.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
    return lib


_LIBRARY = None


def _library():
    """The library loaded once, for the module's functions (each FlashCheckpoint loads its own)."""
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = _load()
    return _LIBRARY


def _pointer_of(buffer):
    """(address, bytes, device) of a tensor, array or writable buffer."""
    if hasattr(buffer, "data_ptr") and hasattr(buffer, "element_size"):  # torch.Tensor
        if not buffer.is_contiguous():
            raise ValueError("tensor must be contiguous")
        device = buffer.device.index if buffer.is_cuda else -1
        return buffer.data_ptr(), buffer.numel() * buffer.element_size(), device
    if hasattr(buffer, "__array_interface__"):  # numpy.ndarray
        if not buffer.flags["C_CONTIGUOUS"] or not buffer.flags["WRITEABLE"]:
            raise ValueError("array must be C-contiguous and writeable")
        return buffer.ctypes.data, buffer.nbytes, -1
    if isinstance(buffer, ctypes.Array):
        return ctypes.addressof(buffer), ctypes.sizeof(buffer), -1
    view = memoryview(buffer)
    if view.readonly or not view.c_contiguous:
        raise ValueError("buffer must be writable and contiguous")
    holder = (ctypes.c_char * view.nbytes).from_buffer(buffer)
    return ctypes.addressof(holder), view.nbytes, -1


def _distributed(group):
    """torch.distributed when it is initialised with more than one rank, else None."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not dist.is_available() or not dist.is_initialized() or dist.get_world_size(group) < 2:
        return None
    return dist


class FlashCheckpoint:
    def __init__(self, name, persist_dir=None, rank=0, world=1, keep_last=2, shm_dir=None, library=None, replica_ranks=0):
        """`replica_ranks`: one shard per replica. The ranks of one data-parallel replica (1 for plain
        DDP; tensor x pipeline parallel, ranks numbered replica by replica) when every replica holds the
        same state: only the first replica persists, and a rank restores its replica-mate's shard from
        disk (a persist folder every node sees). 0: every rank persists its own ($CTWIN_FLASH_REPLICA_RANKS)."""
        self._h = None
        self._lib = _load(library)
        self._keep = []
        handle = self._lib.ctwin_flash_open_replicas(name.encode(), (persist_dir or "").encode(), rank, world, keep_last,
                                                     shm_dir.encode() if shm_dir else None, replica_ranks)
        if not handle:
            raise FlashCheckpointError(1, self._lib.ctwin_flash_error(None).decode())
        self._h = handle

    def _check(self, rc):
        if rc != 0:
            raise FlashCheckpointError(rc, self._lib.ctwin_flash_error(self._h).decode())

    def register(self, name, buffer, description=None):
        """A buffer to save and restore in place; `description` (what the bytes are) goes into the manifests."""
        address, nbytes, device = _pointer_of(buffer)
        self._check(self._lib.ctwin_flash_register_described(self._h, name.encode(), ctypes.c_void_p(address), nbytes, device,
                                                             (description or "").encode()))
        self._keep.append(buffer)

    def register_tensor(self, name, tensor):
        """A torch tensor (CPU, or CUDA through the engine's plugin), described by its dtype and shape."""
        if not tensor.is_contiguous():
            raise ValueError(f"{name}: the tensor must be contiguous")
        device = tensor.device.index if tensor.is_cuda else -1
        description = "dtype=%s shape=%s" % (str(tensor.dtype).replace("torch.", ""), ",".join(str(d) for d in tensor.shape))
        self._check(self._lib.ctwin_flash_register_described(self._h, name.encode(), ctypes.c_void_p(tensor.data_ptr()),
                                                             tensor.numel() * tensor.element_size(), device, description.encode()))
        self._keep.append(tensor)

    def register_state_dict(self, prefix, state):
        """Every tensor of a (nested) state_dict, by its path: model.state_dict() and optimizer.state_dict()
        restore in place, and the checkpoint on disk reads back with read_state_dict() alone."""
        for path, tensor in _tensors_of(state, prefix):
            self.register_tensor(path, tensor)

    def save(self, step):
        """Copies the buffers into shared memory; returns the seconds the caller was stalled."""
        seconds = ctypes.c_double(0)
        self._check(self._lib.ctwin_flash_save(self._h, step, ctypes.byref(seconds)))
        return seconds.value

    def restorable(self):
        """This rank's restorable steps, newest first (memory and disk)."""
        steps = (ctypes.c_int64 * 64)()
        n = self._lib.ctwin_flash_restorable(self._h, steps, 64)
        if n < 0:
            self._check(1)
        return list(steps[: min(n, 64)])

    def restore(self, group=None, step=None):
        """(step, "memory" | "disk") of the newest checkpoint every rank has, or (None, "none").

        Under a job master ($CTWIN_RESTORE_STEP, or `step` where an in-process restart says it),
        exactly the step it committed for every rank.
        With torch.distributed initialised (or a `group` given), the ranks agree through it on the
        newest step they all hold, so that ranks on different hosts never resume from different
        steps; without it, the ranks are compared through the shared-memory slots this host sees."""
        source = ctypes.c_int(0)
        agreed = step if step is not None else os.environ.get("CTWIN_RESTORE_STEP")
        if agreed is not None:  # the job master's cross-node commit: exactly that step, -1 from scratch
            step = int(agreed)
            if step < 0:  # from scratch: the snapshots of the timeline abandoned go
                if self._lib.ctwin_flash_restore_step(self._h, -1, ctypes.byref(source)) == -2:
                    self._check(1)
                return None, "none"
            restored = self._lib.ctwin_flash_restore_step(self._h, step, ctypes.byref(source))
            if restored != step:
                raise FlashCheckpointError(1, f"cannot restore the job's step {step}: " + self._lib.ctwin_flash_error(self._h).decode())
            return restored, _SOURCES[source.value]
        dist = _distributed(group)
        if dist is None:
            step = self._lib.ctwin_flash_restore(self._h, ctypes.byref(source))
            if step == -2:
                self._check(1)
            return (None if step < 0 else step), _SOURCES[source.value]
        everyone = [None] * dist.get_world_size(group)
        dist.all_gather_object(everyone, self.restorable(), group=group)
        common = set(everyone[0]).intersection(*everyone[1:])
        for step in sorted(common, reverse=True):
            restored = self._lib.ctwin_flash_restore_step(self._h, step, ctypes.byref(source))
            if restored == -2:
                self._check(1)
            if restored >= 0:
                return restored, _SOURCES[source.value]
        return None, "none"

    def wait_persisted(self, step, timeout=600.0):
        rc = self._lib.ctwin_flash_wait_persisted(self._h, step, timeout)
        if rc == 5:
            return False
        self._check(rc)
        return True

    def persist_failing(self):
        """(step, why) while the background persister's last attempt failed (a full disk, a quota,
        I/O): the snapshots stay in memory and it retries on a backoff; None otherwise."""
        step = ctypes.c_int64(-1)
        if not self._lib.ctwin_flash_persist_failing(self._h, ctypes.byref(step)):
            return None
        return step.value, self._lib.ctwin_flash_error(self._h).decode(errors="replace")

    @property
    def persisted_step(self):
        step = self._lib.ctwin_flash_persisted_step(self._h)
        return None if step < 0 else step

    def close(self):
        if self._h:
            self._lib.ctwin_flash_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def _tensors_of(state, prefix):
    """(path, tensor) for every tensor in a nested dict/list, paths joined with '.'."""
    items = state.items() if isinstance(state, dict) else enumerate(state) if isinstance(state, (list, tuple)) else ()
    for key, value in items:
        path = f"{prefix}.{key}" if prefix else str(key)
        if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
            yield path, value
        else:
            yield from _tensors_of(value, path)


def _shard_rank(folder, rank):
    """The shard `rank` reads: its own, or under one shard per replica (rank 0's manifest says the
    step's `world` of shards) its replica-mate's, rank mod that world."""
    if os.path.exists(os.path.join(folder, "rank-%05d.manifest" % rank)):
        return rank
    try:
        with open(os.path.join(folder, "rank-00000.manifest")) as f:
            world = next((int(line.split()[1]) for line in f if line.startswith("world ")), 0)
    except (OSError, ValueError, IndexError):
        return rank
    return rank % world if world > 0 else rank


def _manifest(persist_dir, step, rank):
    """{name: (offset, bytes, crc, description)}, the shard's path and its size in bytes."""
    folder = os.path.join(persist_dir, "step-%012d" % step)
    buffers, shard, shard_bytes, ended = {}, None, None, False
    path = os.path.join(folder, "rank-%05d.manifest" % _shard_rank(folder, rank))
    with open(path) as f:
        if f.readline().strip() not in ("ctwin-flash-manifest 1", "ctwin-flash-manifest 2"):
            raise FlashCheckpointError(1, f"{path}: not a ctwin manifest")
        for line in f:
            words = line.rstrip("\n").split(" ", 5)
            try:
                if words[0] == "shard":
                    shard, shard_bytes = os.path.join(folder, words[1]), int(words[2])
                elif words[0] == "buffer":
                    buffers[words[1]] = (int(words[2]), int(words[3]), int(words[4], 16), words[5].strip() if len(words) > 5 else "")
                elif words[0] == "end":
                    ended = True
            except (IndexError, ValueError):
                raise FlashCheckpointError(1, f"{path}: a malformed line: {line.strip()!r}") from None
    if not ended or shard is None:
        raise FlashCheckpointError(1, f"{path}: cut short (no shard or no end line)")
    return buffers, shard, shard_bytes


def read_manifest(persist_dir, step, rank):
    """The manifest of `rank` at `step`: {name: (offset, bytes, description)} and the shard's path."""
    buffers, shard, _ = _manifest(persist_dir, step, rank)
    return {name: (offset, nbytes, description) for name, (offset, nbytes, _, description) in buffers.items()}, shard


def read_state_dict(persist_dir, step, rank=0):
    """A checkpoint on disk as {path: torch tensor}, from its manifest's dtype and shape alone.
    Every buffer is checked against its manifest's CRC-32C first, as a restore does: a shard cut
    short or changed on disk raises FlashCheckpointError rather than giving wrong weights."""
    import torch

    buffers, shard, shard_bytes = _manifest(persist_dir, step, rank)
    with open(shard, "rb") as f:
        payload = f.read()
    if len(payload) != shard_bytes:
        raise FlashCheckpointError(3, f"{shard}: {len(payload)} bytes, the manifest says {shard_bytes}")
    lib = _library()
    base = ctypes.cast(ctypes.c_char_p(payload), ctypes.c_void_p).value  # the bytes in place, no copy
    for name, (offset, nbytes, crc, _) in buffers.items():
        if offset + nbytes > len(payload) or lib.ctwin_flash_crc32c(0, base + offset, nbytes) != crc:
            raise FlashCheckpointError(3, f"{shard}: buffer {name} does not match its checksum in the manifest")
    out = {}
    for name, (offset, nbytes, _, description) in buffers.items():
        fields = dict(word.split("=", 1) for word in description.split() if "=" in word)
        if "dtype" not in fields:
            raise FlashCheckpointError(1, f"{shard}: buffer {name} says no dtype")
        dtype = getattr(torch, fields["dtype"])
        shape = [int(d) for d in fields.get("shape", "").split(",") if d]
        out[name] = torch.frombuffer(bytearray(payload[offset:offset + nbytes]), dtype=dtype).reshape(shape) if nbytes else \
            torch.empty(shape, dtype=dtype)
    return out


_FAILURES = {"recorded": False, "files": []}


def record_failures():
    """Under a supervisor ($CTWIN_FAULT_DIR, one folder per attempt): this worker's own failure is
    written there as it happens, a fatal signal's traceback by faulthandler (rank-R.fatal) and an
    uncaught exception (rank-R.error), each stamped by the file system at that moment. A launcher
    hides both (torchrun exits 1 whatever killed its worker) and notices late; the supervisor reads
    the records to name the worker that failed first, by its own time (live/supervisor/worker_failures.hpp).
    Supervisor() calls it; once per process; nothing when unsupervised."""
    folder = os.environ.get("CTWIN_FAULT_DIR")
    if _FAILURES["recorded"] or not folder or not os.path.isdir(folder):
        return
    _FAILURES["recorded"] = True
    base = os.path.join(folder, "rank-%s" % os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0")))
    try:
        import faulthandler

        fatal = open(base + ".fatal", "w")  # empty until a fatal signal writes it
        faulthandler.enable(file=fatal)
        _FAILURES["files"].append(fatal)  # faulthandler writes to its descriptor: it must stay open
    except (OSError, ValueError, RuntimeError):
        pass
    previous = sys.excepthook

    def hook(kind, value, tb):
        try:
            import traceback

            what = "".join(traceback.format_exception_only(kind, value)).strip().splitlines()[-1]
            frames = traceback.extract_tb(tb)
            where = "%s:%d in %s" % (os.path.basename(frames[-1].filename), frames[-1].lineno, frames[-1].name) if frames else ""
            with open(base + ".error.tmp", "w") as out:
                out.write(what + "\n" + where + "\n")
            os.replace(base + ".error.tmp", base + ".error")
        except (OSError, IndexError):
            pass
        previous(kind, value, tb)

    sys.excepthook = hook


def read_control(path=None):
    """The agent's control file ($CTWIN_CONTROL_FILE) as a dict, or None: the checkpoint cadence, and
    the generation the node's trainers run with its restore step (an in-process restart rejoins when
    it changes)."""
    path = path or os.environ.get("CTWIN_CONTROL_FILE")
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def init_process_group(backend=None, generation=None, timeout_s=None):
    """The job's torch.distributed process group for `generation` (default $CTWIN_GENERATION): its
    ranks meet under the prefix ctwin/gen-G/ of the store at $MASTER_ADDR:$MASTER_PORT (torchrun's
    own store under its static rendezvous, ctwin_store.py's kept by ctwin_ranks.py on node rank 0), so that a generation
    rejoined in process never reads the keys of the one that failed. Returns the store."""
    import datetime

    import torch
    import torch.distributed as dist

    generation = int(generation if generation is not None else os.environ.get("CTWIN_GENERATION", "0"))
    timeout = datetime.timedelta(seconds=float(timeout_s or os.environ.get("CTWIN_PG_TIMEOUT", "300")))
    backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    if os.environ.get("CTWIN_STORE_PROTOCOL"):  # ctwin_ranks.py keeps the store: ctwin_store.py's, not torch's
        here = os.path.dirname(os.path.abspath(__file__))
        if here not in sys.path:
            sys.path.append(here)  # ctwin_store.py lies beside this file, installed and in the build folder
        import ctwin_store

        if os.environ["CTWIN_STORE_PROTOCOL"] != ctwin_store.PROTOCOL:
            raise RuntimeError(f"ctwin_flash: the launcher's store speaks {os.environ['CTWIN_STORE_PROTOCOL']}, this ctwin_store.py "
                               f"{ctwin_store.PROTOCOL}: one installation's ctwin_ranks.py and ctwin_flash.py belong together")
        store = ctwin_store.client(host, port, timeout)
    else:
        store = dist.TCPStore(host, port, world, False, timeout)
    dist.init_process_group(backend, store=dist.PrefixStore(f"ctwin/gen-{generation}/", store), rank=rank, world_size=world,
                            timeout=timeout)
    return store


class Supervisor:
    """Heartbeats for `ctwin live run` (live/job/heartbeat.hpp): one datagram per message to
    the Unix socket at $CTWIN_HEARTBEAT_SOCKET, which reaches the supervisor from any process of
    the trainer, under torchrun or srun too. Each message carries the node-local rank
    ($LOCAL_RANK); rank 0 speaks for the node. Does nothing when the trainer runs unsupervised, and
    a supervisor gone away never stops training.

        sup = Supervisor()
        step, source = ckpt.restore()
        sup.restored(step, source)
        for step in ...:
            ...                                  # one training step, `seconds` long
            sup.step(step, seconds)
            if sup.checkpoint_due(step, every):  # the master's cadence, else every `every` steps
                sup.checkpoint(step, ckpt.save(step))  # save returns the stall
        sup.done(step)
    """

    def __init__(self, path=None, rank=None):
        self.path = path if path is not None else os.environ.get("CTWIN_HEARTBEAT_SOCKET")
        self.rank = int(rank if rank is not None else os.environ.get("LOCAL_RANK", "0"))
        self.attempt = int(os.environ.get("CTWIN_ATTEMPT", "0"))
        self._socket = None
        self._control = os.environ.get("CTWIN_CONTROL_FILE")
        self._control_stamp = None
        self._cadence = []  # (from, every), oldest first
        self._timers = []
        self._persist_failing = False
        record_failures()
        if self.path:
            import socket

            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._socket.settimeout(2.0)  # a stuck supervisor must not stop training

    def _say(self, line):
        if self._socket is None:
            return
        try:
            self._socket.sendto(f"{line} rank={self.rank}".encode(), self.path)
        except OSError:
            self._socket = None  # the supervisor is gone (or never was): training goes on

    def checkpoint_due(self, step, every):
        """True when `step` is one to save. Under a job master, its checkpoint policy's cadence
        ($CTWIN_CONTROL_FILE, policies/checkpoint_policy.hpp CheckpointCadence: from step `from` on,
        every `every` steps, each change announced ahead of the job so that every rank saves the same
        steps); before its first change, and when unsupervised, every `every` steps."""
        self._read_cadence()
        for change in reversed(self._cadence):
            if step >= change[0]:
                return (step - change[0]) % change[1] == 0
        return every > 0 and step % every == 0

    def _read_cadence(self):
        if not self._control:
            return
        try:
            st = os.stat(self._control)
            stamp = (st.st_ino, st.st_mtime_ns)  # rewritten by rename: a new inode
            if stamp == self._control_stamp:
                return
            with open(self._control) as f:
                cadence = json.load(f)
            self._cadence = [(int(c["from"]), int(c["every"])) for c in cadence["changes"] if int(c["every"]) > 0]
            self._control_stamp = stamp
        except (OSError, ValueError, KeyError, TypeError):
            pass  # not written yet, or unreadable: the cadence known so far holds

    def restored(self, step, source, seconds=0.0):
        self._say(f"restored {-1 if step is None else int(step)} {source} {float(seconds):.6f}")

    def step(self, step, seconds, loss=None):
        """A step done, `seconds` long; with its `loss`, a loss spike (silent corruption seen late) rolls
        the job back to the last checkpoint before it."""
        self._say(f"step {int(step)} {float(seconds):.6f}" + ("" if loss is None else f" {float(loss):.6g}"))

    def section(self, step, seconds, group=0):
        """This rank's compute time in `step`, collectives excluded (CUDA events on a GPU, wall time
        on a CPU), and its group (pipeline stage and role, as one number). Every rank sends it: the
        master compares ranks within their group and names a slow node (NVRx's straggler detection).
        `section_timer()` measures it."""
        self._say(f"section {int(step)} {float(seconds):.6f} {int(group)}")

    def section_timer(self, group=0, device=None):
        """A SectionTimer sending this rank's sections in `group`; on the GPU `device` (default: torch's
        current CUDA device when torch sees one), else in wall time."""
        return SectionTimer(self, group, device)

    def flush(self):
        """Waits for the timers' sections still on the GPU and sends them (done() does this)."""
        for timer in list(self._timers):
            timer.flush()

    def checkpoint(self, step, seconds):
        self._say(f"checkpoint {int(step)} {float(seconds):.6f}")

    def persist_health(self, ckpt, again=False):
        """Says when `ckpt`'s persister begins to fail (a full disk: a storage fault, never an
        interruption; training goes on from memory) and when it writes again. Call it after each
        save; `again` says a failure that goes on once more (a sign of life while waiting on it)."""
        failing = ckpt.persist_failing()
        if bool(failing) == self._persist_failing and not (failing and again):
            return
        self._persist_failing = bool(failing)
        if failing:
            self._say(f"persist {int(failing[0])} failed " + " ".join(failing[1].split()))
        else:
            self._say(f"persist {int(ckpt.persisted_step if ckpt.persisted_step is not None else -1)} ok")

    def wait_persisted(self, ckpt, step, stop=lambda: False):
        """Waits for `step` on disk however long a storage fault lasts (the persister retries), saying
        the failure each second meanwhile (a sign of life, well within any hang timeout): True once it
        is there, False when `stop()` says so."""
        while not stop():
            try:
                if ckpt.wait_persisted(step, 1.0):
                    self.persist_health(ckpt)
                    return True
            except FlashCheckpointError:
                time.sleep(1.0)
            self.persist_health(ckpt, again=True)
        return False

    def restartable(self, ckpt, train, backend=None, rejoin_timeout_s=None):
        """In-process restart (NVIDIA NVRx's model): restores `ckpt`, runs `train(step)` from the step
        restored, and when a collective fails (a peer died: gloo raises within milliseconds) tears the
        process group down, waits for the job's next generation in the agent's control file, restores
        that generation's step in place (the registered tensors are the live ones), joins its process
        group and calls `train` again. `train` builds what holds the process group (DDP) on each entry.
        No new generation within `rejoin_timeout_s` ($CTWIN_REJOIN_TIMEOUT, default 120 s): the error
        is raised, and the process ends as without this helper. Returns what `train` returns."""
        import gc

        import torch.distributed as dist

        distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
        generation = int(os.environ.get("CTWIN_GENERATION", "0"))
        timeout = float(rejoin_timeout_s or os.environ.get("CTWIN_REJOIN_TIMEOUT", "120"))
        if distributed and not dist.is_initialized():
            if self._control:  # under a job master: the generation's own prefix of the job's store
                init_process_group(backend, generation)
            else:
                import torch

                dist.init_process_group(backend or ("nccl" if torch.cuda.is_available() else "gloo"))
        while True:
            began = time.time()
            step, source = ckpt.restore()
            self.restored(step, source, time.time() - began)
            if distributed and self._control:
                self._say(f"inprocess {generation}")
            try:
                return train(step or 0)
            except RuntimeError as error:  # a collective failed; a bug of this rank's is raised again below
                if not distributed or not self._control:
                    raise
                failed_at = time.time()
                why = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
            # The failed generation's DDP (its hooks on the parameters) and process group go at once:
            # closing its connections fails the collectives of peers still waiting on this rank, and
            # the agent keeps this process only once it has said so (`rejoining`).
            gc.collect()
            try:
                dist.destroy_process_group()
            except (RuntimeError, ValueError, AssertionError):
                pass
            self._say(f"rejoining {generation}")
            following = self._await_generation(generation, failed_at + timeout)
            if following is None:
                raise RuntimeError(f"{why}; no new generation came within {timeout:.0f} s")
            generation, restore_step = following
            print(f"ctwin_flash: rank {os.environ.get('RANK')}: {why}; rejoins generation {generation} at step {restore_step} "
                  f"({time.time() - failed_at:.3f} s after the failure)", file=sys.stderr, flush=True)
            os.environ["CTWIN_GENERATION"] = str(generation)
            os.environ["CTWIN_ATTEMPT"] = str(max(generation - 1, 0))
            self.attempt = max(generation - 1, 0)
            if restore_step >= -1:
                os.environ["CTWIN_RESTORE_STEP"] = str(restore_step)
            else:  # the master knows no flash checkpoints: the ranks agree among themselves
                os.environ.pop("CTWIN_RESTORE_STEP", None)
            init_process_group(backend, generation)

    def _await_generation(self, generation, deadline):
        """(generation, restore step) once the control file names a newer generation; None at the deadline."""
        while time.time() < deadline:
            control = read_control(self._control)
            if control and int(control.get("generation", 0)) > generation:
                return int(control["generation"]), int(control.get("restore_step", -1))
            time.sleep(0.005)
        return None

    def nan(self, step):
        self._say(f"nan {int(step)}")

    def stopped(self, step):
        self.flush()
        self._say(f"stopped {int(step)}")

    def done(self, step):
        self.flush()
        self._say(f"done {int(step)}")


class SectionTimer:
    """Times the compute of each step, to send as its section (Supervisor.section). On a GPU it
    records CUDA events on the current stream around each timed part, which measures the kernels
    themselves, not their launches (a wall clock around an asynchronous forward pass reads only the
    launch time), and reports a step once its events have completed, polled without blocking, so the
    step is never synchronised for it. On a CPU it uses wall time.

        timer = sup.section_timer(group=stage)
        for step in ...:
            for micro_batch in ...:
                with timer.time(step):      # forward and backward: the step's compute
                    loss = model(x).loss; loss.backward()
            optimizer.step()                # outside: under DDP, the all-reduce waits here

    A step's parts add up; the step is closed when a part of a later step starts (or at flush)."""

    _MAX_PENDING_STEPS = 64  # a GPU this far behind is waited for: the pending events stay bounded

    def __init__(self, supervisor, group=0, device=None):
        self._sup, self._group = supervisor, int(group)
        self._torch = None
        try:
            import torch

            if (device is not None and torch.device(device).type == "cuda") or (device is None and torch.cuda.is_available()):
                self._torch = torch
                self._device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
        except ImportError:
            pass
        self._step = None  # the step being timed: [step, parts]; a part is (start, end) events, or wall seconds
        self._closed = []  # steps whose parts are all recorded, oldest first, waiting for their events
        supervisor._timers.append(self)

    @property
    def on_gpu(self):
        return self._torch is not None

    def time(self, step):
        return _TimedPart(self, int(step))

    def _start(self, step):
        if self._step is not None and self._step[0] != step:
            self._closed.append(self._step)
            self._step = None
        if self._step is None:
            self._step = [step, []]
        self.poll()
        if not self.on_gpu:
            return time.perf_counter()
        with self._torch.cuda.device(self._device):
            start = self._torch.cuda.Event(enable_timing=True)
            start.record()
        return start

    def _end(self, start):
        if self.on_gpu:
            with self._torch.cuda.device(self._device):
                end = self._torch.cuda.Event(enable_timing=True)
                end.record()
            self._step[1].append((start, end))
        else:
            self._step[1].append(time.perf_counter() - start)
        self.poll()

    def poll(self, wait=False):
        """Sends every closed step whose events have completed, oldest first; `wait`: all of them."""
        while self._closed:
            step, parts = self._closed[0]
            if self.on_gpu:
                last = parts[-1][1]
                if not (wait or len(self._closed) > self._MAX_PENDING_STEPS or last.query()):
                    return
                last.synchronize()
                seconds = sum(start.elapsed_time(end) for start, end in parts) / 1000.0  # ms
            else:
                seconds = sum(parts)
            self._closed.pop(0)
            self._sup.section(step, seconds, self._group)

    def flush(self):
        if self._step is not None:
            self._closed.append(self._step)
            self._step = None
        self.poll(wait=True)


class _TimedPart:
    def __init__(self, timer, step):
        self._timer, self._step = timer, step

    def __enter__(self):
        self._start = self._timer._start(self._step)
        return self

    def __exit__(self, *exc):
        self._timer._end(self._start)
        return False

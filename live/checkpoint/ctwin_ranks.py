"""ctwin_ranks: a node's trainer ranks, forked from one interpreter that imported their libraries
ahead, for `ctwin live agent` (issue 51):

    ctwin-live agent ... -- python3 build/ctwin_ranks.py --nproc-per-node 2 examples/gpt/train.py --steps 200

What torchrun does for a node, with two differences that make a restart take seconds:
  - a worker's failure leaves the node's other workers running: the launcher says so to the agent
    (`failed STATUS rank=R` on $CTWIN_HEARTBEAT_SOCKET) and, when the agent's control file
    ($CTWIN_CONTROL_FILE) names the job's next generation, forks the failed rank again, while the
    healthy ranks rejoin in their processes (ctwin_flash.Supervisor.restartable);
  - every worker is forked from this process once it has imported the workers' libraries (`--preload`,
    torch by default), so a rank started again skips the import: a warm standby, in the process itself.
Started by an agent with --warm-standby, it imports and then waits for the attempt the agent hands
it ($CTWIN_STANDBY_FILE): a relaunched node, or a spare taking a rank, skips the start and the imports.
On node rank 0 it also keeps the job's store at $MASTER_ADDR:$MASTER_PORT (as torchrun's static
rendezvous does, but ctwin_store.py's, bound to that address alone), in a process of its own that
outlives any worker.

Without an agent (no control file), a failed worker stops the others and the launcher exits with its
status, as torchrun does. The parent runs no torch operation before it forks: the workers' thread pools
are their own.
"""

import argparse
import ctypes
import importlib
import json
import os
import runpy
import signal
import socket
import sys
import time

import ctwin_store  # beside this script, as installed and in the build folder

_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15


def _die_with_parent(name):
    """This process gets SIGKILL when the launcher dies (a worker never outlives it), and is called
    `name` in ps and /proc/PID/comm (ctwin-store, ctwin-rank-L): one launcher's processes told apart."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _status_of(status):
    """A wait status as the agent reads it: the exit code, or 128 + the signal."""
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _read_control(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError, TypeError):
        return None


class Ranks:
    def __init__(self, args):
        self.args = args
        self.n = args.nproc_per_node
        self.node_rank = int(os.environ.get("GROUP_RANK", os.environ.get("NODE_RANK", "0")))
        self.control = os.environ.get("CTWIN_CONTROL_FILE")
        self.heartbeat = os.environ.get("CTWIN_HEARTBEAT_SOCKET")
        self.generation = int(os.environ.get("CTWIN_GENERATION", "0"))
        self.restore_step = os.environ.get("CTWIN_RESTORE_STEP")
        self.workers = {}  # pid -> local rank
        self.outcome = {}  # local rank -> exit status, once exited
        self.store = None  # the store keeper's pid (node rank 0)
        self.stopping = False
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) if self.heartbeat else None

    def say(self, line):
        if self.socket is None:
            return
        try:
            self.socket.sendto(line.encode(), self.heartbeat)
        except OSError:
            pass  # the agent is gone: the workers go on

    def keep_store(self):
        """Node rank 0: the store the job's ranks meet in, generation after generation."""
        port = int(os.environ.get("MASTER_PORT", "0"))
        if self.node_rank != 0 or port <= 0 or int(os.environ.get("WORLD_SIZE", "1")) < 2:
            return
        pid = os.fork()
        if pid:
            self.store = pid
            return
        _die_with_parent("ctwin-store")
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        host = os.environ.get("MASTER_ADDR", "127.0.0.1")
        try:  # bound to $MASTER_ADDR alone (torch 1.13's TCPStore binds every interface)
            server = ctwin_store.StoreServer(host, port)
        except OSError as error:
            print(f"ctwin_ranks: cannot keep the job's store on {host}:{port}: {error}", file=sys.stderr, flush=True)
            os._exit(1)
        server.serve_forever()

    def start(self, local_rank):
        pid = os.fork()
        if pid:
            self.workers[pid] = local_rank
            self.outcome.pop(local_rank, None)
            return
        _die_with_parent("ctwin-rank-%d" % local_rank)
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.environ["CTWIN_STORE_PROTOCOL"] = ctwin_store.PROTOCOL  # ctwin_flash.init_process_group speaks to ctwin_store
        os.environ.update({"RANK": str(self.node_rank * self.n + local_rank), "LOCAL_RANK": str(local_rank),
                           "LOCAL_WORLD_SIZE": str(self.n), "CTWIN_GENERATION": str(self.generation),
                           "CTWIN_ATTEMPT": str(max(self.generation - 1, 0))})
        if self.restore_step is not None:
            os.environ["CTWIN_RESTORE_STEP"] = str(self.restore_step)
        else:
            os.environ.pop("CTWIN_RESTORE_STEP", None)
        sys.argv = [self.args.script] + self.args.script_args
        sys.path.insert(0, os.path.dirname(os.path.abspath(self.args.script)))
        code = 0
        try:
            runpy.run_path(self.args.script, run_name="__main__")
        except SystemExit as end:
            code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
            if not isinstance(end.code, (int, type(None))):
                print(end.code, file=sys.stderr)
        except BaseException:  # noqa: B036 -- the worker's own end: said as an interpreter would
            sys.excepthook(*sys.exc_info())
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    def reap(self):
        """Exits since the last look: a failed worker is said to the agent (or ends the node)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.store:
                if not self.stopping:
                    print(f"ctwin_ranks: the job's store exited ({_status_of(status)})", file=sys.stderr, flush=True)
                    self.stop(1)
                continue
            local_rank = self.workers.pop(pid, None)
            if local_rank is None:
                continue
            code = _status_of(status)
            self.outcome[local_rank] = code
            if code != 0 and not self.stopping:
                if not self.control:  # no agent to decide: the node fails, as under torchrun
                    print(f"ctwin_ranks: local rank {local_rank} failed ({code})", file=sys.stderr, flush=True)
                    self.stop(code)
                self.say(f"failed {code} rank={local_rank}")

    def follow_control(self):
        """A new generation in the control file: the failed ranks start again, forked."""
        control = _read_control(self.control) if self.control else None
        if not control or int(control.get("generation", 0)) <= self.generation:
            return
        self.generation = int(control["generation"])
        step = int(control.get("restore_step", -2))
        self.restore_step = step if step >= -1 else None
        for local_rank, code in sorted(self.outcome.items()):
            if code != 0:
                self.start(local_rank)

    def stop(self, code):
        """Every worker asked to stop (SIGTERM: they save), killed after the agent's grace; exits `code`."""
        self.stopping = True
        for pid in list(self.workers):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.time() + float(os.environ.get("CTWIN_RANKS_GRACE", "60"))
        while self.workers and time.time() < deadline:
            self.reap()
            time.sleep(0.01)
        for pid in list(self.workers) + ([self.store] if self.store else []):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        failed = [c for c in self.outcome.values() if c != 0]
        sys.exit(code if code else (failed[0] if failed else 0))

    def run(self):
        for module in filter(None, self.args.preload.split(",")):
            importlib.import_module(module)
        signal.signal(signal.SIGTERM, lambda *_: self.stop(0))
        self.keep_store()
        for local_rank in range(self.n):
            self.start(local_rank)
        while True:
            self.reap()
            if not self.workers and len(self.outcome) == self.n and all(c == 0 for c in self.outcome.values()):
                self.stop(0)
            self.follow_control()
            time.sleep(0.01)


def _preload(argv):
    """The modules of --preload in a command line (the default when not said), imported."""
    names = "torch,torch.distributed,torch.nn,torch.nn.functional"
    for i, word in enumerate(argv):
        if word == "--preload" and i + 1 < len(argv):
            names = argv[i + 1]
        elif word.startswith("--preload="):
            names = word.split("=", 1)[1]
    for module in filter(None, names.split(",")):
        importlib.import_module(module)


def _await_hand_over(path):
    """A warm standby (the agent's --warm-standby): imports first, then waits for the attempt the
    agent hands it in `path` (its command line and environment, written atomically). Returns the
    command line's words after this script's name."""
    _preload(sys.argv[1:])
    while True:
        try:
            with open(path) as f:
                attempt = json.load(f)
            break
        except (OSError, ValueError):
            time.sleep(0.005)
    try:
        os.unlink(path)
    except OSError:
        pass
    os.environ.update({str(k): str(v) for k, v in attempt["env"].items()})
    os.environ.pop("CTWIN_STANDBY_FILE", None)
    argv = [str(w) for w in attempt["argv"]]
    mine = next((i for i, w in enumerate(argv) if os.path.basename(w) == os.path.basename(__file__)), None)
    if mine is None:
        print(f"ctwin_ranks: the agent handed over a command that is not {os.path.basename(__file__)}: {argv}", file=sys.stderr)
        sys.exit(2)
    return argv[mine + 1:]


def main():
    standby = os.environ.get("CTWIN_STANDBY_FILE")
    words = _await_hand_over(standby) if standby else sys.argv[1:]  # the standby's own words hold unfilled placeholders
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nproc-per-node", type=int, default=int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    p.add_argument("--preload", default="torch,torch.distributed,torch.nn,torch.nn.functional",
                   help="modules imported once, before the workers are forked (comma-separated)")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(words)
    said = int(os.environ.get("LOCAL_WORLD_SIZE", str(args.nproc_per_node)))
    if args.nproc_per_node < 1 or said != args.nproc_per_node:
        print(f"ctwin_ranks: --nproc-per-node {args.nproc_per_node}, but the job master's plan says {said} per node "
              "($LOCAL_WORLD_SIZE; ctwin-live master --nproc-per-node)", file=sys.stderr)
        return 2
    Ranks(args).run()


if __name__ == "__main__":
    sys.exit(main())

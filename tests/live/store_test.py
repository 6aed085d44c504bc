"""The job's store (live/checkpoint/ctwin_store.py), as a cluster treats it.

    store_test.py BUILD            the protocol: its bound address, port scanners, waits and their deadlines
    store_test.py BUILD --torch    two processes meet in it under torch.distributed (gloo), two generations

BUILD holds ctwin_store.py (the build folder copies it there). Exit 0: passed; 1: failed; 77: --torch
without torch (skipped, not passed).
"""

import datetime
import multiprocessing
import os
import socket
import struct
import sys
import threading
import time


def fail(why):
    print(f"store_test: FAILED: {why}", file=sys.stderr)
    sys.exit(1)


def check(condition, why):
    if not condition:
        fail(why)


def start_server(ctwin_store, host="127.0.0.1"):
    server = ctwin_store.StoreServer(host, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def other_local_address():
    """This machine's address on its default route (no packet is sent), or None when it has only loopback."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 9))
        address = probe.getsockname()[0]
        return None if address.startswith("127.") else address
    except OSError:
        return None
    finally:
        probe.close()


def protocol(ctwin_store):
    server = start_server(ctwin_store)
    host, port = server.address()
    check(host == "127.0.0.1", f"the store listens on {host}, not the address it was given")
    # Bound to that address alone: the machine's other address does not reach it.
    other = other_local_address()
    if other:
        try:
            socket.create_connection((other, port), timeout=2).close()
            fail(f"the store bound to 127.0.0.1 answered on {other}:{port}: it listens on every interface")
        except (ConnectionRefusedError, socket.timeout, OSError):
            pass
    else:
        print("store_test: no address beside loopback here: the other-interface check did not run")

    # A port scanner's visits: a connect and close, an HTTP request, a frame claiming 4 GB, a JSON
    # array, and a connection that says nothing and stays open through what follows.
    silent = socket.create_connection((host, port))
    for payload in (b"", b"GET / HTTP/1.0\r\n\r\n", struct.pack("!I", 0xFFFFFFFF) + b"x" * 64, struct.pack("!I", 2) + b"[]"):
        s = socket.create_connection((host, port), timeout=10)
        if not payload:  # connect and go: the store sees its end at once
            s.close()
            continue
        s.sendall(payload)
        try:
            s.recv(100)
        except OSError:
            pass
        s.close()

    a = ctwin_store.Connection(host, port, 20)
    b = ctwin_store.Connection(host, port, 20)
    # A get waits for another client's set; a wait too.
    got = {}
    waiter = threading.Thread(target=lambda: got.setdefault("v", b.get("late")))
    waiter.start()
    time.sleep(0.3)
    check(waiter.is_alive(), "a get of a key nobody set came back at once")
    a.set("late", b"\x00\xffbinary")
    waiter.join(20)
    check(got.get("v") == b"\x00\xffbinary", f"the get read {got.get('v')!r}")
    # Every wait has a deadline: a key that never comes is an error after the timeout, not a hang.
    began = time.monotonic()
    try:
        b.wait(["never"], 0.5)
        fail("a wait for a key nobody sets returned")
    except RuntimeError as error:
        check("timed out" in str(error), f"the wait's error says {error}")
    check(time.monotonic() - began < 10, "the 0.5 s wait took over 10 s")
    # add is atomic across clients; compare_set as torch's stores do.
    clients = [ctwin_store.Connection(host, port, 20) for _ in range(4)]
    threads = [threading.Thread(target=lambda c=c: [c.add("count", 1) for _ in range(100)]) for c in clients]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    check(a.add("count", 0) == 400, f"4 x 100 adds gave {a.add('count', 0)}")
    check(a.compare_set("cs", b"", b"first") == b"first", "compare_set on a missing key with an empty expectation did not set it")
    check(a.compare_set("cs", b"wrong", b"second") == b"first", "compare_set with a wrong expectation changed the value")
    check(a.compare_set("cs", b"first", b"second") == b"second", "compare_set with the right expectation did not set it")
    check(a.check(["late", "cs"]) and not a.check(["late", "never"]), "check")
    check(a.delete_key("cs") and not a.delete_key("cs"), "delete_key")
    # A client that sends a frame that is no request is refused; the others go on.
    rogue = socket.create_connection((host, port), timeout=10)
    hello = b'{"hello":"' + ctwin_store.PROTOCOL.encode() + b'"}'
    rogue.sendall(struct.pack("!I", len(hello)) + hello)
    rogue.recv(100)
    bad = b'{"op":"explode"}'
    rogue.sendall(struct.pack("!I", len(bad)) + bad)
    rogue.recv(200)
    rogue.close()
    check(a.num_keys() == 2, f"after the visits the store holds {a.num_keys()} keys, not late and count")
    check(server.refused >= 4, f"the store refused {server.refused} connections of the 5 that spoke no protocol")
    silent.close()
    # A store that is not there: the client gives up at its deadline with the address in the error.
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()
    began = time.monotonic()
    try:
        ctwin_store.Connection("127.0.0.1", dead_port, 1.0)
        fail("a connection to a port nobody listens on succeeded")
    except RuntimeError as error:
        check(f"127.0.0.1:{dead_port}" in str(error), f"the error says {error}")
    check(time.monotonic() - began < 15, "giving up on a missing store took over 15 s")
    print("store_test: protocol passed")


def _rank(build, port, rank, generation, out):
    sys.path.insert(0, build)
    import torch
    import torch.distributed as dist

    import ctwin_store

    store = ctwin_store.client("127.0.0.1", port, datetime.timedelta(seconds=60))
    dist.init_process_group("gloo", store=dist.PrefixStore(f"ctwin/gen-{generation}/", store), rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=60))
    t = torch.full((4,), float(rank + generation))
    dist.all_reduce(t)
    dist.barrier()
    dist.destroy_process_group()
    out.put((rank, generation, t.tolist()))


def with_torch(ctwin_store, build):
    try:
        import torch  # noqa: F401
    except ImportError:
        print("store_test: SKIPPED: no torch (python3-torch)")
        sys.exit(77)
    server = start_server(ctwin_store)
    port = server.address()[1]
    out = multiprocessing.get_context("spawn").Queue()
    # Two generations in one store, each under its own prefix, as an in-process restart meets again.
    for generation in (1, 2):
        ranks = [multiprocessing.get_context("spawn").Process(target=_rank, args=(build, port, r, generation, out)) for r in range(2)]
        [p.start() for p in ranks]
        [p.join(240) for p in ranks]
        check(all(p.exitcode == 0 for p in ranks), f"generation {generation}'s ranks exited {[p.exitcode for p in ranks]}")
        for _ in range(2):
            rank, g, values = out.get(timeout=10)
            check(g == generation and values == [2.0 * generation + 1] * 4, f"rank {rank} of generation {g} reduced {values}")
    print("store_test: two generations of gloo ranks met in the store")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    sys.path.insert(0, build)
    import ctwin_store

    if "--torch" in sys.argv[2:]:
        with_torch(ctwin_store, build)
    else:
        protocol(ctwin_store)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""ctwin_store: the key-value store a job's ranks meet in (torch.distributed's Store), kept by
ctwin_ranks.py on node rank 0 and read by ctwin_flash.init_process_group.

Why not torch's TCPStore: in torch 1.13 its server binds every interface and takes no address; a
live service here binds the address it is told ($MASTER_ADDR). And a cluster has port scanners: a
connection that does not open with this protocol's greeting within a few seconds, or sends what is
no request, is closed, and the other ranks' connections go on.

The protocol: each request and each answer is a frame, a 4-byte big-endian length and a JSON object
(keys as text, values base64). A client's first frame is {"hello": PROTOCOL}. The keys are the
job's whole life: a generation's ranks meet under their own prefix (ctwin_flash.py), so the store
outlives every worker and never needs clearing.
"""

import base64
import json
import socket
import struct
import threading
import time

PROTOCOL = "ctwin-store-1"
_MAX_FRAME = 64 << 20  # a gloo or NCCL address is bytes; a frame this large is no request
_HELLO_S = 5.0  # a connection's greeting, and the rest of a frame once begun


def _recv_exact(conn, n):
    data = bytearray()
    while len(data) < n:
        chunk = conn.recv(min(n - len(data), 1 << 20))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return bytes(data)


def _read_frame(conn, first_byte_timeout):
    """One frame; `first_byte_timeout` None waits for it as long as the peer keeps the connection."""
    conn.settimeout(first_byte_timeout)
    head = _recv_exact(conn, 1)
    conn.settimeout(_HELLO_S)  # once a frame begins, the rest comes now
    head += _recv_exact(conn, 3)
    (length,) = struct.unpack("!I", head)
    if length > _MAX_FRAME:
        raise ValueError(f"a frame of {length} bytes")
    message = json.loads(_recv_exact(conn, length).decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError("a frame that is no object")
    return message


def _write_frame(conn, message):
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    conn.sendall(struct.pack("!I", len(body)) + body)


def _b64(value):
    return base64.b64encode(value).decode("ascii")


def _bytes(text):
    return base64.b64decode(text.encode("ascii"), validate=True)


class StoreServer:
    """The store, listening on (host, port) alone. serve_forever() runs it in this thread."""

    def __init__(self, host, port):
        # A thread per connection (a rank's): small stacks, so a keeper of thousands of ranks is not
        # gigabytes of address space (frames here are shallow: JSON decoding is C).
        threading.stack_size(512 * 1024)
        self.data = {}
        self.changed = threading.Condition()
        self.refused = 0  # connections closed for not speaking the protocol (a scanner, a stray client)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.create_server((host, port), family=family, backlog=512)

    def address(self):
        return self.listener.getsockname()[:2]

    def serve_forever(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue  # a connection reset before it was accepted
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            try:
                hello = _read_frame(conn, _HELLO_S)
                if hello.get("hello") != PROTOCOL:
                    raise ValueError("no greeting")
                _write_frame(conn, {"ok": True})
            except (OSError, ValueError, ConnectionError, UnicodeDecodeError, struct.error):
                self.refused += 1
                return
            while True:
                try:
                    request = _read_frame(conn, None)
                    answer = self._answer(request)
                except (OSError, ConnectionError):
                    return
                except (ValueError, KeyError, TypeError, UnicodeDecodeError, AttributeError) as error:
                    # Not a request of this protocol: this connection ends, the store goes on.
                    try:
                        _write_frame(conn, {"ok": False, "error": f"not a request: {error}"[:200]})
                    except OSError:
                        pass
                    self.refused += 1
                    return
                try:
                    _write_frame(conn, answer)
                except OSError:
                    return

    def _wait_for(self, keys, timeout_ms):
        """True once every key is set; False when the timeout (ms; 0 or less: none) passes first."""
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        with self.changed:
            while not all(k in self.data for k in keys):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.changed.wait(left)
        return True

    def _answer(self, r):
        op = r["op"]
        if op == "set":
            with self.changed:
                self.data[str(r["key"])] = _bytes(r["value"])
                self.changed.notify_all()
            return {"ok": True}
        if op == "get":
            key = str(r["key"])
            if not self._wait_for([key], int(r["timeout_ms"])):
                return {"ok": False, "error": f"timed out waiting for key {key}"}
            with self.changed:
                return {"ok": True, "value": _b64(self.data[key])}
        if op == "add":
            with self.changed:
                value = int(self.data.get(str(r["key"]), b"0").decode() or 0) + int(r["amount"])
                self.data[str(r["key"])] = str(value).encode()
                self.changed.notify_all()
            return {"ok": True, "value": value}
        if op == "compare_set":
            key, expected, desired = str(r["key"]), _bytes(r["expected"]), _bytes(r["desired"])
            with self.changed:
                current = self.data.get(key)
                if (current is None and not expected) or current == expected:
                    self.data[key] = desired
                    self.changed.notify_all()
                    return {"ok": True, "value": _b64(desired)}
                return {"ok": True, "value": _b64(expected if current is None else current)}
        if op == "wait":
            keys = [str(k) for k in r["keys"]]
            if not self._wait_for(keys, int(r["timeout_ms"])):
                return {"ok": False, "error": "timed out waiting for keys " + ", ".join(keys)}
            return {"ok": True}
        if op == "check":
            with self.changed:
                return {"ok": True, "value": all(str(k) in self.data for k in r["keys"])}
        if op == "num_keys":
            with self.changed:
                return {"ok": True, "value": len(self.data)}
        if op == "delete_key":
            with self.changed:
                return {"ok": True, "value": self.data.pop(str(r["key"]), None) is not None}
        raise ValueError(f"unknown op {op!r}")


def _as_bytes(value):
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


class Connection:
    """One client's connection to the store; what a Store's methods ask, in this protocol. Thread-safe."""

    def __init__(self, host, port, timeout_s):
        self.timeout_ms = int(timeout_s * 1000)
        self._lock = threading.Lock()
        deadline = time.monotonic() + timeout_s
        # The keeper may still be starting (node rank 0's launcher forks it): retry to the deadline.
        while True:
            try:
                self._conn = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
                self._conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                _write_frame(self._conn, {"hello": PROTOCOL})
                if _read_frame(self._conn, _HELLO_S).get("ok") is not True:
                    raise ConnectionError("the store refused the greeting")
                return
            except (OSError, ConnectionError, ValueError) as error:
                if time.monotonic() >= deadline:
                    raise RuntimeError(f"ctwin_store: cannot reach the job's store at {host}:{port}: {error}") from None
                time.sleep(0.05)

    def close(self):
        self._conn.close()

    def _call(self, request, wait_ms=0):
        # A wait's answer comes when the key does: the socket waits as long, and a little more; any
        # other answer within the store's timeout (a keeper paused or gone is an error, not a hang).
        deadline_s = (wait_ms if wait_ms > 0 else self.timeout_ms) / 1000.0 + 30
        with self._lock:
            self._conn.settimeout(deadline_s)
            _write_frame(self._conn, request)
            answer = _read_frame(self._conn, deadline_s)
        if answer.get("ok") is not True:
            raise RuntimeError(f"ctwin_store: {answer.get('error', 'the store refused a request')}")
        return answer.get("value")

    def set(self, key, value):
        self._call({"op": "set", "key": key, "value": _b64(_as_bytes(value))})

    def get(self, key):
        return _bytes(self._call({"op": "get", "key": key, "timeout_ms": self.timeout_ms}, self.timeout_ms))

    def add(self, key, amount):
        return int(self._call({"op": "add", "key": key, "amount": int(amount)}))

    def compare_set(self, key, expected, desired):
        return _bytes(self._call({"op": "compare_set", "key": key, "expected": _b64(_as_bytes(expected)), "desired": _b64(_as_bytes(desired))}))

    def wait(self, keys, timeout_s=None):
        ms = self.timeout_ms if timeout_s is None else int(timeout_s * 1000)
        self._call({"op": "wait", "keys": list(keys), "timeout_ms": ms}, ms)

    def check(self, keys):
        return bool(self._call({"op": "check", "keys": list(keys)}))

    def num_keys(self):
        return int(self._call({"op": "num_keys"}))

    def delete_key(self, key):
        return bool(self._call({"op": "delete_key", "key": key}))


def client(host, port, timeout):
    """A torch.distributed Store on the ctwin store at (host, port). `timeout` (a timedelta) bounds
    the connection's setup and each wait for a key, as TCPStore's does."""
    import torch.distributed as dist

    class StoreClient(dist.Store):
        def __init__(self):
            super().__init__()
            self._c = Connection(host, port, timeout.total_seconds())

        def set(self, key, value):
            self._c.set(key, value)

        def get(self, key):
            return self._c.get(key)

        def add(self, key, amount):
            return self._c.add(key, amount)

        def compare_set(self, key, expected, desired):
            return self._c.compare_set(key, expected, desired)

        def wait(self, keys, timeout=None):
            self._c.wait(keys, None if timeout is None else timeout.total_seconds())

        def check(self, keys):
            return self._c.check(keys)

        def num_keys(self):
            return self._c.num_keys()

        def delete_key(self, key):
            return self._c.delete_key(key)

    return StoreClient()

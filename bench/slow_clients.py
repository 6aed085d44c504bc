"""The job master's HTTP side under slow clients without the token (issue 36's port scanner):
`ctwin-live master` on 127.0.0.1, N connections each sending one header line every 2 s, and
meanwhile authorized requests (GET /v1/status, as an agent's report would be) timed one after
another. Prints the requests answered, their median and worst latency, and how many slow
connections the master closed. With --metrics the same against the master's /metrics (GET
/metrics, no token, as Prometheus scrapes).

    python3 bench/slow_clients.py [--build build] [--slow 64] [--seconds 20] [--requests 40] [--metrics]
"""

import argparse
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

TOKEN = "bench-token-0123456789abcdef"


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    a.add_argument("--slow", type=int, default=64)
    a.add_argument("--seconds", type=float, default=20)
    a.add_argument("--requests", type=int, default=40)
    a.add_argument("--metrics", action="store_true", help="flood and scrape /metrics instead of the API")
    o = a.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        metrics_port = s.getsockname()[1]
    work = tempfile.mkdtemp(prefix="ctwin-slow-clients-")
    with open(os.path.join(work, "policy.json"), "w") as f:
        json.dump({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1h"}}}, f)
    port_file = os.path.join(work, "port")
    master = subprocess.Popen([os.path.join(o.build, "ctwin-live"), "master", "--policy", os.path.join(work, "policy.json"), "--nnodes", "1",
                               "--bind", "127.0.0.1:0", "--port-file", port_file] +
                              (["--metrics", "127.0.0.1:%d" % metrics_port] if o.metrics else ["--no-metrics"]),
                              env=dict(os.environ, CTWIN_JOB_TOKEN=TOKEN), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        port = metrics_port if o.metrics else int(open(port_file).read())
        path = "/metrics" if o.metrics else "/v1/status"
        closed = [0]
        stop = threading.Event()

        def open_one():
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n")
            return c

        def flood():
            conns = [open_one() for _ in range(o.slow)]
            while not stop.wait(2):
                for i, c in enumerate(conns):
                    try:
                        gone = bool(select.select([c], [], [], 0)[0]) and not c.recv(4096)
                        if not gone:
                            c.sendall(b"X-a: b\r\n")
                    except OSError:
                        gone = True
                    if gone:
                        closed[0] += 1
                        c.close()
                        try:
                            conns[i] = open_one()
                        except OSError:
                            pass
            for c in conns:
                c.close()

        t = threading.Thread(target=flood, daemon=True)
        t.start()
        time.sleep(1)  # every slow connection open
        latencies, failed = [], 0
        end = time.time() + o.seconds
        while time.time() < end and len(latencies) + failed < o.requests:
            request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), headers={} if o.metrics else {"Authorization": "Bearer " + TOKEN})
            t0 = time.time()
            try:
                with urllib.request.urlopen(request, timeout=10) as r:
                    r.read()
                latencies.append(time.time() - t0)
            except OSError:
                failed += 1
            time.sleep(max(0.0, o.seconds / o.requests - (time.time() - t0)))
        stop.set()
        t.join(10)
        answered = len(latencies)
        print("%d slow connections, %.0f s: %d of %d %s answered; latency median %s, worst %s; %d slow connections closed by the master"
              % (o.slow, o.seconds, answered, answered + failed, "scrapes" if o.metrics else "authorized requests",
                 "%.1f ms" % (1e3 * statistics.median(latencies)) if latencies else "-",
                 "%.1f ms" % (1e3 * max(latencies)) if latencies else "-", closed[0]))
    finally:
        master.terminate()
        master.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())

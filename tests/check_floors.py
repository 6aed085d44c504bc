#!/usr/bin/env python3
"""The floors (docs/architecture.md): each folder imports only from the floors below it, and the heavy
dependencies stay in their one place: SimGrid in sim/simgrid/, MPI in core/mpi/, CUDA and NCCL in
live/cuda/ (and the plugin's own C table), CLI11 in the command lines.

    check_floors.py ROOT         exit 1 and one line per violation
    check_floors.py --self-test  plants violations in a scratch tree and checks each is caught
"""
import os
import re
import sys
import tempfile

# What each floor may include besides itself. live/ stands on core, models and policies only.
ALLOWED = {
    "core": [],
    "models": ["core"],
    "policies": ["core", "models"],
    "trial": ["core", "models", "policies"],
    "sim": ["core", "models", "policies", "trial"],
    "report": ["core", "models", "policies", "trial", "sim"],
    "calibration": ["core", "models", "policies", "trial", "sim", "report"],
    "live": ["core", "models", "policies"],
    "cli": ["core", "models", "policies", "trial", "sim", "report", "calibration", "live"],
    "bench": ["core", "models", "policies", "trial", "sim", "report", "calibration", "live"],
}
FLOORS = set(ALLOWED) | {"tests"}
# Inside live/: the job's logic (job/) stands below both the node agent (supervisor/) and the
# transport (cluster/), which never include each other; the commands above them all.
LIVE_FORBIDDEN = {
    "job": ["supervisor", "cluster", "commands", "tools"],
    "supervisor": ["cluster", "commands", "tools"],
    "cluster": ["supervisor", "commands", "tools"],
}
# The agent (supervisor/) observes, reports and acts; the job's books and decisions are the master's
# (job/). Of job/ it may include only the wire types it speaks and the metrics it serves.
SUPERVISOR_FROM_JOB = {"messages.hpp", "coordination.hpp", "heartbeat.hpp", "cadence_json.hpp", "live_metrics.hpp"}
# System headers that only one place may include: (pattern, the folders allowed).
CONFINED = [
    (re.compile(r"^simgrid/|^xbt/|^smpi/"), ["sim/simgrid/"]),
    (re.compile(r"^mpi\.h$"), ["core/mpi/"]),
    (re.compile(r"^(cuda|cuda_runtime|cuda_runtime_api|cublas|cublas_v2|cublasLt|nccl|cuda_bf16|cuda_fp16)\.h$"), ["live/cuda/"]),
    (re.compile(r"^CLI/"), ["cli/", "live/commands/", "live/tools/"]),  # the tools are programs with command lines too
]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
SOURCES = (".cpp", ".hpp", ".h", ".c", ".cu", ".cuh")


def violations(root):
    found = []
    for floor in sorted(ALLOWED):
        top = os.path.join(root, floor)
        for folder, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as source:
                    text = source.read()
                for match in INCLUDE.finditer(text):
                    kind, header = match.group(1), match.group(2)
                    line = text.count("\n", 0, match.start()) + 1
                    first = header.split("/", 1)[0]
                    if kind == '"' and "/" in header and first in FLOORS and first != floor and first not in ALLOWED[floor]:
                        found.append(f"{relative}:{line}: {floor}/ includes {header}, a floor above it or beside it")
                    if floor == "live" and kind == '"' and first == "live" and header.count("/") >= 2:
                        room, target = relative.split("/")[1], header.split("/")[1]
                        if target in LIVE_FORBIDDEN.get(room, []):
                            found.append(f"{relative}:{line}: live/{room}/ includes {header}: live/{target}/ stands above or beside it")
                        elif room == "supervisor" and target == "job" and header.split("/", 2)[2] not in SUPERVISOR_FROM_JOB:
                            found.append(f"{relative}:{line}: live/supervisor/ includes {header}: of live/job/ the agent takes only "
                                         f"the wire types ({', '.join(sorted(SUPERVISOR_FROM_JOB))}); the books are the master's")
                    for pattern, places in CONFINED:
                        if pattern.search(header) and not any(relative.startswith(p) for p in places):
                            found.append(f"{relative}:{line}: includes <{header}>, which only {', '.join(places)} may")
    return found


def self_test():
    planted = {
        "models/bad.hpp": '#include "sim/monte_carlo.hpp"\n',
        "policies/bad.cpp": '#include "trial/trial.hpp"\n',
        "live/bad.cpp": '#include "calibration/calibrate.hpp"\n',
        "core/bad.cpp": '#include "models/scenario.hpp"\n',
        "trial/bad.cpp": "#include <simgrid/s4u.hpp>\n",
        "sim/bad.cpp": "#include <mpi.h>\n",
        "report/bad.cpp": "#include <nccl.h>\n",
        "live/job/bad.hpp": '#include "live/cluster/protocol.hpp"\n',
        "live/cluster/bad.cpp": '#include "live/supervisor/supervisor.hpp"\n',
        "live/supervisor/bad.cpp": '#include "live/cluster/agent_link.hpp"\n',
        "live/cluster/ok.cpp": '#include "live/job/job_master.hpp"\n',
        "live/supervisor/ok.cpp": '#include "live/job/messages.hpp"\n',
        "live/supervisor/books/bad.cpp": '#include "live/job/live_ledger.hpp"\n',
        "models/ok.cpp": '#include "core/units.hpp"\n#include <vector>\n',
        "sim/simgrid/ok.cpp": "#include <simgrid/s4u.hpp>\n",
    }
    with tempfile.TemporaryDirectory() as scratch:
        for path, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(scratch, path)), exist_ok=True)
            with open(os.path.join(scratch, path), "w") as out:
                out.write(text)
        found = violations(scratch)
    caught = {line.split(":", 1)[0] for line in found}
    expected = {p for p in planted if "/bad." in p}
    if caught != expected:
        print("self-test FAILED: caught", sorted(caught), "expected", sorted(expected))
        return 1
    print(f"self-test: all {len(expected)} planted violations caught, the allowed includes pass")
    return 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    found = violations(sys.argv[1])
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) break the floors (docs/architecture.md)")
        return 1
    print("floors: every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""ctwin_flash.SectionTimer on a GPU (bench/gpu.sh; skipped, exit 77, without torch or CUDA): a timed
section measures the kernels, not their launch, and timing never synchronises the step.
    python3 section_timer_gpu_test.py BUILD_DIR"""

import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.abspath(sys.argv[1]))
from ctwin_flash import Supervisor  # noqa: E402

try:
    import torch
except ImportError:
    print("skipped: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: torch sees no CUDA device")
    sys.exit(77)


def work(a, b, n):
    for _ in range(n):
        a = a @ b
    return a


def main():
    folder = tempfile.mkdtemp(prefix="ctwin-timer-")
    path = os.path.join(folder, "heartbeat")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(path)
    listener.settimeout(60)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90
    n = 200  # about 0.3 s of bf16 products on an H100
    work(a, b, 5)
    torch.cuda.synchronize()
    started = time.perf_counter()  # the same work alone, synchronised: what the section must read
    work(a, b, n)
    torch.cuda.synchronize()
    alone_s = time.perf_counter() - started

    sup = Supervisor(path, rank=0)
    timer = sup.section_timer(group=0)
    assert timer.on_gpu
    launched = time.perf_counter()
    with timer.time(1):
        work(a, b, n)
    launch_s = time.perf_counter() - launched
    still_running = not torch.cuda.current_stream().query()  # the timer did not wait for the kernels
    with timer.time(2):
        work(a, b, 1)
    sup.flush()  # waits for both steps' events
    one = listener.recv(4096).decode().split()
    two = listener.recv(4096).decode().split()
    assert one[:2] == ["section", "1"] and two[:2] == ["section", "2"], (one, two)
    section_s = float(one[2])
    print(f"section timer on {torch.cuda.get_device_name()}: section {section_s * 1e3:.1f} ms, the same work synchronised "
          f"{alone_s * 1e3:.1f} ms, its launch {launch_s * 1e3:.1f} ms; kernels still running after the section closed: {still_running}")
    assert still_running, "the section's end synchronised the step"
    assert 0.8 < section_s / alone_s < 1.25, (section_s, alone_s)
    assert section_s > 3 * launch_s, "the section reads the launch time, not the kernels'"
    listener.close()
    os.remove(path)
    os.rmdir(folder)
    print("section timer on GPU: passed")


if __name__ == "__main__":
    main()

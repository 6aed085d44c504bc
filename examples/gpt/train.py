"""A small GPT-style language model trained with PyTorch DDP (gloo on CPU, NCCL on GPU), with flash
checkpoints of its model and optimizer state_dict, for `ctwin live master` / `ctwin live agent`
(and `ctwin live run`). Under an agent, one process per node:

    ctwin live agent ... -- python3 examples/gpt/train.py --steps 200

or several per node through torchrun, with the agent's placeholders:

    ctwin live agent ... -- torchrun --nnodes {nnodes} --node_rank {node_rank} --nproc_per_node 2 \\
        --master_addr {master_addr} --master_port {master_port} examples/gpt/train.py

Every tensor of model.state_dict() and optimizer.state_dict() is registered with the flash engine
(in place: a restore writes into the live parameters), and each manifest on disk names its dtype
and shape, so ctwin_flash.read_state_dict(dir, step, rank) rebuilds the state_dict from disk alone.
The data of step s on rank r is a function of (s, r): a restored run repeats exactly what it lost.
Faults for tests: --crash-at-step, --hang-at-step, --nan-at-step, --raise-at-step, on attempt 0
($CTWIN_ATTEMPT) of the rank --fault-rank only.

The training loop is re-entered in process after a peer's failure (ctwin_flash.Supervisor.restartable,
NVIDIA NVRx's model): launched by build/ctwin_ranks.py under a master whose policy says
`"restart": {"mechanism": "in_process", ...}`, only the failed rank's process is replaced (forked warm),
and the others restore in place and go on:

    ctwin live agent ... -- python3 build/ctwin_ranks.py --nproc-per-node 2 examples/gpt/train.py"""

import argparse
import contextlib
import math
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
# ctwin_flash.py: $CTWIN_PYTHONPATH, else the build folder (from the source tree), else an installed prefix's lib/ctwin/python.
for folder in (os.path.join(here, "..", "..", "..", "lib", "ctwin", "python"), os.path.join(here, "..", "..", "build"), os.environ.get("CTWIN_PYTHONPATH")):
    if folder:
        sys.path.insert(0, folder)
from ctwin_flash import FlashCheckpoint, Supervisor  # noqa: E402


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, vocab, width, heads, layers, context):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((context, context), float("-inf")), diagonal=1), persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tokens(idx) + self.positions(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x, self.mask[:t, :t])
        return self.head(self.norm(x))


def batch(step, rank, args, device):
    """Step s's batch on rank r: a noisy repeating pattern the model can learn, a function of (s, r)."""
    g = torch.Generator().manual_seed(step * 1000003 + rank)
    start = torch.randint(0, args.vocab, (args.batch, 1), generator=g)
    seq = (start + torch.arange(args.context + 1) * 3) % args.vocab
    noise = torch.rand(seq.shape, generator=g) < 0.05
    seq = torch.where(noise, torch.randint(0, args.vocab, seq.shape, generator=g), seq)
    return seq[:, :-1].to(device), seq[:, 1:].to(device)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--context", type=int, default=32)
    p.add_argument("--batch", type=int, default=8, help="micro-batch per rank")
    p.add_argument("--global-batch", type=int, default=0,
                   help="sequences per step across the job, kept at any world size by gradient accumulation "
                        "(an elastic job that shrinks trains the same samples); 0: micro-batch x world size")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--name", default=os.environ.get("CTWIN_FLASH_NAME", "gpt"))
    p.add_argument("--persist-dir", default=os.environ.get("CTWIN_FLASH_PERSIST_DIR"))
    p.add_argument("--replica-ranks", type=int, default=0,
                   help="1: one shard per replica, rank 0 alone persists (plain DDP: every rank holds the same state; "
                        "needs a persist folder every node sees); 0: every rank persists its own ($CTWIN_FLASH_REPLICA_RANKS)")
    p.add_argument("--crash-at-step", type=int, default=-1)
    p.add_argument("--hang-at-step", type=int, default=-1)
    p.add_argument("--nan-at-step", type=int, default=-1)
    p.add_argument("--raise-at-step", type=int, default=-1, help="a RuntimeError of this rank's own (its process lives on)")
    p.add_argument("--fault-rank", type=int, default=0, help="the global rank the faults strike")
    args = p.parse_args()

    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if cuda else torch.device("cpu")
    torch.set_num_threads(1)
    torch.manual_seed(0)  # every rank starts from the same weights
    model = GPT(args.vocab, args.width, args.heads, args.layers, args.context).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    # The optimizer's state exists before registration: a step with zero gradients changes nothing.
    for param in model.parameters():
        param.grad = torch.zeros_like(param)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

    sup = Supervisor()
    timer = sup.section_timer()  # CUDA events on a GPU: the kernels' time, not their launches
    ckpt = FlashCheckpoint(args.name, args.persist_dir, rank=rank, world=world, shm_dir=os.environ.get("CTWIN_SHM_DIR"),
                           replica_ranks=args.replica_ranks)
    ckpt.register_state_dict("model", model.state_dict())
    ckpt.register_state_dict("optimizer", optimizer.state_dict()["state"])

    shards = max(1, args.global_batch // args.batch) if args.global_batch else world
    if shards % world:
        print(f"gpt: --global-batch {args.global_batch} is not a multiple of --batch x world size ({args.batch} x {world})", file=sys.stderr)
        return 2
    accumulate = shards // world
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))

    def train(step):
        """From `step` (restored, in place) to the end; entered again in this process after a peer's failure."""
        attempt = sup.attempt
        faulty = attempt == 0 and rank == args.fault_rank
        ddp = nn.parallel.DistributedDataParallel(model) if world > 1 else model  # on this generation's process group
        print(f"gpt: rank {rank}/{world} attempt {attempt} starts at step {step} at {time.time():.6f}", file=sys.stderr, flush=True)
        saved, first = (step or None), True  # None: nothing restored, nothing to wait for at the end
        while step < args.steps:
            s = step + 1
            started = time.time()
            if faulty and s == args.crash_at_step:
                print(f"gpt: injected crash in step {s} at {time.time():.6f}", file=sys.stderr, flush=True)
                os.abort()
            if faulty and s == args.raise_at_step:
                print(f"gpt: injected error in step {s} at {time.time():.6f}", file=sys.stderr, flush=True)
                raise RuntimeError(f"injected error in step {s}")
            if faulty and s == args.hang_at_step:
                print(f"gpt: injected hang in step {s}", file=sys.stderr, flush=True)
                while True:
                    time.sleep(3600)
            # The global batch is micro-batches 0..shards-1 of the step; this rank takes its share of
            # them, accumulating gradients over all but the last without DDP's all-reduce.
            # The step's section is its forward and backward passes (the timer adds them up and sends
            # the step's sum once the GPU has run them); the loss check between them synchronises the
            # host, so it stays outside, or the GPU's wait for it would count as compute.
            optimizer.zero_grad(set_to_none=False)
            for m in range(accumulate):
                x, y = batch(s, rank * accumulate + m, args, device)
                with (ddp.no_sync() if world > 1 and m + 1 < accumulate else contextlib.nullcontext()):
                    with timer.time(s):
                        loss = F.cross_entropy(ddp(x).reshape(-1, args.vocab), y.reshape(-1))
                    if faulty and s == args.nan_at_step:
                        loss = loss * float("nan")
                    if not math.isfinite(loss.item()):
                        sup.nan(s)
                        print(f"gpt: loss is {loss.item()} at step {s}", file=sys.stderr, flush=True)
                        return 4
                    with timer.time(s):  # under DDP the last micro-batch's backward overlaps its all-reduce
                        (loss / accumulate).backward()
            optimizer.step()
            step = s
            sup.step(s, time.time() - started, loss.item())
            if first:  # the recovery's end, for bench/gpt_recovery.py
                print(f"gpt: rank {rank} attempt {attempt} first step {s} done at {time.time():.6f}", file=sys.stderr, flush=True)
                first = False
            if rank == 0 and s % 10 == 0:
                print(f" iteration {s:8d}/{args.steps:8d} | lm loss: {loss.item():.6E} |", flush=True)
            if sup.checkpoint_due(s, args.checkpoint_every) or stop:  # the master's policy, else --checkpoint-every
                sup.checkpoint(s, ckpt.save(s))
                sup.persist_health(ckpt)  # a full disk is said, and training goes on from memory
                saved = s
            if stop:
                sup.stopped(s)
                return 0
        if args.persist_dir and saved is not None and not sup.wait_persisted(ckpt, saved, stop=lambda: bool(stop)):
            sup.stopped(step)  # stopped while the disk was full: the last checkpoint stays in shared memory
            return 0
        sup.done(step)
        ckpt.close()
        if world > 1:
            dist.barrier()
            dist.destroy_process_group()
        return 0

    return sup.restartable(ckpt, train)


if __name__ == "__main__":
    sys.exit(main())

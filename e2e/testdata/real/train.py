"""A training run small enough for a CPU in seconds, real enough to show a gang working.

Data-parallel linear regression with torch.distributed (gloo) under torchrun, or alone
without it: every rank draws its own batch from a seeded generator, gradients are averaged
across the ranks by DistributedDataParallel, and rank 0 prints the loss of every step:

    step 3 loss 1.234567 ranks 4

Rank 0 writes a checkpoint (model, optimizer, step) to --checkpoint-dir after every step,
atomically; a run that finds one resumes after its step ("resumed from step 7"), so a
restarted gang carries on where the last one stopped. SIGUSR1 is caught and said
("got SIGUSR1 at step 5"), as a program that saves before a deadline would.

e2e/tests/65-real-pods.bats runs it on the real node through cadre (e2e/realnode.bash);
the training image has it in /workspace, its working directory.
"""

import argparse
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

FEATURES = 16


def say(line):
    # One write per line: the ranks of a pod share its output, and print() writes the
    # text and its newline apart, so lines of several processes would interleave.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=int(os.environ.get("TRAIN_STEPS", "20")))
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--step-seconds", type=float,
                   default=float(os.environ.get("TRAIN_STEP_SECONDS", "0")),
                   help="sleep this long after each step (a slower run for tests to act on)")
    p.add_argument("--checkpoint-dir",
                   default=os.environ.get("CHECKPOINT_DIR", "/mnt/checkpoints"),
                   help="where rank 0 keeps the checkpoint; '' for none")
    args = p.parse_args()

    # torchrun's RANK, else srun's task rank (a run without torchrun: ranks that do not talk).
    rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    signalled = []
    signal.signal(signal.SIGUSR1, lambda signum, frame: signalled.append(signum))

    torch.manual_seed(0)
    torch.set_num_threads(1)
    if world > 1:
        dist.init_process_group("gloo")
        say(f"rank {rank} of {world} joined the process group on {os.uname().nodename}")
    model = torch.nn.Linear(FEATURES, 1)
    if world > 1:
        model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    # The function to learn: the same on every rank, whatever the seed of its data.
    truth = torch.linspace(-1.0, 1.0, FEATURES).unsqueeze(1)

    ckpt = os.path.join(args.checkpoint_dir, "checkpoint.pt") if args.checkpoint_dir else ""
    start = 0
    if ckpt and os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = state["step"] + 1
        if rank == 0:
            say(f"resumed from step {state['step']} (loss {state['loss']:.6f}) in {ckpt}")

    for step in range(start, args.steps):
        gen = torch.Generator().manual_seed(step * 1000 + rank)
        x = torch.randn(args.batch_size, FEATURES, generator=gen)
        y = x @ truth + 0.01 * torch.randn(args.batch_size, 1, generator=gen)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        value = loss.detach().clone()
        if world > 1:
            dist.all_reduce(value)
            value /= world
        if rank == 0 or world == 1:
            say(f"step {step} loss {value.item():.6f} ranks {world}")
        if rank == 0:
            if ckpt:
                os.makedirs(args.checkpoint_dir, exist_ok=True)
                tmp = f"{ckpt}.tmp"
                torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                            "step": step, "loss": value.item()}, tmp)
                os.replace(tmp, ckpt)
        while signalled:
            signalled.pop()
            say(f"rank {rank}: got SIGUSR1 at step {step}")
        if args.step_seconds:
            time.sleep(args.step_seconds)

    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0 or world == 1:
        say(f"done: {args.steps} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())

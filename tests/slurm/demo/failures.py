"""Small distributed jobs that fail the way real training jobs do, for ``sbatchlint diagnose``.

Run one task per rank (srun-native: RANK and friends come from SLURM_* as in allreduce.py) with
the gloo backend. Every rank logs with a time stamp, like a training loop would::

    python failures.py MODE [--timeout SECONDS]

MODE:
  raise         rank 1 raises a ValueError in its third step; the others are in an all_reduce
  raise-early   rank 1 raises before the process group exists; the others wait for it there
  busy-barrier  rank 0 "saves artifacts" for longer than the process group's timeout before a
                barrier; the others time out in the barrier
  import-rank0  rank 0 fails with an ImportError while loading remote model code; the others wait
                in a barrier
  train         every rank trains (one step every 2 s) until the job's time limit
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from allreduce import fill_from_slurm  # noqa: E402

log = logging.getLogger("train")


def step(dist, torch, rank: int, number: int) -> None:
    value = torch.tensor([rank + number], dtype=torch.int64)
    dist.all_reduce(value)
    log.info("step %d | loss %.4f", number, 1.0 / (number + 1 + int(value.item())))


def save_artifacts(seconds: float) -> None:
    log.info("saving tokenizer and config to the checkpoint directory")
    time.sleep(seconds)


def load_remote_model_code() -> None:
    import modeling_custom_moe  # noqa: F401  (a module the checkpoint's remote code needs)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("raise", "raise-early", "busy-barrier", "import-rank0", "train"))
    parser.add_argument("--timeout", type=float, default=60.0, help="process group timeout in seconds")
    args = parser.parse_args()

    fill_from_slurm()
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"[%(asctime)s] [rank{rank}] %(levelname)s %(message)s")
    host = os.environ.get("SLURMD_NODENAME", "-")
    log.info("starting on %s: rank %d of %d", host, rank, world)

    if args.mode == "raise-early" and rank == 1:
        raise RuntimeError("rank 1: dataset shard 7 is missing")
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    if args.mode == "raise":
        for number in range(100):
            if rank == 1 and number == 3:
                raise ValueError(f"loss is NaN at step {number}")
            step(dist, torch, rank, number)
            time.sleep(0.5)
    elif args.mode == "raise-early":
        dist.barrier()
    elif args.mode == "busy-barrier":
        if rank == 0:
            save_artifacts(args.timeout * 4)
        dist.barrier()
    elif args.mode == "import-rank0":
        if rank == 0:
            load_remote_model_code()
        dist.barrier()
    else:
        number = 0
        while True:
            step(dist, torch, rank, number)
            number += 1
            time.sleep(2)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

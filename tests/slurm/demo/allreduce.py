"""A tiny gloo all_reduce, to prove multi-node launches on the test cluster.

Launch it either way a Megatron-Bridge job is launched:

* under torchrun (``python -m torch.distributed.run ... allreduce.py``):
  RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT come from torchrun;
* srun-native (``srun python allreduce.py``): whichever of them is not set is
  filled the way Bridge does it: RANK from SLURM_PROCID, WORLD_SIZE from
  SLURM_NTASKS, LOCAL_RANK from SLURM_LOCALID, MASTER_ADDR from the first host
  of the job's node list (``scontrol show hostnames``), MASTER_PORT from a
  port derived from SLURM_JOB_ID.

Each rank contributes its rank number; prints two lines and exits 0:

    SOURCE rank=R host=NODE derived=RANK,WORLD_SIZE,...      (or derived=-)
    RESULT rank=R world=W local=L sum=S
"""
from __future__ import annotations

import datetime
import os
import subprocess
import sys

PORT_BASE = 20000
PORT_SPAN = 10000  # ports 20000-29999: below the kernel's ephemeral range


def first_host(nodelist: str) -> str:
    """First host of a Slurm host list such as ``n[1-2]``."""
    out = subprocess.run(
        ["scontrol", "show", "hostnames", nodelist],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    if not out:
        raise RuntimeError(f"scontrol show hostnames {nodelist!r} gave no host")
    return out[0]


def port_for_job(job_id: str) -> int:
    return PORT_BASE + int(job_id) % PORT_SPAN


def fill_from_slurm(env=os.environ) -> list:
    """Set the torch.distributed variables that are missing from SLURM_*.

    Returns the names it set (empty when everything was already there, e.g.
    under torchrun).
    """
    derived = []

    def take(name, value_fn):
        if name in env:
            return
        value = value_fn()
        if value is None:
            return
        env[name] = str(value)
        derived.append(name)

    take("RANK", lambda: env.get("SLURM_PROCID"))
    take("WORLD_SIZE", lambda: env.get("SLURM_NTASKS"))
    take("LOCAL_RANK", lambda: env.get("SLURM_LOCALID"))
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    take("MASTER_ADDR", lambda: first_host(nodelist) if nodelist else None)
    take("MASTER_PORT", lambda: port_for_job(env["SLURM_JOB_ID"]) if "SLURM_JOB_ID" in env else None)
    return derived


def emit(line: str) -> None:
    """Write one whole line with a single write(2).

    Several ranks share one log. print() can issue the text and its newline as
    two writes (torchrun's workers run with unbuffered stdout), and lines of
    different ranks then interleave; one short write to a pipe or file is not
    split.
    """
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (line + "\n").encode())


def main() -> int:
    derived = fill_from_slurm()
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if v not in os.environ]
    if missing:
        print(f"allreduce.py: not under torchrun or srun: missing {','.join(missing)}", file=sys.stderr)
        return 2
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", "0"))
    host = os.environ.get("SLURMD_NODENAME", "-")
    emit(f"SOURCE rank={rank} host={host} derived={','.join(derived) or '-'}")

    import torch
    import torch.distributed as dist

    dist.init_process_group(
        "gloo",
        init_method="env://",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=60),
    )
    try:
        value = torch.tensor([rank], dtype=torch.int64)
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
        emit(f"RESULT rank={rank} world={world} local={local} sum={int(value.item())}")
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

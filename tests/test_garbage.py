"""Linting a file leaves nothing for the cyclic garbage collector: the model is let go when the
file is done, and the collector (held off while the model is built and read) is on again after."""
from __future__ import annotations

import gc

import pytest

from sbatchlint.linter import Options
from sbatchlint.runner import Job, run_job

SCRIPT = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --time=01:00:00
IMAGE=nvcr.io/nvidia/pytorch:24.05-py3
MOUNTS="/data:/data"
for dir in /scratch /models; do
  MOUNTS="$MOUNTS,$dir:$dir"
done
CMD="python train.py --epochs 2"
if [ -n "$DEBUG" ]; then
  CMD="$CMD --debug"
fi
srun --container-image=$IMAGE --container-mounts=$MOUNTS bash -c "cd /data && $CMD --rank \\$SLURM_PROCID"
"""


# The secrets scan's pre-test follows variables through the tree (the file mentions a secret-
# looking word, and commands expand variables it assigns); SBL402 reads expansion sites.
SECRETS_SCRIPT = """#!/bin/bash
#SBATCH --nodes=2
# the token comes from the submission environment
export HF_TOKEN
LOG=/lustre/logs/$SLURM_JOB_ID
mkdir -p "$LOG"
for n in a b; do echo "node $n logs to $LOG/$n"; done
CMD="python fetch.py --token $HF_TOKEN --out $LOG"
srun bash -c "$CMD"
"""


@pytest.mark.parametrize("text", [SCRIPT, SECRETS_SCRIPT], ids=["steps", "secrets"])
def test_a_linted_file_leaves_no_cyclic_garbage(tmp_path, text):
    job = tmp_path / "job.sh"
    job.write_text(text)
    run_job(Job(str(job), str(job), Options()))  # first use: lazily built tables are not garbage
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = run_job(Job(str(job), str(job), Options()))
        left = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    assert result.diagnostics and not result.error  # the model was built and read
    assert left < 50, f"{left} objects left in reference cycles"


def test_the_collector_is_on_again_after_a_file(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text(SCRIPT)
    assert gc.isenabled()
    run_job(Job(str(job), str(job), Options()))
    assert gc.isenabled()
    (tmp_path / "bad.sh").write_bytes(b"\xff\xfe\x00not a script")
    run_job(Job(str(tmp_path / "bad.sh"), "bad.sh", Options()))
    assert gc.isenabled()

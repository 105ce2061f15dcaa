"""SBL101 and the per-task guard: only what decides whether torchrun runs can exempt it."""
from __future__ import annotations

from lintutil import codes

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
LAUNCH = "torchrun --nproc_per_node=8 --nnodes=2 --node_rank=\\$SLURM_NODEID train.py"


def sbl101(body: str):
    return codes(HEADER + body, select=["SBL101"])


def test_a_per_task_argument_in_an_and_list_does_not_exempt_the_launch():
    # the usual TRAIN_CMD shape: `cd … && torchrun … --node_rank=$SLURM_NODEID`
    assert sbl101(f'srun --kill-on-bad-exit=1 bash -c "cd /lustre/repo && {LAUNCH}"\n') == ["SBL101"]


def test_an_if_on_the_local_id_exempts_it():
    body = f'srun --kill-on-bad-exit=1 bash -c "if [ \\$SLURM_LOCALID -eq 0 ]; then {LAUNCH}; fi"\n'
    assert sbl101(body) == []


def test_a_test_before_and_and_exempts_it():
    assert sbl101(f'srun --kill-on-bad-exit=1 bash -c "[ \\$SLURM_LOCALID = 0 ] && {LAUNCH}"\n') == []


def test_a_case_on_the_proc_id_exempts_it():
    body = f'srun --kill-on-bad-exit=1 bash -c "case \\$SLURM_PROCID in 0|8) {LAUNCH} ;; esac"\n'
    assert sbl101(body) == []

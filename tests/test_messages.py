"""How findings read: subject and verb agree whatever the count a message names."""
from __future__ import annotations

from lintutil import lint_text


def messages(text: str, code: str, path: str = "job.sh", settings=None):
    return [d.message for d in lint_text(text, [code], path, settings or {}) if d.code == code]


def test_sbl109_one_step_runs_several_steps_run():
    header = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=12\n#SBATCH --time=01:00:00\n"
    [one] = messages(header + "srun python train.py\n", "SBL109", settings={"slurm_version": "23.02"})
    assert "the step on line 5 runs each task on one CPU" in one
    [two] = messages(header + "srun python prep.py\nsrun python train.py\n", "SBL109", settings={"slurm_version": "23.02"})
    assert "the steps on lines 5, 6 run each task on one CPU" in two


def test_sbl502_every_other_rank_waits_the_other_ranks_wait():
    everyone = (
        "import torch.distributed as dist\n\n"
        "dist.init_process_group(\"nccl\")\n"
        "if dist.get_rank() == 0:\n"
        "    export_checkpoint()\n"
        "dist.barrier()\n"
    )
    [message] = messages(everyone, "SBL502", path="train.py")
    assert "while every other rank waits in `dist.barrier`" in message
    others = (
        "import torch.distributed as dist\n\n"
        "dist.init_process_group(\"nccl\")\n"
        "if dist.get_rank() == 0:\n"
        "    export_checkpoint()\n"
        "else:\n"
        "    dist.barrier()\n"
    )
    found = messages(others, "SBL502", path="train.py")
    assert found and all("while the other ranks wait in `dist.barrier`" in m for m in found), found

"""Fixes that change tasks per node leave the job asking the local Slurm for the same resources
(``sbatchlint/budget.py``; the cluster's nodes have 16 CPUs and 8 GPUs each).

- SBL102's migration of a 1-task × 16-CPU job to one task per GPU: left as it was, the CPUs per
  task give 8 × 16 = 128 CPUs per node and ``sbatch --test-only`` refuses the job; the fix's
  ``--cpus-per-task=2`` is accepted; run for real (with half a node, 1 × 8 → 4 × 2), the job and
  its step hold the CPUs of each node the original held.
- SBL104's fix of 4 tasks × 4 CPUs to 8 tasks: unscaled 32 CPUs per node, refused; fixed accepted.
- SBL101's fix of 4 tasks × 2 CPUs to one torchrun per node: run for real, the job and the step
  hold 8 CPUs per node before and after (without the rescaling: 2).
- SBL104's fix of 4 tasks × `--gpu-bind=per_task:2` to 8 tasks writes `per_task:1`: run for real,
  every node's 8 GPUs are bound one per task (the count alone binds tasks 4-7 to GPU 0).
- SBL101's fix of a step with `--ntasks-per-gpu` writes the binding it implied: srun runs it,
  and refuses the step with `--ntasks-per-gpu` left next to the new `--ntasks-per-node`.

The task commands are swapped for a probe after fixing: what is compared is what the header and
srun ask Slurm for, read back from the job (``SLURM_JOB_CPUS_PER_NODE``) and from ``scontrol show
step`` inside the step.
"""
from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

from slurm_cluster import clean_env, parse_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lintutil import fix_text, lint_text  # noqa: E402

pytestmark = pytest.mark.slurm

PROBE = (
    'echo STEP host=$SLURMD_NODENAME $(scontrol show step $SLURM_JOB_ID.$SLURM_STEP_ID '
    '| grep -o "CPUs=[0-9]*" | tr C c | tr P p | tr U u)'
)
JOB_PROBE = 'echo "JOB cpus=$SLURM_JOB_CPUS_PER_NODE"\n'
MIGRATE = (
    "srun --kill-on-bad-exit=1 bash -c 'uv run python -m torch.distributed.run --nnodes=2 "
    "--node_rank=$SLURM_NODEID --nproc_per_node=8 scripts/training/run_recipe.py'\n"
)


def header(*lines: str) -> str:
    return "#!/bin/bash\n#SBATCH --time=2\n" + "".join(f"#SBATCH {line}\n" for line in lines)


def runnable(text: str) -> str:
    """The same header and srun options, with every task command swapped for the probe."""
    text = text.replace("cd /lustre/proj/Megatron-Bridge\n", "")
    text = re.sub(r"bash -c '[^']*'", f"bash -c '{PROBE}'", text)
    text = re.sub(r"(?m)^srun --nodes=1 --ntasks=1 uv sync\n", "", text)
    text = re.sub(r"(?m)^rm -rf nemo_experiments\n", "", text)
    return text.replace("srun ", JOB_PROBE + "srun ", 1)


def resources(slurm, text: str, name: str):
    info, out = slurm.run(slurm.script(runnable(text), name), env=clean_env(), timeout=400)
    assert info.ok, (info, out)
    (job,) = parse_lines(out, "JOB")
    steps = parse_lines(out, "STEP")
    assert steps, out
    return job["cpus"], {s["cpus"] for s in steps}


def test_migration_keeps_the_nodes_cpus(slurm):
    original = header("--nodes=2", "--ntasks-per-node=1", "--cpus-per-task=16", "--gpus-per-node=8") + (
        "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK\ncd /lustre/proj/Megatron-Bridge\n" + MIGRATE
    )
    assert slurm.test_only(slurm.script(original, "original.sbatch"), env=clean_env()).accepted
    fixed = fix_text(original, ["SBL102"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=2\n" in fixed

    unscaled = fixed.replace("--cpus-per-task=2", "--cpus-per-task=16")  # the count alone, as before
    refused = slurm.test_only(slurm.script(unscaled, "unscaled.sbatch"), env=clean_env())
    assert not refused.accepted, refused.output
    assert "Requested node configuration is not available" in refused.output or "More processors" in refused.output, refused.output
    accepted = slurm.test_only(slurm.script(fixed, "fixed.sbatch"), env=clean_env())
    assert accepted.accepted, accepted.output


def test_migrated_job_holds_the_same_cpus(slurm):
    # half a node (the cluster is shared: a job asking for whole nodes may wait long)
    original = header("--nodes=2", "--ntasks-per-node=1", "--cpus-per-task=8", "--gpus-per-node=4") + (
        "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK\ncd /lustre/proj/Megatron-Bridge\n"
        + MIGRATE.replace("--nproc_per_node=8", "--nproc_per_node=4")
    )
    fixed = fix_text(original, ["SBL102"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=4\n#SBATCH --cpus-per-task=2\n" in fixed
    before = resources(slurm, original, "original-run.sbatch")
    after = resources(slurm, fixed, "fixed-run.sbatch")
    assert before == after == ("8(x2)", {"16"})  # 8 CPUs on each of the 2 nodes, all in the step


def test_sbl104_fix_keeps_the_nodes_cpus(slurm):
    original = header("--nodes=2", "--ntasks-per-node=4", "--cpus-per-task=4", "--gpus-per-node=8") + (
        "srun --kill-on-bad-exit=1 uv run python train.py\n"
    )
    fixed = fix_text(original, ["SBL104"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=2\n" in fixed
    unscaled = fixed.replace("--cpus-per-task=2", "--cpus-per-task=4")
    assert not slurm.test_only(slurm.script(unscaled, "unscaled.sbatch"), env=clean_env()).accepted
    result = slurm.test_only(slurm.script(fixed, "fixed.sbatch"), env=clean_env())
    assert result.accepted, result.output


def test_sbl101_fix_keeps_the_nodes_cpus(slurm):
    original = header("--nodes=2", "--ntasks-per-node=4", "--cpus-per-task=2", "--gpus-per-node=4") + textwrap.dedent(
        """\
        export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK
        srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=4 --master_port=29500 train.py'
        """
    )
    assert lint_text(original, ["SBL101"])
    fixed = fix_text(original, ["SBL101"])
    assert "#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=8\n" in fixed
    before = resources(slurm, original, "original.sbatch")
    after = resources(slurm, fixed, "fixed.sbatch")
    assert before == after == ("8(x2)", {"16"})
    unscaled = resources(slurm, fixed.replace("--cpus-per-task=8", "--cpus-per-task=2"), "unscaled.sbatch")
    assert unscaled == ("2(x2)", {"4"})  # what the count alone left each node


# -- GPU binding (the nodes have 8 GPUs; slurmd binds them through CUDA_VISIBLE_DEVICES) -----------
BIND_PROBE = "bash -c 'echo BIND host=$SLURMD_NODENAME task=$SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES'"


def bound(slurm, text: str, name: str):
    """Each node's tasks and the GPUs each was bound to, from a run with the task swapped for a probe."""
    info, out = slurm.run(slurm.script(text.replace("uv run python train.py", BIND_PROBE), name), env=clean_env(), timeout=400)
    assert info.ok, (info, out)
    found = {}
    for row in parse_lines(out, "BIND"):
        found.setdefault(row["host"], {})[int(row["task"])] = row["gpus"]
    return found


def test_sbl104_fix_keeps_each_task_bound_to_its_own_gpus(slurm):
    original = header("--nodes=2", "--ntasks-per-node=4", "--gpus-per-node=8", "--gpu-bind=per_task:2") + (
        "srun --kill-on-bad-exit=1 uv run python train.py\n"
    )
    fixed = fix_text(original, ["SBL104"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n#SBATCH --gpu-bind=per_task:1\n" in fixed
    assert slurm.test_only(slurm.script(fixed, "fixed.sbatch"), env=clean_env()).accepted
    before = bound(slurm, original, "original-bind.sbatch")
    after = bound(slurm, fixed, "fixed-bind.sbatch")
    # before: 4 tasks × 2 GPUs; after: 8 tasks × 1; every node's 8 GPUs bound, one task each
    assert sorted(before) == sorted(after) == ["n1", "n2"]
    for node in before:
        assert before[node] == {0: "0,1", 1: "2,3", 2: "4,5", 3: "6,7"}
        assert after[node] == {task: str(task) for task in range(8)}
    # the count alone (per_task:2 for 8 tasks) binds the second half of each node's tasks to GPU 0
    unscaled = bound(slurm, fixed.replace("per_task:1", "per_task:2"), "unscaled-bind.sbatch")
    assert all(unscaled[node][7] == "0" for node in unscaled)


def test_sbl101_fix_of_a_step_with_ntasks_per_gpu_runs(slurm):
    # srun refuses --ntasks-per-gpu next to the --ntasks-per-node SBL101 writes: it becomes
    # the binding it implied
    original = header("--nodes=2", "--ntasks-per-node=8", "--gpus-per-node=1") + textwrap.dedent(
        """\
        srun --ntasks-per-gpu=8 --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=1 --master_port=29500 train.py'
        """
    )
    fixed = fix_text(original, ["SBL101"])
    assert "--ntasks-per-gpu" not in fixed and "--gpu-bind=single:1" in fixed
    probe = "bash -c 'echo BIND host=$SLURMD_NODENAME task=$SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES'"
    runnable_fix = re.sub(r"bash -c '[^']*'", probe, fixed)
    info, out = slurm.run(slurm.script(runnable_fix, "fixed-per-gpu.sbatch"), env=clean_env(), timeout=400)
    assert info.ok, (info, out)
    rows = parse_lines(out, "BIND")
    # one task per node, bound to the node's one GPU (its global index: other jobs may hold GPU 0)
    assert sorted((r["host"], r["task"]) for r in rows) == [("n1", "0"), ("n2", "0")]
    assert all(r["gpus"].isdigit() for r in rows), rows
    # the pair the fix would have left: srun refuses it
    kept = runnable_fix.replace("--gpu-bind=single:1", "--ntasks-per-gpu=8")
    info, out = slurm.run(slurm.script(kept, "kept-per-gpu.sbatch"), env=clean_env(), timeout=400)
    assert not info.ok

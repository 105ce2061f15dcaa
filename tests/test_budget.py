"""Fixes that change tasks per node keep each node's CPUs, memory and GPUs (``budget.py``).

SBL101's fix (N tasks → 1 per node), SBL102's migration (1 → one per GPU) and SBL104's fix
rescale ``--cpus-per-task`` (header, step, ``SRUN_CPUS_PER_TASK``), write ``--mem-per-cpu`` as
the ``--mem`` a node had when its CPUs must grow, and turn ``--gpus-per-task`` into the
``--gpus-per-node`` it amounted to; when that cannot be done exactly there is no fix and the
help says why. The fixed job reaches its fixed point in one run.
"""
from __future__ import annotations

import textwrap

import pytest

from lintutil import fix_text, lint_text
from sbatchlint.cluster.profile import from_table

BRIDGE = "cd /lustre/proj/Megatron-Bridge\n"
MIGRATE = (
    "srun --kill-on-bad-exit=1 bash -c 'uv run python -m torch.distributed.run --nnodes=2 "
    "--node_rank=$SLURM_NODEID --nproc_per_node=8 scripts/training/run_recipe.py'\n"
)
TORCHRUN = (
    "srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID "
    "--nproc_per_node=8 --master_port=29500 train.py'\n"
)


def job(header: str, body: str) -> str:
    return "#!/bin/bash\n" + textwrap.dedent(header).strip() + "\n" + body


def profile(cpus: int):
    table = {"partitions": {"gpu": {"default": True, "nodes": 4, "node-cpus": cpus, "node-gpus": 8}}}
    return {"cluster": from_table(table, "test")}


def header_lines(text: str):
    return [line for line in text.splitlines() if line.startswith("#SBATCH")]


def settled(text: str, codes, unsafe: bool = False, settings=None) -> str:
    """Fix once; a second run changes nothing."""
    fixed = fix_text(text, codes, unsafe=unsafe, settings=settings)
    assert fix_text(fixed, codes, unsafe=unsafe, settings=settings) == fixed
    return fixed


# -- SBL101: 8 tasks → 1 per node ------------------------------------------------------------------
def test_sbl101_header_multiplies_cpus_per_task_and_keeps_gpus():
    text = job(
        """
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        #SBATCH --cpus-per-task=12
        #SBATCH --gpus-per-task=1
        #SBATCH --mem-per-cpu=4G
        """,
        TORCHRUN,
    )
    fixed = settled(text, ["SBL101"])
    assert header_lines(fixed) == [
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --cpus-per-task=96",  # 96 CPUs per node before and after
        "#SBATCH --gpus-per-node=8",  # not one GPU per node
        "#SBATCH --mem-per-cpu=4G",  # same CPUs, same memory
    ]


def test_sbl101_without_cpu_count_gives_the_one_task_the_old_tasks_cpus():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8", TORCHRUN)
    fixed = settled(text, ["SBL101"])
    assert "#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=8\n" in fixed


def test_sbl101_exclusive_job_shares_out_the_profiles_node_cpus():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n#SBATCH --exclusive", TORCHRUN)
    fixed = settled(text, ["SBL101"], settings=profile(112))
    assert "#SBATCH --cpus-per-task=112\n" in fixed
    # without a profile the node's CPU count is not known: the old tasks' CPUs are kept
    assert "#SBATCH --cpus-per-task=8\n" in settled(text, ["SBL101"])


def test_sbl101_step_keeps_its_own_cpus_per_node():
    text = job(
        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=2\n#SBATCH --gpus-per-node=8",
        "srun python convert.py\n" + TORCHRUN.replace("srun --kill", "srun -c 2 --kill"),
    )
    fixed = settled(text, ["SBL101"])
    assert "srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 -c 16 --kill-on-bad-exit=1" in fixed
    assert "#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=2\n" in fixed  # the other step's job stays


def test_sbl101_literal_srun_cpus_export_follows_the_header():
    text = job(
        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=4\n#SBATCH --gpus-per-node=8",
        "export SRUN_CPUS_PER_TASK=4\n" + TORCHRUN,
    )
    fixed = settled(text, ["SBL101"])
    assert "#SBATCH --cpus-per-task=32\n" in fixed and "export SRUN_CPUS_PER_TASK=32\n" in fixed
    # one that reads the job's value follows it by itself
    text = text.replace("SRUN_CPUS_PER_TASK=4", "SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK")
    assert "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK\n" in settled(text, ["SBL101"])


# -- GPU binding: kept when it scales to a whole number, else no fix and why ----------------------------
GPUS8 = "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"


def test_sbl101_per_task_binding_keeps_each_node_bound_to_its_gpus():
    text = job(GPUS8 + "#SBATCH --gpu-bind=verbose,per_task:1", TORCHRUN)
    fixed = settled(text, ["SBL101"])
    assert header_lines(fixed)[-2:] == ["#SBATCH --gpus-per-node=8", "#SBATCH --gpu-bind=verbose,per_task:8"]
    (finding,) = lint_text(text, ["SBL101"])
    assert "`--gpu-bind=verbose,per_task:8` keeps each node's GPUs bound to its tasks" in finding.fix.description


def test_sbl101_step_binding_is_rescaled_on_the_step():
    own = job(GPUS8, "srun python convert.py\n" + TORCHRUN.replace("srun --kill", "srun --gpu-bind=per_task:1 --kill"))
    assert "--ntasks-per-node=1 --cpus-per-task=8 --gpu-bind=per_task:8 --kill-on-bad-exit=1 bash" in settled(own, ["SBL101"])
    # a step that changes alone gets the header's binding, rescaled, as its own
    inherited = job(GPUS8 + "#SBATCH --gpu-bind=per_task:1",
                    "srun python convert.py\n" + TORCHRUN.replace("srun --kill", "srun -c 1 --kill"))
    fixed = settled(inherited, ["SBL101"])
    assert "--ntasks-per-node=1 --gpu-bind=per_task:8 -c 8 --kill-on-bad-exit=1 bash" in fixed
    assert "#SBATCH --gpu-bind=per_task:1\n" in fixed  # convert.py keeps its 8 tasks and their binding


def test_sbl101_step_ntasks_per_gpu_becomes_the_binding_it_implied():
    # srun refuses --ntasks-per-gpu next to the --ntasks-per-node the fix writes
    # (8 tasks on a node's one GPU: the one task per node left gets it alone)
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=1\n",
               "srun python convert.py\n" + TORCHRUN.replace("srun --kill", "srun --ntasks-per-gpu=8 --kill"))
    fixed = settled(text, ["SBL101"])
    assert "--ntasks-per-gpu" not in fixed
    assert "srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --cpus-per-task=8 --gpu-bind=single:1 --kill" in fixed
    # next to an explicit binding (which overrides the one it implied) it just goes
    fixed = settled(text.replace("--ntasks-per-gpu=8", "--ntasks-per-gpu=8 --gpu-bind=none"), ["SBL101"])
    assert "--ntasks-per-gpu" not in fixed and "single" not in fixed and "--gpu-bind=none --kill" in fixed


@pytest.mark.parametrize("header,why", [
    ("#SBATCH --gpu-bind=single:1", "`--gpu-bind=single:1` binds 1 task to each GPU; 1 task per node cannot share "
                                    "the GPUs 8 tasks were bound to that way"),
    ("#SBATCH --gpu-bind=closest", "`--gpu-bind=closest` gives each task the GPUs near its CPUs, which move with the task count"),
    ("#SBATCH --gpu-bind=map_gpu:0,1,2,3,4,5,6,7", "lists GPUs task by task for 8 tasks per node"),
    ("#SBATCH --gpu-bind=mask_gpu:0x1,0x2", "lists GPUs task by task for 8 tasks per node"),
    ("#SBATCH --gpu-bind=$BIND", "`--gpu-bind=$BIND` is only known at run time"),
])
def test_sbl101_binding_without_an_exact_equivalent_leaves_the_step_and_says_why(header, why):
    text = job(GPUS8 + header, TORCHRUN)
    (finding,) = lint_text(text, ["SBL101"])
    assert finding.fix is None
    assert "(no automatic fix: " in finding.help and why in finding.help
    assert fix_text(text, ["SBL101"]) == text


def test_sbl101_step_ntasks_per_gpu_that_does_not_scale_leaves_the_step():
    text = job(GPUS8, "srun python convert.py\n" + TORCHRUN.replace("srun --kill", "srun --ntasks-per-gpu=1 --kill"))
    (finding,) = lint_text(text, ["SBL101"])
    assert finding.fix is None and "`--ntasks-per-gpu=1` would have to put 1/8 tasks on each GPU" in finding.help
    # GPUs that follow from the task count alone cannot be kept either
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=16\n",
               "srun python convert.py\n" + TORCHRUN.replace("srun --kill", "srun --ntasks-per-gpu=8 --kill"))
    (finding,) = lint_text(text, ["SBL101"])
    assert finding.fix is None and "the job's GPUs follow from `--ntasks-per-gpu=8`" in finding.help


def test_a_binding_other_steps_inherit_is_not_rescaled_under_them():
    text = job(GPUS8 + "#SBATCH --gpu-bind=per_task:1", "srun --ntasks=16 --ntasks-per-node=8 python eval.py\n" + TORCHRUN)
    for finding in lint_text(text, ["SBL101"]):
        assert finding.fix is None or "per_task:8" not in "".join(e.text for e in finding.fix.edits)


def test_migration_keeps_a_binding_that_binds_nothing_and_rescales_per_task():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n#SBATCH --gpu-bind=none", BRIDGE + MIGRATE)
    fixed = settled(text, ["SBL102"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=8\n" in fixed and "#SBATCH --gpu-bind=none\n" in fixed
    fixed = settled(text.replace("=none", "=per_task:8"), ["SBL102"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=8\n" in fixed and "#SBATCH --gpu-bind=per_task:1\n" in fixed


# -- SBL102: 1 task → one per GPU --------------------------------------------------------------------
def test_migration_divides_the_cpus_among_the_new_tasks():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=64\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE)
    fixed = settled(text, ["SBL102"], unsafe=True)
    assert header_lines(fixed)[1:3] == ["#SBATCH --ntasks-per-node=8", "#SBATCH --cpus-per-task=8"]


def test_migration_refused_when_the_cpus_do_not_divide():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=12\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE)
    (finding,) = lint_text(text, ["SBL102"])
    assert finding.fix is None
    assert "12 CPUs per node (1 task × `--cpus-per-task=12`) do not divide among 8 tasks" in finding.help
    assert fix_text(text, ["SBL102"], unsafe=True) == text


def test_migration_writes_memory_per_cpu_as_the_nodes_memory():
    text = job("#SBATCH --nodes=2\n#SBATCH --mem-per-cpu=16G\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE)
    fixed = settled(text, ["SBL102"], unsafe=True)
    # one CPU per task: 8 CPUs now, so 16G per CPU would ask 128G of each node
    assert "#SBATCH --mem=16G\n" in fixed and "mem-per-cpu" not in fixed
    assert "#SBATCH --ntasks-per-node=8\n" in fixed


def test_migration_exclusive_job_gets_its_share_of_the_node():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --exclusive\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE)
    fixed = settled(text, ["SBL102"], unsafe=True, settings=profile(112))
    assert "#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=14\n" in fixed


def test_migration_refused_when_one_cpu_per_task_exceeds_the_node():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE)
    (finding,) = lint_text(text, ["SBL102"], settings=profile(4))
    assert finding.fix is None and "8 tasks need 8 CPUs per node, more than the nodes' 4" in finding.help


def test_migration_of_a_step_count_in_a_one_cpu_allocation_moves_the_count_to_the_header():
    # `--nodes=2` alone allocates one CPU per node: 8 tasks of the step could not start there
    # ("More processors requested than permitted"), so the job asks for them
    text = job("#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE.replace("srun --kill", "srun --ntasks-per-node=1 --kill"))
    fixed = settled(text, ["SBL102"], unsafe=True)
    assert header_lines(fixed) == ["#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=8", "#SBATCH --gpus-per-node=8"]
    assert "srun --kill-on-bad-exit=1 bash -c 'uv run python scripts/training/run_recipe.py'" in fixed


def test_sbl101_then_migration_in_one_run_leaves_no_cpu_option_behind():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE)
    fixed = settled(text, None, unsafe=True)
    assert "cpus-per-task" not in fixed and "#SBATCH --ntasks-per-node=8\n" in fixed


# -- SBL104: 4 tasks → 8 per node ------------------------------------------------------------------
def test_sbl104_native_fix_keeps_the_cpus():
    text = job(
        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n#SBATCH --cpus-per-task=16\n#SBATCH --gpus-per-node=8",
        "srun --kill-on-bad-exit=1 uv run python train.py\n",
    )
    fixed = settled(text, ["SBL104"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=8\n" in fixed
    text = text.replace("cpus-per-task=16", "cpus-per-task=3")
    (finding,) = lint_text(text, ["SBL104"])
    assert finding.fix is None and "12 CPUs per node (4 tasks × `--cpus-per-task=3`) do not divide among 8 tasks" in finding.help


# -- SBL112: the batch step's launcher becomes one task per node ---------------------------------------
def test_sbl112_step_keeps_the_cpus_the_launcher_had_in_the_batch_step():
    text = job(
        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=12\n#SBATCH --gpus-per-node=8",
        "torchrun --nproc_per_node=8 train.py\n",
    )
    fixed = fix_text(text, ["SBL112"], unsafe=True)
    assert fixed.endswith(
        "srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --cpus-per-task=96 --kill-on-bad-exit=1 torchrun "
        "--nnodes=${SLURM_JOB_NUM_NODES} --rdzv_backend=c10d "
        '--rdzv_endpoint=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29500 '
        "--rdzv_id=$SLURM_JOB_ID --nproc_per_node=8 train.py\n"
    )
    # a job that asks for one CPU per node has nothing to keep
    plain = job("#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8", "torchrun --nproc_per_node=8 train.py\n")
    assert "--cpus-per-task" not in fix_text(plain, ["SBL112"], unsafe=True)


def test_a_short_cpu_option_is_quoted_as_written_in_the_reason():
    text = job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH -c 12\n#SBATCH --gpus-per-node=8", BRIDGE + MIGRATE)
    (finding,) = lint_text(text, ["SBL102"])
    assert finding.fix is None
    assert "(1 task × `-c 12`) do not divide among 8 tasks" in finding.help

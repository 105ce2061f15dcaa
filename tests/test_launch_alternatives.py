"""Launch rules on steps and launches the script writes differently in its branches: every
alternative is checked, and a finding that only one branch triggers names that branch."""
from __future__ import annotations

from lintutil import lint_text

ONE_PER_NODE = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
C10D = "--nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=$(hostname):29500"


def only(code: str, text: str, settings=None) -> list:
    return [d for d in lint_text(text, settings=settings) if d.code == code]


# -- SBL102: a Bridge entry point through torchrun in one branch ----------------------------------------
BRIDGE_CHOICE = ONE_PER_NODE + (
    "cd /lustre/proj/Megatron-Bridge\n"
    'if [ "$LAUNCH" = elastic ]; then\n'
    f'    LAUNCHER="torchrun {C10D}"\n'
    "else\n"
    '    LAUNCHER="python"\n'
    "fi\n"
    "srun --kill-on-bad-exit=1 $LAUNCHER scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config\n"
)


def test_sbl102_names_the_branch_that_launches_bridge_through_torchrun():
    (finding,) = only("SBL102", BRIDGE_CHOICE)
    assert finding.message == "Megatron-Bridge `scripts/training/run_recipe.py` runs under torchrun in one branch"
    assert finding.notes[0] == 'this is the launch as it is written in the `if [ "$LAUNCH" = elastic ]` branch (line 6)'
    assert finding.fix is None  # the launcher is chosen in that branch: no migration of the step
    assert "no automatic migration" in finding.help
    # python in both branches: nothing to say
    assert only("SBL102", BRIDGE_CHOICE.replace(f"torchrun {C10D}", "python -u")) == []


def test_sbl102_names_the_branch_whose_entry_point_is_bridge():
    text = ONE_PER_NODE + (
        'if [ "$STACK" = bridge ]; then\n'
        "    ENTRY=/opt/Megatron-Bridge/scripts/training/run_recipe.py\n"
        "else\n"
        "    ENTRY=/opt/Megatron-LM/pretrain_gpt.py\n"
        "fi\n"
        f"srun --kill-on-bad-exit=1 torchrun {C10D} $ENTRY\n"
    )
    (finding,) = only("SBL102", text)
    assert "`/opt/Megatron-Bridge/scripts/training/run_recipe.py`" in finding.message
    assert finding.notes[0] == 'this is the launch as it is written in the `if [ "$STACK" = bridge ]` branch (line 5)'


# -- SBL104: processes per node set differently in branches ----------------------------------------------
def test_sbl104_names_the_branch_whose_nproc_per_node_leaves_gpus_idle():
    text = ONE_PER_NODE + (
        'if [ "$SMALL" = 1 ]; then\n'
        "    NPROC=4\n"
        "else\n"
        "    NPROC=8\n"
        "fi\n"
        f'srun --kill-on-bad-exit=1 bash -c "torchrun {C10D.replace("--nproc_per_node=8", "--nproc_per_node=$NPROC")} train.py"\n'
    )
    (finding,) = only("SBL104", text)
    assert finding.message == "`--nproc_per_node=4` in one branch but the step has 8 GPUs per node"
    assert finding.notes == ('this is the launch as it is written in the `if [ "$SMALL" = 1 ]` branch (line 5)', "4 GPUs per node stay idle")
    assert finding.fix is None
    # the branch the script runs last is named too
    (last,) = only("SBL104", text.replace("NPROC=4", "NPROC=X").replace("NPROC=8", "NPROC=4").replace("NPROC=X", "NPROC=8"))
    assert last.notes[0] == "this is the launch as it is written in the `else` branch (line 7)"
    assert only("SBL104", text.replace("NPROC=4", "NPROC=8")) == []


def test_sbl104_names_the_branch_whose_srun_runs_too_few_tasks():
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n" + (
        'if [ "$DEBUG" = 1 ]; then\n'
        '    SRUN_CMD="srun --ntasks-per-node=2"\n'
        "else\n"
        '    SRUN_CMD="srun --ntasks-per-node=8"\n'
        "fi\n"
        "$SRUN_CMD --kill-on-bad-exit=1 python train.py\n"
    )
    (finding,) = only("SBL104", text)
    assert finding.message == "2 tasks per node in one branch but 8 GPUs per node"
    assert finding.notes[0] == 'this is the step as it is written in the `if [ "$DEBUG" = 1 ]` branch (line 4)'
    assert "6 GPUs per node stay idle" in finding.notes[1]
    assert finding.fix is None
    assert only("SBL104", text.replace("per-node=2", "per-node=8")) == []


# -- SBL105: a per-task value exported for a launch that is torchrun in one branch only ----------------
def test_sbl105_names_the_branch_whose_launch_reads_an_exported_rank():
    text = ONE_PER_NODE + "export RANK=$SLURM_PROCID\n" + (
        'if [ "$LAUNCH" = elastic ]; then\n'
        f'    LAUNCHER="torchrun {C10D}"\n'
        "else\n"
        '    LAUNCHER="python"\n'
        "fi\n"
        "srun --kill-on-bad-exit=1 $LAUNCHER train.py\n"
    )
    (finding,) = only("SBL105", text)
    assert finding.message == "`RANK` is set from `$SLURM_PROCID` in the batch shell, which runs once, on the first node"
    assert finding.notes[-1] == "torchrun would set it for each worker, but the launch as written in the `else` branch (line 8) is no torchrun"
    # torchrun in both branches: torchrun overwrites RANK for each worker
    both = text.replace('LAUNCHER="python"', f'LAUNCHER="torchrun {C10D} --max_restarts=1"')
    assert only("SBL105", both) == []


def test_sbl105_names_the_branch_whose_step_spans_several_nodes():
    text = "#!/bin/bash\n#SBATCH --gpus-per-node=8\nexport MASTER_ADDR=localhost\n" + (
        'if [ "$MULTI" = 1 ]; then\n'
        '    SRUN_CMD="srun --nodes=2 --ntasks-per-node=8"\n'
        "else\n"
        '    SRUN_CMD="srun --nodes=1 --ntasks-per-node=8"\n'
        "fi\n"
        "$SRUN_CMD --kill-on-bad-exit=1 python train.py\n"
    )
    (finding,) = only("SBL105", text)
    assert finding.message == "`MASTER_ADDR=localhost` in a multi-node job"
    assert finding.notes[-1] == 'the step as written in the `if [ "$MULTI" = 1 ]` branch (line 4) spans several nodes'
    assert only("SBL105", text.replace("--nodes=2", "--nodes=1")) == []


# -- a branch that empties a variable ---------------------------------------------------------------------
EMPTIED = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n" + (
    'if [ "$PER_GPU" = 1 ]; then\n'
    '    STEP_OPTS="--ntasks-per-node=8"\n'
    "else\n"
    '    STEP_OPTS=""\n'
    "fi\n"
    "srun $STEP_OPTS --kill-on-bad-exit=1 torchrun --nnodes=2 --nproc_per_node=8 --master_port=29500 train.py\n"
)


def test_an_emptied_option_string_keeps_its_other_value_as_an_alternative():
    from sbatchlint.model.branches import step_alternatives
    from sbatchlint.model.script import Script
    from sbatchlint.source import Source

    script = Script(Source(EMPTIED.encode(), "job.sh"))
    (step,) = script.steps
    assert [w.text for w in step.command.argv][:2] == ["srun", "--kill-on-bad-exit=1"]  # the else branch, run last
    readings = [(a.branch, a.step.value("ntasks-per-node")) for a in step_alternatives(script, step)]
    assert ('the `if [ "$PER_GPU" = 1 ]` branch (line 4)', "8") in readings
    assert any(per_node is None for _, per_node in readings)  # the emptied value: no option at all


def test_sbl101_sees_the_option_a_later_branch_empties():
    (finding,) = [d for d in lint_text(EMPTIED) if d.code == "SBL101"]
    assert finding.message.startswith("8 tasks")
    assert finding.notes[0] == 'this is the step as it is written in the `if [ "$PER_GPU" = 1 ]` branch (line 4)'
    # the other order: the branch run last sets it, the emptied one is an alternative as before
    swapped = EMPTIED.replace('STEP_OPTS="--ntasks-per-node=8"', "STEP_OPTS=X").replace('STEP_OPTS=""', 'STEP_OPTS="--ntasks-per-node=8"')
    swapped = swapped.replace("STEP_OPTS=X", 'STEP_OPTS=""')
    (other,) = [d for d in lint_text(swapped) if d.code == "SBL101"]
    assert other.notes[0] == "this is the step as it is written in the `else` branch (line 6)"

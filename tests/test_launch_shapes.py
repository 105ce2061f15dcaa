"""Launch rules on the shapes real jobs build their commands in: arrays extended with ``+=``,
defaults of variables Slurm always sets, wrappers in front of the launcher, single-quoted
launcher variables, branches, and node counts decided at submission."""
from __future__ import annotations

from lintutil import codes, lint_text
from sbatchlint.model.script import Script
from sbatchlint.source import Source

ONE_PER_NODE = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
EIGHT_PER_NODE = ONE_PER_NODE.replace("--ntasks-per-node=1", "--ntasks-per-node=8")
HEAD = 'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
C10D = "--nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 --nproc_per_node=8"


def only(code: str, text: str, settings=None) -> list:
    return [d for d in lint_text(text, settings=settings) if d.code == code]


# -- arrays extended with += ---------------------------------------------------------------------
def test_an_array_extended_in_a_branch_keeps_its_first_elements():
    text = ONE_PER_NODE + (
        "STEP_OPTS=(--container-image=registry.example/train:3 --no-container-mount-home)\n"
        'if [[ -n "$EXTRA_MOUNTS" ]]; then\n'
        '    STEP_OPTS+=(--container-mounts="$EXTRA_MOUNTS")\n'
        "fi\n"
        'srun --kill-on-bad-exit=1 "${STEP_OPTS[@]}" python serve.py\n'
    )
    script = Script(Source(text.encode(), "job.sh"))
    argv = [w.text for w in script.steps[0].command.argv]
    assert argv[2:5] == ["--container-image=registry.example/train:3", "--no-container-mount-home", "--container-mounts=${EXTRA_MOUNTS}"]
    assert only("SBL305", text) == []
    # without the image the mounts are ignored: still reported
    assert len(only("SBL305", text.replace("--container-image=registry.example/train:3 ", ""))) == 1


def test_launcher_options_appended_to_an_array_are_all_read():
    text = ONE_PER_NODE + HEAD + (
        "LAUNCH=(--nproc_per_node=8)\n"
        "LAUNCH+=(--nnodes=2 --rdzv_backend=c10d)\n"
        'LAUNCH+=(--rdzv_endpoint="$MASTER_ADDR:29500")\n'
        'srun --kill-on-bad-exit=1 torchrun "${LAUNCH[@]}" train.py\n'
    )
    assert codes(text, ["SBL103", "SBL104"]) == []
    missing_nnodes = text.replace("--nnodes=2 ", "")
    assert codes(missing_nnodes, ["SBL103", "SBL104"]) == ["SBL103"]


def test_an_array_append_joins_the_elements_before_it_in_a_string():
    text = ONE_PER_NODE + HEAD + (
        "LAUNCH=(--nproc_per_node=8 --nnodes=2)\n"
        'LAUNCH+=(--rdzv_backend=c10d --rdzv_endpoint="$MASTER_ADDR:29500")\n'
        'srun --kill-on-bad-exit=1 bash -c "torchrun ${LAUNCH[*]} train.py"\n'
    )
    assert codes(text, ["SBL103", "SBL104"]) == []


# -- defaults of variables Slurm always sets --------------------------------------------------------
def test_a_default_of_a_variable_slurm_always_sets_never_applies():
    text = ONE_PER_NODE + "srun --kill-on-bad-exit=1 torchrun --nnodes=${SLURM_NNODES:-1} --nproc_per_node=8 train.py\n"
    script = Script(Source(text.encode(), "job.sh"))
    nnodes = script.launches[0].option("nnodes")
    assert nnodes is not None and not nnodes.known  # not the literal 1
    found = only("SBL103", text)
    assert len(found) == 1 and "--node_rank" in found[0].message
    # a variable of the script's own keeps its default
    own = ONE_PER_NODE + "srun --kill-on-bad-exit=1 torchrun --nnodes=${NODES:-1} --nproc_per_node=8 train.py\n"
    assert Script(Source(own.encode(), "job.sh")).launches[0].option("nnodes").number == 1

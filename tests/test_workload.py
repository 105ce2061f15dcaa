"""The launch classification every rule, ``convert`` and the migration share (model/workload.py)."""
from __future__ import annotations

from textwrap import dedent

import pytest

from sbatchlint.model.script import Script, analyses
from sbatchlint.model.workload import Workload, classify, training_launch, uses_gpus
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"


def script_of(body: str, settings=None) -> Script:
    return Script(Source((HEADER + dedent(body).lstrip("\n")).encode(), "job.sh"), settings)


@pytest.mark.parametrize(
    "command, expected",
    [
        ("srun uv run python examples/recipes/llama/pretrain_llama3_8b.py", Workload.BRIDGE),
        ("srun python -m megatron.bridge.recipes.run", Workload.BRIDGE),
        ("srun bash -c 'cd /opt/Megatron-LM && torchrun --nproc_per_node=8 pretrain_gpt.py'", Workload.MEGATRON_LM),
        ("srun torchrun --nproc_per_node=8 train.py --lr 1e-4", Workload.PYTORCH),
        ("srun python -m pip install -e .", Workload.CPU_TOOL),
        ("srun python -c 'import torch'", Workload.CPU_TOOL),
    ],
)
def test_each_launch_gets_one_workload(command, expected):
    script = script_of(command + "\n")
    (launch,) = script.launches
    assert classify(launch, script.settings) is expected


def test_site_entry_points_are_bridge_recipes_by_setting():
    body = "srun python tools/site_train.py\n"
    (plain,) = script_of(body).launches
    assert classify(plain) is Workload.PYTORCH
    script = script_of(body, {"bridge_entry_points": ["tools/site_*.py"]})
    assert classify(script.launches[0], script.settings) is Workload.BRIDGE


def test_a_bridge_recipe_on_cpu_keeps_its_workload_but_wants_no_gpu():
    script = script_of("srun python scripts/training/run_recipe.py --cpu\n")
    (launch,) = script.launches
    assert classify(launch) is Workload.BRIDGE
    assert not uses_gpus(launch)
    assert uses_gpus(script_of("srun torchrun --nproc_per_node=8 train.py\n").launches[0])


def test_the_training_launch_of_a_step_skips_tools():
    script = script_of("srun bash -c 'python -m pip install x && python train.py'\n")
    (step,) = script.steps
    assert training_launch(script, step).entry.name == "train.py"


def test_runs_tell_bridge_training_fine_tuning_and_resume():
    script = script_of(
        """
        srun python scripts/training/run_recipe.py --recipe llama3_8b_sft_config --resume
        srun nemo llm finetune --factory llama3_8b
        """
    )
    recipe, nemo = script.runs
    assert recipe.bridge_training and recipe.resumes and recipe.workload is Workload.BRIDGE
    assert recipe.fine_tuning == "the recipe `llama3_8b_sft_config`"
    assert nemo.bridge_training and not nemo.resumes and nemo.fine_tuning == "`nemo llm finetune`"


def test_analyses_are_computed_once_and_released():
    script = script_of("srun torchrun --nproc_per_node=8 train.py\n")
    first = script.launches
    assert script.launches is first
    assert "launches" in analyses(Script) and "containers" in analyses(Script)
    script.release()
    assert "launches" not in vars(script)
    assert first[0].variants == [] and script.steps[0].task_commands[0].step is None

"""SBL105, SBL107–SBL111 on realistic scripts: what fires, what must not, and what the fixes do."""
from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from lintutil import fix_text, lint_text
from sbatchlint.model.script import Script
from sbatchlint.source import Source

FIXTURES = Path(__file__).parent / "fixtures" / "topology"
TOPOLOGY = ["SBL105", "SBL107", "SBL108", "SBL109", "SBL110", "SBL111"]
# The fixtures are jobs for a Slurm 22.05 cluster (the release that stopped passing
# --cpus-per-task on to srun): SBL109 applies there.
SETTINGS = {"slurm_version": "22.05"}

# fixture → the findings of the topology rules, as (code, line)
EXPECTED = {
    "bridge_sft_two_nodes.sbatch": [],
    "cpu_gloo_torchrun.sbatch": [],
    "opaque_srun_args.sbatch": [],
    "megatron_no_gpus.sbatch": [("SBL108", 9)],
    "single_node_debug.sbatch": [("SBL111", 4)],
    "torchrun_train_cmd.sbatch": [("SBL105", 10), ("SBL107", 28)],
    "ntasks_sweep.sbatch": [("SBL107", 15), ("SBL109", 5), ("SBL110", 3)],
}


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def findings(text: str, select=TOPOLOGY):
    script = Script(Source(text.encode(), "job.sh"))
    return sorted(
        (d.code, script.source.line_of(d.span.start)) for d in lint_text(text, select, settings=SETTINGS)
        if d.code in select
    )


def test_every_fixture_is_listed():
    assert sorted(p.name for p in FIXTURES.glob("*.sbatch")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name):
    assert findings(read(name)) == sorted(EXPECTED[name])


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("unsafe", [False, True])
def test_fixture_fixes_converge(name, unsafe):
    text = read(name)
    fixed = fix_text(text, TOPOLOGY, unsafe=unsafe, settings=SETTINGS)
    script = Script(Source(fixed.encode(), "job.sh"))
    assert not script.errors, "the fixed script no longer parses"
    assert fix_text(fixed, TOPOLOGY, unsafe=True if unsafe else False, settings=SETTINGS) == fixed
    remaining = {code for code, _ in findings(fixed)}
    fixable = {"SBL107", "SBL109", "SBL110"} | ({"SBL105", "SBL111"} if unsafe else set())
    assert not (remaining & fixable & {c for c, _ in EXPECTED[name]})


def test_train_cmd_fix_goes_into_the_shared_srun_variable_once():
    fixed = fix_text(read("torchrun_train_cmd.sbatch"), ["SBL107"], settings=SETTINGS)
    assert fixed.count("--kill-on-bad-exit=1") == 1
    assert 'SRUN_CMD="srun --kill-on-bad-exit=1 --container-image=' in fixed


def test_sweep_fixes():
    fixed = fix_text(read("ntasks_sweep.sbatch"), TOPOLOGY, settings=SETTINGS)
    assert "#SBATCH --ntasks-per-node=8\n" in fixed and "--ntasks=16" not in fixed
    assert fixed.count("export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK\n") == 1
    assert "    srun --kill-on-bad-exit=1 --container-image=" in fixed
    # the one-task warm-up step is left as it is
    assert "srun --nodes=1 --ntasks=1 --container-image" in fixed


def job(body: str) -> str:
    return dedent(body).lstrip("\n")


# -- SBL105 ---------------------------------------------------------------------------------------
def test_rank_from_literal_or_task_string_is_not_reported():
    text = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --gpus-per-node=8
        export WORLD_SIZE=$SLURM_NTASKS
        RANK=$SLURM_PROCID
        echo "launching"
        srun -K bash -c 'export RANK=$SLURM_PROCID; python train.py'
        """
    )
    assert findings(text, ["SBL105"]) == []  # not exported: SBL201's business when expanded early


def test_rank_removal_keeps_other_assignments_on_the_line():
    text = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --gpus-per-node=8
        export OMP_NUM_THREADS=8 LOCAL_RANK=$SLURM_LOCALID
        srun -K python train.py
        """
    )
    fixed = fix_text(text, ["SBL105"], unsafe=True, settings=SETTINGS)
    assert "export OMP_NUM_THREADS=8\n" in fixed
    assert findings(fixed, ["SBL105"]) == []


def test_rank_in_if_block_is_reported_without_breaking_the_block():
    text = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --gpus-per-node=8
        if [ -n "$SLURM_JOB_ID" ]; then
            export NODE_RANK=$SLURM_NODEID
        fi
        srun -K python train.py
        """
    )
    assert findings(text, ["SBL105"]) == [("SBL105", 5)]
    assert fix_text(text, ["SBL105"], unsafe=True, settings=SETTINGS) == text  # no fix that would empty the block


def test_loopback_master_addr_only_on_several_nodes():
    multi = job(
        """
        #!/bin/bash
        #SBATCH --nodes=1-4
        #SBATCH --gpus-per-node=8
        MASTER_ADDR=127.0.0.1
        srun -K bash -c "torchrun --master_addr=$MASTER_ADDR train.py"
        """
    )
    assert findings(multi, ["SBL105"]) == [("SBL105", 4)]
    conditional = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        if [ "$SLURM_NNODES" -eq 1 ]; then
            export MASTER_ADDR=localhost
        else
            export MASTER_ADDR=$(hostname)
        fi
        srun -K python train.py
        """
    )
    assert findings(conditional, ["SBL105"]) == []


# -- SBL107 ---------------------------------------------------------------------------------------
def test_kill_on_bad_exit_forms():
    base = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
    for flag in ("-K", "-K1", "--kill-on-bad-exit", "--kill-on-bad-exit=1", "--kill-on-bad-exit=0"):
        assert findings(base + f"srun {flag} python train.py\n", ["SBL107"]) == [], flag
    assert findings(base + "export SLURM_KILL_BAD_EXIT=1\nsrun python train.py\n", ["SBL107"]) == []
    assert findings(base + "srun python train.py\n", ["SBL107"]) == [("SBL107", 5)]


def test_kill_on_bad_exit_not_for_tools_or_one_task():
    text = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        #SBATCH --gpus-per-node=8
        srun nvidia-smi
        srun --nodes=1 --ntasks=1 uv sync
        srun uv sync
        srun python -c "import torch; print(torch.cuda.device_count())"
        srun -n 1 python merge_shards.py
        """
    )
    assert findings(text, ["SBL107"]) == []


def test_kill_on_bad_exit_in_loop_function_and_through_plain_variable():
    text = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        #SBATCH --gpus-per-node=8
        SRUN=srun
        train() {
            $SRUN python train.py --seed "$1"
        }
        for seed in 1 2 3; do
            train "$seed"
        done
        """
    )
    assert findings(text, ["SBL107"]) == [("SBL107", 7)]
    fixed = fix_text(text, ["SBL107"], settings=SETTINGS)
    assert "$SRUN --kill-on-bad-exit=1 python train.py" in fixed and "SRUN=srun\n" in fixed


def test_several_steps_sharing_srun_cmd_get_one_insertion():
    text = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        #SBATCH --gpus-per-node=8
        SRUN_CMD="srun --container-image=nvcr.io/nvidia/nemo:25.09"
        $SRUN_CMD python pretrain.py
        $SRUN_CMD python evaluate.py
        """
    )
    assert findings(text, ["SBL107"]) == [("SBL107", 6), ("SBL107", 7)]
    fixed = fix_text(text, ["SBL107"], settings=SETTINGS)
    assert fixed.count("--kill-on-bad-exit=1") == 1


# -- SBL108 ---------------------------------------------------------------------------------------
def test_gpu_request_on_step_or_unknown_is_enough():
    base = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
    launch = 'bash -c "torchrun --nnodes=2 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 train.py"'
    assert findings(base + f"srun -K {launch}\n", ["SBL108"]) == [("SBL108", 4)]
    assert findings(base + f"srun -K --gpus-per-node=8 {launch}\n", ["SBL108"]) == []
    assert findings(base + f"srun -K --gres=$GRES {launch}\n", ["SBL108"]) == []
    assert findings(base + f"srun -K $EXTRA {launch}\n", ["SBL108"]) == []


def test_plain_python_is_not_assumed_to_need_gpus():
    text = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=4\nsrun -K python preprocess.py --workers 8\n"
    assert findings(text, ["SBL108"]) == []


# -- SBL109 ---------------------------------------------------------------------------------------
def test_cpus_per_task_export_or_step_flag():
    base = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=8\n"
    assert findings(base + "srun python a.py\n", ["SBL109"]) == [("SBL109", 3)]
    assert findings(base + "srun -c 8 python a.py\n", ["SBL109"]) == []
    assert findings(base + "srun --cpus-per-task=$SLURM_CPUS_PER_TASK python a.py\n", ["SBL109"]) == []
    assert findings(base + "export SRUN_CPUS_PER_TASK=8\nsrun python a.py\n", ["SBL109"]) == []
    assert findings("#!/bin/bash\n#SBATCH --cpus-per-task=1\nsrun python a.py\n", ["SBL109"]) == []
    # exported only after the step: the step still gets one CPU
    late = base + "srun python a.py\nexport SRUN_CPUS_PER_TASK=8\n"
    assert findings(late, ["SBL109"]) == [("SBL109", 3)]


def test_cpus_per_task_fix_keeps_crlf():
    text = "#!/bin/bash\r\n#SBATCH --cpus-per-task=8\r\nset -e\r\nsrun python a.py\r\n"
    fixed = fix_text(text, ["SBL109"], settings=SETTINGS)
    assert fixed == (
        "#!/bin/bash\r\n#SBATCH --cpus-per-task=8\r\nexport SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK\r\n"
        "set -e\r\nsrun python a.py\r\n"
    )


# -- SBL110 ---------------------------------------------------------------------------------------
def test_uneven_distribution_cases():
    base = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"
    assert findings(base + "#SBATCH --ntasks=16\nsrun -K python a.py\n", ["SBL110"]) == [("SBL110", 4)]
    # not GPU, not multi-node, pinned, or not more tasks than nodes
    assert findings("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=16\nsrun -K python a.py\n", ["SBL110"]) == []
    assert findings("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=8\n#SBATCH --ntasks=8\nsrun -K python a.py\n", ["SBL110"]) == []
    assert findings(base + "#SBATCH --ntasks=16\n#SBATCH --distribution=cyclic\nsrun -K python a.py\n", ["SBL110"]) == []
    assert findings(base + "#SBATCH --ntasks=2\nsrun -K python a.py\n", ["SBL110"]) == []
    assert findings(base + "srun -K --ntasks=16 --ntasks-per-node=8 python a.py\n", ["SBL110"]) == []
    assert findings(base + "srun --nodes=1 --ntasks=1 uv sync\n", ["SBL110"]) == []


def test_uneven_distribution_fix_inside_srun_cmd_and_no_fix_when_uneven():
    text = job(
        """
        #!/bin/bash
        #SBATCH --nodes=4
        #SBATCH --gpus-per-node=8
        SRUN_CMD="srun -K --ntasks=32"
        $SRUN_CMD python train.py
        """
    )
    fixed = fix_text(text, ["SBL110"], settings=SETTINGS)
    assert 'SRUN_CMD="srun -K --ntasks-per-node=8"' in fixed
    uneven = text.replace("--ntasks=32", "--ntasks=30")
    assert findings(uneven, ["SBL110"]) == [("SBL110", 4)]
    assert fix_text(uneven, ["SBL110"], settings=SETTINGS) == uneven


# -- SBL111 ---------------------------------------------------------------------------------------
def test_gpu_binding_cases():
    base = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
    assert findings(base + "srun -K --gpus-per-task=1 python train.py\n", ["SBL111"]) == [("SBL111", 4)]
    assert findings(base + "#SBATCH --gpus-per-node=8\nsrun -K --gpu-bind=map_gpu:0,1,2,3,4,5,6,7 python train.py\n", ["SBL111"]) == [("SBL111", 5)]
    # binding turned off, a tool, or one task per node
    assert findings(base + "srun -K --gpus-per-task=1 --gpu-bind=none python train.py\n", ["SBL111"]) == []
    assert findings(base + "srun --gpus-per-task=1 nvidia-smi\n", ["SBL111"]) == []
    assert findings("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-task=8\nsrun -K torchrun train.py\n", ["SBL111"]) == []


def test_gpu_binding_fix_on_the_step():
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\nsrun -K --gpus-per-task=1 python train.py\n"
    fixed = fix_text(text, ["SBL111"], unsafe=True, settings=SETTINGS)
    assert fixed.endswith("srun -K --gpus-per-node=8 python train.py\n")
    assert fix_text(text, ["SBL111"], settings=SETTINGS) == text  # unsafe only
    split = job(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        #SBATCH --gpus-per-node=8
        srun -K \\
            --gpu-bind=single:1 \\
            python train.py
        """
    )
    fixed = fix_text(split, ["SBL111"], unsafe=True, settings=SETTINGS)
    assert fixed.endswith("srun -K \\\n    python train.py\n")
    assert findings(fixed, ["SBL111"]) == []


def test_cpus_per_task_depends_on_the_target_release():
    text = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=8\nsrun python a.py\n"
    for version, expected in (("22.05", 1), ("23.02", 1), ("23.11", 0), ("24.05", 0)):
        found = [d for d in lint_text(text, ["SBL109"], settings={"slurm_version": version})]
        assert len(found) == expected, version
    assert lint_text(text, ["SBL109"]) == []  # the default target is 24.05
    (finding,) = lint_text(text, ["SBL109"], settings={"slurm_version": "23.02.7"})
    assert "by Slurm 23.02" in finding.message


def test_slurm_version_auto_without_sbatch_uses_the_default(monkeypatch):
    import shutil

    from sbatchlint.model import slurm

    monkeypatch.setattr(slurm, "_DETECTED", {})
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert slurm.target_version({"slurm_version": "auto"}) == (24, 5)

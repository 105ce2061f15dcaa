"""Launchers behind profilers and checkers (ncu, perf, valgrind), each read with its own option
grammar, and MPI's own launcher inside a step, which starts its processes itself."""
from __future__ import annotations

import pytest

from lintutil import codes, fix_text, lint_text
from sbatchlint.model.script import Script
from sbatchlint.source import Source

EIGHT_PER_NODE = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
TORCHRUN = "torchrun --nproc_per_node=8 --master_port=29500 train.py"


def launch_kinds(text: str) -> list:
    script = Script(Source(text.encode(), "job.sh"))
    return [(launch.kind, launch.entry.name if launch.entry else None) for launch in script.launches]


@pytest.mark.parametrize(
    "wrapper",
    [
        "ncu -o prof_%p --set full -k regex:gemm -c 5",
        "ncu --nvtx --nvtx-include train/ -f --target-processes all",
        "perf record -g -F 99 -o perf.%p.data --call-graph dwarf",
        "perf stat -e cycles,instructions -x , -r 3",
        "valgrind --tool=memcheck --log-file=vg.%p -q",
    ],
)
def test_profilers_in_front_of_the_launcher_are_read_through(wrapper):
    text = EIGHT_PER_NODE + f"srun --kill-on-bad-exit=1 {wrapper} {TORCHRUN}\n"
    assert launch_kinds(text) == [("torchrun", "train.py")]
    assert codes(text, ["SBL101"]) == ["SBL101"]  # 8 torchruns per node behind the profiler too


def test_a_profiler_option_value_is_not_the_program():
    # -o takes "torchrun_prof", -e takes "cycles": the program is python in both
    for wrapper in ("ncu -o torchrun_prof --set full", "perf stat -e torchrun -o torchrun.txt"):
        text = EIGHT_PER_NODE + f"srun --kill-on-bad-exit=1 {wrapper} python train.py\n"
        assert launch_kinds(text) == [("srun-native", "train.py")], wrapper
    # ncu's flags take no value: the next word is the program
    text = EIGHT_PER_NODE + "srun --kill-on-bad-exit=1 ncu --nvtx -f torchrun --nproc_per_node=8 train.py\n"
    assert launch_kinds(text) == [("torchrun", "train.py")]


def test_a_perf_subcommand_that_reads_a_report_runs_nothing():
    assert launch_kinds(EIGHT_PER_NODE + "srun perf report -i torchrun.data\n") == []
    assert launch_kinds(EIGHT_PER_NODE + "srun perf script -i python.data\n") == []


def test_a_profiler_is_put_behind_srun_by_the_batch_shell_fix():
    # SBL112 moves the launcher onto srun; a per-process wrapper stays with each task
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n" + (
        "valgrind --tool=memcheck torchrun --nnodes=2 --nproc_per_node=8 train.py\n"
    )
    assert codes(text, ["SBL112"]) == ["SBL112"]
    fixed = fix_text(text, ["SBL112"], unsafe=True)
    assert "--kill-on-bad-exit=1 valgrind --tool=memcheck torchrun --rdzv_backend=c10d" in fixed


# -- MPI's launcher inside a step -----------------------------------------------------------------------------
@pytest.mark.parametrize("mpi", ["mpirun -np 16", "mpiexec -n 16 --bind-to core", "mpirun --map-by ppr:8:node"])
def test_mpirun_in_a_step_starts_its_own_processes_and_gets_no_launch_finding(mpi):
    # the processes are mpirun's, not the step's tasks: no srun-native reading of what it runs
    for program in ("python train.py", TORCHRUN):
        text = EIGHT_PER_NODE + f"srun {mpi} {program}\n"
        assert launch_kinds(text) == []
        assert codes(text, ["SBL101", "SBL102", "SBL103", "SBL104", "SBL107", "SBL112", "SBL113", "SBL201"]) == []
        quoted = EIGHT_PER_NODE + f"srun bash -c '{mpi} {program}'\n"
        assert launch_kinds(quoted) == []


# -- SBL112's hand-over of a Bridge entry point to SBL102's migration ---------------------------------------
BRIDGE_IN_BATCH = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=2\n#SBATCH --gpus-per-node=8\n" + (
    "cd /lustre/proj/Megatron-Bridge\n"
    "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b\n"
)


def test_a_header_ntasks_of_one_per_node_is_handed_to_the_migration():
    (finding,) = [d for d in lint_text(BRIDGE_IN_BATCH) if d.code == "SBL112"]
    assert finding.fix is not None and "SBL102 then migrates it" in finding.fix.description
    fixed = fix_text(BRIDGE_IN_BATCH, ["SBL112", "SBL102"], unsafe=True)
    # the promise kept: the step is srun-native, one task per GPU, no torchrun left
    assert "#SBATCH --ntasks-per-node=8\n" in fixed and "--ntasks=2" not in fixed
    assert fixed.endswith("srun --kill-on-bad-exit=1 uv run python scripts/training/run_recipe.py --recipe llama3_8b\n")


def test_another_header_ntasks_gets_no_hand_over_and_says_why():
    text = BRIDGE_IN_BATCH.replace("--ntasks=2", "--ntasks=16")
    (finding,) = [d for d in lint_text(text) if d.code == "SBL112"]
    assert finding.fix is None
    assert finding.help.startswith("no automatic fix: `#SBATCH --ntasks=16` is not one task per node")
    assert fix_text(text, ["SBL112", "SBL102"], unsafe=True) == text


# -- a launcher only the submission environment names --------------------------------------------------------
SUBMITTED = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\nexport RANK=$SLURM_PROCID\n"


@pytest.mark.parametrize(
    "step",
    [
        "srun $LAUNCHER --nproc_per_node=4 train.py",
        "srun \"${LAUNCH_CMD[@]}\" train.py",
        "srun bash -c '$LAUNCHER --nproc_per_node=4 train.py'",
        "export LAUNCHER\nsrun bash -c '$LAUNCHER --nproc_per_node=4 train.py'",
        "srun bash -c \"$LAUNCHER --nproc_per_node=4 train.py\"",
        "srun uv run $PY -m torch.distributed.run --nproc_per_node=4 train.py",
        "$LAUNCHER --nproc_per_node=4 train.py",
    ],
)
def test_a_launcher_from_the_submission_environment_stays_unknown(step):
    # it may be torchrun or python: neither is assumed, and nothing is read as missing
    text = SUBMITTED + step + "\n"
    assert launch_kinds(text) == []
    assert codes(text, ["SBL101", "SBL103", "SBL104", "SBL105", "SBL107", "SBL112", "SBL113"]) == []


def test_an_unknown_launcher_beside_a_known_one_keeps_that_ones_findings():
    # python reads the exported RANK: reported; a NODE_RANK no launcher sets: reported
    text = SUBMITTED + "srun $LAUNCHER train.py\nsrun python eval.py\n"
    assert codes(text, ["SBL105"]) == ["SBL105"]
    text = SUBMITTED.replace("RANK=$SLURM_PROCID", "NODE_RANK=$SLURM_NODEID") + "srun $LAUNCHER train.py\n"
    assert codes(text, ["SBL105"]) == ["SBL105"]
    # torchrun's own options from the submission environment: read as unknown, not as absent
    text = SUBMITTED.replace("--ntasks-per-node=8", "--ntasks-per-node=1") + "srun --kill-on-bad-exit=1 torchrun $DIST_ARGS --nproc_per_node=8 train.py\n"
    (launch,) = Script(Source(text.encode(), "job.sh")).launches
    assert launch.options_incomplete and launch.option("nnodes") is None
    assert codes(text, ["SBL103", "SBL104", "SBL113"]) == []

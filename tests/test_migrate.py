"""SBL102's migration (torchrun → srun-native) on scripts in the shapes Bridge jobs are written in.

Each ``tests/fixtures/migrate/NAME.sbatch`` has its full expected text after ``--unsafe-fixes`` in
``NAME.fixed.sbatch``; the scripts under ``refused/`` must be reported with the reason and left
byte for byte as they are.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from lintutil import fix_text, lint_text
from sbatchlint.diagnostics import Applicability
from sbatchlint.model.launch import launches
from sbatchlint.model.script import Script
from sbatchlint.source import Source

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "migrate"
MIGRATED = sorted(p for p in FIXTURES.glob("*.sbatch") if not p.name.endswith(".fixed.sbatch"))
TOPOLOGY_AND_EXPANSION = ("SBL101", "SBL102", "SBL103", "SBL104", "SBL105", "SBL106", "SBL107", "SBL108",
                          "SBL109", "SBL110", "SBL111", "SBL2")

REFUSED = {
    "max_restarts.sbatch": "torchrun's `--max_restarts=3` has no srun-native equivalent",
    "elastic_nodes.sbatch": "`--nnodes=2:4` asks for an elastic node range",
    "nproc_mismatch.sbatch": "torchrun starts 4 processes per node for 8 GPUs per node",
    "opaque_launcher_args.sbatch": "some of torchrun's options come from a value only known at run time",
    "other_step_inherits.sbatch": "the step on line 10 also takes its task count from the header",
    "rank_zero_guard.sbatch": "the launch runs only in some tasks",
    "shared_launcher.sbatch": "another step would change too",
}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _expected(path: Path) -> str:
    return _text(path.with_name(path.stem + ".fixed.sbatch"))


def _findings(text: str, prefixes=TOPOLOGY_AND_EXPANSION):
    """Findings of every rule (all enabled, so cross-rule effects count), filtered by code prefix."""
    return [d for d in lint_text(text) if d.code.startswith(tuple(prefixes))]


def test_fixtures_exist():
    assert len(MIGRATED) >= 5
    assert sorted(p.name for p in (FIXTURES / "refused").glob("*.sbatch")) == sorted(REFUSED)


@pytest.mark.parametrize("path", MIGRATED, ids=lambda p: p.stem)
def test_migration_full_text(path):
    original = _text(path)
    (finding,) = [d for d in lint_text(original, ["SBL102"])]
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert fix_text(original, ["SBL102"]) == original, "the migration is unsafe: --fix alone must not apply it"
    assert fix_text(original, ["SBL102"], unsafe=True) == _expected(path)


@pytest.mark.parametrize("path", MIGRATED, ids=lambda p: p.stem)
def test_migrated_script_lints_clean_and_is_stable(path):
    migrated = _expected(path)
    assert not _findings(migrated), [f"{d.code} {d.message}" for d in _findings(migrated)]
    assert not [d for d in lint_text(migrated) if d.code == "SBL001"]
    script = Script(Source(migrated.encode("utf-8"), "job.sh"))
    assert launches(script) and not any(launch.elastic for launch in launches(script))
    # idempotent, alone and with every rule
    assert fix_text(migrated, ["SBL102"], unsafe=True) == migrated
    assert fix_text(migrated, None, unsafe=True) == migrated


@pytest.mark.parametrize("path", MIGRATED, ids=lambda p: p.stem)
def test_every_rule_together_reaches_the_same_migration(path):
    """With every rule's fixes applied at once, the result is the migration (nothing else needed)."""
    assert fix_text(_text(path), None, unsafe=True) == _expected(path)


@pytest.mark.parametrize("path", MIGRATED, ids=lambda p: p.stem)
def test_untouched_lines_are_kept_byte_for_byte(path):
    original, migrated = _text(path), _expected(path)
    kept = [line for line in original.splitlines(True) if line.strip() and not any(
        token in line for token in ("torch", "--nproc", "--nnodes", "--node_rank", "--node-rank", "--master_", "--rdzv",
                                    "MASTER_", "RANK=", "WORLD_SIZE=", "--ntasks", "--standalone", "CMD=\"$CMD --nnodes"))]
    remaining = migrated.splitlines(True)
    position = 0
    for line in kept:
        position = remaining.index(line, position) + 1  # in order, unchanged


@pytest.mark.parametrize("name,reason", sorted(REFUSED.items()))
def test_refused_migration_says_why(name, reason):
    original = _text(FIXTURES / "refused" / name)
    (finding,) = [d for d in lint_text(original, ["SBL102"])]
    assert finding.fix is None
    assert finding.help.startswith("no automatic migration: ") and reason in finding.help, finding.help
    assert fix_text(original, ["SBL102"], unsafe=True) == original


def test_process_count_fixed_first_then_migrated():
    """SBL104 sets --nproc_per_node to the GPUs; the next pass migrates."""
    migrated = fix_text(_text(FIXTURES / "refused" / "nproc_mismatch.sbatch"), None, unsafe=True)
    assert "#SBATCH --ntasks-per-node=8" in migrated
    assert "bash -c 'uv run python \\\n    examples/conversion/hf_megatron_roundtrip_multi_gpu.py" in migrated
    assert not _findings(migrated)


def test_sbl101_and_migration_in_one_run_keep_one_task_per_gpu():
    """SBL101 wants one task per node for torchrun, the migration wants one per GPU: the migration
    holds on to the header's count, so the two never land together."""
    original = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
        "cd /lustre/proj/Megatron-Bridge\nrm -rf nemo_experiments\n"
        "srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 "
        "--master_port=29500 scripts/training/run_recipe.py'\n"
    )
    assert {d.code for d in lint_text(original)} >= {"SBL101", "SBL102"}
    expected = original.replace(
        "torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 --master_port=29500 ", "python "
    )
    assert fix_text(original, None, unsafe=True) == expected
    assert fix_text(original, ["SBL102"], unsafe=True) == expected


def test_direct_launch_through_srun_cmd_variable():
    original = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
        'SRUN_CMD="srun --kill-on-bad-exit=1 --chdir=/lustre/proj/Megatron-Bridge"\n'
        "$SRUN_CMD torchrun --nproc_per_node=8 --nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=$(hostname):29500 "
        "scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config checkpoint.load=/lustre/ckpt\n"
    )
    expected = original.replace("--ntasks-per-node=1", "--ntasks-per-node=8").replace(
        "torchrun --nproc_per_node=8 --nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=$(hostname):29500 ", "python "
    )
    assert fix_text(original, ["SBL102"], unsafe=True) == expected


def test_here_document_fed_to_the_task_shell():
    original = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
        "cd /lustre/proj/Megatron-Bridge\nrm -rf nemo_experiments\n"
        "srun --kill-on-bad-exit=1 bash <<EOF\n"
        "uv run python -m torch.distributed.run --nproc_per_node=8 --nnodes=2 --node_rank=\\$SLURM_NODEID \\\\\n"
        "  scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config\n"
        "EOF\n"
    )
    expected = original.replace("--ntasks-per-node=1", "--ntasks-per-node=8").replace(
        " -m torch.distributed.run --nproc_per_node=8 --nnodes=2 --node_rank=\\$SLURM_NODEID", ""
    )
    assert fix_text(original, ["SBL102"], unsafe=True) == expected


def test_header_without_task_count_gets_one_after_nodes():
    original = (
        "#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\n"
        "cd /lustre/proj/Megatron-Bridge\nrm -rf nemo_experiments\n"
        "srun --kill-on-bad-exit=1 bash -c 'uv run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=$SLURM_NODEID "
        "scripts/training/run_recipe.py'\n"
    )
    fixed = fix_text(original, ["SBL102"], unsafe=True)
    assert fixed.startswith("#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n")
    assert "bash -c 'uv run python scripts/training/run_recipe.py'" in fixed


def test_crlf_script_keeps_its_line_endings():
    path = FIXTURES / "bridge_train_cmd.sbatch"
    original = _text(path).replace("\n", "\r\n")
    assert fix_text(original, ["SBL102"], unsafe=True) == _expected(path).replace("\n", "\r\n")


def test_exports_read_elsewhere_stay():
    original = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
        "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
        "echo \"rendezvous on $MASTER_ADDR\"\n"
        "cd /lustre/proj/Megatron-Bridge\nrm -rf nemo_experiments\n"
        "srun --kill-on-bad-exit=1 bash -c \"uv run python -m torch.distributed.run --nproc_per_node=8 "
        "--nnodes=2 --node_rank=\\$SLURM_NODEID --master_addr=$MASTER_ADDR scripts/training/run_recipe.py\"\n"
    )
    fixed = fix_text(original, ["SBL102"], unsafe=True)
    assert "export MASTER_ADDR=" in fixed  # the echo reads it
    assert "bash -c \"uv run python scripts/training/run_recipe.py\"" in fixed


def test_megatron_lm_is_never_migrated():
    for path in (ROOT / "examples").glob("*.sbatch"):
        text = _text(path)
        assert not lint_text(text), path
        assert fix_text(text, None, unsafe=True) == text, path
    mlm = _text(ROOT / "examples" / "mlm-pretrain-torchrun.sbatch")
    assert "torch.distributed.run" in mlm and not lint_text(mlm, ["SBL102"])


HEAD = (
    "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
    "cd /lustre/proj/Megatron-Bridge\nrm -rf nemo_experiments\n"
)
SHAPES = {
    "escaped quotes in a string": (
        'HOST=$(hostname)\nTRAIN_CMD="torchrun --nproc_per_node=8 --rdzv_endpoint=\\"$HOST:29500\\" --rdzv_backend=c10d '
        '--nnodes=2 scripts/training/run_recipe.py"\nsrun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"\n',
        'HOST=$(hostname)\nTRAIN_CMD="python scripts/training/run_recipe.py"\nsrun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"\n',
    ),
    "option values as separate words": (
        'MASTER_ADDR=$(hostname)\nsrun --kill-on-bad-exit=1 bash -c "torchrun --nproc_per_node 8 --nnodes 2 '
        '--node_rank \\$SLURM_NODEID --master_addr $MASTER_ADDR --master_port 29500 scripts/training/run_recipe.py --recipe x"\n',
        'srun --kill-on-bad-exit=1 bash -c "python scripts/training/run_recipe.py --recipe x"\n',
    ),
    "a step in a function": (
        'launch() {\n  srun --kill-on-bad-exit=1 bash -c "torchrun --nproc_per_node=8 --nnodes=2 --node_rank=\\$SLURM_NODEID '
        'scripts/training/run_recipe.py --recipe $1"\n}\nlaunch a\nlaunch b\n',
        'launch() {\n  srun --kill-on-bad-exit=1 bash -c "python scripts/training/run_recipe.py --recipe $1"\n}\nlaunch a\nlaunch b\n',
    ),
    "after other commands of the task, into a pipe": (
        "srun --kill-on-bad-exit=1 bash -lc 'source env.sh && torchrun --nproc_per_node=8 --nnodes=2 "
        "--node_rank=$SLURM_NODEID scripts/training/run_recipe.py 2>&1 | tee log.txt'\n",
        "srun --kill-on-bad-exit=1 bash -lc 'source env.sh && python scripts/training/run_recipe.py 2>&1 | tee log.txt'\n",
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_more_shapes(shape):
    before, after = SHAPES[shape]
    fixed = fix_text(HEAD + before, ["SBL102"], unsafe=True)
    assert fixed == HEAD.replace("--ntasks-per-node=1", "--ntasks-per-node=8") + after
    assert not _findings(fixed)


def test_launcher_that_differs_between_branches_is_refused():
    """Editing one branch would leave the other running torchrun with one task per GPU."""
    original = HEAD + (
        'if [ -n "$FAST" ]; then\n  CMD="torchrun --nproc_per_node=8 --nnodes=2 --node_rank=\\$SLURM_NODEID"\nelse\n'
        '  CMD="torchrun --nproc_per_node=8 --nnodes=2 --node_rank=\\$SLURM_NODEID --master_port=29400"\nfi\n'
        'srun --kill-on-bad-exit=1 bash -c "$CMD scripts/training/run_recipe.py"\n'
    )
    (finding,) = lint_text(original, ["SBL102"])
    assert finding.fix is None and "written differently on different paths" in finding.help
    assert fix_text(original, None, unsafe=True).count("torchrun") == 2

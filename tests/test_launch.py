"""The launch model (sbatchlint/model/launch.py) and the SBL1xx launch rules on realistic scripts."""
from __future__ import annotations

import textwrap

import pytest

from sbatchlint.model.launch import (
    ACCELERATE,
    DEEPSPEED,
    SRUN_NATIVE,
    TORCH_LAUNCH,
    TORCHRUN,
    classify_entry,
    launches,
    task_layout,
)
from sbatchlint.model.script import Script
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"


def script(text: str) -> Script:
    return Script(Source(textwrap.dedent(text).encode("utf-8"), "job.sh"))


def only(text: str):
    found = launches(script(text))
    assert len(found) == 1, [l.program for l in found]
    return found[0]


# -- recognising launchers ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command,kind,program,entry",
    [
        ("srun python train.py --lr 1", SRUN_NATIVE, "python", "train.py"),
        ("srun python3 -u train.py", SRUN_NATIVE, "python3 -u", "train.py"),
        ("srun /opt/venv/bin/python -W ignore train.py", SRUN_NATIVE, "/opt/venv/bin/python -W ignore", "train.py"),
        ("srun uv run python train.py", SRUN_NATIVE, "uv run python", "train.py"),
        ("srun uv run --no-sync --project /w python train.py", SRUN_NATIVE, "uv run --no-sync --project /w python", "train.py"),
        ("srun uv run train.py", SRUN_NATIVE, "uv run", "train.py"),
        ("srun uv run -m megatron.bridge.recipes.run", SRUN_NATIVE, "uv run", "megatron.bridge.recipes.run"),
        ("srun python -m pkg.train --x 1", SRUN_NATIVE, "python", "pkg.train"),
        ("srun torchrun --nproc_per_node=8 train.py", TORCHRUN, "torchrun", "train.py"),
        ("srun python -m torch.distributed.run --nproc-per-node 8 train.py", TORCHRUN, "python -m torch.distributed.run", "train.py"),
        ("srun uv run python -m torch.distributed.run train.py", TORCHRUN, "uv run python -m torch.distributed.run", "train.py"),
        ("srun uv run torchrun train.py", TORCHRUN, "uv run torchrun", "train.py"),
        ("srun python -m torch.distributed.launch --use_env train.py", TORCH_LAUNCH, "python -m torch.distributed.launch", "train.py"),
        ("srun accelerate launch --multi_gpu --num_processes 8 train.py", ACCELERATE, "accelerate launch", "train.py"),
        ("srun deepspeed --num_gpus 8 train.py --deepspeed ds.json", DEEPSPEED, "deepspeed", "train.py"),
        ("srun env NCCL_DEBUG=INFO torchrun train.py", TORCHRUN, "torchrun", "train.py"),
        ("srun conda run -n env python train.py", SRUN_NATIVE, "conda run -n env python", "train.py"),
        ("srun bash -c 'cd /w && torchrun --nnodes 2 train.py'", TORCHRUN, "torchrun", "train.py"),
        ("srun apptainer exec --nv -B /l:/l img.sif torchrun t.py", TORCHRUN, "apptainer exec --nv -B /l:/l img.sif torchrun", "t.py"),
        ("srun singularity exec --pwd /w img.sif python t.py", SRUN_NATIVE, "singularity exec --pwd /w img.sif python", "t.py"),
        ("srun nsys profile -o torchrun_prof -t cuda python t.py", SRUN_NATIVE, "python", "t.py"),
        ("srun numactl -C 0-7 --membind 0 torchrun t.py", TORCHRUN, "torchrun", "t.py"),
    ],
)
def test_recognise(command, kind, program, entry):
    launch = only(HEADER + command + "\n")
    assert launch.kind == kind
    assert launch.program == program
    assert launch.entry is not None and launch.entry.name == entry


@pytest.mark.parametrize(
    "command",
    [
        "srun hostname", "srun python -c 'print(1)' | tee x", "srun nvidia-smi", "srun $LAUNCHER train.py",
        "srun singularity run img.sif python train.py",  # the image's runscript decides
    ],
)
def test_not_a_training_launcher(command):
    found = [l for l in launches(script(HEADER + command + "\n")) if l.kind != SRUN_NATIVE or l.entry.kind != "code"]
    assert not found


def test_torchrun_options_both_spellings_and_value_forms():
    launch = only(
        HEADER
        + "srun torchrun --nproc-per-node 8 --nnodes=2 --node-rank=$SLURM_NODEID --master_addr $ADDR "
        "--master-port=29500 --rdzv_backend c10d --rdzv-endpoint=$ADDR:29500 --rdzv_id=7 --standalone "
        "--max-restarts 3 --monitor_interval=5 --nproc 4 -m pkg.train --tp 2\n"
    )
    names = [o.name for o in launch.options]
    assert names == [
        "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend",
        "rdzv_endpoint", "rdzv_id", "standalone", "max_restarts", "monitor_interval", "nproc_per_node", "module",
    ]
    assert launch.option("nproc-per-node").text == "4"  # the last one wins
    assert launch.option("node_rank").text == "${SLURM_NODEID}" and not launch.option("node_rank").known
    assert launch.option("rdzv_endpoint").text == "${ADDR}:29500"
    assert launch.entry.kind == "module" and launch.entry.name == "pkg.train"
    assert [w.text for w in launch.args] == ["--tp", "2"]
    assert not launch.options_incomplete


def test_unknown_words_among_options_make_them_incomplete():
    launch = only(HEADER + "srun torchrun $DISTRIBUTED_ARGS train.py\n")
    assert launch.options_incomplete and launch.option("nnodes") is None


def test_values_resolve_through_variables_and_defaults():
    launch = only(
        HEADER
        + 'NNODES=${SLURM_JOB_NUM_NODES:-2}\nGPUS=8\n'
        + 'srun torchrun --nnodes=$NNODES --nproc_per_node=$GPUS train.py\n'
    )
    assert launch.certain_number("nproc_per_node") == 8
    # the default is only one of the alternatives: not certain
    assert launch.certain_number("nnodes") is None
    assert launch.has("nnodes")


def test_string_task_command_keeps_batch_origins():
    s = script(
        HEADER
        + 'CMD="torchrun --nproc_per_node=8 \\\n  --nnodes=\\${SLURM_JOB_NUM_NODES} \\\n  train.py"\n'
        + 'CMD="$CMD --tp 2"\n'
        + 'srun bash -c "$CMD"\n'
    )
    (launch,) = launches(s)
    assert launch.in_string and launch.kind == TORCHRUN
    assert s.text(launch.span) == "torchrun"
    offset, quote = launch.insertion_after_launcher()
    assert quote == '"' and s.data[offset - 8 : offset] == b"torchrun"
    assert launch.parallelism["tp"].number == 2


def test_loop_configurations_stay_together():
    launch = only(
        HEADER
        + 'CONFIGS=("2,2,4" "4,1,8")\n'
        + 'for CONFIG in "${CONFIGS[@]}"; do\n'
        + '  IFS=, read -r TP PP EP <<< "$CONFIG"\n'
        + '  srun python train.py model.tensor_model_parallel_size=$TP --pipeline-model-parallel-size $PP --ep=$EP\n'
        + "done\n"
    )
    configs = launch.configurations()
    assert [c.sizes for c in configs] == [{"tp": 2, "pp": 2, "ep": 4}, {"tp": 4, "pp": 1, "ep": 8}]
    assert all(c.loop_bound for c in configs)


def test_branch_alternatives_are_not_certain():
    launch = only(
        HEADER
        + 'if [ "$BIG" = 1 ]; then TP=8; else TP=2; fi\nTPX=${TP_OVERRIDE:-4}\n'
        + 'srun python train.py --tp $TP --pp $TPX --cp 2\n'
    )
    (config,) = launch.configurations()
    assert config.sizes == {"cp": 2}


@pytest.mark.parametrize(
    "name,workdir,settings,expected",
    [
        ("megatron.bridge.recipes.llama.run", None, {}, "megatron-bridge"),
        ("/opt/Megatron-Bridge/examples/recipes/llama/pretrain_llama3_8b.py", None, {}, "megatron-bridge"),
        ("examples/recipes/llama/pretrain_llama3_8b.py", None, {}, "megatron-bridge"),
        ("scripts/training/run_recipe.py", None, {}, "megatron-bridge"),
        ("examples/conversion/convert_checkpoints.py", "/work/megatron-bridge", {}, "megatron-bridge"),
        ("3rdparty/Megatron-LM/pretrain_gpt.py", "/opt/Megatron-Bridge", {}, "megatron-lm"),
        ("pretrain_gpt.py", None, {}, "megatron-lm"),
        ("/lustre/Megatron-LM/pretrain_mamba.py", None, {}, "megatron-lm"),
        ("examples/run_simple_mcore_train_loop.py", None, {}, None),
        ("train.py", None, {}, None),
        ("recipes/my_recipe.py", "/home/u/proj", {"bridge_entry_points": ["recipes/*.py"]}, "megatron-bridge"),
    ],
)
def test_bridge_or_megatron_lm(name, workdir, settings, expected):
    from sbatchlint.model.launch import EntryPoint
    from sbatchlint.model.values import Piece, Value, Word
    from sbatchlint.source import Span

    kind = "module" if "/" not in name and not name.endswith(".py") else "script"
    word = Word(Value((Piece(name, Span(0, len(name))),)), None, Span(0, len(name)))
    assert classify_entry(EntryPoint(kind, [word]), workdir, settings) == expected


def test_workdir_from_cd_and_container_workdir():
    s = script(
        HEADER
        + "cd /opt/Megatron-Bridge\n"
        + "srun torchrun examples/conversion/convert.py\n"
        + "srun --container-workdir=/lustre/Megatron-LM torchrun pretrain_gpt.py\n"
        + "srun bash -c 'cd /x/megatron-bridge && python -m torch.distributed.run scripts/x.py'\n"
    )
    first, second, third = launches(s)
    assert first.workdir == "/opt/Megatron-Bridge" and first.framework() == "megatron-bridge"
    assert second.workdir == "/lustre/Megatron-LM" and second.framework() == "megatron-lm"
    assert third.workdir == "/x/megatron-bridge" and third.framework() == "megatron-bridge"


# -- tasks per node, as srun really runs them ------------------------------------------------------
@pytest.mark.parametrize(
    "header,step,per_node,ignored",
    [
        ("--nodes=2 --ntasks-per-node=8", "srun torchrun t.py", 8, False),
        ("--nodes=2 --ntasks-per-node=8", "srun --ntasks-per-node=1 torchrun t.py", 8, True),
        ("--nodes=2 --ntasks-per-node=8", "srun -N2 --ntasks-per-node=1 torchrun t.py", 8, True),
        ("--nodes=2 --ntasks-per-node=8", "srun --ntasks=2 --ntasks-per-node=1 torchrun t.py", 1, False),
        ("--nodes=2 --ntasks-per-node=8", "srun -n2 torchrun t.py", 1, False),
        ("--nodes=2", "srun --ntasks-per-node=1 torchrun t.py", 1, False),
        ("--nodes=2 --ntasks=16", "srun --ntasks-per-node=1 torchrun t.py", 8, True),
        ("--nodes=2 --ntasks-per-node=1", "srun --ntasks-per-node=1 torchrun t.py", 1, False),
    ],
)
def test_task_layout_follows_srun(header, step, per_node, ignored):
    lines = "".join(f"#SBATCH {part}\n" for part in header.split())
    s = script("#!/bin/bash\n" + lines + step + "\n")
    layout = task_layout(s, s.steps[0])
    assert layout.per_node == per_node
    assert (layout.ignored is not None) == ignored


# -- fixtures: realistic scripts, what fires and what must not ------------------------------------
import pathlib  # noqa: E402

from lintutil import fix_text, lint_text, said  # noqa: E402

FIXTURES = sorted((pathlib.Path(__file__).parent / "fixtures" / "launch").glob("*.sh"))
LAUNCH_CODES = ("SBL101", "SBL102", "SBL103", "SBL104", "SBL106", "SBL112", "SBL113")


def expectations(text: str):
    fires, silent = [], []
    for line in text.splitlines():
        if line.startswith("# expect:"):
            fires = line.split(":", 1)[1].split()
        elif line.startswith("# expect-not:"):
            silent = line.split(":", 1)[1].split()
    return fires, silent


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_findings(path):
    text = path.read_text()
    fires, silent = expectations(text)
    assert fires or silent, "the fixture declares no expectation"
    found = {d.code for d in lint_text(text, list(LAUNCH_CODES))}
    for code in fires:
        assert code in found, f"{code} does not fire"
    for code in silent:
        assert code not in found, f"{code} fires: {[d.message for d in lint_text(text, [code])]}"
    # nothing else of the family either
    assert found <= set(fires)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_fix_converges(path):
    text = path.read_text()
    fires, _ = expectations(text)
    for code in fires:
        for unsafe in (False, True):
            fixed = fix_text(text, [code], unsafe=unsafe)
            assert not script(fixed).errors, "the fix broke parsing"
            again = fix_text(fixed, [code], unsafe=unsafe)
            assert again == fixed, "a second fix changed the text"
            diagnostics = lint_text(fixed, [code])
            fixable = [d for d in lint_text(text, [code]) if d.fix is not None and (unsafe or d.fix.applicability.value == "safe")]
            if fixable:
                assert not [d for d in diagnostics if d.fix is not None], [d.message for d in diagnostics]


def fixture(name: str) -> str:
    return (pathlib.Path(__file__).parent / "fixtures" / "launch" / name).read_text()


def test_train_cmd_string_gets_an_escaped_node_rank():
    fixed = fix_text(fixture("train_cmd_string.sh"), ["SBL103"])
    # the launcher's options are written one per continued line: the new one gets its own line
    assert "python -m torch.distributed.run \\\n    --node_rank=\\${SLURM_NODEID} \\\n    --nproc_per_node=8 \\\n" in fixed
    assert "SBL103" not in {d.code for d in lint_text(fixed, ["SBL103"])}


def test_srun_cmd_shared_by_two_steps_is_not_edited():
    text = fixture("srun_cmd_container_loop.sh")
    (finding,) = lint_text(text, ["SBL101"])
    assert "8 tasks × 8 processes per node" in finding.message
    fixed = fix_text(text, ["SBL101"])
    # the option goes to the torchrun step's use of $SRUN_CMD; the variable and the
    # srun-native step keep the header's 8 tasks per node; the one task keeps the 8 CPUs
    assert '$SRUN_CMD --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --cpus-per-task=8 bash -c "$TRAIN_CMD"' in fixed
    assert "$SRUN_CMD python tools/eval_shards.py" in fixed
    assert "#SBATCH --ntasks-per-node=8" in fixed


def test_ignored_step_flag_gets_ntasks():
    text = fixture("step_flag_ignored.sh")
    (finding,) = lint_text(text, ["SBL101"])
    assert "srun ignores the step's `--ntasks-per-node=1`" in said(finding)
    fixed = fix_text(text, ["SBL101"])
    assert "srun --ntasks=${SLURM_JOB_NUM_NODES} --cpus-per-task=8 --kill-on-bad-exit=1 --ntasks-per-node=1 bash -c" in fixed


def test_loop_reports_the_failing_configuration():
    text = fixture("parallelism_configs_loop.sh")
    (finding,) = lint_text(text, ["SBL106"])
    assert "TP=2, PP=3, EP=4" in finding.message
    assert "world size is 16 (2 nodes × 8 GPUs)" in said(finding)
    assert "DP would be 16/6" in said(finding)
    assert text.encode()[finding.span.start:finding.span.end] == b"2,3,4"


def test_nproc_mismatch_fix_is_unsafe_and_sets_the_gpu_count():
    text = fixture("nproc_mismatch_gres.sh")
    assert fix_text(text, ["SBL104"]) == text
    fixed = fix_text(text, ["SBL104"], unsafe=True)
    assert "--nproc_per_node=4 --master_addr" in fixed


def test_direct_torchrun_without_node_rank_gets_a_c10d_rendezvous():
    text = HEADER + "srun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 train.py\n"
    (finding,) = lint_text(text, ["SBL103"])
    assert finding.fix is not None and finding.fix.applicability.value == "safe"
    assert "bash -c '" in finding.help
    fixed = fix_text(text, ["SBL103"])
    assert "torchrun --nnodes=${SLURM_JOB_NUM_NODES} --rdzv_backend=c10d --rdzv_endpoint=$(scontrol" in fixed
    assert "--node_rank" not in fixed and not lint_text(fixed, ["SBL103"])


def test_direct_torchrun_missing_only_nnodes_gets_it_plain():
    text = HEADER + "srun torchrun --rdzv-backend=c10d --rdzv-endpoint=$HEAD:29500 --nproc-per-node=8 train.py\n"
    fixed = fix_text(text, ["SBL103"])
    assert "srun torchrun --nnodes=${SLURM_JOB_NUM_NODES} --rdzv-backend=c10d" in fixed


def test_single_quoted_string_gets_plain_variables():
    text = HEADER + "srun bash -c 'torchrun --nproc_per_node=8 train.py'\n"
    fixed = fix_text(text, ["SBL103"])
    assert "bash -c 'torchrun --nnodes=${SLURM_JOB_NUM_NODES} --node_rank=${SLURM_NODEID} --nproc_per_node=8" in fixed


def test_bridge_entry_points_setting():
    text = HEADER + "srun bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 recipes/my_sft.py'\n"
    assert not lint_text(text, ["SBL102"])
    found = lint_text(text, ["SBL102"], settings={"bridge_entry_points": ["recipes/*.py"]})
    assert [d.code for d in found] == ["SBL102"]


def test_unknown_values_say_nothing():
    text = (
        HEADER
        + 'GPUS=${GPUS_PER_NODE:-4}\n'
        + 'srun bash -c "torchrun --nnodes=2 --node_rank=\\$SLURM_NODEID --master_addr=$HEAD --nproc_per_node=$GPUS train.py --tp $TP"\n'
        + "srun torchrun $DIST_ARGS train.py\n"
    )
    assert not lint_text(text, list(LAUNCH_CODES))


def test_torchrun_only_in_local_rank_zero_is_one_per_node():
    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
        "srun bash -c 'if [ \"$SLURM_LOCALID\" -eq 0 ]; then torchrun --nnodes=2 --node_rank=$SLURM_NODEID "
        "--nproc_per_node=8 train.py; fi'\n"
    )
    assert not lint_text(text, ["SBL101"])


def test_extra_arguments_after_a_size_may_override_it():
    text = HEADER + 'srun bash -c "torchrun --nnodes=2 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 t.py --tp 3 $EXTRA"\n'
    assert not lint_text(text, ["SBL106"])
    text = HEADER + 'srun torchrun --nnodes=2 --rdzv-backend=c10d --rdzv-endpoint=h:1 --nproc_per_node=8 t.py "$@" --tp 3\n'
    assert [d.code for d in lint_text(text, ["SBL106"])] == ["SBL106"]


def test_a_task_string_that_does_not_parse_is_left_alone():
    text = HEADER + (
        'srun bash -c "torchrun --nproc_per_node=4 --rdzv_conf=is_host=\\$(((SLURM_NODEID)) && echo 0 || echo 1) '
        '--rdzv_backend=c10d --rdzv_endpoint=h:29500 train.py --tp 3"\n'
    )
    (launch,) = launches(script(text))
    assert launch.unparsed
    assert not lint_text(text, list(LAUNCH_CODES))


def test_no_sbl101_fix_when_the_script_reads_the_task_count():
    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
        "srun bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=$SLURM_NTASKS_PER_NODE train.py'\n"
    )
    (finding,) = lint_text(text, ["SBL101"])
    assert finding.fix is None


def test_sbl103_node_count_of_a_step_with_its_own_nodes():
    header = "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
    fixed = fix_text(header + "srun -N2 bash -c 'torchrun --nproc_per_node=8 train.py'\n", ["SBL103"])
    assert "torchrun --nnodes=${SLURM_NNODES} --node_rank=${SLURM_NODEID} --nproc_per_node=8" in fixed
    fixed = fix_text(header + "srun -N2 torchrun --rdzv_backend=c10d --rdzv_endpoint=h:1 --nproc_per_node=8 t.py\n", ["SBL103"])
    assert "srun -N2 torchrun --nnodes=2 --rdzv_backend=c10d" in fixed


def test_sbl106_skips_one_process_per_node():
    text = HEADER + "srun python -m vllm.entrypoints.openai.api_server --tensor-parallel-size 3\n"
    assert not lint_text(text, ["SBL106"])


def test_a_default_that_slurm_never_uses_is_not_a_value():
    text = HEADER + 'NNODES=${SLURM_JOB_NUM_NODES:-1}\nsrun bash -c "torchrun --nnodes=$NNODES --node_rank=\\$SLURM_NODEID --nproc_per_node=8 t.py"\n'
    assert not lint_text(text, ["SBL103"])
    text = HEADER + 'srun bash -c "torchrun --nnodes=1 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 t.py"\n'
    (finding,) = lint_text(text, ["SBL103"])
    assert "`--nnodes=1` on 2 nodes" in finding.message

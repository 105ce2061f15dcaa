"""``sbatchlint convert``: golden scripts, refusals, the command line, and the invariant over a grid
of inputs (both launchers, 1/2/16 nodes, with and without mounts): the generated script lints
clean with every rule, and fixing it with ``--unsafe-fixes`` (the migration included) changes nothing.

Regenerate the golden files with SBATCHLINT_UPDATE_GOLDEN=1.
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from lintutil import fix_text, lint_text
from sbatchlint.cli import main
from sbatchlint.convert import ConvertError, Request, convert, parse_command

GOLDEN = Path(__file__).parent / "golden" / "convert"
SITE = [
    "--account", "llm_research",
    "--container-image", "nvcr.io/nvidia/nemo:25.09",
    "--shared-fs", "/lustre/fsw/llm",
    "--workdir", "/lustre/fsw/llm/Megatron-Bridge",
]
BRIDGE = "uv run python -m torch.distributed.run --nproc_per_node=8 examples/recipes/llama/pretrain_llama3_8b.py --tp 2"
MLM = (
    "uv run python -m torch.distributed.run --nproc_per_node=8 3rdparty/Megatron-LM/pretrain_gpt.py "
    "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --data-path /datasets/gpt/corpus_text_document "
    "--split 949,50,1 --tokenizer-type HuggingFaceTokenizer --tokenizer-model gpt2"
)

CASES = {
    "bridge_pretrain_4_nodes": [BRIDGE, "--nodes", "4", *SITE],
    "mlm_pretrain_torchrun_2_nodes": [MLM, "--nodes", "2", *SITE],
    "bridge_sft_options": [
        "CUDA_DEVICE_MAX_CONNECTIONS=1 uv run --no-sync python -u scripts/training/run_recipe.py "
        "--recipe llama3_8b_finetune_config --peft lora --prompt-template 'Q: {q} A:' "
        "checkpoint.save=/lustre/fsw/llm/checkpoints/llama3-8b-lora",
        "--nodes", "2", "--job-name", "llama3-8b-lora", "--time", "04:00:00", "--partition", "gpu-long",
        "--log-dir", "/lustre/fsw/llm/alice/logs", "--container-mounts", "/datasets:/datasets", *SITE,
    ],
    "roundtrip_four_gpus": [
        "torchrun --nproc-per-node=4 examples/conversion/hf_megatron_roundtrip_multi_gpu.py "
        "--hf-model-id meta-llama/Llama-3.1-8B --tp 2",
        "--nodes", "2", *SITE,
    ],
    "mlm_per_task_variables": [
        "python -m torch.distributed.run --nproc_per_node=8 3rdparty/Megatron-LM/pretrain_gpt.py "
        "--mock-data --seed \"$SLURM_PROCID\" --save \"$CKPT_DIR/run one\"",
        "--nodes", "16", *SITE,
    ],
    "bridge_forced_torchrun": [BRIDGE, "--nodes", "2", "--launcher", "torchrun", *SITE],
    "placeholders": [BRIDGE, "--allow-placeholders"],
}


def _run(args, **kwargs):
    return CliRunner().invoke(main, ["convert", *args], catch_exceptions=False, **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    result = _run(CASES[name])
    assert result.exit_code == 0, result.output
    path = GOLDEN / f"{name}.sbatch"
    if os.environ.get("SBATCHLINT_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(set(CASES) - {"placeholders", "bridge_forced_torchrun"}))
def test_golden_scripts_lint_clean_and_are_stable(name):
    text = (GOLDEN / f"{name}.sbatch").read_text(encoding="utf-8")
    assert not lint_text(text), [f"{d.code} {d.message}" for d in lint_text(text)]
    assert fix_text(text, None, unsafe=True) == text


def test_placeholders_are_only_placeholders():
    text = (GOLDEN / "placeholders.sbatch").read_text(encoding="utf-8")
    found = lint_text(text)
    assert {d.code for d in found} <= {"SBL009", "SBL006"}
    assert {d.code for d in found if "<NNODES>" not in text.encode()[d.span.start : d.span.end].decode()} == {"SBL009"}
    for placeholder in ("<ACCOUNT>", "<CONTAINER_IMAGE>", "<SHARED_FS>", "<WORKDIR>", "<NNODES>"):
        assert placeholder in text


def test_forced_torchrun_for_bridge_migrates_back_to_srun_native():
    """--launcher torchrun on a Bridge script: SBL102 says so, and its migration gives a clean job."""
    text = (GOLDEN / "bridge_forced_torchrun.sbatch").read_text(encoding="utf-8")
    assert [d.code for d in lint_text(text)] == ["SBL102"]
    migrated = fix_text(text, None, unsafe=True)
    assert "#SBATCH --ntasks-per-node=8" in migrated and "-m torch.distributed.run \\\n" not in migrated
    assert not lint_text(migrated)


# -- the invariant over a grid ---------------------------------------------------------------------
ENTRIES = {
    "srun": "uv run python -m torch.distributed.run --nproc_per_node=8 examples/recipes/llama/pretrain_llama3_8b.py "
            "--tp 2 --data-path /datasets/slimpajama/train",
    "torchrun": MLM,
}
GRID = list(itertools.product(sorted(ENTRIES), (1, 2, 16), (None, "/lustre/fsw/llm:/lustre/fsw/llm,/datasets:/datasets")))


def grid_script(launcher: str, nodes: int, mounts) -> str:
    request = Request(
        ENTRIES[launcher], nodes=nodes, account="llm_research", container_image="nvcr.io/nvidia/nemo:25.09",
        shared_fs="/lustre/fsw/llm", workdir="/lustre/fsw/llm/Megatron-Bridge", container_mounts=mounts,
        launcher=launcher,
    )
    result = convert(request)
    assert result.launcher == launcher
    return result.text


@pytest.mark.parametrize("launcher,nodes,mounts", GRID)
def test_grid_lints_clean_and_is_stable(launcher, nodes, mounts):
    text = grid_script(launcher, nodes, mounts)
    assert not lint_text(text), [f"{d.code} {d.message}" for d in lint_text(text)]
    assert fix_text(text, None, unsafe=True) == text
    assert fix_text(text, ["SBL102"], unsafe=True) == text
    assert f"#SBATCH --nodes={nodes}\n" in text
    assert ("#SBATCH --ntasks-per-node=1\n" if launcher == "torchrun" else "#SBATCH --ntasks-per-node=8\n") in text
    mounts_line = next(line for line in text.splitlines() if line.startswith("MOUNTS="))
    assert any(item.split(":")[0] == item.split(":")[1] and item.startswith("/datasets")
               for item in mounts_line[len("MOUNTS="):].split(","))  # data outside the shared root, same path


@pytest.mark.parametrize("launcher", sorted(ENTRIES))
def test_auto_launcher(launcher):
    request = Request(ENTRIES[launcher], nodes=2, account="a", container_image="i", shared_fs="/lustre")
    request.workdir = "/lustre/Megatron-Bridge"
    assert convert(request).launcher == launcher


# -- contents ---------------------------------------------------------------------------------------
def test_srun_native_script_shape():
    text = (GOLDEN / "bridge_pretrain_4_nodes.sbatch").read_text(encoding="utf-8")
    for line in (
        "#SBATCH --ntasks-per-node=8", "#SBATCH --gpus-per-node=8", "#SBATCH --exclusive",
        "#SBATCH --output=/lustre/fsw/llm/logs/pretrain_llama3_8b_%j.log",
        "export HF_HOME=$SHARED_FS/cache/huggingface", "export UV_CACHE_DIR=$SHARED_FS/cache/uv",
        "export NEMO_HOME=$SHARED_FS/cache/nemo", "rm -rf nemo_experiments", "srun --nodes=1 --ntasks=1 \\",
        "  uv sync", "srun --kill-on-bad-exit=1 \\", "  uv run python examples/recipes/llama/pretrain_llama3_8b.py \\",
        "    --tp 2", "#   mkdir -p /lustre/fsw/llm/logs && sbatch pretrain_llama3_8b.sbatch",
    ):
        assert line in text.splitlines(), line
    assert "MASTER_ADDR=" not in text and "torch.distributed.run \\" not in text
    assert "come from your environment" in text


def test_torchrun_script_shape():
    text = (GOLDEN / "mlm_per_task_variables.sbatch").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert 'TRAIN_CMD="PYTHONPATH=$WORKDIR/3rdparty/Megatron-LM:\\${PYTHONPATH:-} \\' in lines
    assert "  --node_rank=\\${SLURM_NODEID} \\" in lines
    assert "    --seed \\\"\\$SLURM_PROCID\\\" \\" in lines  # the task expands its own rank
    assert "    --save \\\"$CKPT_DIR\\\"'/run one'\"" in lines  # a host value, expanded once
    assert "rm -rf nemo_experiments" not in text  # Megatron-LM does not use it


def test_host_variables_are_named_in_a_note():
    result = _run(CASES["mlm_per_task_variables"])
    assert "note: the command reads $CKPT_DIR: export it before sbatch" in result.stderr
    assert "SLURM_PROCID" not in result.stderr


def test_srun_native_refuses_per_task_variable_on_the_command_line():
    with pytest.raises(ConvertError, match=r"\$SLURM_LOCALID, which differs per task"):
        convert(Request("python examples/recipes/x/pretrain_x.py --seed $SLURM_LOCALID", nodes=2, account="a",
                        container_image="i", shared_fs="/l", workdir="/l/Megatron-Bridge"))


# -- refusals ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("missing,option", [
    ("--account", "--account is required"),
    ("--container-image", "--container-image is required"),
    ("--shared-fs", "--shared-fs is required"),
    ("--workdir", "--workdir is required"),
])
def test_unknown_values_are_refused_by_name(missing, option, tmp_path):
    args = list(SITE)
    index = args.index(missing)
    del args[index : index + 2]
    result = CliRunner().invoke(main, ["convert", BRIDGE, "--nodes", "2", *args], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and option in result.stderr and "--allow-placeholders" in result.stderr


def test_nodes_are_required():
    result = _run([BRIDGE, *SITE])
    assert result.exit_code == 2 and "--nodes is required" in result.stderr


def test_workdir_defaults_to_the_current_directory_under_the_shared_fs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = [BRIDGE, "--nodes", "2", "--account", "a", "--container-image", "i", "--shared-fs", str(tmp_path.parent)]
    result = _run(args)
    assert result.exit_code == 0, result.stderr
    assert f"WORKDIR={tmp_path}\n" in result.stdout


@pytest.mark.parametrize("command,message", [
    ("", "no command given"),
    ("echo hello", "not a Python launch"),
    ("uv run python a.py | tee log", "give one command"),
    ("accelerate launch train.py", "not converted"),
    ("torchrun --nproc_per_node=8 $ARGS train.py", "torchrun's options come partly from a variable"),
    ("conda run -n env python train.py", "use `uv run`"),
    ("python -c 'print(1)'", "must run a Python script or a module"),
    ("uv run python 'unclosed", "not valid shell syntax"),
])
def test_commands_that_are_refused(command, message):
    with pytest.raises(ConvertError, match=message):
        parse_command(command)


def test_torchrun_only_option_needs_the_torchrun_launcher():
    command = "torchrun --nproc_per_node=8 --max_restarts=3 examples/recipes/x/pretrain_x.py"
    result = _run([command, "--nodes", "2", *SITE])
    assert result.exit_code == 2 and "--max_restarts=3" in result.stderr and "--launcher torchrun" in result.stderr
    result = _run([command, "--nodes", "2", "--launcher", "torchrun", *SITE])
    assert result.exit_code == 0 and "  --max_restarts=3 \\\n" in result.stdout


def test_a_secret_in_the_command_is_refused_without_printing_it():
    token = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345"
    result = _run([f"HF_TOKEN={token} uv run python examples/recipes/x/pretrain_x.py", "--nodes", "2", *SITE])
    assert result.exit_code == 2
    assert token not in result.output and token[5:] not in result.stderr
    assert "export HF_TOKEN before sbatch" in result.stderr


def test_values_with_spaces_are_refused():
    result = _run([BRIDGE, "--nodes", "2", *SITE, "--partition", "gpu long"])
    assert result.exit_code == 2 and "--partition 'gpu long'" in result.stderr


def test_invalid_time_is_refused():
    result = _run([BRIDGE, "--nodes", "2", "--time", "2h", *SITE])
    assert result.exit_code == 2 and 'invalid --time "2h"' in result.stderr


def test_gpus_per_node_overrides_nproc_with_a_note():
    result = _run([BRIDGE, "--nodes", "2", "--gpus-per-node", "4", *SITE])
    assert result.exit_code == 0
    assert "#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-node=4\n" in result.stdout
    assert "--nproc_per_node=8 becomes 4" in result.stderr


# -- input and output ---------------------------------------------------------------------------------
def test_command_from_file_and_stdin(tmp_path):
    path = tmp_path / "cmd.sh"
    path.write_text("# the single-node command\nuv run python -m torch.distributed.run --nproc_per_node=8 \\\n"
                    "  examples/recipes/llama/pretrain_llama3_8b.py --tp 2\n")
    expected = _run([BRIDGE, "--nodes", "4", *SITE]).stdout
    from_file = _run(["--from-file", str(path), "--nodes", "4", *SITE])
    assert from_file.exit_code == 0
    body = lambda text: text.split("#SBATCH --job-name", 1)[1]  # noqa: E731 - the comment quotes the input
    assert body(from_file.stdout) == body(expected)
    from_stdin = _run(["-", "--nodes", "4", *SITE], input=BRIDGE + "\n")
    assert from_stdin.stdout == expected
    from_dash = _run(["--from-file", "-", "--nodes", "4", *SITE], input=BRIDGE)
    assert from_dash.stdout == expected
    both = _run([BRIDGE, "--from-file", str(path), "--nodes", "4", *SITE])
    assert both.exit_code == 2


def test_output_file_is_not_overwritten_without_force(tmp_path):
    out = tmp_path / "job.sbatch"
    first = _run([BRIDGE, "--nodes", "4", *SITE, "-o", str(out)])
    assert first.exit_code == 0 and first.stdout == "" and "wrote" in first.stderr
    text = out.read_text()
    assert "sbatch job.sbatch" in text
    out.write_text("mine\n")
    again = _run([BRIDGE, "--nodes", "4", *SITE, "--output", str(out)])
    assert again.exit_code == 2 and "--force" in again.stderr and out.read_text() == "mine\n"
    forced = _run([BRIDGE, "--nodes", "4", *SITE, "-o", str(out), "--force"])
    assert forced.exit_code == 0 and out.read_text() == text


def test_every_missing_option_is_reported_at_once():
    result = _run([BRIDGE, "--shared-fs", "/lustre/fsw/llm"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "--account, --container-image, --workdir and --nodes are required" in result.stderr
    assert "--workdir: where the repository lives on the shared filesystem" in result.stderr


# -- the launcher `auto` picks, from the entry point's own code ---------------------------------------
TORCHRUN_READER = """\
import os

local_rank = int(os.environ["LOCAL_RANK"])
world = int(os.getenv("WORLD_SIZE", "1"))
"""
SLURM_READER = """\
import os
from os import environ

rank = int(environ.get("SLURM_PROCID", os.environ.get("RANK", "0")))
world = int(os.environ["SLURM_NTASKS"])
"""


def _auto(tmp_path, monkeypatch, command: str, code=None):
    monkeypatch.chdir(tmp_path)
    if code is not None:
        (tmp_path / "train.py").write_text(code)
    # the job's paths are on the cluster's shared filesystem; the script is found in the current directory
    return convert(Request(command, nodes=2, account="a", container_image="i", shared_fs="/lustre/fsw/llm",
                           workdir="/lustre/fsw/llm/train", cwd=str(tmp_path)))


def test_auto_keeps_torchrun_for_a_script_that_reads_torchruns_variables(tmp_path, monkeypatch):
    result = _auto(tmp_path, monkeypatch, "torchrun --nproc_per_node=8 train.py --lr 3e-4", TORCHRUN_READER)
    assert result.launcher == "torchrun"
    assert "#SBATCH --ntasks-per-node=1" in result.text and "-m torch.distributed.run" in result.text
    assert any("reads LOCAL_RANK, WORLD_SIZE (set by torchrun, not by srun)" in note for note in result.notes)
    assert not lint_text(result.text), [d.code for d in lint_text(result.text)]


def test_auto_goes_srun_native_for_a_script_that_reads_slurms_variables(tmp_path, monkeypatch):
    result = _auto(tmp_path, monkeypatch, "torchrun --nproc_per_node=8 train.py --lr 3e-4", SLURM_READER)
    assert result.launcher == "srun"
    assert "#SBATCH --ntasks-per-node=8" in result.text and "torch.distributed.run" not in result.text


def test_auto_keeps_torchrun_when_the_script_is_not_found(tmp_path, monkeypatch):
    result = _auto(tmp_path, monkeypatch, "torchrun --nproc_per_node=8 train.py")
    assert result.launcher == "torchrun"
    assert any("train.py was not found here" in note for note in result.notes)
    # a command that starts python itself, without a launcher, stays srun-native
    assert _auto(tmp_path, monkeypatch, "python train.py").launcher == "srun"


def test_no_uv_phase_or_cache_for_a_command_without_uv(tmp_path, monkeypatch):
    plain = _auto(tmp_path, monkeypatch, "python3 -u -m torch.distributed.run --nproc_per_node=8 train.py", SLURM_READER)
    assert "uv sync" not in plain.text and "UV_CACHE_DIR" not in plain.text and "uv run" not in plain.text
    assert "  python3 -u train.py\n" in plain.text  # the interpreter as written
    with_uv = _auto(tmp_path, monkeypatch, "uv run python -m torch.distributed.run --nproc_per_node=8 train.py", SLURM_READER)
    assert "export UV_CACHE_DIR=$SHARED_FS/cache/uv\n" in with_uv.text and "  uv sync\n" in with_uv.text
    for result in (plain, with_uv):
        assert not lint_text(result.text), [d.code for d in lint_text(result.text)]

"""Containers and shared storage: the per-step container model, the paths a job uses, SBL301–SBL309."""
from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from lintutil import fix_text, lint_text, said
from sbatchlint.model.containers import PathValue, containers
from sbatchlint.model.script import Script
from sbatchlint.source import Source

FIXTURES = Path(__file__).parent / "fixtures" / "containers"
CONTAINER_CODES = [f"SBL30{i}" for i in range(1, 10)]


def script_of(text: str, settings=None) -> Script:
    return Script(Source(dedent(text).lstrip("\n").encode("utf-8"), "job.sh"), settings)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def found(text: str, settings=None):
    return [d for d in lint_text(text, CONTAINER_CODES, settings=settings) if d.code in CONTAINER_CODES]


def codes(text: str, settings=None):
    return sorted(d.code for d in found(text, settings))


def at(text: str, diagnostic) -> str:
    return text.encode()[diagnostic.span.start : diagnostic.span.end].decode()


# -- the model ---------------------------------------------------------------------------------
def test_mount_entries_from_lists_and_variables_and_only_the_last_flag():
    """Each value is a comma-separated list of SRC[:DST[:FLAGS]]; of repeated flags, pyxis
    receives only the last (DOMAIN.md §9), so the mounts are the last flag's."""
    script = script_of(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        CONTAINER_MOUNTS="/lustre/fsw:/lustre/fsw"
        export HF_HOME=/scratch/alice/hf
        MOUNTS="$CONTAINER_MOUNTS"
        MOUNTS="$MOUNTS,$HF_HOME:$HF_HOME"
        srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS,/data:/mnt/data:ro \\
             --container-mounts /gpfs/proj --no-container-mount-home --container-workdir=/lustre/fsw/repo true
        """
    )
    (container,) = containers(script).steps
    pairs = [(m.source.text, m.destination.text, m.flags) for m in container.mounts]
    assert pairs == [("/gpfs/proj", "/gpfs/proj", "")]
    assert len(container.mount_options) == 2
    assert container.containerized and container.mount_home is False
    one_list = script_of(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        CONTAINER_MOUNTS="/lustre/fsw:/lustre/fsw"
        export HF_HOME=/scratch/alice/hf
        MOUNTS="$CONTAINER_MOUNTS"
        MOUNTS="$MOUNTS,$HF_HOME:$HF_HOME"
        srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS,/data:/mnt/data:ro,/gpfs/proj true
        """
    )
    (one,) = containers(one_list).steps
    assert [(m.source.text, m.destination.text, m.flags) for m in one.mounts] == [
        ("/lustre/fsw", "/lustre/fsw", ""),
        ("/scratch/alice/hf", "/scratch/alice/hf", ""),
        ("/data", "/mnt/data", "ro"),
        ("/gpfs/proj", "/gpfs/proj", ""),
    ]
    assert container.workdir_path.text == "/lustre/fsw/repo"
    # every entry points at the bytes that wrote it
    texts = [one_list.text(m.span) for m in one.mounts]
    assert texts == ["$MOUNTS", "$HF_HOME:$HF_HOME", "/data:/mnt/data:ro", "/gpfs/proj"]
    assert [m.same_path for m in one.mounts] == [True, True, False, True]


def test_flags_appended_in_a_loop_keep_only_the_last_entry():
    """One `--container-mounts` per loop entry: pyxis receives the last flag only."""
    script = script_of(
        """
        #!/bin/bash
        CONTAINER_MOUNTS="/data:/data /lustre/fsw:/lustre/fsw"
        SRUN_CMD="srun --container-image=$IMAGE"
        for mount in $CONTAINER_MOUNTS; do
            SRUN_CMD="$SRUN_CMD --container-mounts=$mount"
        done
        $SRUN_CMD bash -c "python /lustre/fsw/train.py --data /data/c4"
        """
    )
    (container,) = containers(script).steps
    assert [m.destination.text for m in container.mounts] == ["/lustre/fsw"]
    assert container.mounted(PathValue.literal("/data/c4")) is False
    assert container.loop_flags.count == 2 and container.loop_flags.variable == "SRUN_CMD"
    assert container.loop_flags.listed == "CONTAINER_MOUNTS"


def test_a_list_accumulated_in_a_loop_holds_every_entry():
    """`MOUNTS="$MOUNTS,$d:$d"` in a loop is one list that grows: every entry is mounted, not just
    the start value and the last entry."""
    text = """
        #!/bin/bash
        #SBATCH --nodes=2
        MOUNTS="/lustre/fsw/alice:/lustre/fsw/alice"
        for d in /lustre/datasets /lustre/checkpoints /lustre/tokenizers; do
            MOUNTS="$MOUNTS,$d:$d"
        done
        srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts="$MOUNTS" \
             python /lustre/fsw/alice/train.py --data /lustre/datasets/c4 --tokenizer /lustre/tokenizers/t.model
        """
    (container,) = containers(script_of(text)).steps
    assert container.loop_flags is None
    assert sorted(m.destination.text for m in container.mounts) == [
        "/lustre/checkpoints", "/lustre/datasets", "/lustre/fsw/alice", "/lustre/tokenizers",
    ]
    assert container.mounted(PathValue.literal("/lustre/datasets/c4")) is True
    assert not [d for d in lint_text(dedent(text).lstrip(), ["SBL301", "SBL310"])]


def test_loop_built_mount_flags_over_a_known_list_are_an_error():
    text = dedent(
        """\
        #!/bin/bash
        #SBATCH --nodes=2
        MOUNT_ARGS=""
        for d in /lustre/datasets /lustre/checkpoints; do
            MOUNT_ARGS="$MOUNT_ARGS --container-mounts=$d:$d"
        done
        srun --container-image=nvcr.io/nvidia/nemo:25.09 $MOUNT_ARGS python /lustre/checkpoints/train.py
        """
    )
    (finding,) = [d for d in lint_text(text, ["SBL310"]) if d.code == "SBL310"]
    assert finding.severity.value == "error" and finding.fix is None
    assert "the loop on line 4" in finding.message and "2 entries" in finding.message
    assert at(text, finding) == 'MOUNT_ARGS="$MOUNT_ARGS --container-mounts=$d:$d"'
    # the datasets mount, appended first, is lost: its path is not mounted
    assert [d.code for d in lint_text(text.replace("/lustre/checkpoints/train.py", "/lustre/datasets/train.py"), ["SBL301"])] == ["SBL301"]
    assert not lint_text(text, ["SBL301"])


def test_loop_built_mount_flags_over_an_unknown_list_are_a_warning():
    text = dedent(
        """\
        #!/bin/bash
        #SBATCH --nodes=2
        SRUN_ARGS=(--container-image=nvcr.io/nvidia/nemo:25.09)
        for m in $EXTRA_MOUNTS; do
            SRUN_ARGS+=(--container-mounts="$m")
        done
        srun "${SRUN_ARGS[@]}" python train.py
        """
    )
    (finding,) = [d for d in lint_text(text, ["SBL310"]) if d.code == "SBL310"]
    assert finding.severity.value == "warning" and finding.fix is None
    assert "per entry of `$EXTRA_MOUNTS`" in finding.message
    assert "two or more entries" in said(finding)
    one_entry = text.replace("$EXTRA_MOUNTS", "/lustre/datasets:/lustre/datasets")
    assert not lint_text(one_entry, ["SBL310"])


def test_exported_pyxis_container_mounts_give_a_step_its_mounts():
    """Recent pyxis reads PYXIS_CONTAINER_MOUNTS (and the other PYXIS_CONTAINER_* forms) from
    srun's environment when the step gives no flag."""
    text = dedent(
        """\
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --gpus-per-node=8
        export PYXIS_CONTAINER_MOUNTS=/lustre/fsw/alice:/lustre/fsw/alice
        srun --container-image=nvcr.io/nvidia/nemo:25.09 python /lustre/fsw/alice/train.py
        """
    )
    (container,) = containers(script_of(text)).steps
    assert container.has_mounts and container.from_environment == {"container-mounts": "PYXIS_CONTAINER_MOUNTS"}
    assert container.mounted(PathValue.literal("/lustre/fsw/alice/train.py")) is True
    assert not [d for d in lint_text(text, ["SBL301", "SBL305", "SBL306"])]
    # not exported: srun never sees it
    assert "SBL306" in codes(text.replace("export PYXIS", "PYXIS"))
    # the flag wins over the environment
    flagged = text.replace("nemo:25.09", "nemo:25.09 --container-mounts=/scratch/bob:/scratch/bob")
    assert [d.code for d in lint_text(flagged, ["SBL301"])] == ["SBL301"]
    # an exported image containerizes a step that names none
    imaged = text.replace("export PYXIS_CONTAINER_MOUNTS", "export PYXIS_CONTAINER_IMAGE=nvcr.io/nvidia/nemo:25.09\nexport PYXIS_CONTAINER_MOUNTS")
    imaged = imaged.replace("srun --container-image=nvcr.io/nvidia/nemo:25.09 ", "srun ")
    (container,) = containers(script_of(imaged)).steps
    assert container.containerized and container.from_environment["container-image"] == "PYXIS_CONTAINER_IMAGE"


def test_an_unreadable_mount_value_may_cover_anything():
    script = script_of(
        """
        #!/bin/bash
        srun --container-image=x --container-mounts="$(cat mounts.txt)" python /lustre/a/train.py
        """
    )
    (container,) = containers(script).steps
    assert container.mounted(PathValue.literal("/lustre/a/train.py")) is None


def test_paths_on_each_side():
    script = script_of(
        """
        #!/bin/bash
        #SBATCH --output=/lustre/fsw/alice/logs/%x_%j.log
        WORKDIR=/lustre/fsw/alice/Megatron-Bridge
        CKPT=/lustre/fsw/alice/ckpt
        mkdir -p $CKPT
        export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
        CMD="cd $WORKDIR && uv run python scripts/training/run_recipe.py checkpoint.save=$CKPT/run1"
        CMD="$CMD --tokenizer /opt/tokenizers/llama.model"
        srun --container-image=x --container-mounts=/lustre/fsw:/lustre/fsw bash -c "$CMD"
        """
    )
    analysis = containers(script)
    host = {(p.kind, p.path.text) for p in analysis.host_paths}
    assert ("output", "/lustre/fsw/alice/logs") in host
    assert ("mkdir", "/lustre/fsw/alice/ckpt") in host
    assert ("cache", "/lustre/fsw/alice/cache/uv") in host
    inside = [(p.kind, p.path.text, p.variable) for p in analysis.container_paths]
    assert ("cd", "/lustre/fsw/alice/Megatron-Bridge", "WORKDIR") in inside
    assert ("argument", "/lustre/fsw/alice/ckpt/run1", "CKPT") in inside
    assert ("cache", "/lustre/fsw/alice/cache/uv", "UV_CACHE_DIR") in inside
    # the path is located where it is written inside the task string
    use = next(p for p in analysis.container_paths if p.path.text.endswith("/run1"))
    assert script.text(use.span) == "$CKPT/run1"
    shared = {p.path.text: analysis.is_shared(p.path) for p in analysis.container_paths}
    assert shared["/lustre/fsw/alice/ckpt/run1"] is True
    assert shared["/opt/tokenizers/llama.model"] is False


def test_image_paths_are_not_shared_but_host_paths_are():
    script = script_of(
        """
        #!/bin/bash
        mkdir -p /mnt/weka/alice/runs
        srun --container-image=x --container-mounts=/mnt/weka/alice:/mnt/weka/alice true
        """
    )
    analysis = containers(script)
    assert not analysis.is_shared(PathValue.literal("/opt/Megatron-Bridge"))
    assert not analysis.is_shared(PathValue.literal("/workspace/results"))
    assert not analysis.is_shared(PathValue.literal("/root/.cache/nemo"))
    assert analysis.is_shared(PathValue.literal("/scratch/bob/data"))
    assert analysis.is_shared(PathValue.literal("/mnt/weka/alice/runs/1"))  # a mount source / host path
    assert not analysis.is_shared(PathValue.literal("/mnt/other"))


def test_configured_shared_roots_replace_the_guess():
    text = """
        #!/bin/bash
        srun --container-image=x --container-mounts=/lustre/a:/lustre/a true
        """
    analysis = containers(script_of(text, {"shared_roots": ["/vast"]}))
    assert analysis.is_shared(PathValue.literal("/vast/proj/data"))
    assert not analysis.is_shared(PathValue.literal("/lustre/b"))


def test_environment_a_task_sees():
    script = script_of(
        """
        #!/bin/bash
        export HF_HOME=/lustre/hf
        UV_CACHE_DIR=/lustre/uv
        srun --container-image=x bash -c "export NEMO_HOME=/lustre/nemo && python train.py"
        srun --export=ALL,HF_HOME=/gpfs/hf --container-image=x python train.py
        srun --export=NONE --container-image=x python train.py
        """
    )
    analysis = containers(script)
    first, second, third = script.steps
    assert analysis.task_env(first, "HF_HOME").where == "batch"
    assert analysis.task_env(first, "UV_CACHE_DIR").where == "batch-unexported"
    nemo = analysis.task_env(first, "NEMO_HOME")
    assert nemo.where == "task" and nemo.value.text == "/lustre/nemo"
    assert analysis.task_env(second, "HF_HOME").value.text == "/gpfs/hf"
    assert analysis.task_env(third, "HF_HOME").where == "unset"


def test_the_analysis_is_shared_between_rules():
    script = script_of("#!/bin/bash\nsrun --container-image=x true\n")
    assert containers(script) is containers(script)


# -- fixtures modelled on real jobs --------------------------------------------------------------
def test_bridge_sft_with_caches_under_the_mount_is_clean():
    text = fixture("bridge_sft_clean.sh")
    assert codes(text) == []
    assert not [d for d in lint_text(text) if d.severity.value == "error"]


def test_hf_home_inside_the_container():
    text = fixture("bridge_sft_hf_home_in_container.sh")
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL304" and "HF_HOME" in diagnostic.message
    assert at(text, diagnostic) == "/root/.cache/huggingface"
    assert fix_text(text, ["SBL304"]) == text  # unsafe: not applied by --fix
    fixed = fix_text(text, ["SBL304"], unsafe=True)
    assert 'export HF_HOME="${SHARED}/cache/huggingface"\n' in fixed
    assert fixed == fixture("bridge_sft_clean.sh").replace(
        "export HF_HOME=${SHARED}/cache/huggingface", 'export HF_HOME="${SHARED}/cache/huggingface"'
    )
    assert codes(fixed) == []


def test_no_nemo_home_on_two_nodes():
    text = fixture("bridge_sft_no_nemo_home.sh")
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL303" and diagnostic.severity.value == "error"
    assert "llama31_8b_sft_config" in said(diagnostic)
    fixed = fix_text(text, ["SBL303"], unsafe=True)
    assert 'export HF_HOME=${SHARED}/cache/huggingface\nexport NEMO_HOME="${SHARED}/cache/nemo"\n' in fixed
    assert codes(fixed) == []
    # on one node the packed data is where every rank looks
    assert codes(text.replace("#SBATCH --nodes=2", "#SBATCH --nodes=1")) == []


def test_mounts_without_image_on_one_step():
    text = fixture("bridge_sft_mounts_without_image.sh")
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL305"
    assert at(text, diagnostic) == "--container-mounts=$MOUNTS"
    assert text.encode()[: diagnostic.span.start].count(b"\n") + 1 == 23  # the conversion step


def test_megatron_lm_with_and_without_pythonpath():
    clean = fixture("mlm_pretrain_gpt.sh")
    assert codes(clean) == []
    text = fixture("mlm_pretrain_gpt_no_pythonpath.sh")
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL308"
    assert at(text, diagnostic) == "${WORKDIR}/3rdparty/Megatron-LM/pretrain_gpt.py"
    fixed = fix_text(text, ["SBL308"])
    assert "&& PYTHONPATH=${WORKDIR}/3rdparty/Megatron-LM:\\${PYTHONPATH:-} \\\nuv run --no-sync" in fixed
    assert codes(fixed) == []
    assert not [d for d in lint_text(fixed) if d.severity.value == "error"]


# -- individual rules ----------------------------------------------------------------------------
HEADER = """\
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
export HF_HOME=/lustre/fsw/alice/cache/huggingface
export NEMO_HOME=/lustre/fsw/alice/cache/nemo
"""
STEP = "srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\\n     --container-workdir=/lustre/fsw/alice/Megatron-Bridge "


def test_unmounted_workdir_and_auto_mounts():
    text = HEADER + "srun --container-image=x --container-mounts=/lustre/fsw:/lustre/fsw --container-workdir=/gpfs/alice/repo python train.py\n"
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL301" and "fails at start" in said(diagnostic)
    assert codes(text, {"container_auto_mounts": ["/gpfs"]}) == []


def test_a_path_mounted_under_another_name():
    text = HEADER + dedent(
        """\
        RUN=/lustre/fsw/alice/runs/exp1
        mkdir -p $RUN
        srun --container-image=x --container-mounts=/lustre/fsw:/lustre/fsw,/lustre/fsw/alice/runs:/runs \\
             python /lustre/fsw/alice/train.py --save /runs/exp1 --log-dir $RUN/logs
        """
    )
    assert codes(text) == ["SBL302"]
    (diagnostic,) = found(text)
    assert at(text, diagnostic) == "/lustre/fsw/alice/runs:/runs"


@pytest.mark.parametrize(
    "task, expected",
    [
        ("uv run python convert.py", ["SBL307"]),
        ("uv run --frozen python convert.py", ["SBL307"]),  # --frozen still installs
        ("uv run --locked python convert.py", ["SBL307"]),
        ("uv sync && uv run --no-sync python convert.py", ["SBL307"]),
        ("uv run --no-sync python convert.py", []),
        ("uv run --no-project python convert.py", []),
        ("uv sync --check && uv run --no-sync python convert.py", []),
        ("UV_NO_SYNC=1 uv run python convert.py", []),
    ],
)
def test_which_uv_commands_sync(task, expected):
    text = HEADER + STEP + f"bash -c '{task}'\n"
    assert codes(text) == expected


def test_uv_sync_guards_and_warm_ups():
    guarded = HEADER + STEP + "bash -c 'if [ \"$SLURM_LOCALID\" -eq 0 ]; then uv sync; else sleep 10; fi && uv run --no-sync python x.py'\n"
    assert codes(guarded) == []
    warmed = HEADER + STEP.replace("srun ", "srun -N1 -n1 ") + "uv sync\n" + STEP + "uv run python x.py\n"
    assert codes(warmed) == []
    exported = HEADER + "export UV_NO_SYNC=1\n" + STEP + "uv run python x.py\n"
    assert codes(exported) == []
    one_node = HEADER.replace("--nodes=2", "--nodes=1") + STEP + "uv run python x.py\n"
    assert codes(one_node) == []


def test_uv_warm_up_fix_keeps_indentation_and_flags():
    text = HEADER + "for i in 1 2; do\n    " + STEP.replace("\n     ", " ") + "uv run --extra cuda python x.py\ndone\n"
    fixed = fix_text(text, ["SBL307"])
    warm = (
        "    srun --nodes=1 --ntasks=1 --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw "
        "--container-workdir=/lustre/fsw/alice/Megatron-Bridge uv sync --extra cuda\n"
    )
    assert warm in fixed
    assert codes(fixed) == []


def test_no_warm_up_fix_where_a_line_cannot_go():
    text = HEADER + "cd /lustre/fsw/alice && " + STEP.replace("\n     ", " ") + "uv run python x.py\n"
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL307" and diagnostic.fix is None


def test_stale_experiment_dir_cases():
    launch = "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config"
    assert codes(HEADER + STEP + launch + "\n") == ["SBL309"]
    assert codes(HEADER + STEP + launch + " checkpoint.load=/lustre/fsw/alice/ckpt\n") == []
    assert codes(HEADER + STEP + launch + " --resume\n") == []
    # an explicit checkpoint directory: the checkpoints do not go to nemo_experiments
    assert codes(HEADER + STEP + launch + " checkpoint.save=/lustre/fsw/alice/runs/${SLURM_JOB_ID}\n") == []
    assert codes(HEADER + STEP + launch + " --save /lustre/fsw/alice/runs/exp1\n") == []
    in_task = HEADER + STEP + f"bash -c 'rm -rf nemo_experiments && {launch}'\n"
    assert codes(in_task) == []
    # the image's own working directory does not outlive the step
    ephemeral = HEADER + "srun --container-image=x --container-mounts=/lustre/fsw:/lustre/fsw python /opt/Megatron-Bridge/scripts/training/run_recipe.py\n"
    assert codes(ephemeral) == []
    # conversion is not training
    assert codes(HEADER + STEP + "python examples/conversion/convert_checkpoints.py import\n") == []


def test_stale_experiment_dir_fix_without_a_container_uses_the_batch_directory():
    text = HEADER + "cd /lustre/fsw/alice/Megatron-Bridge\nsrun python scripts/training/run_recipe.py --recipe x_pretrain_config\n"
    fixed = fix_text(text, ["SBL309"], unsafe=True)
    assert '\nif [ "${SLURM_RESTART_COUNT:-0}" -eq 0 ]; then rm -rf nemo_experiments; fi\nsrun python' in fixed
    # the guarded removal counts as the removal: the fixed text is clean, and fixing again adds nothing
    assert "SBL309" not in codes(fixed)
    assert fix_text(fixed, ["SBL309"], unsafe=True) == fixed


def test_stale_experiment_dir_fix_keeps_a_requeued_jobs_checkpoints(tmp_path):
    """A requeued job runs the script again with SLURM_RESTART_COUNT >= 1: the fix's removal runs
    on the first start only (bash runs the fixed line both ways)."""
    import subprocess

    text = HEADER + "cd /lustre/fsw/alice/Megatron-Bridge\nsrun python scripts/training/run_recipe.py --recipe x_pretrain_config\n"
    fixed = fix_text(text, ["SBL309"], unsafe=True)
    (line,) = [l for l in fixed.splitlines() if "nemo_experiments" in l]
    for restarts, kept in (("", False), ("0", False), ("1", True), ("3", True)):
        (tmp_path / "nemo_experiments").mkdir(exist_ok=True)
        env = {"PATH": "/usr/bin:/bin"}
        if restarts:
            env["SLURM_RESTART_COUNT"] = restarts
        subprocess.run(["bash", "-euc", line], cwd=tmp_path, env=env, check=True)
        assert (tmp_path / "nemo_experiments").exists() is kept


def test_fine_tuning_detection():
    base = HEADER.replace("export NEMO_HOME=/lustre/fsw/alice/cache/nemo\n", "") + STEP
    recipe = "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config"
    packed = " dataset.enable_offline_packing=true\n"
    assert "SBL303" not in codes(base + recipe + packed)
    assert "SBL303" in codes(base + recipe + " --peft lora" + packed)
    assert "SBL303" in codes(base + recipe + " peft=lora" + packed)
    assert "SBL303" not in codes(base + recipe + " --peft_scheme none" + packed)
    assert "SBL303" in codes(base + "python scripts/training/run_recipe.py --mode finetune --recipe x" + packed)


def test_nemo_home_only_matters_for_data_prepared_under_it():
    """SBL303 needs a sign that packed data is prepared under NEMO_HOME, not just an SFT recipe."""
    base = HEADER.replace("export NEMO_HOME=/lustre/fsw/alice/cache/nemo\n", "") + STEP
    sft = "python scripts/training/run_recipe.py --recipe llama3_8b_sft_config"
    assert "SBL303" not in codes(base + sft + "\n")
    assert "SBL303" not in codes(base + sft + " dataset.enable_in_batch_packing=true\n")
    assert "SBL303" not in codes(base + sft + " dataset.packed_sequence_specs.packed_sequence_size=-1\n")
    assert "SBL303" not in codes(base + sft + " dataset.enable_offline_packing=false dataset.offline_packing_specs.packed_sequence_size=4096\n")
    for signal in (
        " dataset.packed_sequence_specs.packed_sequence_size=4096",
        " dataset.enable_offline_packing=true",
        " --packed-sequence",
        " pack_sequences=true",
        " model.seq_packing=True",
    ):
        (diagnostic,) = [d for d in found(base + sft + signal + "\n") if d.code == "SBL303"]
        assert signal.strip() in said(diagnostic)
    packed_file = " dataset.packed_train_data_path=/lustre/fsw/alice/data/packed_4096.npy\n"
    (diagnostic,) = [d for d in found(base + sft + packed_file) if d.code == "SBL303"]
    assert "a packed dataset file" in said(diagnostic)
    packing_recipe = base + "python scripts/training/run_recipe.py --recipe llama3_8b_sft_packed_config\n"
    (diagnostic,) = [d for d in found(packing_recipe) if d.code == "SBL303"]
    assert "the packing recipe `llama3_8b_sft_packed_config`" in said(diagnostic)
    # the submitter's NEMO_HOME passed through: the submitter knows where it is
    assert "SBL303" not in codes(base.replace("export HF_HOME", "export NEMO_HOME\nexport HF_HOME") + sft + " --packed-sequence\n")
    assert "SBL303" not in codes(
        base.replace("export HF_HOME", '[ -n "${NEMO_HOME:-}" ] && export NEMO_HOME\nexport HF_HOME') + sft + " --packed-sequence\n"
    )


def test_unpacked_sft_fixture_has_no_nemo_home_finding():
    assert codes(fixture("bridge_sft_unpacked.sh")) == []
    # the same job with the packing prepared offline: its overrides live in a variable
    packed = fixture("bridge_sft_unpacked.sh").replace("enable_in_batch_packing", "enable_offline_packing")
    (diagnostic,) = found(packed)
    assert diagnostic.code == "SBL303" and "`dataset.enable_offline_packing=true`" in said(diagnostic)


def test_a_packing_step_in_the_job_puts_the_packed_files_under_nemo_home():
    (diagnostic,) = found(fixture("bridge_sft_prepared_packing.sh"))
    assert diagnostic.code == "SBL303"
    assert "the packing step `prepare_packed_sequences.py`" in said(diagnostic)
    fixed = fix_text(fixture("bridge_sft_prepared_packing.sh"), ["SBL303"], unsafe=True)
    assert 'export HF_HOME=$WORK/cache/huggingface\nexport NEMO_HOME="$WORK/cache/nemo"\n' in fixed
    assert codes(fixed) == []


def test_self_contained_images_need_no_mounts():
    """SBL306: a benchmark or a program the image carries, with no host path, needs no mount."""
    text = fixture("benchmark_images_without_mounts.sbatch")
    assert "SBL306" not in codes(text)
    # the same programs once the step uses the shared filesystem
    shared = text.replace("all_reduce_perf -b 8", "all_reduce_perf -o /lustre/fsw/alice/nccl.json -b 8")
    (diagnostic,) = [d for d in found(shared) if d.code == "SBL306"]
    assert at(shared, diagnostic) == "--container-image=registry.example.org/perf/nccl-tests:2.13"
    # a stock framework image carries no program of the user's: a relative script is the user's file
    stock = text.replace("./moe-dispatch.sqsh torchrun", "nvcr.io/nvidia/pytorch:25.01-py3 torchrun")
    assert [d.code for d in found(stock)] == ["SBL306"]
    # a program on the shared filesystem lives on the host
    host = HEADER + "srun --container-image=./fabric-probe.sqsh /lustre/fsw/alice/bin/put_latency\n"
    assert codes(host) == ["SBL306"]


def test_cache_not_exported_is_fixed_by_exporting():
    guarded = "bash -c 'if [ \"$SLURM_LOCALID\" = 0 ]; then uv sync; fi'\n"
    text = HEADER.replace("export UV_CACHE_DIR", "UV_CACHE_DIR") + STEP + guarded
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL304" and "not exported" in said(diagnostic)
    fixed = fix_text(text, ["SBL304"], unsafe=True)
    assert fixed == text.replace("UV_CACHE_DIR=", "export UV_CACHE_DIR=")


def test_no_cache_fix_without_a_shared_directory_in_the_script():
    text = dedent(
        """\
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        #SBATCH --gpus-per-node=8
        srun --container-image=x --container-mounts=$MOUNTS uv pip install --system /opt/app
        """
    )
    (diagnostic,) = found(text)
    assert diagnostic.code == "SBL304" and diagnostic.fix is None
    assert "<" not in fix_text(text, None, unsafe=True)


def test_container_step_without_mounts_and_probes():
    assert codes(HEADER + "srun --container-image=x python /lustre/fsw/train.py\n") == ["SBL306"]
    assert codes(HEADER + "srun --ntasks-per-node=1 --container-image=x nvidia-smi\n") == []


def test_uv_cache_only_matters_where_many_nodes_fill_it():
    header = HEADER.replace("export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv\n", "")
    phased = header + STEP.replace("srun ", "srun --nodes=1 --ntasks=1 ") + "uv sync\n" + STEP + "uv run --no-sync python x.py\n"
    assert codes(phased) == []
    per_node = header + STEP + "bash -c 'if [ \"$SLURM_LOCALID\" = 0 ]; then uv sync; fi && uv run --no-sync python x.py'\n"
    assert codes(per_node) == ["SBL304"]


def test_a_shared_directory_mounted_over_the_default_cache():
    header = HEADER.replace("export HF_HOME=/lustre/fsw/alice/cache/huggingface\n", "")
    step = STEP.replace("/lustre/fsw:/lustre/fsw", "/lustre/fsw:/lustre/fsw,/lustre/fsw/alice/hf:/root/.cache/huggingface")
    assert codes(header + step + "python examples/conversion/convert_checkpoints.py --hf-model m\n") == []
    local = STEP.replace("/lustre/fsw:/lustre/fsw", "/lustre/fsw:/lustre/fsw,/tmp/hf:/root/.cache/huggingface")
    assert codes(header + local + "python examples/conversion/convert_checkpoints.py --hf-model m\n") == ["SBL304"]


def test_uv_warm_up_keeps_the_project_location():
    text = HEADER + STEP.replace("\n     ", " ") + "uv --directory /lustre/fsw/alice/Megatron-Bridge run --extra te python x.py\n"
    fixed = fix_text(text, ["SBL307"])
    assert "uv sync --directory /lustre/fsw/alice/Megatron-Bridge --extra te\n" in fixed
    assert codes(fixed) == []


def test_nemo_fine_tuning_in_a_nemo_image():
    header = HEADER.replace("export NEMO_HOME=/lustre/fsw/alice/cache/nemo\n", "")
    step = "srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw "
    assert codes(header + step + "python /lustre/fsw/alice/finetune_llama.py --packed\n") == ["SBL303"]
    other = "srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/lustre/fsw:/lustre/fsw "
    assert codes(header + other + "python /lustre/fsw/alice/finetune_llama.py --packed\n") == []


def test_auto_mounts_from_a_configuration_file(tmp_path):
    from sbatchlint.config import load

    path = tmp_path / ".sbatchlint.toml"
    path.write_text('container-auto-mounts = ["/gpfs"]\nshared-roots = ["/gpfs", "/lustre"]\n')
    settings = load(str(path)).settings
    assert settings == {"container_auto_mounts": ["/gpfs"], "shared_roots": ["/gpfs", "/lustre"]}
    text = HEADER + "srun --container-image=x --container-mounts=/lustre/fsw:/lustre/fsw python /gpfs/alice/train.py\n"
    assert codes(text) == ["SBL301"]
    assert codes(text, settings) == []


def test_slurm_log_files_in_a_renamed_mount_are_no_batch_shell_use():
    """SBL302: `--output`/`--error` (header or srun) are opened by Slurm on the host; a job
    directory mounted elsewhere that only holds them shares no path between the two sides."""
    text = fixture("logs_in_renamed_job_dir.sh")
    assert "SBL302" not in codes(text)
    # the batch shell writing a file there that the task reads under the other name still counts
    staged = text.replace(
        "srun --output",
        "cp run.yaml /scratch/team/experiments/pretrain/configs/run.yaml\nsrun --output",
    )
    (finding,) = [d for d in found(staged) if d.code == "SBL302"]
    assert "the batch shell uses `/scratch/team/experiments/pretrain/configs/run.yaml`" in said(finding)


def test_repeated_container_mounts_are_one_list_after_the_fix():
    """SBL310: only the last --container-mounts reaches pyxis on the remote side; the safe fix
    joins the written flags, as written, into one list."""
    text = fixture("repeated_mounts.sh")
    (finding,) = [d for d in lint_text(text, ["SBL310"]) if d.code == "SBL310"]
    assert finding.severity.value == "error"
    assert "only the last one (`/lustre/datasets:/lustre/datasets`)" in said(finding)
    assert "`/lustre/fsw/team/llama:/lustre/fsw/team/llama` is not mounted" in said(finding)
    fixed = fix_text(text, ["SBL310"])
    assert fixed.count("--container-mounts") == 1
    assert '--container-mounts="$WORKSPACE:$WORKSPACE,/lustre/datasets:/lustre/datasets" \\\n' in fixed
    assert not [d for d in lint_text(fixed, ["SBL310"]) if d.code == "SBL310"]


def test_repeated_container_mounts_in_a_variable_are_reported_without_a_fix():
    text = dedent(
        """\
        #!/bin/bash
        #SBATCH --nodes=2
        MOUNTS="--container-mounts=/lustre/a:/lustre/a --container-mounts=/lustre/b:/lustre/b"
        srun --container-image=nvcr.io/nvidia/nemo:25.04 $MOUNTS python train.py
        """
    )
    (finding,) = [d for d in lint_text(text, ["SBL310"]) if d.code == "SBL310"]
    assert finding.fix is None
    assert fix_text(text, ["SBL310"]) == text


def test_a_step_attached_to_a_running_named_container_keeps_its_mounts():
    """SBL306: pyxis attaches a step to the running container of that name (started earlier with
    `&`) and keeps that container's mounts; once the named container has stopped, a step that
    reuses the name gets only its own mounts and is still reported."""
    text = fixture("attach_running_named_container.sh")
    assert "SBL306" not in codes(text)
    stopped = text.replace("python /scratch/team/jobs/run1/start_head.py &", "python /scratch/team/jobs/run1/start_head.py")
    assert "SBL306" in codes(stopped)


def test_cache_from_the_submission_environment_is_not_reported():
    """SBL304: a script that requires HF_HOME from the submitter (`${HF_HOME:?…}`) or passes it on
    (`[ -n "${HF_HOME:-}" ] && export HF_HOME`) does not leave it to the default."""
    base = HEADER.replace("export HF_HOME=/lustre/fsw/alice/cache/huggingface\n", "")
    launch = STEP + "python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B\n"
    assert codes(base + launch) == ["SBL304"]
    assert codes(base + ': "${HF_HOME:?set HF_HOME to a shared cache}"\n' + launch) == []
    assert codes(base + '[ -n "${HF_HOME:-}" ] && export HF_HOME\n' + launch) == []
    # srun --export naming other variables only: the submitter's value does not reach the task
    only = launch.replace("srun ", "srun --export=PATH,UV_CACHE_DIR ")
    assert codes(base + ': "${HF_HOME:?set it}"\n' + only) == ["SBL304"]


def test_default_home_cache_depends_on_the_sites_home_mounting():
    """SBL304: `~/.cache/huggingface` is inside the container unless the home directory is mounted:
    asserted with --no-container-mount-home, none with --container-mount-home, and said to depend
    on the site's enroot configuration when the step leaves it to the site."""
    base = HEADER.replace("export HF_HOME=/lustre/fsw/alice/cache/huggingface\n", "")
    launch = STEP + "python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B\n"
    (site,) = found(base + launch)
    assert "depends on the site" in said(site) and "`--container-mount-home`" in said(site)
    (off,) = found(base + launch.replace("srun ", "srun --no-container-mount-home "))
    assert "depends on the site" not in said(off)
    assert "the default `~/.cache/huggingface` inside the container" in said(off)
    assert codes(base + launch.replace("srun ", "srun --container-mount-home ")) == []
    # an explicit ~/.cache path gets the same treatment
    explicit = base + "export HF_HOME=~/.cache/huggingface\n" + launch
    (home,) = found(explicit)
    assert home.code == "SBL304" and "depends on the site" in said(home)
    assert codes(explicit.replace("srun ", "srun --container-mount-home ")) == []


SELF = "#!/bin/bash\n#SBATCH --nodes=1\n"


def self_dir(text: str):
    return [d for d in lint_text(SELF + text, ["SBL311"]) if d.code == "SBL311"]


@pytest.mark.parametrize(
    "body",
    [
        'source "$(dirname "$0")/env.sh"\n',
        '. "$(dirname "${BASH_SOURCE[0]}")/env.sh"\n',
        'cd "${0%/*}"\nsrun python train.py\n',
        'HERE=$(dirname "$(readlink -f "$0")")\nif [ -f "$HERE/env.sh" ]; then echo ok; fi\n',
        'DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\nCFG="$DIR/configs/llama.yaml"\nsrun python train.py --config "$CFG"\n',
        'ROOT=$(dirname $0)\nsrun bash -c "cd $ROOT && python train.py"\n',
    ],
)
def test_script_directory_read_from_the_spooled_copy(body):
    (finding,) = self_dir(body)
    assert finding.severity.value == "error" and "spool directory" in finding.message
    fixed = fix_text(SELF + body, ["SBL311"], unsafe=True)
    assert "${SLURM_SUBMIT_DIR:-" in fixed
    assert not self_dir(fixed[len(SELF):])  # the fixed text lints clean
    assert fix_text(fixed, ["SBL311"], unsafe=True) == fixed  # and the fix is applied once


@pytest.mark.parametrize(
    "body",
    [
        'echo "job script: $0"\n',  # printing it
        'cp "$0" /lustre/fsw/alice/logs/job.sh\n',  # the script file: the spooled copy is the right text
        'NAME=$(basename "$0")\nmkdir -p "/lustre/fsw/alice/$NAME"\n',  # its name
        'D=${SLURM_SUBMIT_DIR:-$(dirname "$0")}\nsource "$D/env.sh"\n',
        'if [ -n "${SLURM_JOB_ID:-}" ]; then D=$SLURM_SUBMIT_DIR; else D=$(dirname "$0"); fi\nsource "$D/env.sh"\n',
        '[ -z "$SLURM_JOB_ID" ] && source "$(dirname "$0")/env.sh"\n',
        'D=$(dirname "$0")\n[ -n "$SLURM_SUBMIT_DIR" ] && D=$SLURM_SUBMIT_DIR\nsource "$D/env.sh"\n',
        "srun bash -c 'source \"$(dirname \"$0\")/env.sh\"'\n",  # the task's own $0
        'cat > run.sh <<EOF\nsource "$(dirname "$0")/env.sh"\nEOF\n',  # text written for another script
        'DIR=$(dirname "$0")\necho "$DIR"\n',  # assigned, only printed
    ],
)
def test_script_directory_left_alone(body):
    assert not self_dir(body)


WORKDIR_HEAD = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\ncd /lustre/fsw/alice/recipes\n"
NGC_STEP = "srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice "


def workdir_findings(text: str, settings=None):
    return [d for d in lint_text(text, ["SBL312"], settings=settings) if d.code == "SBL312"]


def test_relative_entry_point_starts_in_the_ngc_images_workdir():
    """SBL312: pyxis starts a step without --container-workdir in the image's WORKDIR (NGC:
    /workspace), not where the batch shell cd'ed."""
    text = WORKDIR_HEAD + NGC_STEP + "python train.py --lr 3e-4\n"
    (finding,) = workdir_findings(text)
    assert finding.severity.value == "warning"
    told = " ".join((finding.message,) + tuple(finding.notes))
    assert "`/workspace/train.py`" in told and "`/lustre/fsw/alice/recipes`" in told
    assert at(text, finding) == "train.py"
    assert fix_text(text, ["SBL312"]) == text  # unsafe
    fixed = fix_text(text, ["SBL312"], unsafe=True)
    assert 'srun --container-workdir="$PWD" --container-image=' in fixed
    assert not workdir_findings(fixed) and fix_text(fixed, ["SBL312"], unsafe=True) == fixed
    # pyxis's registry separator names the same image
    assert workdir_findings(text.replace("nvcr.io/nvidia/pytorch", "nvcr.io#nvidia/pytorch"))
    # no cd in the batch shell: still the image's WORKDIR, but no directory to offer
    (nocd,) = workdir_findings(text.replace("cd /lustre/fsw/alice/recipes\n", ""))
    assert nocd.fix is None


@pytest.mark.parametrize(
    "change",
    [
        ("python train.py", "python /lustre/fsw/alice/recipes/train.py"),  # absolute
        ("--container-mounts=", "--container-workdir=/lustre/fsw/alice/recipes --container-mounts="),
        ("python train.py --lr 3e-4", "bash -c 'cd /lustre/fsw/alice/recipes && python train.py --lr 3e-4'"),
        ("/lustre/fsw/alice:/lustre/fsw/alice ", "/lustre/fsw/alice/recipes:/workspace "),  # files at the WORKDIR
        ("nvcr.io/nvidia/pytorch:25.01-py3", "registry.example.com/team/trainer:3"),  # the site's own image
        ("cd /lustre/fsw/alice/recipes\n", "export PYXIS_CONTAINER_WORKDIR=/lustre/fsw/alice/recipes\n"),
    ],
)
def test_relative_entry_point_left_alone(change):
    text = WORKDIR_HEAD + NGC_STEP + "python train.py --lr 3e-4\n"
    assert not workdir_findings(text.replace(*change))


def test_relative_entry_point_in_an_unknown_image_is_an_info():
    text = WORKDIR_HEAD + NGC_STEP.replace("nvcr.io/nvidia/pytorch:25.01-py3", "/lustre/fsw/alice/images/pytorch-25.01.sqsh") + "python train.py\n"
    (finding,) = workdir_findings(text)
    assert finding.severity.value == "info" and "if it sets one" in finding.message
    assert "if the image `/lustre/fsw/alice/images/pytorch-25.01.sqsh` sets a WORKDIR" in finding.notes[0]
    # the cd'ed directory is not mounted at its own path: nothing says the entry point is the host's
    assert not workdir_findings(text.replace("cd /lustre/fsw/alice/recipes", "cd /tmp"))
    # no cd: the entry point may be the image's own
    assert not workdir_findings(text.replace("cd /lustre/fsw/alice/recipes\n", ""))
    # the site lists its image's WORKDIR: a warning
    settings = {"image_workdirs": {"/lustre/fsw/alice/images/*.sqsh": "/opt/app"}}
    (listed,) = workdir_findings(text, settings)
    assert listed.severity.value == "warning" and "`/opt/app/train.py`" in listed.notes[-1]


ARRAY_HEAD = "#!/bin/bash\n#SBATCH --array=0-3\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=8\n"


def array_findings(text: str):
    return [d for d in lint_text(text, ["SBL313"]) if d.code == "SBL313"]


def test_array_elements_sharing_a_checkpoint_directory():
    """SBL313: the elements of an array run at once; one checkpoint directory for all of them."""
    text = ARRAY_HEAD + 'CKPT=/lustre/fsw/$USER/ckpt/sweep\nsrun python /lustre/fsw/alice/train.py --lr "$1" --save $CKPT\n'
    (finding,) = array_findings(text)
    assert finding.severity.value == "warning" and finding.fix is None
    assert "`/lustre/fsw/${USER}/ckpt/sweep`" in finding.message and "`--array=0-3`" in finding.notes[0]
    assert at(text, finding) == "$CKPT"
    for form in ("--output_dir=/lustre/fsw/alice/out", "checkpoint.save=/lustre/fsw/alice/out", "--checkpoint-dir /lustre/fsw/alice/out"):
        assert array_findings(ARRAY_HEAD + f"srun python /lustre/fsw/alice/train.py {form}\n"), form


@pytest.mark.parametrize(
    "text",
    [
        ARRAY_HEAD + 'srun python /lustre/a/train.py --save "/lustre/a/ckpt/run_${SLURM_ARRAY_TASK_ID}"\n',
        ARRAY_HEAD + "srun python /lustre/a/train.py --save /lustre/a/ckpt/$SLURM_JOB_ID\n",
        ARRAY_HEAD + 'LR=$(sed -n "${SLURM_ARRAY_TASK_ID}p" lrs.txt)\nsrun python /lustre/a/train.py --save /lustre/a/ckpt/lr_$LR\n',
        ARRAY_HEAD + "srun bash -c 'python /lustre/a/train.py --save /lustre/a/ckpt/$SLURM_ARRAY_TASK_ID'\n",
        ARRAY_HEAD.replace("0-3", "0-9%1") + "srun python /lustre/a/train.py --save /lustre/a/ckpt/chain\n",  # a chain
        ARRAY_HEAD.replace("0-3", "5") + "srun python /lustre/a/train.py --save /lustre/a/ckpt/one\n",  # one element
        ARRAY_HEAD.replace("#SBATCH --array=0-3\n", "") + "srun python /lustre/a/train.py --save /lustre/a/ckpt/x\n",
    ],
)
def test_array_elements_with_their_own_directories(text):
    assert not array_findings(text)


def test_array_elements_sharing_bridge_experiments():
    """Bridge training with no checkpoint directory writes nemo_experiments where it runs."""
    launch = "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config\n"
    text = ARRAY_HEAD + "cd /lustre/fsw/alice/Megatron-Bridge\nsrun " + launch
    (finding,) = array_findings(text)
    assert "`/lustre/fsw/alice/Megatron-Bridge/nemo_experiments`" in finding.message
    assert not array_findings(text.replace("cd /lustre/fsw/alice/Megatron-Bridge", "cd /lustre/fsw/alice/runs/$SLURM_ARRAY_TASK_ID"))
    assert not array_findings(text.replace("config\n", "config checkpoint.save=/lustre/fsw/alice/ckpt/${SLURM_ARRAY_TASK_ID}\n"))
    # in a container that starts in the image's WORKDIR nothing outlives the step
    image = ARRAY_HEAD + "srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw " + launch
    assert not array_findings(image)
    mounted = image.replace("--container-mounts", "--container-workdir=/lustre/fsw/alice/Megatron-Bridge --container-mounts")
    assert array_findings(mounted)


def test_a_variable_the_image_sets_wins_over_the_host_export():
    """Pyxis sets host variables after the image's own, whose values win unless the variable is
    named in --container-env: with the site's image listed in `image-environment`, the storage
    rules read the image's value."""
    settings = {"image_environment": {"registry.example.com/team/*": {"HF_HOME": "/root/.cache/huggingface"}}}
    launch = (
        "srun --container-image=registry.example.com/team/trainer:3 --container-mounts=/lustre/fsw:/lustre/fsw \\\n"
        "     python /lustre/fsw/alice/convert.py --hf-model meta-llama/Llama-3.1-8B\n"
    )
    text = HEADER + launch
    assert "SBL304" not in codes(text)  # without the setting: the exported shared HF_HOME
    (finding,) = [d for d in found(text, settings) if d.code == "SBL304"]
    assert "the image sets `HF_HOME` to `/root/.cache/huggingface`" in said(finding)
    assert "wins over the script's `/lustre/fsw/alice/cache/huggingface`" in said(finding)
    assert finding.fix is None
    # named in --container-env: the host's value reaches the task
    listed = text.replace("srun --container-image", "srun --container-env=HF_HOME --container-image")
    assert "SBL304" not in codes(listed, settings)
    # set in the task command itself: the task's own assignment wins
    own = text.replace(
        "python /lustre/fsw/alice/convert.py --hf-model meta-llama/Llama-3.1-8B",
        "bash -c 'HF_HOME=/lustre/fsw/alice/cache/huggingface python /lustre/fsw/alice/convert.py --hf-model meta-llama/Llama-3.1-8B'",
    )
    assert "SBL304" not in codes(own, settings)
    # an image that points the cache at shared storage: nothing to report even when the script sets nothing
    shared = {"image_environment": {"registry.example.com/team/*": {"HF_HOME": "/lustre/fsw/hf"}}}
    unset = text.replace("export HF_HOME=/lustre/fsw/alice/cache/huggingface\n", "")
    assert "SBL304" in codes(unset)
    assert "SBL304" not in codes(unset, shared)


def test_pyxis_container_mount_home_and_env_from_the_environment():
    """pyxis reads PYXIS_CONTAINER_MOUNT_HOME (1/true/yes/y, 0/false/no/n) and PYXIS_CONTAINER_ENV
    from srun's environment when the step gives neither flag (pyxis args.c)."""
    base = HEADER.replace("export HF_HOME=/lustre/fsw/alice/cache/huggingface\n", "")
    launch = STEP + "python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B\n"
    (site,) = found(base + launch)
    assert "depends on the site" in said(site)
    for on in ("1", "true", "yes", "y"):
        assert codes(base + f"export PYXIS_CONTAINER_MOUNT_HOME={on}\n" + launch) == [], on
    (off,) = found(base + "export PYXIS_CONTAINER_MOUNT_HOME=no\n" + launch)
    assert "depends on the site" not in said(off) and "inside the container" in said(off)
    # a value pyxis ignores, an unexported one, and a flag on the step, which wins
    assert "depends on the site" in said(found(base + "export PYXIS_CONTAINER_MOUNT_HOME=on\n" + launch)[0])
    assert "depends on the site" in said(found(base + "PYXIS_CONTAINER_MOUNT_HOME=1\n" + launch)[0])
    flagged = base + "export PYXIS_CONTAINER_MOUNT_HOME=1\n" + launch.replace("srun ", "srun --no-container-mount-home ")
    assert "inside the container" in said(found(flagged)[0])
    # PYXIS_CONTAINER_ENV names the variables whose host value wins over the image's
    settings = {"image_environment": {"registry.example.com/team/*": {"HF_HOME": "/root/.cache/huggingface"}}}
    image = HEADER + (
        "srun --container-image=registry.example.com/team/trainer:3 --container-mounts=/lustre/fsw:/lustre/fsw \\\n"
        "     python /lustre/fsw/alice/convert.py --hf-model meta-llama/Llama-3.1-8B\n"
    )
    assert "SBL304" in codes(image, settings)
    assert "SBL304" not in codes(image.replace("srun ", "export PYXIS_CONTAINER_ENV=NCCL_DEBUG,HF_HOME\nsrun "), settings)
    assert "SBL304" in codes(image.replace("srun ", "export PYXIS_CONTAINER_ENV=NCCL_DEBUG\nsrun "), settings)


def test_stale_experiment_dir_follows_where_pyxis_starts_the_task():
    """SBL309 with no --container-workdir: pyxis starts the task in the image's WORKDIR, else in
    the job's directory when it is mounted (DOMAIN.md §9, as SBL312 reads it)."""
    launch = "python /lustre/fsw/alice/Megatron-Bridge/scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config\n"
    head = HEADER + "cd /lustre/fsw/alice/Megatron-Bridge\n"
    sqsh = head + "srun --kill-on-bad-exit=1 --container-image=/lustre/fsw/images/nemo-25.09.sqsh --container-mounts=/lustre/fsw:/lustre/fsw " + launch
    (finding,) = found(sqsh)
    assert finding.code == "SBL309" and finding.severity.value == "info" and finding.fix is None
    assert "unless the image `/lustre/fsw/images/nemo-25.09.sqsh` sets a WORKDIR" in finding.notes[0]
    assert "`/lustre/fsw/alice/Megatron-Bridge`, mounted at the same path" in finding.notes[0]
    # an image given by a variable: the same
    variable = sqsh.replace("--container-image=/lustre/fsw/images/nemo-25.09.sqsh", '--container-image="$IMAGE"')
    assert [(d.code, d.severity.value) for d in found(variable)] == [("SBL309", "info")]
    # the batch directory mounted elsewhere, or not at all: nothing says the task starts there
    assert "SBL309" not in codes(sqsh.replace("--container-mounts=/lustre/fsw:/lustre/fsw", "--container-mounts=/lustre/fsw:/mnt"))
    # an NGC image starts in its own /workspace, gone with the container
    ngc = sqsh.replace("/lustre/fsw/images/nemo-25.09.sqsh", "nvcr.io/nvidia/nemo:25.09")
    assert codes(ngc) == []
    # ... unless /workspace is itself a mount: nemo_experiments lands on the host, and the fix removes it there
    mounted = ngc.replace("/lustre/fsw:/lustre/fsw", "/lustre/fsw:/lustre/fsw,/lustre/fsw/alice/run1:/workspace")
    (finding,) = found(mounted)
    assert finding.code == "SBL309" and finding.severity.value == "warning"
    assert "rm -rf /lustre/fsw/alice/run1/nemo_experiments; fi\n" in fix_text(mounted, ["SBL309"], unsafe=True)
    # a site's image listed with its WORKDIR behaves like the NGC one
    assert codes(sqsh, {"image_workdirs": {"/lustre/fsw/images/*.sqsh": "/opt/app"}}) == []


# -- a step re-read for every alternative value of its srun words -----------------------------------
_ALTERNATIVE_MOUNTS = [
    """
    #!/bin/bash
    #SBATCH --nodes=2
    IMG=nvcr.io/nvidia/pytorch:24.01-py3
    if [ -n "$FAST" ]; then
      MOUNTS=/scratch/a:/a,/lustre/d:/d
    elif [ -n "$SLOW" ]; then
      MOUNTS=/lustre/d:/d
    else
      MOUNTS=/lustre/d:/d,/home/me:/me:ro
    fi
    ARGS="--container-image=$IMG --container-mounts=$MOUNTS"
    if [ -n "$DEBUG" ]; then ARGS="$ARGS --container-workdir=/w"; fi
    srun $ARGS python train.py
    """,
    """
    #!/bin/bash
    #SBATCH --nodes=2
    EMPTY=
    for M in /lustre/d:/d /scratch/s /lustre/d:$EMPTY; do
      OPTS="--container-mounts=$M"
    done
    srun --container-image=ubuntu $OPTS hostname
    """,
    """
    #!/bin/bash
    #SBATCH --nodes=2
    if [ -n "$A" ]; then M=/x:/y; else M=" , /x:/y,"; fi
    srun --container-image=ubuntu --container-mounts="$M" --container-mounts=/x:/y,/z hostname
    """,
]


def _mounts_seen(script):
    return [
        [(m.source.text, m.destination.text, m.flags, m.span, m.text) for m in step.mounts]
        + [("option", o.span) for o in step.mount_options]
        for step in containers(script).steps
    ]


@pytest.mark.parametrize("text", _ALTERNATIVE_MOUNTS, ids=[f"alternatives{i}" for i in range(len(_ALTERNATIVE_MOUNTS))])
def test_mounts_read_again_only_when_new_give_what_reading_all_gives(text, monkeypatch):
    from sbatchlint.model import containers as model

    quick = _mounts_seen(script_of(text))
    assert any(len(step) > 1 for step in quick)
    findings = [(d.code, d.span, said(d)) for d in found(dedent(text).lstrip("\n"))]
    monkeypatch.setattr(model, "_all_seen", lambda value, seen: False)
    assert _mounts_seen(script_of(text)) == quick
    assert [(d.code, d.span, said(d)) for d in found(dedent(text).lstrip("\n"))] == findings


def test_all_seen_reads_mount_lists_as_the_model_does():
    from sbatchlint.model.containers import _all_seen
    from sbatchlint.model.values import Piece, Value

    def value(*texts):
        return Value(tuple(Piece(t, None) if t is not None else Piece("", None, known=False, name="M") for t in texts))

    seen = {("/a", "/b"), ("/c", "/c"), ("${M}", "${M}")}
    assert _all_seen(value("/a:/b,/c"), seen)
    assert _all_seen(value("/a:/b:ro, ,", "/c::x"), seen)  # flags, blanks; an empty destination is the source
    assert _all_seen(value("/a:/b,", None), seen)
    assert not _all_seen(value("/a:/b,/d"), seen)
    # a piece without text after the ``:`` is a destination of its own, "" (not the source)
    assert not _all_seen(value("/c:", ""), seen)

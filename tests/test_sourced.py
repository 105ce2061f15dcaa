"""Sourced settings files: ``source ./env.sh`` puts the file's variables in the script's model.

What a user sees: a cache variable a settings file exports is checked where it is really set;
a file the model cannot read (a path set at run time, ``$0`` of a batch script, a missing file)
makes what it may set unknown, so no rule claims it is unset; ``plan`` lists every sourced file
and what it read. Each test writes its job and settings files into a directory of its own."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from sbatchlint.cli import main
from sbatchlint.linter import fix, lint
from sbatchlint.model.containers import containers
from sbatchlint.model.script import Script
from sbatchlint.model.sourced import MAX_BYTES
from sbatchlint.plan import Planner
from sbatchlint.source import Source
from lintutil import options, said

HEADER = """\
#!/bin/bash
#SBATCH --job-name=sft
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
"""
STEP = """\
srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
     --container-mounts=/lustre/fsw:/lustre/fsw \\
     torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint="$HEAD_NODE:29500" \\
     /lustre/fsw/alice/sft.py --hf-model meta-llama/Llama-3.1-8B
"""


def write(directory: Path, files: dict) -> Path:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return directory / "job.sh"


def model(job: Path) -> Script:
    return Script(Source(job.read_bytes(), str(job)))


def findings(job: Path, select=("SBL3",)):
    return [d for d in lint(Source(job.read_bytes(), str(job)), options(list(select))) if d.code.startswith("SBL3")]


def value(job: Path, name: str, at: str = "srun") -> list:
    script = model(job)
    offset = script.data.index(at.encode())
    return [v.text for v in script.values.lookup(name, offset)]


def sourced(job: Path) -> list:
    return [(entry.path, entry.reason, entry.approximate) for entry in model(job).values.sourced]


# -- values for the rules ----------------------------------------------------------------------
def test_a_cache_set_in_a_sourced_file_is_checked_where_it_is_set(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "source ./site.sh\n" + STEP, "site.sh": "export HF_HOME=/tmp/hf\n"})
    (diagnostic,) = findings(job)
    assert diagnostic.code == "SBL304"
    assert "`HF_HOME` is `/tmp/hf`, a directory local" in said(diagnostic)
    # reported where the file sets it, with no fix (--fix edits only the files it is given)
    assert diagnostic.path == str(tmp_path / "site.sh") and diagnostic.fix is None
    assert (tmp_path / "site.sh").read_bytes()[diagnostic.span.start:diagnostic.span.end] == b"HF_HOME=/tmp/hf"
    assert diagnostic.notes[-1] == "`job.sh` sources this file at line 6"
    # the same file pointing at the shared filesystem: nothing to say
    (tmp_path / "site.sh").write_text("export HF_HOME=/lustre/fsw/alice/cache/hf\n")
    assert findings(job) == []
    setting = containers(model(job)).task_env(model(job).steps[0], "HF_HOME")
    assert setting.where == "batch" and setting.value.text == "/lustre/fsw/alice/cache/hf"


def test_a_source_the_model_cannot_read_leaves_its_variables_unknown(tmp_path):
    bare = write(tmp_path, {"job.sh": HEADER + STEP})
    (diagnostic,) = findings(bare)
    assert "`HF_HOME` is not set by the script" in said(diagnostic)
    for line in ("source ./missing.sh\n", 'source "$SITE_CONFIG"\n', 'source "$(dirname "$0")/site.sh"\n',
                 "source ~/.bashrc\n"):
        job = write(tmp_path, {"job.sh": HEADER + line + STEP})
        # SBL311 says where `$(dirname "$0")` points in a job; the cache is what is checked here
        assert [d for d in findings(job) if d.code != "SBL311"] == [], line
        script = model(job)
        assert containers(script).task_env(script.steps[0], "HF_HOME").where == "unknown"


def test_values_the_script_set_reach_the_sourced_file_and_back(tmp_path):
    job = write(tmp_path, {
        "job.sh": HEADER + "BASE=/lustre/fsw/alice\nsource ./site.sh\nexport CKPT=$RUNS/ckpt\n" + STEP,
        "site.sh": """\
            # paths of the project
            export HF_HOME="$BASE/cache/hf"
            RUNS=$BASE/runs
            if [ -n "$DEBUG" ]; then
                LOG_LEVEL=debug
            fi
            unset BASE
            """,
    })
    assert value(job, "HF_HOME") == ["/lustre/fsw/alice/cache/hf"]
    assert value(job, "CKPT") == ["/lustre/fsw/alice/runs/ckpt"]
    assert value(job, "BASE") == [""]
    # set only on one branch of the file: either that or whatever it was before
    assert value(job, "LOG_LEVEL") == ["${LOG_LEVEL}", "debug"]
    script = model(job)
    at = script.data.index(b"srun")
    assert script.values.is_exported("HF_HOME", at) and not script.values.is_exported("RUNS", at)
    # before the source command nothing of the file is set
    assert value(job, "RUNS", at="BASE=") == []


def test_set_a_around_the_source_exports_everything(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "set -a\n. ./site.env\nset +a\nX=1\n" + STEP,
                           "site.env": "HF_HOME=/lustre/fsw/alice/hf\n"})
    script = model(job)
    at = script.data.index(b"srun")
    assert script.values.is_exported("HF_HOME", at) and not script.values.is_exported("X", at)


# -- where bash finds the file -----------------------------------------------------------------
def test_relative_paths_go_against_the_working_directory(tmp_path):
    files = {"job.sh": HEADER + '. "$SLURM_SUBMIT_DIR/conf/env.sh"\nsource conf/env.sh\n' + STEP,
             "conf/env.sh": "export HF_HOME=/lustre/fsw/alice/hf\n"}
    job = write(tmp_path, files)
    path = str(tmp_path / "conf" / "env.sh")
    assert sourced(job) == [(path, None, ("submission-directory",)), (path, None, ("submission-directory",))]
    # --chdir moves the working directory, not the submission directory
    (tmp_path / "run" / "conf").mkdir(parents=True)
    (tmp_path / "run" / "conf" / "env.sh").write_text("export HF_HOME=/lustre/fsw/alice/run-hf\n")
    job.write_text(HEADER + "#SBATCH --chdir=run\n" + files["job.sh"][len(HEADER):])
    assert sourced(job) == [(path, None, ("submission-directory",)), (str(tmp_path / "run" / "conf" / "env.sh"), None, ())]
    assert value(job, "HF_HOME") == ["/lustre/fsw/alice/run-hf"]
    # a cd the model follows, and one it cannot
    job.write_text(HEADER + f"cd {tmp_path}/run\nsource conf/env.sh\ncd \"$WORKDIR\"\nsource conf/env.sh\n" + STEP)
    assert sourced(job) == [(str(tmp_path / "run" / "conf" / "env.sh"), None, ()), (None, "working-directory", ())]
    # a bare name: bash looks in PATH before the working directory
    job.write_text(HEADER + "#SBATCH --chdir=run/conf\nsource env.sh\n" + STEP)
    assert sourced(job) == [(str(tmp_path / "run" / "conf" / "env.sh"), None, ("path-search",))]


def test_the_batch_scripts_own_directory_is_the_spool_directory(tmp_path):
    """sbatch runs a copy in slurmd's spool directory: $0 and BASH_SOURCE name that copy."""
    job = write(tmp_path, {
        "job.sh": HEADER + 'SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\nsource "$SCRIPT_DIR/site.sh"\n'
                  '. "$(dirname "$0")/site.sh"\n' + STEP,
        "site.sh": "export HF_HOME=/tmp/hf\n",
    })
    assert sourced(job) == [(None, "spool-directory", ()), (None, "spool-directory", ())]
    # inside a sourced file BASH_SOURCE is that file: its neighbours resolve
    job = write(tmp_path, {
        "job.sh": HEADER + "source ./conf/site.sh\n" + STEP,
        "conf/site.sh": 'source "$(dirname "${BASH_SOURCE[0]}")/common.sh"\nsource common.sh\n',
        "conf/common.sh": "export HF_HOME=/lustre/fsw/alice/hf\n",
        "common.sh": "export UV_CACHE_DIR=/lustre/fsw/alice/uv\n",
    })
    (entry,) = model(job).values.sourced
    assert [(n.path, n.reason) for n in entry.nested] == [(str(tmp_path / "conf" / "common.sh"), None),
                                                          (str(tmp_path / "common.sh"), None)]
    assert value(job, "HF_HOME") == ["/lustre/fsw/alice/hf"] and value(job, "UV_CACHE_DIR") == ["/lustre/fsw/alice/uv"]


def test_cycles_and_large_files_are_not_followed(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "source ./a.sh\nsource ./big.sh\n" + STEP,
                           "a.sh": "A=1\nsource ./b.sh\n", "b.sh": "B=2\nsource ./a.sh\n",
                           "big.sh": "X=1\n" + "# padding\n" * (MAX_BYTES // 10 + 1)})
    script = model(job)
    first, big = script.values.sourced
    (b,) = first.nested
    assert [n.reason for n in b.nested] == ["cycle"]
    assert big.reason == "too-large" and not big.resolved
    assert value(job, "A") == ["1"] and value(job, "B") == ["2"] and value(job, "X") == []


def test_a_conditional_source_gives_alternatives(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "HF_HOME=/lustre/fsw/a\nif [ -f site.sh ]; then\n  source site.sh\nfi\n" + STEP,
                           "site.sh": "HF_HOME=/lustre/fsw/b\n"})
    assert value(job, "HF_HOME") == ["/lustre/fsw/a", "/lustre/fsw/b"]


# -- fixes never edit through a sourced file ---------------------------------------------------
def test_no_fix_rewrites_the_source_line(tmp_path):
    text = HEADER + "source ./site.sh\n" + STEP
    job = write(tmp_path, {"job.sh": text, "site.sh": "HF_HOME=/lustre/fsw/alice/hf\n"})
    (diagnostic,) = findings(job)
    assert "set but not exported" in said(diagnostic)
    result = fix(Source(job.read_bytes(), str(job)), options(["ALL"]), unsafe=True)
    assert b"source ./site.sh\n" in result.data and b"export source" not in result.data


# -- plan ------------------------------------------------------------------------------------------
def test_plan_lists_the_sourced_files_and_their_values(tmp_path):
    job = write(tmp_path, {
        "job.sh": HEADER + "source \"$PROJECT_ENV\"\nsource ./site.sh\nsrun python train.py --cache \"$HF_HOME\" --head \"$HEAD_NODE\"\n",
        "site.sh": "export HF_HOME=/lustre/fsw/alice/hf\n",
    })
    plan = Planner(Source(job.read_bytes(), str(job)), findings=False).build()
    assert plan["job"]["sourced"] == [
        {"line": 6, "operand": '"$PROJECT_ENV"', "path": None, "read": False, "unknown": "run-time",
         "approximate": [], "nested": []},
        {"line": 7, "operand": "./site.sh", "path": str(tmp_path / "site.sh"), "read": True, "unknown": None,
         "approximate": ["submission-directory"], "nested": []},
    ]
    environment = {v["name"]: v["value"] for v in plan["steps"][0]["environment"]}
    assert environment == {"HF_HOME": "/lustre/fsw/alice/hf", "HEAD_NODE": {"unknown": "sourced-file"}}
    result = CliRunner().invoke(main, ["plan", str(job), "--no-findings"])
    assert result.exit_code == 0, result.output
    assert (f"  line 7: source ./site.sh reads {tmp_path}/site.sh (the script's directory standing for the "
            "submission directory)\n") in result.output
    assert '  line 6: source "$PROJECT_ENV" is not read (its path is set at run time) (what it may set is unknown)\n' in result.output
    assert "$HEAD_NODE expanded by the batch shell = unknown (sourced-file)" in result.output


def test_plan_masks_a_credential_from_a_sourced_file(tmp_path):
    token = "hf_" + "Qw3rTy5uI7oP9aS1dF3gH5jK7lZ9xC1vB3n"
    job = write(tmp_path, {"job.sh": HEADER + "source ./secrets.sh\nsrun python train.py --hub \"$HUB\"\n",
                           "secrets.sh": f"HUB={token}\n"})
    for fmt in ("text", "json"):
        result = CliRunner().invoke(main, ["plan", str(job), "--output-format", fmt, "--no-findings"])
        assert result.exit_code == 0, result.output
        assert token not in result.output and "HUB" in result.output


def test_plan_takes_the_slurm_version(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "#SBATCH --cpus-per-task=4\nsrun python train.py\n"})
    runner = CliRunner()
    result = runner.invoke(main, ["plan", str(job), "--slurm-version", "22.05", "--output-format", "json", "--no-findings"])
    assert result.exit_code == 0, result.output
    old = json.loads(result.output)["steps"][0]
    result = runner.invoke(main, ["plan", str(job), "--slurm-version", "24.05", "--output-format", "json", "--no-findings"])
    new = json.loads(result.output)["steps"][0]
    # srun of Slurm 22.05 up to 23.11 does not pass the batch job's --cpus-per-task on to the step
    assert old["cpus_per_task"] == 1 and new["cpus_per_task"] == 4
    result = runner.invoke(main, ["plan", str(job), "--slurm-version", "latest"])
    assert result.exit_code == 2 and "--slurm-version" in result.output and "Traceback" not in result.output


def test_an_unread_source_after_an_assignment_may_replace_it(tmp_path):
    """A file the model cannot read may set a variable again: its earlier value is no longer certain."""
    before = write(tmp_path, {"job.sh": HEADER + 'export HF_HOME=/tmp/hf\nsource "$SITE_ENV"\n' + STEP})
    assert findings(before) == []
    script = model(before)
    assert containers(script).task_env(script.steps[0], "HF_HOME").where == "unknown"
    plan = Planner(Source(before.read_bytes(), str(before)), findings=False).build()
    assert plan["steps"][0]["container"]["HF_HOME"] == {"unknown": "sourced-file"}
    # set after the unread file: the script's own value holds
    after = write(tmp_path, {"job.sh": HEADER + 'source "$SITE_ENV"\nexport HF_HOME=/tmp/hf\n' + STEP})
    (diagnostic,) = findings(after)
    assert "`HF_HOME` is `/tmp/hf`" in said(diagnostic)
    # the batch shell's value of a listed variable, likewise
    job = write(tmp_path, {"job.sh": HEADER + 'RUN=a\nsource "$SITE_ENV"\nsrun python train.py --run "$RUN"\n'})
    plan = Planner(Source(job.read_bytes(), str(job)), findings=False).build()
    assert plan["steps"][0]["environment"] == [{"name": "RUN", "expanded_by": "batch", "value": {"unknown": "sourced-file"}}]


# -- findings in a sourced file: at its own path and lines, once a run ---------------------------
def run_cli(directory: Path, *arguments: str):
    import os

    here = os.getcwd()
    os.chdir(directory)
    try:
        return CliRunner().invoke(main, ["--no-cache", *arguments])
    finally:
        os.chdir(here)


SITE = """\
    # cluster settings shared by the team's jobs
    export HF_TOKEN=hf_QmVyeVNlY3JldFRva2VuVmFsdWUxMjM0
    export HF_HOME=/tmp/hf-cache
    """


def test_a_finding_in_a_sourced_file_is_reported_once_at_its_line(tmp_path):
    write(tmp_path, {"job.sh": HEADER + "source ./site.sh\n" + STEP, "site.sh": SITE})
    (tmp_path / "eval.sh").write_text(HEADER + "#SBATCH --time=01:00:00\n. ./site.sh\n" + STEP)
    result = run_cli(tmp_path, "--output-format", "json", "job.sh", "eval.sh")
    found = [f for f in json.loads(result.output) if f["code"].startswith("SBL3")]
    assert [(f["path"], f["line"], f["column"], f["code"]) for f in found] == [("site.sh", 3, 8, "SBL304")]
    assert found[0]["fix"] is None and found[0]["notes"][-1] == "`job.sh` sources this file at line 6"
    # the text format's code frame shows the sourced file's lines, its secret masked
    result = run_cli(tmp_path, "--select", "SBL304", "job.sh", "eval.sh")
    assert result.output.startswith("site.sh:3:8: SBL304 `HF_HOME` is not shared by the nodes of this multi-node step")
    assert "= note: `HF_HOME` is `/tmp/hf-cache`" in result.output
    assert "3 | export HF_HOME=/tmp/hf-cache" in result.output
    assert "hf_QmVy" not in result.output and "Found 1 problem (1 warning) in 1 file." in result.output


def test_fixing_a_job_leaves_the_file_it_sources_alone(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "source ./site.sh\n" + STEP, "site.sh": SITE})
    before = (job.read_bytes(), (tmp_path / "site.sh").read_bytes())
    result = run_cli(tmp_path, "--fix", "--unsafe-fixes", "--select", "SBL304", "job.sh")
    assert "site.sh:3:8: SBL304" in result.output
    assert (job.read_bytes(), (tmp_path / "site.sh").read_bytes()) == before


def test_a_suppression_in_the_sourced_file_silences_its_finding(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "source ./site.sh\n" + STEP,
                           "site.sh": "export HF_HOME=/tmp/hf-cache  # sbatchlint: disable=SBL304\n"})
    assert findings(job) == []
    # a comment at the job's `source` line is about the job's own lines, not the file's
    job.write_text(HEADER + "source ./site.sh  # sbatchlint: disable=SBL304\n" + STEP)
    (tmp_path / "site.sh").write_text("export HF_HOME=/tmp/hf-cache\n")
    assert [d.path for d in findings(job)] == [str(tmp_path / "site.sh")]


def test_a_rank_a_sourced_file_exports_is_reported_in_that_file(tmp_path):
    job = write(tmp_path, {
        "job.sh": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n. conf/dist.env\n"
                  "srun --kill-on-bad-exit=1 python train.py\n",
        "conf/dist.env": "export MASTER_PORT=29400\nexport RANK=$SLURM_PROCID\n",
    })
    (diagnostic,) = [d for d in lint(Source(job.read_bytes(), str(job)), options(["SBL105"]))]
    assert diagnostic.path == str(tmp_path / "conf" / "dist.env")
    assert (tmp_path / "conf" / "dist.env").read_bytes()[diagnostic.span.start:diagnostic.span.end] == b"RANK=$SLURM_PROCID"
    assert diagnostic.fix is None
    # the same line in the job itself: reported there, with its fix
    job.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\nexport RANK=$SLURM_PROCID\n"
                   "srun --kill-on-bad-exit=1 python train.py\n")
    (diagnostic,) = [d for d in lint(Source(job.read_bytes(), str(job)), options(["SBL105"]))]
    assert diagnostic.path == str(job) and diagnostic.fix is not None


def test_a_cached_result_keeps_the_sourced_files_place(tmp_path, monkeypatch):
    import os

    monkeypatch.delenv("SBATCHLINT_NO_CACHE", raising=False)
    site = "# cluster settings\nexport TMPDIR=/tmp\nexport HF_HOME=/tmp/hf-cache\n"
    write(tmp_path / "jobs", {"job.sh": HEADER + "source ./site.sh\n" + STEP, "site.sh": site})
    here = os.getcwd()
    os.chdir(tmp_path / "jobs")
    try:
        runs = [CliRunner().invoke(main, ["--cache-dir", str(tmp_path / "cache"), "--output-format", "concise",
                                          "--select", "SBL304", "job.sh"]).output for _ in range(2)]
    finally:
        os.chdir(here)
    assert runs[0] == runs[1] and runs[0].startswith("site.sh:3:8: SBL304")
    assert list((tmp_path / "cache").rglob("*.entry"))  # the second run was answered from the cache


def test_pyxis_settings_a_sourced_file_exports_reach_the_step(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "source ./site.sh\n" + STEP.replace("     --container-mounts=/lustre/fsw:/lustre/fsw \\\n", ""),
                           "site.sh": "export PYXIS_CONTAINER_MOUNTS=/lustre/fsw:/lustre/fsw\nexport PYXIS_CONTAINER_MOUNT_HOME=1\n"})
    script = model(job)
    (container,) = containers(script).steps
    assert container.from_environment == {"container-mounts": "PYXIS_CONTAINER_MOUNTS",
                                          "container-mount-home": "PYXIS_CONTAINER_MOUNT_HOME"}
    assert container.mount_home is True and container.has_mounts
    assert findings(job) == []


# -- a source the model cannot read: what it may set is unknown, so no rule says "not set" -------
UNREAD = 'source "$CLUSTER_ENV"\n'


def codes_of(job: Path, select) -> list:
    return [d.code for d in lint(Source(job.read_bytes(), str(job)), options(list(select)))]


def test_an_unread_source_may_give_the_step_its_pyxis_mounts_or_image(tmp_path):
    """SBL306 and SBL305: the file may export PYXIS_CONTAINER_MOUNTS / PYXIS_CONTAINER_IMAGE."""
    steps = ("srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 python /lustre/fsw/alice/train.py\n"
             "srun --kill-on-bad-exit=1 --container-mounts=/lustre/fsw:/lustre/fsw python /lustre/fsw/alice/eval.py\n")
    job = write(tmp_path, {"job.sh": HEADER + steps})
    assert codes_of(job, ["SBL305", "SBL306"]) == ["SBL306", "SBL305"]
    job.write_text(HEADER + UNREAD + steps)
    assert codes_of(job, ["SBL305", "SBL306"]) == []
    # a file that is read and exports neither leaves both findings
    job.write_text(HEADER + "source ./site.sh\n" + steps)
    (tmp_path / "site.sh").write_text("export NCCL_DEBUG=WARN\n")
    assert codes_of(job, ["SBL305", "SBL306"]) == ["SBL306", "SBL305"]


def test_an_unread_source_may_set_pythonpath_for_megatron_lm(tmp_path):
    """SBL308 (an error) must not claim PYTHONPATH lacks Megatron-LM when a file it cannot read may set it."""
    step = ("srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\\n"
            "    bash -c \"cd /lustre/fsw/alice/Megatron-Bridge && python 3rdparty/Megatron-LM/pretrain_gpt.py --tensor-model-parallel-size 2\"\n")
    job = write(tmp_path, {"job.sh": HEADER + step})
    assert codes_of(job, ["SBL308"]) == ["SBL308"]
    job.write_text(HEADER + UNREAD + step)
    assert codes_of(job, ["SBL308"]) == []
    # read, and it sets PYTHONPATH elsewhere: still reported
    job.write_text(HEADER + "source ./site.sh\n" + step)
    (tmp_path / "site.sh").write_text("export PYTHONPATH=/lustre/fsw/alice/tools\n")
    assert codes_of(job, ["SBL308"]) == ["SBL308"]


def test_an_unread_source_after_an_assignment_may_export_it(tmp_path):
    """SBL203: `X=…; source "$ENV"; srun bash -c '… $X'`: the file may `export X` (or `set -a`)."""
    body = "DATA_DIR=/lustre/fsw/alice/data\n{}srun --kill-on-bad-exit=1 bash -c 'python train.py --data $DATA_DIR'\n"
    job = write(tmp_path, {"job.sh": HEADER + body.format("")})
    assert codes_of(job, ["SBL203"]) == ["SBL203"]
    job.write_text(HEADER + body.format(UNREAD))
    assert codes_of(job, ["SBL203"]) == []
    # sourced before the assignment: the plain assignment after it is what the task misses
    job.write_text(HEADER + UNREAD + body.format(""))
    assert codes_of(job, ["SBL203"]) == ["SBL203"]


def test_an_unread_source_may_set_the_containers_workdir(tmp_path):
    """SBL312: the file may export PYXIS_CONTAINER_WORKDIR; a file that is read and does is followed."""
    head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\ncd /lustre/fsw/alice/recipes\n"
    step = "srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice python train.py\n"
    job = write(tmp_path, {"job.sh": head + step})
    assert codes_of(job, ["SBL312"]) == ["SBL312"]
    job.write_text(head + UNREAD + step)
    assert codes_of(job, ["SBL312"]) == []
    # (sourced before the cd: after it, ./site.sh is looked for in /lustre/fsw/alice/recipes)
    job.write_text(head.replace("cd ", "source ./site.sh\ncd ") + step)
    (tmp_path / "site.sh").write_text("export PYXIS_CONTAINER_WORKDIR=/lustre/fsw/alice/recipes\n")
    assert codes_of(job, ["SBL312"]) == []
    (tmp_path / "site.sh").write_text("export NCCL_DEBUG=WARN\n")
    assert codes_of(job, ["SBL312"]) == ["SBL312"]


# -- `source` inside a task string: the values the task sees ---------------------------------------
def task_job(directory: Path, sourcing: str, mounts: str = "{d}:{d},/lustre/fsw:/lustre/fsw") -> Path:
    step = (
        "srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 "
        f"--container-mounts={mounts.format(d=directory)} \\\n"
        f'    bash -c "{sourcing}torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=\\$HEAD:29500 '
        '/lustre/fsw/alice/sft.py --hf-model meta-llama/Llama-3.1-8B"\n'
    )
    job = directory / "job.sh"
    job.write_text(HEADER + step)
    return job


def test_a_file_the_task_string_sources_gives_the_task_its_cache(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "task.env").write_text("# what each task exports\nexport HF_HOME=/tmp/hf\n")
    job = task_job(tmp_path, f"source {tmp_path}/conf/task.env && ")
    (diagnostic,) = findings(job)
    assert diagnostic.code == "SBL304" and "`HF_HOME` is `/tmp/hf`" in said(diagnostic)
    assert diagnostic.path == str(tmp_path / "conf" / "task.env") and diagnostic.fix is None
    assert (tmp_path / "conf" / "task.env").read_bytes()[diagnostic.span.start:diagnostic.span.end] == b"HF_HOME=/tmp/hf"
    # pointing at the shared filesystem: nothing to report; the task sees that value
    (tmp_path / "conf" / "task.env").write_text("export HF_HOME=/lustre/fsw/alice/hf\n")
    assert findings(job) == []
    script = model(job)
    setting = containers(script).task_env(script.steps[0], "HF_HOME")
    assert (setting.where, setting.value.text) == ("task", "/lustre/fsw/alice/hf")
    # a relative path after a `cd` in the string, through a mount at another path
    job = task_job(tmp_path, "cd /work && . conf/task.env && ", "{d}:/work,/lustre/fsw:/lustre/fsw")
    assert containers(model(job)).task_env(model(job).steps[0], "HF_HOME").value.text == "/lustre/fsw/alice/hf"


def test_a_file_the_task_string_sources_from_the_image_is_unknown(tmp_path):
    """Without the source, SBL304 says HF_HOME is not set; a file inside the image (not mounted),
    or one relative to the image's WORKDIR, may set it: no finding."""
    assert [d.code for d in findings(task_job(tmp_path, ""))] == ["SBL304"]
    for sourcing in ("source /opt/site/env.sh && ", ". env.sh && ", 'source \\"\\$ENV_FILE\\" && '):
        job = task_job(tmp_path, sourcing)
        assert findings(job) == [], sourcing
        assert containers(model(job)).task_env(model(job).steps[0], "HF_HOME").where == "unknown"
    # a file that is read and leaves HF_HOME alone changes nothing
    (tmp_path / "task.env").write_text("export NCCL_DEBUG=WARN\n")
    assert [d.code for d in findings(task_job(tmp_path, f"source {tmp_path}/task.env && "))] == ["SBL304"]


def test_add_noqa_writes_only_into_the_job_itself(tmp_path):
    job = write(tmp_path, {"job.sh": HEADER + "source ./site.sh\n" + STEP, "site.sh": SITE})
    site = (tmp_path / "site.sh").read_bytes()
    result = run_cli(tmp_path, "--add-noqa", "--select", "SBL304,SBL107", "job.sh")
    assert (tmp_path / "site.sh").read_bytes() == site
    text = job.read_text()
    assert "sbatchlint: disable" not in text and "source ./site.sh\n" in text
    assert "site.sh:3:8: SBL304" in run_cli(tmp_path, "--select", "SBL304", "--output-format", "concise", "job.sh").output
    assert result.exit_code in (0, 1)


def test_plan_and_diagnose_place_a_finding_in_its_sourced_file(tmp_path):
    from sbatchlint.diagnose.command import job_script_findings

    job = write(tmp_path, {"job.sh": HEADER + "source ./site.sh\n" + STEP, "site.sh": SITE})
    document = Planner(Source(job.read_bytes(), str(job))).build()
    found = [f for f in document["findings"] if f["code"] == "SBL304"]
    assert found == [{"code": "SBL304", "path": str(tmp_path / "site.sh"), "line": 3, "message": found[0]["message"]}]
    assert not any(f["code"] == "SBL304" for step in document["steps"] for f in step["findings"])
    out, _, error = job_script_findings(str(job), ["SBL304"])
    assert error is None and [(f["path"], f["line"], f["column"]) for f in out] == [(str(tmp_path / "site.sh"), 3, 8)]

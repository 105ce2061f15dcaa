"""``sbatchlint plan``: the job and its steps as Slurm, srun, torchrun and pyxis will run them.

The plan's agreement with a real cluster is tests/slurm/test_plan_on_slurm.py; these tests pin
what a user reads: the fields, the unknowns and their reasons, submission-time options, the
command line."""
from __future__ import annotations

import json
import textwrap

from click.testing import CliRunner

import scriptgen
from sbatchlint.cli import main
from sbatchlint.plan import REASONS, SCHEMA, Planner, is_unknown
from sbatchlint.source import Source

TORCHRUN_JOB = textwrap.dedent("""\
    #!/bin/bash
    #SBATCH --job-name=gpt
    #SBATCH --nodes=2
    #SBATCH --ntasks-per-node=1
    #SBATCH --gpus-per-node=8
    #SBATCH --cpus-per-task=32
    #SBATCH --output=/lustre/logs/%x_%j.out
    #SBATCH --time=04:00:00
    export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK
    export HF_HOME=/lustre/cache/hf
    MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
    CMD="torchrun --nnodes=\\$SLURM_JOB_NUM_NODES --node_rank=\\$SLURM_NODEID --nproc_per_node=8 \\
      --master_addr=$MASTER_ADDR --master_port=29500 pretrain_gpt.py --tp 2"
    for LR in 1e-4 3e-4; do
      srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
        --container-mounts=/lustre:/lustre bash -c "$CMD --lr $LR"
    done
    #SBATCH --partition=debug
    """)


def plan_of(text: str, **kwargs) -> dict:
    return Planner(Source(text.encode(), "job.sh"), **kwargs).build()


def test_the_job_and_a_torchrun_step_in_a_loop():
    plan = plan_of(TORCHRUN_JOB)
    assert plan["schema"] == SCHEMA
    job = plan["job"]
    assert (job["nodes"], job["ntasks"], job["tasks_per_node"], job["gpus_per_node"], job["cpus_per_task"]) == (2, 2, 1, 8, 32)
    assert job["output"] == "/lustre/logs/gpt_{job id}.out"
    late = [d for d in job["directives"] if d["status"] == "late"]
    assert [(d["line"], d["option"]) for d in late] == [(18, "--partition")]
    (step,) = plan["steps"]
    assert step["line"] == 15 and step["end_line"] == 16
    assert step["context"] == ["loop (line 14): for LR in 1e-4 3e-4"]
    assert (step["nodes"], step["tasks_per_node"], step["ntasks"], step["cpus_per_task"]) == (2, 1, 2, 32)
    launcher = step["launcher"]
    assert (launcher["kind"], launcher["processes_per_task"], launcher["rendezvous"], launcher["nnodes"]) == ("torchrun", 8, "static", 2)
    assert launcher["node_rank"] == "$SLURM_NODEID (the task's shell)"
    assert (step["processes"], step["world_size"], step["kill_on_bad_exit"]) == (16, 16, True)
    env = {(e["name"], e["expanded_by"]): e["value"] for e in step["environment"]}
    assert env[("SLURM_NODEID", "task")] == "(per task)"
    assert env[("SLURM_JOB_NUM_NODES", "task")] == 2
    assert env[("MASTER_ADDR", "batch")] == {"unknown": "run-time"}  # a command's output
    assert env[("LR", "batch")] == {"unknown": "branches-differ", "alternatives": ["1e-4", "3e-4"]}  # one per iteration
    container = step["container"]
    assert container["image"] == "nvcr.io/nvidia/pytorch:25.01-py3"
    assert container["mounts"] == ["/lustre:/lustre"]
    assert container["workdir"] == {"unknown": "image-workdir"}
    assert container["HF_HOME"] == "/lustre/cache/hf"


def test_every_unknown_has_a_documented_reason_and_is_counted():
    for job in scriptgen.corpus(30, seed=500):
        plan = plan_of(job.text, findings=False)
        reasons = []

        def walk(value):
            if is_unknown(value):
                reasons.append(value["unknown"])
            elif isinstance(value, dict):
                for item in value.values():
                    walk(item)
            elif isinstance(value, list):
                for item in value:
                    walk(item)

        walk({"job": plan["job"], "steps": plan["steps"]})
        assert set(reasons) <= set(REASONS), job.seed
        assert plan["unknown"]["count"] == len(reasons)
        assert len(plan["steps"]) == len(job.steps)


def test_literal_generated_scripts_leave_few_fields_unknown():
    count = fields = 0
    for job in scriptgen.corpus(30, seed=0, literal=True):
        plan = plan_of(job.text, findings=False)
        count += plan["unknown"]["count"]
        fields += plan["unknown"]["fields"]
    assert count <= 0.05 * fields, (count, fields)


def test_branches_are_labelled():
    text = textwrap.dedent("""\
        #!/bin/bash
        #SBATCH -N 2
        if [ "$MODE" = pretrain ]; then
          srun python pretrain.py
        elif [ "$MODE" = sft ]; then
          srun -N 1 python sft.py
        else
          srun -n 1 python eval.py
        fi
        case "$STAGE" in
          convert) srun -N1 -n1 python convert.py ;;
        esac
        """)
    steps = plan_of(text)["steps"]
    assert [s["context"] for s in steps] == [
        ['if (line 3): [ "$MODE" = pretrain ]'],
        ['elif (line 5): [ "$MODE" = sft ]'],
        ["else (line 7)"],
        ["case (line 11): convert)"],
    ]
    assert [(s["nodes"], s["ntasks"]) for s in steps] == [(2, 2), (1, 1), (1, 1), (1, 1)]


def test_submission_options_override_the_header():
    text = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=8\n#SBATCH -p batch\nsrun python t.py\n"
    plan = plan_of(text, sbatch_args=["-N", "4", "-p", "debug"])
    job = plan["job"]
    assert (job["nodes"], job["ntasks"]) == (4, 32)
    statuses = {(d["line"], d["option"]): d["status"] for d in job["directives"]}
    assert statuses[(2, "-N")] == "overridden" and statuses[(4, "-p")] == "overridden"
    assert statuses[("--sbatch-args", "-N")] == "effective"
    assert plan["steps"][0]["line"] == 5  # lines stay the script's own
    # SBATCH_* variables override the script; the command line overrides them
    plan = plan_of(text, env={"SBATCH_PARTITION": "long", "SBATCH_GPUS_PER_NODE": "4", "PATH": "/bin"},
                   sbatch_args=["--partition=short"])
    assert plan["job"]["gpus_per_node"] == 4
    winners = [d for d in plan["job"]["directives"] if d["status"] == "effective" and d["option"] == "--partition"]
    assert [(d["line"], d["value"]) for d in winners] == [("--sbatch-args", "short")]


def test_findings_attach_to_their_step():
    text = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\nsrun torchrun --nproc_per_node=8 train.py\n"
    plan = plan_of(text)
    codes = {f["code"] for f in plan["steps"][0]["findings"]}
    assert "SBL101" in codes
    assert plan_of(text, findings=False)["steps"][0]["findings"] == []


def test_command_line_text_json_and_errors(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text(TORCHRUN_JOB)
    runner = CliRunner()
    result = runner.invoke(main, ["plan", str(job)])
    assert result.exit_code == 0, result.output
    assert "step 1 (line 15) in loop (line 14): for LR in 1e-4 3e-4" in result.output
    assert "world      16 processes · world size 16" in result.output
    assert "fields unknown" in result.output
    result = runner.invoke(main, ["plan", str(job), "--output-format", "json", "--sbatch-args", "-N 4", "--no-findings"])
    document = json.loads(result.output)
    assert document["job"]["nodes"] == 4 and document["steps"][0]["world_size"] == 32
    result = runner.invoke(main, ["plan", str(tmp_path / "missing.sh")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    result = runner.invoke(main, ["plan", str(job), "--sbatch-args", "-N '4"])
    assert result.exit_code == 2 and "--sbatch-args" in result.output


def test_a_secret_value_never_appears(tmp_path):
    job = tmp_path / "job.sh"
    token = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3h"
    job.write_text(f"#!/bin/bash\n#SBATCH -N 1\nexport HF_TOKEN={token}\nsrun bash -c 'python t.py --token $HF_TOKEN'\n")
    for fmt in ("text", "json"):
        result = CliRunner().invoke(main, ["plan", str(job), "--output-format", fmt])
        assert result.exit_code == 0, result.output
        assert token not in result.output


def test_the_readme_example_is_what_plan_prints(root, tmp_path):
    import re

    readme = open(f"{root}/README.md", encoding="utf-8").read()
    section = readme[readme.index("### Planning a job"):]
    script = re.search(r"For this script:\n\n```bash\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"the plan reads:\n\n```\n(.*?)```", section, re.S).group(1)
    job = tmp_path / "pretrain.sbatch"
    job.write_text(script)
    result = CliRunner().invoke(main, ["plan", str(job)])
    assert result.output.replace(str(job), "pretrain.sbatch") == shown

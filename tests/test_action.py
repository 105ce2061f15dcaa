"""The composite GitHub Action (``action.yml``): its commands use the command line's real options,
and run as the workflow would run them, with the action's inputs in the environment."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import click
import pytest

yaml = pytest.importorskip("yaml")

from sbatchlint.cli import main  # noqa: E402

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACTION = os.path.join(REPOSITORY, "action.yml")


def action() -> dict:
    with open(ACTION, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def sbatchlint_steps():
    return [step for step in action()["runs"]["steps"] if "sbatchlint " in step.get("run", "")
            and "pip install" not in step["run"]]


def check_options():
    with click.Context(main) as ctx:
        command = main.get_command(ctx, "check")
        options = {}
        for param in command.params:
            if isinstance(param, click.Option):
                for name in param.opts + param.secondary_opts:
                    options[name] = param
        return options


def test_the_action_is_composite_with_its_inputs():
    document = action()
    assert document["runs"]["using"] == "composite"
    assert set(document["inputs"]) >= {"paths", "args", "sarif", "sarif-file"}
    for name, spec in document["inputs"].items():
        assert spec.get("description"), name
    uses = [step["uses"] for step in document["runs"]["steps"] if "uses" in step]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)


def test_the_actions_commands_use_real_options_of_check():
    options = check_options()
    steps = sbatchlint_steps()
    assert len(steps) == 2
    for step in steps:
        words = shlex.split(step["run"])
        assert words[:2] == ["sbatchlint", "check"], step["run"]
        for index, word in enumerate(words):
            if not word.startswith("-"):
                continue
            name = word.split("=")[0]
            assert name in options, f"{name} is not an option of `sbatchlint check`"
            param = options[name]
            if isinstance(param.type, click.Choice) and not param.is_flag:
                assert words[index + 1] in param.type.choices, (name, words[index + 1])
        assert step["shell"] == "bash"
        # inputs reach the command through the environment, never pasted into the script
        assert "${{" not in step["run"]


def test_the_lint_steps_run_as_the_workflow_runs_them(tmp_path):
    """The two steps, run by bash with the inputs in the environment and `sbatchlint` on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "sbatchlint"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m sbatchlint \"$@\"\n")
    shim.chmod(0o755)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "late.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\nsrun hostname\n")
    (jobs / "clean.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nset -e\nsrun hostname\n")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=REPOSITORY,
               PATHS="jobs/late.sh jobs/clean.sh", ARGS="--isolated --select SBL0", SARIF_FILE="out.sarif")
    sarif_step, lint_step = sbatchlint_steps()
    done = subprocess.run(["bash", "-c", sarif_step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr  # the report is written even when findings remain
    report = json.loads((tmp_path / "out.sarif").read_text())
    assert [r["ruleId"] for r in report["runs"][0]["results"]] == ["SBL003"]
    done = subprocess.run(["bash", "-c", lint_step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1  # findings fail the job
    assert done.stdout.startswith("::error file=jobs/late.sh,line=4")
    env["ARGS"] = "--isolated --select SBL0 --fail-level error --ignore SBL003"
    done = subprocess.run(["bash", "-c", lint_step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr

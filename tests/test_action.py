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


# -- the whole action, step by step, as a runner runs it (tests/actionrunner.py) ----------------------
def action_copy(tmp_path):
    """The action as a runner checks it out: the repository's files (tracked, or new and not ignored)
    in a directory of their own, so that building it leaves nothing in this checkout."""
    import shutil

    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPOSITORY,
                            capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("the action is copied from a git checkout")
    target = tmp_path / "action"
    for name in filter(None, listed.stdout.split("\0")):
        source = os.path.join(REPOSITORY, name)
        if os.path.isfile(source):
            os.makedirs(target / os.path.dirname(name), exist_ok=True)
            shutil.copy2(source, target / name)
    return str(target)


class StandIns:
    """The actions this one uses, played locally: setup-python gives a fresh virtual environment
    (seeing this machine's packages, as a runner's pip would fetch them), upload-sarif checks the
    report it is handed against the SARIF 2.1.0 schema."""

    def __init__(self, tmp_path):
        self.root = tmp_path
        self.python_versions = []
        self.uploaded = []

    def setup_python(self, given, env):
        import venv

        self.python_versions.append(given.get("python-version"))
        target = self.root / "toolcache" / "python"
        if not target.exists():
            venv.EnvBuilder(system_site_packages=True, with_pip=True).create(target)
        with open(env["GITHUB_PATH"], "a", encoding="utf-8") as handle:
            handle.write(f"{target / 'bin'}\n")
        return 0

    def upload_sarif(self, given, env):
        jsonschema = pytest.importorskip("jsonschema")
        path = os.path.join(env["GITHUB_WORKSPACE"], given["sarif_file"])
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        with open(os.path.join(REPOSITORY, "tests", "data", "sarif-schema-2.1.0.json"), encoding="utf-8") as handle:
            jsonschema.validate(document, json.load(handle))
        self.uploaded.append((given, document))
        return 0

    def mapping(self):
        return {"actions/setup-python": self.setup_python, "github/codeql-action/upload-sarif": self.upload_sarif}


def workspace_with_jobs(tmp_path, late=True):
    workspace = tmp_path / "workspace"
    (workspace / "jobs").mkdir(parents=True)
    if late:
        (workspace / "jobs" / "late.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\nsrun hostname\n")
    (workspace / "jobs" / "clean.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nset -e\nsrun hostname\n")
    return str(workspace)


def test_the_action_installs_itself_and_lints_as_a_runner_runs_it(tmp_path):
    """Every step of action.yml in order: Python set up, sbatchlint installed from the action's own
    files with pip, the SARIF report written and handed to the upload, the annotations printed and
    the job failed by the finding; then a clean workspace with the default inputs passes."""
    import actionrunner

    action_path = action_copy(tmp_path)
    stand_ins = StandIns(tmp_path)
    workspace = workspace_with_jobs(tmp_path)
    outcome = actionrunner.run_action(action_path, workspace, {"paths": "jobs", "args": "--select SBL0", "sarif": "true"},
                                      stand_ins.mapping())
    install = outcome.step("Install sbatchlint")
    assert install.ran and install.returncode == 0, install.stdout + install.stderr
    venv_bin = tmp_path / "toolcache" / "python" / "bin"
    assert (venv_bin / "sbatchlint").is_file()  # the console script the later steps find on PATH
    where = subprocess.run([str(venv_bin / "python"), "-c", "import sbatchlint; print(sbatchlint.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert where.stdout.startswith(str(tmp_path / "toolcache")), where.stdout + where.stderr
    assert stand_ins.python_versions == ["3.12"]
    report = outcome.step("Write the SARIF report")
    assert report.returncode == 0, report.stderr  # written although a finding remains
    [(given, document)] = stand_ins.uploaded
    assert given == {"sarif_file": "sbatchlint.sarif", "category": "sbatchlint"}
    [result] = document["runs"][0]["results"]
    assert result["ruleId"] == "SBL003"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "jobs/late.sh"
    lint = outcome.step("Lint")
    assert lint.ran and lint.returncode == 1  # the finding fails the job
    assert lint.stdout.startswith("::error file=jobs/late.sh,line=4,"), lint.stdout
    assert not outcome.succeeded

    clean = workspace_with_jobs(tmp_path / "second", late=False)
    outcome = actionrunner.run_action(action_path, clean, {}, stand_ins.mapping())
    assert outcome.succeeded, [(s.name, s.stdout, s.stderr) for s in outcome.steps]
    assert not outcome.step("Write the SARIF report").ran and not outcome.step("Upload the SARIF report").ran
    assert outcome.step("Lint").ran and len(stand_ins.uploaded) == 1


def test_inputs_reach_the_steps_only_through_their_env(tmp_path):
    """A composite action's steps get no INPUT_* variables: a script reading one would see nothing
    on GitHub although some local runners set them."""
    for step in action()["runs"]["steps"]:
        assert "INPUT_" not in step.get("run", ""), step["name"]
    import actionrunner

    with pytest.raises(ValueError, match="does not declare"):
        actionrunner.run_action(REPOSITORY, str(tmp_path), {"path": "jobs"}, {})
    assert actionrunner.condition("inputs.sarif == 'TRUE'", {"inputs": {"sarif": "true"}})
    assert not actionrunner.condition("${{ inputs.python-version != '' }}", {"inputs": {"python-version": ""}})


def test_the_readmes_workflow_step_gives_inputs_the_action_declares():
    import re

    with open(os.path.join(REPOSITORY, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "you/sbatchlint@" in b)
    [step] = [s for s in yaml.safe_load(block)["steps"] if "sbatchlint@" in s["uses"]]
    declared = action()["inputs"]
    assert set(step["with"]) <= set(declared)
    options = check_options()
    for word in shlex.split(step["with"]["args"]):
        assert not word.startswith("-") or word in options, word

"""The pre-commit hook, run by the real pre-commit tool against this repository."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BROKEN = "#SBATCH --nodes=1\nsrun hostname\n"
FIXED = "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n"


def _pre_commit():
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "pre_commit"]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory):
    command = _pre_commit()
    if command is None:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    if not os.path.isdir(os.path.join(ROOT, ".git")) or shutil.which("git") is None:
        pytest.skip("needs this repository's git checkout")
    home = tmp_path_factory.mktemp("pre-commit-home")
    return command, {**os.environ, "PRE_COMMIT_HOME": str(home)}


def _try(hook_env, work, hook):
    command, env = hook_env
    return subprocess.run(
        [*command, "try-repo", ROOT, hook, "--files", "job.sh", "jobs/notes.txt"],
        cwd=work, capture_output=True, text=True, env=env, timeout=900,
    )


def _project(tmp_path, text):
    work = tmp_path / "project"
    (work / "jobs").mkdir(parents=True)
    (work / "job.sh").write_text(text)
    (work / "jobs" / "notes.txt").write_text("#SBATCH lines described in prose\n")
    _git(work, "init", "-q")
    _git(work, "add", ".")
    return work


def test_hook_fails_on_a_broken_script_and_passes_on_a_fixed_one(hook_env, tmp_path):
    broken = _try(hook_env, _project(tmp_path / "a", BROKEN), "sbatchlint")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "SBL002" in broken.stdout
    assert "notes.txt" not in broken.stdout  # not matched by the hook's files pattern
    fixed = _try(hook_env, _project(tmp_path / "b", FIXED), "sbatchlint")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_fix_hook_rewrites_the_file(hook_env, tmp_path):
    work = _project(tmp_path, BROKEN)
    result = _try(hook_env, work, "sbatchlint-fix")
    assert result.returncode == 1  # pre-commit fails a hook that changed files
    assert (work / "job.sh").read_text() == FIXED
    again = _try(hook_env, work, "sbatchlint-fix")
    assert again.returncode == 0, again.stdout + again.stderr

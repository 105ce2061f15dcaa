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
    if not os.path.exists(os.path.join(ROOT, ".git")) or shutil.which("git") is None:
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
    (work / "legacy").mkdir()
    (work / "legacy" / "old.sh").write_text(BROKEN)  # excluded by the configuration
    (work / ".sbatchlint.toml").write_text('exclude = ["legacy"]\n')
    _git(work, "init", "-q")
    _git(work, "add", ".")
    return work


def _readme_config(repo: str, rev: str) -> str:
    """The README's pre-commit configuration, pointed at ``repo`` pinned to commit ``rev``."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    section = readme[readme.index("## pre-commit"):]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    lines = []
    for line in block.splitlines():
        key = line.strip().lstrip("- ").split(":", 1)[0]
        indent = line[: len(line) - len(line.lstrip())]
        if key == "repo":
            line = f"{indent}- repo: {repo}"
        elif key == "rev":
            line = f"{indent}rev: {rev}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_hook_fails_on_a_broken_script_and_passes_on_a_fixed_one(hook_env, tmp_path):
    broken = _try(hook_env, _project(tmp_path / "a", BROKEN), "sbatchlint")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "SBL002" in broken.stdout
    assert "notes.txt" not in broken.stdout  # not matched by the hook's files pattern
    assert "legacy/old.sh" not in broken.stdout  # named by pre-commit, excluded by the configuration
    fixed = _try(hook_env, _project(tmp_path / "b", FIXED), "sbatchlint")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_fix_hook_rewrites_the_file(hook_env, tmp_path):
    work = _project(tmp_path, BROKEN)
    result = _try(hook_env, work, "sbatchlint-fix")
    assert result.returncode == 1  # pre-commit fails a hook that changed files
    assert (work / "job.sh").read_text() == FIXED
    again = _try(hook_env, work, "sbatchlint-fix")
    assert again.returncode == 0, again.stdout + again.stderr


def test_the_readme_setup_pinned_to_a_commit_of_a_local_clone(hook_env, tmp_path):
    """What the README tells a user to do, with the real pre-commit: their copy of this repository,
    `rev:` a full commit id of it, `pre-commit run --all-files`."""
    command, env = hook_env
    clone = tmp_path / "their-copy"
    _git(tmp_path, "clone", "-q", "--no-checkout", ROOT, str(clone))
    _git(clone, "fetch", "-q", ROOT, "HEAD")  # this checkout's commit, even on a detached HEAD
    rev = subprocess.run(["git", "rev-parse", "FETCH_HEAD"], cwd=clone, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert len(rev) == 40
    work = _project(tmp_path, FIXED)
    (work / ".pre-commit-config.yaml").write_text(_readme_config(str(clone), rev))
    _git(work, "add", ".")

    def run_all():
        return subprocess.run([*command, "run", "--all-files"], cwd=work, capture_output=True, text=True,
                              env=env, timeout=900)

    clean = run_all()
    assert clean.returncode == 0, clean.stdout + clean.stderr  # legacy/old.sh is excluded
    assert "sbatchlint" in clean.stdout and "Passed" in clean.stdout
    (work / "job.sh").write_text(BROKEN)
    _git(work, "add", ".")
    broken = run_all()
    assert broken.returncode == 1
    assert "job.sh:1:1: SBL002" in broken.stdout and "old.sh" not in broken.stdout

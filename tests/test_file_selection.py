"""Which files a run lints, through the real command line: the configuration's exclude (and
--force-exclude for files named on the command line), git's ignore rules in directory searches,
and what an empty search, a missing path or an unreadable file do to the output and exit code."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BROKEN = "#SBATCH --nodes=1\nsrun hostname\n"  # SBL002: no shebang
CLEAN = "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n"


def write(path: Path, text: str = BROKEN) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def environment(tmp_path: Path) -> dict:
    """A user with no git configuration of their own (tests set what they need)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1",
               PYTHONPATH=str(ROOT), NO_COLOR="1")
    return env


def sbatchlint(cwd: Path, *args: str, env=None, preexec_fn=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sbatchlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env or environment(cwd), preexec_fn=preexec_fn, timeout=120)


def shown(cwd: Path, *args: str, env=None) -> list:
    done = sbatchlint(cwd, "--show-files", *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def git(cwd: Path, *args: str, env=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env or environment(cwd)).stdout


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


# -- the configuration's exclude, and --force-exclude ----------------------------------------------
def test_exclude_leaves_out_searched_files_but_not_named_ones_unless_forced(tmp_path):
    write(tmp_path / ".sbatchlint.toml", 'exclude = ["legacy"]\n')
    write(tmp_path / "legacy" / "old.sh")
    write(tmp_path / "jobs" / "new.sh")
    assert shown(tmp_path, ".") == ["./jobs/new.sh"]
    named = sbatchlint(tmp_path, "--output-format", "concise", "legacy/old.sh")
    assert named.returncode == 1 and "legacy/old.sh:1:1: SBL002" in named.stdout
    forced = sbatchlint(tmp_path, "--force-exclude", "legacy/old.sh", "jobs/new.sh", "--output-format", "concise")
    assert forced.returncode == 1
    assert "jobs/new.sh:1:1: SBL002" in forced.stdout and "old.sh" not in forced.stdout


def test_force_exclude_from_the_configuration_and_its_command_line_override(tmp_path):
    write(tmp_path / ".sbatchlint.toml", 'exclude = ["legacy/*"]\nforce-exclude = true\n')
    write(tmp_path / "legacy" / "old.sh")
    alone = sbatchlint(tmp_path, "legacy/old.sh")
    assert alone.returncode == 0
    assert "no files found to lint" in alone.stderr and alone.stdout == ""
    assert sbatchlint(tmp_path, "--no-force-exclude", "legacy/old.sh").returncode == 1


def test_a_bad_force_exclude_value_names_the_file_and_key(tmp_path):
    config = write(tmp_path / ".sbatchlint.toml", 'force-exclude = "yes"\n')
    write(tmp_path / "job.sh", CLEAN)
    done = sbatchlint(tmp_path, "job.sh")
    assert done.returncode == 2
    assert done.stderr.strip() == f"sbatchlint: error: {config}: force-exclude: expected true or false, got 'yes'"


# -- git's ignore rules ----------------------------------------------------------------------------------
@needs_git
def test_gitignore_info_exclude_and_the_global_excludes_file(tmp_path):
    env = environment(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", env=env)
    write(repo / ".gitignore", "generated/\n*.tmp.sh\n")
    write(repo / "generated" / "a.sh")
    write(repo / "scratch.tmp.sh")
    write(repo / "jobs" / ".gitignore", "local.sh\n!keep.tmp.sh\n")
    write(repo / "jobs" / "local.sh")
    write(repo / "jobs" / "keep.tmp.sh")
    write(repo / "jobs" / "train.sh")
    write(repo / ".git" / "info" / "exclude", "private.sh\n")
    write(repo / "private.sh")
    write(Path(env["XDG_CONFIG_HOME"]) / "git" / "ignore", "*.mine.sh\n")  # git's default global file
    write(repo / "jobs" / "eval.mine.sh")
    expected = ["./jobs/keep.tmp.sh", "./jobs/train.sh"]
    assert shown(repo, ".", env=env) == expected
    # the whole run honours it: the ignored scripts' findings are not reported
    done = sbatchlint(repo, "--output-format", "concise", ".", env=env)
    assert sorted(line.split(":")[0] for line in done.stdout.splitlines()) == expected
    # off from the command line or the configuration: every script is found
    everything = shown(repo, "--no-respect-gitignore", ".", env=env)
    assert len(everything) == 7 and "./generated/a.sh" in everything and "./private.sh" in everything
    write(repo / ".sbatchlint.toml", "respect-gitignore = false\n")
    assert len(shown(repo, ".", env=env)) == 7
    assert shown(repo, "--respect-gitignore", ".", env=env) == expected


@needs_git
def test_core_excludes_file_from_the_users_git_configuration(tmp_path):
    env = environment(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", env=env)
    excludes = write(tmp_path / "my-excludes", "sweep-*.sh\n")
    git(repo, "config", "--global", "core.excludesFile", str(excludes), env=env)
    write(repo / "sweep-01.sh")
    write(repo / "train.sh")
    assert shown(repo, ".", env=env) == ["./train.sh"]


@needs_git
def test_selection_agrees_with_git_on_its_matching_rules(tmp_path):
    """git's own list of untracked, not ignored files is the reference."""
    env = environment(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", env=env)
    write(repo / ".gitignore", "\n".join([
        "# a comment, a blank line and an escaped hash", "", r"\#draft.sh",
        "/root-only.sh", "out/", "!out/keep.sh",  # a file under an ignored directory stays ignored
        "docs/**/gen.sh", "flat/*.sh", "!flat/main.sh", "[ab]?.sh", "trailing.sh   ", "logs", "*.bak.sh",
    ]) + "\n")
    write(repo / "sub" / ".gitignore", "!x.bak.sh\n/anchored.sh\n")
    paths = [
        "#draft.sh", "root-only.sh", "sub/root-only.sh", "out/keep.sh", "out/run.sh", "docs/gen.sh",
        "docs/a/b/gen.sh", "docs/other.sh", "flat/one.sh", "flat/main.sh", "flat/deeper/two.sh", "a1.sh", "ab.sh",
        "abc.sh", "trailing.sh", "logs/run.sh", "sub/logs", "y.bak.sh", "sub/x.bak.sh", "sub/anchored.sh",
        "sub/deeper/anchored.sh", "keep/job.sh",
    ]
    for path in paths:
        write(repo / path)
    listed = git(repo, "ls-files", "--others", "--exclude-standard", env=env).splitlines()
    from_git = sorted(path for path in listed if path.endswith(".sh"))
    found = sorted(path[2:] for path in shown(repo, ".", env=env))
    assert found == from_git
    assert "out/keep.sh" not in found and "docs/other.sh" in found  # the test does test something


@needs_git
def test_a_named_file_or_directory_is_linted_even_when_ignored(tmp_path):
    env = environment(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", env=env)
    write(repo / ".gitignore", "generated/\n*.log.sh\n")
    write(repo / "generated" / "a.sh")
    write(repo / "generated" / "b.log.sh")
    assert shown(repo, "generated/a.sh", env=env) == ["generated/a.sh"]
    # the directory is searched; the other rules still apply inside it
    assert shown(repo, "generated", env=env) == ["generated/a.sh"]


def test_gitignore_outside_a_repository(tmp_path):
    write(tmp_path / "jobs" / ".gitignore", "old/\n")
    write(tmp_path / "jobs" / "old" / "a.sh")
    write(tmp_path / "jobs" / "b.sh")
    assert shown(tmp_path, "jobs") == ["jobs/b.sh"]


# -- empty searches, missing and unreadable paths ----------------------------------------------------
def test_an_empty_directory_warns_that_no_files_were_found(tmp_path):
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty" / "notes.txt", "no batch scripts here\n")
    done = sbatchlint(tmp_path, "empty")
    assert done.returncode == 0
    assert done.stderr == "sbatchlint: warning: no files found to lint under the given paths\n"
    assert "All checks passed" not in done.stdout + done.stderr


def test_a_missing_path_exits_2_naming_it_and_the_rest_is_linted(tmp_path):
    write(tmp_path / "jobs" / "a.sh")
    done = sbatchlint(tmp_path, "--output-format", "concise", "jbos", "jobs")
    assert done.returncode == 2
    assert "sbatchlint: error: jbos: no such file or directory" in done.stderr
    assert "jobs/a.sh:1:1: SBL002" in done.stdout


def _without_file_permission_override():
    """In a child running as root, take away what lets root read any file, so that file modes
    apply to it as to anyone (CAP_DAC_OVERRIDE = 1, CAP_DAC_READ_SEARCH = 2; PR_CAPBSET_DROP = 24)."""
    if os.geteuid() != 0:
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def drop():
        for capability in (1, 2):
            if libc.prctl(24, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl")

    return drop


def test_an_unreadable_file_among_many_is_reported_and_the_rest_linted(tmp_path):
    write(tmp_path / "jobs" / "a.sh")
    secret = write(tmp_path / "jobs" / "b.sh", CLEAN)
    write(tmp_path / "jobs" / "c.sh")
    locked = tmp_path / "jobs" / "locked"
    write(locked / "d.sh")
    secret.chmod(0)
    locked.chmod(0)
    try:
        done = sbatchlint(tmp_path, "--output-format", "concise", "jobs", preexec_fn=_without_file_permission_override())
    finally:
        secret.chmod(0o644)
        locked.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert "sbatchlint: error: jobs/b.sh: permission denied" in done.stderr.splitlines()
    assert "sbatchlint: error: jobs/locked: cannot read directory: Permission denied" in done.stderr.splitlines()
    assert "jobs/a.sh:1:1: SBL002" in done.stdout and "jobs/c.sh:1:1: SBL002" in done.stdout
    assert "Traceback" not in done.stderr


def test_show_files_lists_in_a_stable_order(tmp_path):
    for name in ("b.sh", "a.sbatch", "z/c.slurm", "train_job"):
        write(tmp_path / "jobs" / name)
    write(tmp_path / "jobs" / "notes.txt", "prose\n")
    write(tmp_path / "jobs" / "model.py", "print(1)\n")
    assert shown(tmp_path, "jobs") == ["jobs/a.sbatch", "jobs/b.sh", "jobs/train_job", "jobs/z/c.slurm"]
    assert "jobs/model.py" in shown(tmp_path, "--python", "jobs")
    # a file named twice, or named and found by a search, is linted once
    assert shown(tmp_path, "jobs/b.sh", "jobs", "./jobs/b.sh").count("jobs/b.sh") == 1


# -- a directory search lints batch scripts, not the shell helpers beside them -------------------------
HELPER = "export HF_HOME=/lustre/hf\nexport UV_CACHE_DIR=/lustre/uv\n"  # sourced: no shebang, no job


def test_a_sourced_helper_met_in_a_search_is_skipped_but_linted_when_named(tmp_path):
    write(tmp_path / "jobs" / "env.sh", HELPER)
    write(tmp_path / "jobs" / "train.sh", "#!/bin/bash\n#SBATCH --nodes=1\nsource ./env.sh\nsrun hostname\n")
    write(tmp_path / "jobs" / "submit.sh", "sbatch <<'EOF'\n#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\nEOF\n")
    done = sbatchlint(tmp_path, "--output-format", "json", "jobs")
    assert done.returncode == 0, done.stderr
    assert "env.sh" not in done.stdout + done.stderr
    text = sbatchlint(tmp_path, "jobs")
    assert "(2 files)" in text.stdout  # the job and the script that submits one
    # named on the command line (as pre-commit names every *.sh), it gets the any-shell-file rules
    # only: no SBL002 for the missing shebang of a file that is no batch script
    named = sbatchlint(tmp_path, "jobs/env.sh")
    assert named.returncode == 0, named.stdout
    assert "All checks passed (1 file)" in named.stdout
    # and --fix leaves a skipped helper alone
    fixed = sbatchlint(tmp_path, "--fix", "jobs")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (tmp_path / "jobs" / "env.sh").read_text() == HELPER


def test_a_search_that_meets_only_helpers_warns_instead_of_passing(tmp_path):
    write(tmp_path / "lib" / "env.sh", HELPER)
    done = sbatchlint(tmp_path, "lib")
    assert done.returncode == 0
    assert done.stderr == ("sbatchlint: warning: no batch scripts found under the given paths (1 other shell "
                           "file skipped; name a file to lint it anyway)\n")
    assert "All checks passed" not in done.stdout
    # a secret in a skipped helper is still a secret: naming the file reports it (SBL4xx)
    write(tmp_path / "lib" / "keys.sh", "export WANDB_API_KEY=3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a\n")
    named = sbatchlint(tmp_path, "--output-format", "concise", "lib/keys.sh")
    assert named.returncode == 1 and "SBL401" in named.stdout
    assert "3f9a8b7c6d5e4f3a2b1c" not in named.stdout + named.stderr

"""The results cache: a second run over unchanged files lints nothing again, and never shows a
stale result when anything the result depends on changes (the script, a launched Python file,
a sourced file, the configuration, sbatchlint's version)."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from sbatchlint import cache, runner
from sbatchlint.cli import main

JOB = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --time=00:10:00
set -e
source ./env.sh
srun python train.py --epochs 3
"""
LATE = JOB.replace("set -e\n", "").replace("#SBATCH --time=00:10:00\n", "echo start\n#SBATCH --time=00:10:00\n")
BROKEN_PY = 'import torch.distributed as dist\n\ndist.init_process_group(backend="nccl"\n'
GOOD_PY = 'import torch.distributed as dist\n\ndist.init_process_group(backend="nccl")\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project directory, the current directory, with the cache switched on and every file
    actually linted counted in ``linted``."""
    monkeypatch.delenv("SBATCHLINT_NO_CACHE", raising=False)
    monkeypatch.delenv("SBATCHLINT_CACHE_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sh").write_text(JOB)
    (tmp_path / "env.sh").write_text("export NCCL_DEBUG=INFO\n")
    linted = []
    real = runner._lint_source

    def counting(job, source):
        linted.append(os.path.basename(job.path))
        return real(job, source)

    monkeypatch.setattr(runner, "_lint_source", counting)
    return Project(tmp_path, linted)


class Project:
    def __init__(self, path, linted):
        self.path, self.linted = path, linted

    def __truediv__(self, name):
        return self.path / name


def run(*args):
    return CliRunner().invoke(main, ["-j", "1", *args], catch_exceptions=False)


def uncached(*args):
    return run("--no-cache", *args)


def test_second_run_lints_nothing_and_prints_the_same(project):
    first = run("job.sh")
    assert project.linted == ["job.sh"]
    second = run("job.sh")
    assert project.linted == ["job.sh"]  # not linted again
    assert second.output == first.output and second.exit_code == first.exit_code
    assert (project / cache.DIRECTORY_NAME / "CACHEDIR.TAG").is_file()
    assert (project / cache.DIRECTORY_NAME / ".gitignore").read_text().splitlines()[-1] == "*"


def test_json_output_from_the_cache_matches_a_fresh_run(project):
    (project / "job.sh").write_text(LATE)
    fresh = uncached("--output-format", "json", "job.sh")
    run("--output-format", "json", "job.sh")
    again = run("--output-format", "json", "job.sh")
    assert project.linted == ["job.sh", "job.sh"]
    assert json.loads(again.output) == json.loads(fresh.output)
    assert any(item["code"] == "SBL003" and item["fix"] for item in json.loads(again.output))


def test_an_edited_script_is_linted_again(project):
    run("job.sh")
    (project / "job.sh").write_text(LATE)
    result = run("job.sh")
    assert project.linted == ["job.sh", "job.sh"]
    assert "SBL003" in result.output
    assert result.output == uncached("job.sh").output


def test_a_changed_setting_misses(project):
    (project / "job.sh").write_text(LATE)
    assert "SBL003" in run("job.sh").output
    (project / ".sbatchlint.toml").write_text('ignore = ["SBL003"]\n')
    result = run("job.sh")
    assert "SBL003" not in result.output
    assert project.linted == ["job.sh", "job.sh"]
    selected = run("--select", "SBL003", "job.sh").output  # a command-line setting is part of the key too
    assert len(project.linted) == 3
    assert selected == uncached("--select", "SBL003", "job.sh").output


def test_a_new_version_misses(project, monkeypatch):
    import sbatchlint

    run("job.sh")
    monkeypatch.setattr(sbatchlint, "__version__", "999.0")
    monkeypatch.setattr(cache, "_PACKAGE", {})
    run("job.sh")
    assert project.linted == ["job.sh", "job.sh"]
    # the same version number with other code (a checkout that changed): the modules' sizes
    # and times differ
    monkeypatch.setattr(cache, "_PACKAGE", {"key": "another build"})
    run("job.sh")
    assert project.linted == ["job.sh", "job.sh", "job.sh"]


def test_a_launched_python_file_that_appears_or_changes_is_seen(project):
    assert "SBL500" not in run("job.sh").output  # no train.py yet: nothing to follow
    (project / "train.py").write_text(BROKEN_PY)
    result = run("job.sh")
    assert "train.py" in result.output and "SBL500" in result.output  # the script's entry was stale
    assert project.linted == ["job.sh", "job.sh", "train.py"]
    (project / "train.py").write_text(GOOD_PY)
    result = run("job.sh")
    assert "SBL500" not in result.output
    assert project.linted[-1] == "train.py" and project.linted.count("job.sh") == 2
    os.remove(project / "train.py")
    assert run("job.sh").output == uncached("job.sh").output


SOURCING = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --time=00:10:00
set -e
source ./env.sh
srun --ntasks-per-node=$TPN --kill-on-bad-exit=1 torchrun --nnodes=2 --nproc_per_node=8 \\
  --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 train.py
"""


def test_an_edited_sourced_file_never_gives_a_stale_result(project):
    (project / "job.sh").write_text(SOURCING)
    (project / "env.sh").write_text("TPN=1\n")
    assert "SBL101" not in run("job.sh").output
    (project / "env.sh").write_text("TPN=8\n")  # the script is unchanged; what it sources is not
    result = run("job.sh")
    assert "SBL101" in result.output
    assert project.linted == ["job.sh", "job.sh"]
    assert result.output == uncached("job.sh").output
    os.remove(project / "env.sh")
    assert run("job.sh").output == uncached("job.sh").output


def test_no_cache_reads_and_writes_nothing(project):
    uncached("job.sh")
    uncached("job.sh")
    assert project.linted == ["job.sh", "job.sh"]
    assert not (project / cache.DIRECTORY_NAME).exists()


def test_cache_dir_setting_and_option(project):
    (project / ".sbatchlint.toml").write_text('cache-dir = "build/lint-cache"\n')
    run("job.sh")
    assert (project / "build" / "lint-cache" / "CACHEDIR.TAG").is_file()
    run("--cache-dir", "elsewhere", "job.sh")
    assert (project / "elsewhere" / "CACHEDIR.TAG").is_file()
    assert not (project / cache.DIRECTORY_NAME).exists()


def test_bad_cache_dir_setting_is_a_one_line_error(project):
    (project / ".sbatchlint.toml").write_text("cache-dir = 3\n")
    result = CliRunner().invoke(main, ["job.sh"])
    assert result.exit_code == 2
    assert "cache-dir: expected a directory name" in result.output


@pytest.mark.parametrize("damage", ["truncated", "empty", "text", "wrong shape"])
def test_a_damaged_entry_is_a_miss(project, damage):
    first = run("job.sh")
    entries = [os.path.join(folder, name) for folder, _dirs, files in os.walk(project / cache.DIRECTORY_NAME)
               for name in files if name.endswith(".entry")]
    assert len(entries) == 1
    with open(entries[0], "rb") as handle:
        data = handle.read()
    damaged = {"truncated": data[: len(data) // 2], "empty": b"", "text": b'{"diagnostics": [',
               "wrong shape": __import__("marshal").dumps({"diagnostics": 3})}[damage]
    with open(entries[0], "wb") as handle:
        handle.write(damaged)
    assert run("job.sh").output == first.output
    assert project.linted == ["job.sh", "job.sh"]


def test_the_built_in_sha256_is_hashlib_s():
    import hashlib

    assert cache.sha256(b"job").hexdigest() == hashlib.sha256(b"job").hexdigest()
    digest = cache.sha256()
    digest.update(b"a")
    digest.update(b"b")
    assert digest.hexdigest() == hashlib.sha256(b"ab").hexdigest()


def test_no_secret_is_written_to_the_cache(project):
    token = "hf_" + "Q7xLm2Vb9RtY4kWp8ZcN3sDf6GhJ1aUe0"
    (project / "job.sh").write_text(JOB.replace("set -e\n", f"set -e\nexport HF_TOKEN={token}\n"))
    first = run("job.sh")
    assert token not in first.output
    run("job.sh")
    assert project.linted == ["job.sh", "job.sh"]  # such a file is linted every time
    for folder, _dirs, files in os.walk(project / cache.DIRECTORY_NAME):
        for name in files:
            assert token not in open(os.path.join(folder, name), encoding="utf-8", errors="replace").read()


def test_a_parallel_run_over_an_unchanged_tree_starts_no_process(project, monkeypatch):
    import concurrent.futures

    for index in range(20):
        (project / f"job{index}.sh").write_text(JOB if index % 2 else LATE)
    first = CliRunner().invoke(main, ["-j", "2", "."], catch_exceptions=False)
    assert first.exit_code == 1 and "SBL003" in first.output

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    second = CliRunner().invoke(main, ["-j", "2", "."], catch_exceptions=False)
    assert (second.exit_code, second.output) == (first.exit_code, first.output)
    (project / "job3.sh").write_text(LATE + "echo changed\n")  # one file changed: linted here, in order
    third = CliRunner().invoke(main, ["-j", "2", "."], catch_exceptions=False)
    assert project.linted == ["job3.sh"]
    assert third.output.count("SBL003") == first.output.count("SBL003") + 1

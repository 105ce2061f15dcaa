"""The command line as a user sees it: default command, formats, exit codes, fixes on disk."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sbatchlint.cli import main

LATE = "#!/bin/bash\n#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\nsrun hostname\n"
CLEAN = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nset -e\nsrun hostname\n"
NO_SHEBANG = "#SBATCH --nodes=1\nsrun hostname\n"


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def write(path, text, mode="w"):
    with open(path, mode) as handle:
        handle.write(text)
    return str(path)


def test_check_is_the_default_command(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    default = run(job)
    explicit = run("check", job)
    assert default.exit_code == explicit.exit_code == 1
    assert default.output == explicit.output
    assert "SBL003" in default.output


def test_clean_file_exits_zero(tmp_path):
    result = run(write(tmp_path / "job.sh", CLEAN))
    assert result.exit_code == 0
    assert "All checks passed" in result.output


def test_text_format_shows_a_code_frame(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    out = run(job).output
    assert f"{job}:4:1: SBL003" in out
    assert "4 | #SBATCH --time=00:10:00" in out
    assert "^^^^" in out
    assert "Found 1 problem (1 error) in 1 file." in out


def test_concise_is_one_line_per_finding(tmp_path):
    job = write(tmp_path / "job.sh", "#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\n")
    out = run("--output-format", "concise", job).output.splitlines()
    assert out == [
        f"{job}:1:1: SBL002 line 1 is not a `#!` line: sbatch refuses the script (\"This does not look like a batch script\")",
        f"{job}:3:1: SBL003 `#SBATCH --time=00:10:00` comes after the first command (line 2): sbatch ignores it",
    ]


def test_json_objects(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    data = json.loads(run("--output-format", "json", job).output)
    assert len(data) == 1
    item = data[0]
    assert {k: item[k] for k in ("code", "name", "severity", "path", "line", "column", "end_line", "end_column")} == {
        "code": "SBL003",
        "name": "directive-after-command",
        "severity": "error",
        "path": job,
        "line": 4,
        "column": 1,
        "end_line": 4,
        "end_column": 24,
    }
    assert item["fix"]["applicability"] == "unsafe"
    assert item["fix"]["edits"]


def test_fix_writes_safe_fixes_only(tmp_path):
    job = write(tmp_path / "job.sh", "#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\n")
    result = run("--fix", job)
    assert result.exit_code == 1  # the unsafe one remains
    with open(job) as handle:
        assert handle.read() == "#!/bin/bash\n#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\n"
    assert "Fixed 1 problem." in result.output


def test_unsafe_fixes_apply_everything(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    result = run("--unsafe-fixes", job)
    assert result.exit_code == 0
    with open(job) as handle:
        assert handle.read() == CLEAN


def test_diff_writes_nothing(tmp_path):
    job = write(tmp_path / "job.sh", NO_SHEBANG)
    result = run("--diff", job)
    assert result.exit_code == 1
    assert "+#!/bin/bash" in result.output
    with open(job) as handle:
        assert handle.read() == NO_SHEBANG


def test_fix_keeps_mode_and_crlf_and_untouched_bytes(tmp_path):
    path = tmp_path / "job.sh"
    original = b"#SBATCH --nodes=1\r\nX=\xe9t\xe9\r\nsrun hostname\r\n"  # latin-1 bytes, CRLF
    path.write_bytes(original)
    os.chmod(path, 0o750)
    run("--fix", "--select", "SBL002", str(path))
    data = path.read_bytes()
    assert data == b"#!/bin/bash\r\n" + original
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750


def test_select_and_ignore(tmp_path):
    job = write(tmp_path / "job.sh", "#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\n")
    assert "SBL002" not in run("--ignore", "SBL002", job).output
    only = run("--select", "SBL002", "--output-format", "concise", job).output
    assert "SBL002" in only and "SBL003" not in only
    assert run("--select", "SBL0", "--ignore", "SBL003", "--output-format", "concise", job).output.count("SBL") == 1


def test_unknown_code_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["--select", "XYZ9", write(tmp_path / "job.sh", CLEAN)])
    assert result.exit_code == 2
    assert "unknown rule code" in result.output


def test_no_paths_is_a_usage_error():
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 2


def test_stdin(tmp_path):
    result = run("-", "--stdin-filename", "job.sh", "--output-format", "concise", input=NO_SHEBANG)
    assert result.exit_code == 1
    assert result.output.startswith("job.sh:1:1: SBL002")


def test_stdin_fix_prints_fixed_text(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["--fix", "-"], input=NO_SHEBANG)
    assert result.stdout.startswith("#!/bin/bash\n#SBATCH --nodes=1\n")


def test_directory_discovery(tmp_path):
    (tmp_path / "jobs").mkdir()
    write(tmp_path / "jobs" / "a.sbatch", NO_SHEBANG)
    write(tmp_path / "jobs" / "b.slurm", CLEAN)
    write(tmp_path / "jobs" / "train_job", NO_SHEBANG)  # no extension, has #SBATCH
    write(tmp_path / "jobs" / "notes.txt", "nothing to see\n")
    write(tmp_path / "jobs" / "model.py", "print(1)\n")
    (tmp_path / "jobs" / ".git").mkdir()
    write(tmp_path / "jobs" / ".git" / "hook.sh", NO_SHEBANG)
    out = run("--output-format", "concise", str(tmp_path / "jobs")).output
    assert "a.sbatch:1:1: SBL002" in out
    assert "train_job:1:1: SBL002" in out
    assert "notes.txt" not in out and "model.py" not in out and ".git" not in out


def test_rules_and_explain():
    listing = run("rules").output
    assert "SBL003" in listing and "directive-after-command" in listing
    page = run("explain", "SBL003").output
    assert page.startswith("# SBL003 directive-after-command")
    assert "## Why is this bad?" in page
    assert run("explain", "directive-after-command").output == page
    assert CliRunner().invoke(main, ["explain", "SBL999"]).exit_code == 2


def test_console_script_runs_as_module(tmp_path):
    job = write(tmp_path / "job.sh", CLEAN)
    done = subprocess.run([sys.executable, "-m", "sbatchlint", job], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

"""ShellCheck alongside sbatchlint: its findings as SC#### in every format, with the same
selection and suppression comments."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sbatchlint import shellcheck
from sbatchlint.cli import main

SCRIPT = "#!/bin/bash\n#SBATCH --nodes=1\n\tcd $WORKDIR\nsrun hostname\n"

needs_shellcheck = pytest.mark.skipif(shellcheck.executable() is None, reason="shellcheck is not installed")


def run(tmp_path, *args, text=SCRIPT):
    job = tmp_path / "job.sh"
    job.write_text(text)
    return CliRunner().invoke(main, [*args, str(job)]), str(job)


@needs_shellcheck
def test_findings_at_their_exact_position(tmp_path):
    result, job = run(tmp_path, "--shellcheck", "--output-format", "json")
    found = {d["code"]: d for d in json.loads(result.stdout)}
    assert "SC2086" in found  # unquoted $WORKDIR
    assert (found["SC2086"]["line"], found["SC2086"]["column"], found["SC2086"]["end_column"]) == (3, 5, 13)


@needs_shellcheck
def test_not_run_unless_asked(tmp_path):
    result, _ = run(tmp_path, "--output-format", "concise")
    assert "SC2086" not in result.output


@needs_shellcheck
def test_select_ignore_and_suppressions(tmp_path):
    result, _ = run(tmp_path, "--shellcheck", "--ignore", "SC2086", "--output-format", "concise")
    assert "SC2086" not in result.output
    only, _ = run(tmp_path, "--shellcheck", "--select", "SC", "--output-format", "concise")
    assert only.output and all(": SC" in line for line in only.output.splitlines())
    suppressed, _ = run(
        tmp_path, "--shellcheck", "--output-format", "concise",
        text=SCRIPT.replace("cd $WORKDIR", "cd $WORKDIR  # sbatchlint: disable=SC2086,SC2164"),
    )
    assert "SC2086" not in suppressed.output and "SBL901" not in suppressed.output


@needs_shellcheck
def test_config_key_turns_it_on(tmp_path):
    (tmp_path / ".sbatchlint.toml").write_text("shellcheck = true\n")
    result, _ = run(tmp_path, "--output-format", "github")
    assert "title=SC2086 shellcheck" in result.output


def test_missing_shellcheck_is_said_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(shellcheck, "executable", lambda: None)
    result, _ = run(tmp_path, "--shellcheck", "--output-format", "concise")
    warnings = [line for line in result.output.splitlines() if line.startswith("sbatchlint: warning:")]
    assert warnings == [f"sbatchlint: warning: {shellcheck.NOT_INSTALLED}"]


@needs_shellcheck
def test_text_output_points_at_shellcheck_wiki(tmp_path):
    result, _ = run(tmp_path, "--shellcheck", "--color", "never")
    assert "  SC2086 shellcheck  https://www.shellcheck.net/wiki/SC2086\n" in result.output

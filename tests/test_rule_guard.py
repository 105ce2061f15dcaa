"""One rule's bug costs only that rule's findings: the command line names the rule and the file,
reports every other rule's findings, applies their fixes, and exits 2."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from sbatchlint import registry
from sbatchlint.cli import main

# SBL002 (no shebang, safe fix) and SBL003 (a directive after the first command)
JOB = "#SBATCH --nodes=1\nset -e\n#SBATCH --time=10\nsrun hostname\n"


@pytest.fixture
def broken_rule(monkeypatch):
    rule = registry.get("SBL003")

    def check(script):
        raise ValueError("bad span 12..11")

    monkeypatch.setattr(rule, "check", check)
    return rule


def run(*args):
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_a_failing_rule_is_reported_and_the_others_still_run(tmp_path, broken_rule):
    job = tmp_path / "job.sh"
    job.write_text(JOB)
    other = tmp_path / "other.sh"
    other.write_text(JOB)
    result = run("--output-format", "concise", str(job), str(other))
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("sbatchlint: error:")]
    assert errors == [
        f"sbatchlint: error: {path}: internal error in SBL003 ({broken_rule.name}): ValueError: bad span 12..11"
        for path in (job, other)
    ]
    assert f"{job}:1:1: SBL002" in result.stdout and f"{other}:1:1: SBL002" in result.stdout
    assert "Traceback" not in result.output


def test_the_summary_says_internal_error_not_unreadable(tmp_path, broken_rule):
    job = tmp_path / "job.sh"
    job.write_text(JOB)
    result = run(str(job))
    last = result.stdout.splitlines()[-1]
    assert "1 file hit an internal error" in last and "could not be read" not in last
    clean = tmp_path / "clean.sh"
    clean.write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    last = run(str(clean)).stdout.splitlines()[-1]
    assert last == "No problems found in 1 file; 1 file hit an internal error."


def test_the_other_rules_fixes_still_apply(tmp_path, broken_rule):
    job = tmp_path / "job.sh"
    job.write_text(JOB)
    result = run("--fix", str(job))
    assert result.exit_code == 2
    assert job.read_text() == "#!/bin/bash\n" + JOB
    assert result.stderr.count("internal error in SBL003") == 1  # once, however many fix passes


def test_a_failing_rule_never_prints_a_secret(tmp_path, monkeypatch):
    token = "3f9c2a7be41d08c6a5b7e9f1d2c3b4a5968776ab"  # a W&B key's shape
    rule = registry.get("SBL003")

    def check(script):
        raise ValueError(f"cannot read {token}")

    monkeypatch.setattr(rule, "check", check)
    job = tmp_path / "job.sh"
    job.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\nexport WANDB_API_KEY={token}\nsrun hostname\n")
    result = run(str(job))
    assert result.exit_code == 2
    assert "internal error in SBL003" in result.stderr
    assert "SBL401" in result.stdout  # the other rules still report it, masked
    assert token not in result.output and token[4:] not in result.output

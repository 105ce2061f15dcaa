"""Configuration discovery and precedence, and options from the command line."""
from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from sbatchlint.cli import main

BROKEN = "#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\n"  # SBL002 and SBL003


def run(*args, cwd=None):
    runner = CliRunner()
    return runner.invoke(main, ["--output-format", "concise", *args])


def codes(result):
    return sorted({line.split(": ")[1].split()[0] for line in result.output.splitlines() if ": SBL" in line})


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "jobs" / "legacy").mkdir(parents=True)
    for rel in ("jobs/a.sh", "jobs/legacy/b.sh"):
        (tmp_path / rel).write_text(BROKEN)
    return tmp_path


def test_pyproject_table_applies(tree):
    (tree / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.sbatchlint]\nignore = ["SBL002"]\n')
    assert codes(run(str(tree / "jobs" / "a.sh"))) == ["SBL003"]


def test_closest_config_wins(tree):
    (tree / "pyproject.toml").write_text('[tool.sbatchlint]\nignore = ["SBL002"]\n')
    (tree / "jobs" / "legacy" / ".sbatchlint.toml").write_text('ignore = ["SBL003"]\n')
    assert codes(run(str(tree / "jobs" / "a.sh"))) == ["SBL003"]
    assert codes(run(str(tree / "jobs" / "legacy" / "b.sh"))) == ["SBL002"]


def test_sbatchlint_toml_beats_pyproject_in_one_directory(tree):
    (tree / "pyproject.toml").write_text('[tool.sbatchlint]\nignore = ["SBL002"]\n')
    (tree / ".sbatchlint.toml").write_text('ignore = ["SBL003"]\n')
    assert codes(run(str(tree / "jobs" / "a.sh"))) == ["SBL002"]


def test_pyproject_without_table_is_skipped(tree):
    (tree / "jobs" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tree / "pyproject.toml").write_text('[tool.sbatchlint]\nignore = ["SBL002"]\n')
    assert codes(run(str(tree / "jobs" / "a.sh"))) == ["SBL003"]


def test_isolated_and_forced_config(tree):
    (tree / "pyproject.toml").write_text('[tool.sbatchlint]\nignore = ["SBL002"]\n')
    assert codes(run("--isolated", str(tree / "jobs" / "a.sh"))) == ["SBL002", "SBL003"]
    forced = tree / "ci.toml"
    forced.write_text('select = ["SBL002"]\n')
    assert codes(run("--config", str(forced), str(tree / "jobs" / "a.sh"))) == ["SBL002"]


def test_select_extend_select_and_cli_precedence(tree):
    (tree / ".sbatchlint.toml").write_text('select = ["SBL002"]\nextend-select = ["SBL003"]\n')
    assert codes(run(str(tree / "jobs" / "a.sh"))) == ["SBL002", "SBL003"]
    assert codes(run("--ignore", "SBL003", str(tree / "jobs" / "a.sh"))) == ["SBL002"]


def test_per_file_ignores_and_exclude(tree):
    (tree / ".sbatchlint.toml").write_text(
        'exclude = ["jobs/legacy"]\n[per-file-ignores]\n"jobs/a.sh" = ["SBL003"]\n'
    )
    result = run(str(tree / "jobs"))
    assert "legacy" not in result.output
    assert codes(result) == ["SBL002"]
    # an excluded file named explicitly is still linted
    assert codes(run(str(tree / "jobs" / "legacy" / "b.sh"))) == ["SBL002", "SBL003"]


def test_severity_override(tree):
    (tree / ".sbatchlint.toml").write_text('[severity]\nSBL003 = "warning"\n')
    result = CliRunner().invoke(main, ["--output-format", "json", str(tree / "jobs" / "a.sh")])
    import json

    by_code = {d["code"]: d["severity"] for d in json.loads(result.output)}
    assert by_code == {"SBL002": "error", "SBL003": "warning"}


@pytest.mark.parametrize(
    "text,fragment",
    [
        ('selct = ["SBL1"]\n', "selct: unknown key"),
        ('select = "SBL7"\n', "select: unknown rule code or prefix 'SBL7'"),
        ('gpus-per-node = "eight"\n', "gpus-per-node: expected a positive integer"),
        ('[severity]\nSBL003 = "fatal"\n', "severity.SBL003: expected"),
        ('select = [\n', "invalid TOML"),
    ],
)
def test_bad_configuration_names_file_and_key(tree, text, fragment):
    config = tree / ".sbatchlint.toml"
    config.write_text(text)
    result = run(str(tree / "jobs" / "a.sh"))
    assert result.exit_code == 2
    assert f"sbatchlint: error: {config}: " in result.output
    assert fragment in result.output
    assert "Traceback" not in result.output


def test_rule_options_reach_the_rules(tree):
    from sbatchlint.runner import CommandLine, Resolver
    from sbatchlint import registry

    (tree / ".sbatchlint.toml").write_text('shared-roots = ["/lustre/fsw"]\ngpus-per-node = 4\n')
    resolver = Resolver(CommandLine(), [r.code for r in registry.all_rules()])
    settings = resolver.options_for(str(tree / "jobs" / "a.sh")).settings
    assert settings == {"shared_roots": ["/lustre/fsw"], "gpus_per_node": 4}


def test_parallel_output_equals_serial(tree):
    for index in range(12):
        (tree / "jobs" / f"job{index:02d}.sh").write_text(BROKEN if index % 3 else "#!/bin/bash\nsrun hostname\n")
    serial = run("-j", "1", str(tree / "jobs"))
    parallel = run("-j", "3", str(tree / "jobs"))
    assert serial.exit_code == parallel.exit_code == 1
    assert serial.output == parallel.output
    assert serial.output.count("SBL002") == 10


def test_statistics_and_exit_zero(tree):
    result = CliRunner().invoke(main, ["--statistics", "--exit-zero", str(tree / "jobs")])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split() == ["2", "SBL002", "[*]", "missing-shebang"]
    assert lines[1].split() == ["2", "SBL003", "directive-after-command"]

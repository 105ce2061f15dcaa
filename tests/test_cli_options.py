"""Command-line options a user reaches for next to ruff and ShellCheck: the top-level help,
--output-file, --show-fixes, --color, --show-settings, --fail-level, --statistics as JSON, and the
links from each finding to its rule's page."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from click.testing import CliRunner

from sbatchlint.cli import main

# SBL003 (error, unsafe fix) on line 4; SBL107 (warning) on the step.
LATE = "#!/bin/bash\n#SBATCH --nodes=1\nset -e\n#SBATCH --time=00:10:00\nsrun hostname\n"
CLEAN = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nset -e\nsrun hostname\n"
# Only a warning: a torchrun step on two nodes without --kill-on-bad-exit.
WARNING_ONLY = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --time=01:00:00
set -euo pipefail
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/lustre:/lustre \\
  torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 /lustre/train.py
"""


def run(*args, input=None, env=None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False, env=env)


def write(path, text):
    path.write_text(text)
    return str(path)


def test_top_level_help_shows_the_options_of_check():
    out = run("--help").output
    assert "Options of check (the default command):" in out
    for option in ("--fix", "--select", "--output-format", "--add-noqa", "--fail-level", "--output-file"):
        assert option in out, option
    assert "Commands:" in out and "explain" in out


def test_output_file_receives_the_findings_and_the_terminal_nothing(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    report = tmp_path / "report.json"
    result = run("--output-format", "json", "--output-file", str(report), job)
    assert result.exit_code == 1
    assert result.output == ""
    findings = json.loads(report.read_text())
    assert {f["code"] for f in findings} >= {"SBL003"}


def test_output_file_that_cannot_be_written_is_a_one_line_error(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    result = CliRunner().invoke(main, ["--output-file", str(tmp_path / "missing" / "out.txt"), job])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"sbatchlint: error: {tmp_path / 'missing' / 'out.txt'}: cannot write: No such file or directory"]


def test_show_fixes_lists_what_was_fixed_per_file_and_code(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    out = run("--unsafe-fixes", "--show-fixes", "--select", "SBL003", job).output
    assert f"Fixed 1 problem:\n- {job}:\n    1 × SBL003 (directive-after-command)\n" in out


def test_without_show_fixes_no_list_is_printed(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    out = run("--unsafe-fixes", "--select", "SBL003", job).output
    assert "× SBL003" not in out and "Fixed 1 problem." in out


def test_color_always_never_and_auto(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    assert "\x1b[" in run("--color", "always", job).output
    assert "\x1b[" not in run("--color", "never", job, env={"FORCE_COLOR": "1"}).output
    assert "\x1b[" in run(job, env={"FORCE_COLOR": "1", "NO_COLOR": ""}).output  # auto follows FORCE_COLOR
    assert "\x1b[" not in run(job).output  # auto: not a terminal


def test_show_settings_names_where_each_value_comes_from(tmp_path):
    project = tmp_path / "project"
    (project / "jobs").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[tool.sbatchlint]\nignore = ["SBL202"]\nshared-roots = ["/lustre/fsw"]\n'
        'per-file-ignores = { "jobs/*.sh" = ["SBL011"] }\n')
    job = write(project / "jobs" / "a.sh", CLEAN)
    result = run("--show-settings", job, "--select", "SBL0,SBL2", "--slurm-version", "23.11")
    assert result.exit_code == 0
    lines = {line.split(" = ")[0]: line for line in result.output.splitlines() if " = " in line}
    config = str(project / "pyproject.toml")
    assert lines["select"].endswith("# --select") and '["SBL0", "SBL2"]' in lines["select"]
    assert lines["ignore"].startswith('ignore = ["SBL202", "SBL011"]')
    assert lines["ignore"].endswith(f"# {config}, {config} per-file-ignores")
    assert lines["shared-roots"].endswith(f"# {config}")
    assert lines["slurm-version"].startswith('slurm-version = "23.11"') and lines["slurm-version"].endswith("# --slurm-version")
    assert lines["gpu-request"].endswith("# default")
    assert f"# configuration: {config}" in result.output
    assert "All checks passed" not in result.output and "Found" not in result.output  # nothing was linted


def test_show_settings_reads_the_cluster_profile_and_json(tmp_path):
    (tmp_path / ".sbatchlint-cluster.toml").write_text('cluster = "dev"\nslurm-version = "23.02"\n')
    job = write(tmp_path / "a.sh", CLEAN)
    result = run("--show-settings", job, "--output-format", "json", "--isolated")
    settings = {row["key"]: row for row in json.loads(result.output)["settings"]}
    assert settings["slurm-version"]["from"] == "default"  # --isolated ignores the profile
    assert settings["configuration"]["from"] == "--isolated: no configuration"
    result = run("--show-settings", job, "--output-format", "json")
    settings = {row["key"]: row for row in json.loads(result.output)["settings"]}
    assert settings["slurm-version"] == {"key": "slurm-version", "value": "23.02",
                                         "from": str(tmp_path / ".sbatchlint-cluster.toml")}
    assert settings["cluster"]["value"] == "dev"


def test_fail_level_decides_which_severities_fail_the_run(tmp_path):
    job = write(tmp_path / "job.sh", WARNING_ONLY)
    findings = json.loads(run("--output-format", "json", job).output)
    assert findings and {f["severity"] for f in findings} == {"warning"}, findings
    assert run(job).exit_code == 1
    assert run("--fail-level", "warning", job).exit_code == 1
    result = run("--fail-level", "error", job)
    assert result.exit_code == 0
    assert "SBL107" in result.output  # the finding is still printed
    assert run("--fail-level", "error", write(tmp_path / "late.sh", LATE)).exit_code == 1


def test_statistics_as_json(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    result = run("--statistics", "--output-format", "json", job)
    rows = json.loads(result.output)  # nothing but the JSON document
    assert {"code": "SBL003", "name": "directive-after-command", "count": 1, "fixable": 0} in rows
    assert [row["count"] for row in rows] == sorted((row["count"] for row in rows), reverse=True)
    text = run("--statistics", job).output
    assert "SBL003" in text and "directive-after-command" in text and not text.lstrip().startswith("[")


def test_sarif_and_json_link_each_code_to_its_page(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    sarif = json.loads(run("--output-format", "sarif", job).output)
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["SBL003"]["helpUri"] == "rules/SBL003.md"
    repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert os.path.isfile(os.path.join(repository, "rules", "SBL003.md"))
    findings = json.loads(run("--output-format", "json", job).output)
    assert {f["code"]: f["url"] for f in findings}["SBL003"] == "rules/SBL003.md"


def test_text_output_on_a_terminal_links_the_code(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    out = run("--color", "always", job).output
    repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    page = "file://" + os.path.join(repository, "rules", "SBL003.md")
    assert f"\x1b]8;;{page}\x1b\\" in out
    assert "\x1b]8;;" not in run("--color", "never", job).output


def test_plain_text_ends_with_one_reference_per_code(tmp_path):
    """Without colour (a log file, a CI console) the text output still says where each code's page
    is: once per code, after the findings, not on every finding; concise and -q stay bare."""
    jobs = [write(tmp_path / "a.sh", LATE), write(tmp_path / "b.sh", LATE), write(tmp_path / "c.sh", WARNING_ONLY)]
    out = run("--color", "never", "--select", "SBL003,SBL107", *jobs).output
    block = out[out.index("For more information:"):].splitlines()
    assert block[:3] == ["For more information:",
                         "  SBL003 directive-after-command   sbatchlint explain SBL003",
                         "  SBL107 missing-kill-on-bad-exit  sbatchlint explain SBL107"]
    assert block[4].startswith("Found 3 problems")
    assert out.count("sbatchlint explain SBL003") == 1  # two findings of SBL003, one reference
    assert "explain" not in run("--output-format", "concise", *jobs).output
    assert "For more information" not in run("-q", *jobs).output
    assert "For more information" not in run(write(tmp_path / "clean.sh", CLEAN)).output
    # the command it names prints that rule's page
    page = run("explain", "SBL003").output
    assert page.startswith("# SBL003") and "directive-after-command" in page


def test_a_documentation_url_makes_the_links_absolute(tmp_path):
    """The installed distribution's [project.urls] Documentation entry is the base of every link."""
    info = tmp_path / "site" / "sbatchlint-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sbatchlint\nVersion: 0.1.0\n"
                                   "Project-URL: Documentation, https://docs.example.org/sbatchlint/\n")
    job = write(tmp_path / "job.sh", LATE)
    repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), repository]))
    # Run from tmp_path: `python -m` puts the working directory first on sys.path, and a checkout
    # installed with `pip install -e .` holds a sbatchlint.egg-info there that would be read first.
    done = subprocess.run([sys.executable, "-m", "sbatchlint", "--output-format", "sarif", job],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    rules = {r["id"]: r for r in json.loads(done.stdout)["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["SBL003"]["helpUri"] == "https://docs.example.org/sbatchlint/rules/SBL003.md"
    done = subprocess.run([sys.executable, "-m", "sbatchlint", "--color", "always", job],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert "\x1b]8;;https://docs.example.org/sbatchlint/rules/SBL003.md\x1b\\" in done.stdout
    done = subprocess.run([sys.executable, "-m", "sbatchlint", "--color", "never", job],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert "  SBL003 directive-after-command  https://docs.example.org/sbatchlint/rules/SBL003.md\n" in done.stdout


@pytest.mark.parametrize("distribution", ["click", "tree-sitter", "pytest", "libcst"])
def test_project_urls_are_read_as_importlib_metadata_reads_them(distribution):
    from importlib.metadata import metadata

    from sbatchlint.report.links import _project_urls

    assert _project_urls(distribution) == (metadata(distribution).get_all("Project-URL") or [])


def test_project_urls_of_an_egg_info_with_a_folded_header(tmp_path, monkeypatch):
    from sbatchlint.report import links

    info = tmp_path / "Sbatch.Lint.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: sbatch.lint\nProject-URL: Documentation,\n"
                                   "  https://docs.example.org/x/\nLicense: a\n   \n  b\nSummary: s\n\nProject-URL: Body, not a header\n")
    monkeypatch.setattr("sys.path", [str(tmp_path / "missing"), str(tmp_path)])
    assert links._project_urls("sbatch-lint") == ["Documentation, https://docs.example.org/x/"]
    assert links._project_urls("other") == []


def test_only_the_server_command_imports_pygls(tmp_path):
    job = write(tmp_path / "job.sh", LATE)
    probe = ("import sys\nfrom sbatchlint.cli import main\n"
             "try:\n    main([sys.argv[1]])\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'sbatchlint.server')))")
    done = subprocess.run([sys.executable, "-c", probe, job], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


def test_server_without_pygls_is_a_one_line_error():
    probe = ("import sys\n"
             "class Block:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name.split('.')[0] in ('pygls', 'lsprotocol'):\n"
             "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
             "sys.meta_path.insert(0, Block())\n"
             "from sbatchlint.cli import main\n"
             "main(['server'])\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        'sbatchlint: error: the language server needs pygls (lsprotocol): pip install "sbatchlint[server]"']

"""The header family on the shapes real job scripts take (fixtures in fixtures/header)."""
from __future__ import annotations

from pathlib import Path

from lintutil import lint_text, said

FIXTURES = Path(__file__).parent / "fixtures" / "header"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def found(text: str, select=None, settings=None, path: str = "job.sh"):
    """(code, line) of every finding."""
    data = text.encode()
    return [(d.code, data.count(b"\n", 0, d.span.start) + 1) for d in lint_text(text, select, path, settings)]


# -- usage comments are not directives (SBL004) ---------------------------------------------
def test_usage_comments_are_not_malformed_directives():
    assert found(fixture("usage_comments.sh"), ["SBL004"]) == []


def test_directives_written_as_comments_stay_sbl004():
    assert found(fixture("disabled_directives.sh"), ["SBL004"]) == [("SBL004", 3), ("SBL004", 4), ("SBL004", 5)]


# -- here-documents (SBL003 and the body as a job of its own) -------------------------------
def test_a_body_written_but_not_submitted_gets_no_job_findings():
    assert found(fixture("heredoc_written_not_submitted.sh")) == []


def test_submitted_bodies_are_linted_as_jobs_at_their_real_lines():
    text = fixture("heredoc_submitted.sh")
    # the late #SBATCH of each submitted body, and nothing for `--nodes=$NODES` (the outer
    # shell fills it in before sbatch reads the body)
    assert found(text, ["SBL0"]) == [("SBL003", 13), ("SBL003", 22)]


def test_fixes_in_bodies_only_where_the_outer_shell_leaves_the_text_alone():
    from lintutil import fix_text

    text = fixture("heredoc_submitted.sh")
    fixed = fix_text(text, ["SBL003"], unsafe=True)
    # the quoted body (<<'END') is fixed; the unquoted one is left as it is
    assert "#SBATCH --nodes=2\n#SBATCH --time=00:30:00\nset -x\nsrun hostname\n" in fixed
    assert "module load cuda\n#SBATCH --exclusive\n" in fixed


# -- templates for other tools (SBL015) ------------------------------------------------------
def test_format_fields_in_the_header_make_a_template_with_one_finding():
    assert found(fixture("format_template.sh")) == [("SBL015", 2)]


def test_jinja_tags_make_a_template():
    assert found(fixture("jinja_template.sh")) == [("SBL015", 2)]


def test_a_template_file_name_is_evidence_of_its_own():
    (finding,) = lint_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname\n", path="job.sbatch.j2")
    assert finding.code == "SBL015" and "file name" in finding.message


def test_dollar_variables_and_quoted_braces_are_no_evidence():
    codes = [code for code, _ in found(fixture("job_with_dollar_directive.sh"), ["SBL0"])]
    assert "SBL015" not in codes
    assert "SBL006" in codes and "SBL009" in codes  # the job's real mistakes stay


# -- what the parser reads, and what it leaves (SBL001 / SBL016) ------------------------------
def test_time_prefix_and_arithmetic_bases_are_read():
    text = fixture("timed_steps.sh")
    assert found(text, ["SBL001", "SBL016"]) == []
    from sbatchlint.model.script import Script
    from sbatchlint.source import Source

    script = Script(Source(text.encode(), "job.sh"))
    assert script.errors == []
    assert len(script.steps) == 2  # both srun steps behind `time` are seen


def test_valid_bash_the_parser_cannot_read_is_information_not_an_error():
    import shutil

    import pytest

    if shutil.which("bash") is None:
        pytest.skip("needs bash -n")
    text = '#!/bin/bash\n#SBATCH --nodes=1\nif [ $DATA/shard_$RANK.bin = "$X" ]; then\n  srun hostname\nfi\n'
    (finding,) = lint_text(text, ["SBL0"])
    assert finding.code == "SBL016" and finding.severity.value == "info"
    assert "not analysed" in finding.message
    broken = '#!/bin/bash\n#SBATCH --nodes=1\nif [ -n "$X" ]; then\n  srun hostname\n'
    assert [d.code for d in lint_text(broken, ["SBL0"])] == ["SBL001"]


# -- options a site's plugins add (SBL014, SBL005) -------------------------------------------
def test_unknown_long_options_far_from_known_ones_are_warnings():
    findings = lint_text(fixture("site_plugin_options.sh"), ["SBL005", "SBL014"])
    assert [(d.code, d.severity.value) for d in findings] == [
        ("SBL014", "warning"), ("SBL014", "warning"), ("SBL005", "error")
    ]
    assert "site plugin" in said(findings[0]) and "extra-options" in findings[0].help
    assert "did you mean `--ntasks-per-node`" in findings[2].message


def test_declared_site_options_are_options():
    settings = {"extra_options": ["environment=", "no-gpu-reset"]}
    findings = lint_text(fixture("site_plugin_options.sh"), ["SBL0"], settings=settings)
    assert [d.code for d in findings] == ["SBL005"]  # the misspelling is still one
    # a value-taking site option consumes the next word, as getopt does
    text = "#!/bin/bash\n#SBATCH --environment ngc --nodes=1\nsrun hostname\n"
    assert lint_text(text, ["SBL0"], settings=settings) == []


def test_extra_options_is_a_configuration_key(tmp_path):
    from sbatchlint.config import load

    path = tmp_path / ".sbatchlint.toml"
    path.write_text('extra-options = ["environment="]\n')
    assert load(str(path)).settings["extra_options"] == ["environment="]


# -- the target Slurm release (SBL109) -------------------------------------------------------
def test_slurm_version_on_the_command_line_and_in_the_configuration(tmp_path):
    from click.testing import CliRunner

    from sbatchlint.cli import main

    job = tmp_path / "job.sh"
    job.write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=8\nsrun python a.py\n")
    runner = CliRunner()
    default = runner.invoke(main, ["--isolated", "--select", "SBL109", str(job)])
    assert default.exit_code == 0, default.output
    old = runner.invoke(main, ["--isolated", "--select", "SBL109", "--slurm-version", "22.05", str(job)])
    assert old.exit_code == 1 and "SBL109" in old.output
    bad = runner.invoke(main, ["--isolated", "--slurm-version", "latest", str(job)])
    assert bad.exit_code == 2 and "--slurm-version" in bad.output and "Traceback" not in bad.output
    (tmp_path / ".sbatchlint.toml").write_text('slurm-version = "23.02"\n')
    configured = runner.invoke(main, ["--select", "SBL109", str(job)])
    assert configured.exit_code == 1 and "SBL109" in configured.output
    (tmp_path / ".sbatchlint.toml").write_text('slurm-version = "new"\n')
    broken = runner.invoke(main, [str(job)])
    assert broken.exit_code == 2 and "slurm-version" in broken.output


# -- placeholder shapes (SBL009) -------------------------------------------------------------
def test_placeholder_shapes_and_harmless_names():
    findings = lint_text(fixture("placeholder_shapes.sh"), ["SBL009"])
    data = fixture("placeholder_shapes.sh").encode()
    assert [(data.count(b"\n", 0, d.span.start) + 1, data[d.span.start : d.span.end]) for d in findings] == [
        (2, b"project_xxxxxxxx"),
        (8, b"<team>"),
    ]
    glued = said(findings[1])
    assert "`<team` as input from a file named `team`" in glued
    assert "creates or truncates a file `/pytorch.sqsh`" in glued and "`CONT` holds only `/shared/images/`" in glued


# -- heterogeneous jobs ----------------------------------------------------------------------
def test_het_job_components_are_not_duplicates_and_hetjob_is_no_stray_word():
    assert found(fixture("het_job.sh")) == []


def test_het_group_steps_take_their_own_component():
    from sbatchlint.model.geometry import geometry
    from sbatchlint.model.script import Script
    from sbatchlint.source import Source

    script = Script(Source(fixture("het_job.sh").encode(), "job.sh"))
    header = script.header
    assert header.components == 1
    assert header.get("nodes").value == "2"  # the first component: the batch script's own
    serve, train = script.steps
    assert geometry(script, train).tasks_per_node.value == 8  # --het-group=0: the first component
    assert geometry(script, serve).ntasks.value is None  # --het-group=1: not the first component
    # a duplicate inside one component is still one
    text = fixture("het_job.sh").replace("#SBATCH --time=02:00:00", "#SBATCH --time=02:00:00\n#SBATCH -N 3")
    assert ("SBL008", 7) in found(text, ["SBL008"])


# -- what is a batch script ------------------------------------------------------------------
def test_a_sourced_helper_gets_only_the_rules_for_any_shell_file():
    from lintutil import fix_text

    text = fixture("sourced_env.sh")
    assert found(text) == []  # no SBL002: it is not a job, sbatch never reads it
    assert fix_text(text, unsafe=True) == text  # and no shebang is added to it
    broken = text + "if true; then\n"
    assert [code for code, _ in found(broken)] == ["SBL001"]


def test_batch_scripts_are_told_apart_by_the_model():
    from sbatchlint.model.script import Script
    from sbatchlint.source import Source

    def batch(text: str, path: str = "job.sh") -> bool:
        return Script(Source(text.encode(), path)).is_batch_script

    assert not batch(fixture("sourced_env.sh"))
    assert batch("#!/bin/bash\n#SBATCH --nodes=1\npython train.py\n")
    assert batch("#!/bin/bash\nset -e\n#SBATCH --nodes=1\npython train.py\n")  # late directives
    assert batch("#!/bin/bash\nsrun hostname\n")  # runs job steps
    assert batch("#!/bin/bash\npython train.py\n", "train.sbatch")
    # a here-document's #SBATCH lines are the job it writes, not this file's
    assert not batch("#!/bin/bash\ncat > job.sh <<EOF\n#!/bin/bash\n#SBATCH -N 1\nEOF\necho written\n")


def test_per_task_variables_in_an_unquoted_submitted_body_are_expanded_at_submission():
    text = fixture("heredoc_task_variables.sh")
    findings = lint_text(text, ["SBL201"])
    data = text.encode()
    # only the unescaped one in the unquoted body: \\$SLURM_NODEID and the quoted body are the job's
    assert [(data.count(b"\n", 0, d.span.start) + 1, data[d.span.start : d.span.end]) for d in findings] == [
        (8, b"$SLURM_PROCID")
    ]
    assert "expanded by the submitting shell" in findings[0].message

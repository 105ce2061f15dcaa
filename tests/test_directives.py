"""SBL005–SBL013 (sbatchlint/rules/directives.py) and the header model they read."""
from __future__ import annotations

from sbatchlint.model.header import parse_header
from sbatchlint.source import Source


def header_of(text: str):
    return parse_header(Source(text.encode("utf-8")))


# -- the header model, read the way sbatch reads it ---------------------------------------------
def test_short_option_keeps_an_equals_sign_like_getopt():
    # getopt hands everything after the letter to the option: sbatch sees --nodes "=2".
    (directive,) = header_of("#!/bin/bash\n#SBATCH -N=2\n").directives
    assert directive.name == "nodes" and directive.value == "=2"


def test_backslash_makes_the_next_character_literal_but_not_a_blank():
    # As sbatch 22.05 reads them: --job-name="a\"b" is a"b, a\b is ab, "a\ b" is "a b",
    # but an unquoted a\ b is "a" followed by the stray word "b"; x\ at the line end is "x".
    header = header_of('#!/bin/bash\n#SBATCH --comment="say \\"hi\\"" -J x\\#y --wckey=a\\b -J "a\\ b"\n')
    values = [(d.name, d.value) for d in header.directives]
    assert values == [("comment", 'say "hi"'), ("job-name", "x#y"), ("wckey", "ab"), ("job-name", "a b")]
    assert all(d.truncated_at is None for d in header.directives)
    stray = header_of("#!/bin/bash\n#SBATCH --job-name=a\\ b -J x\\\n").directives
    assert [(d.option, d.value) for d in stray] == [("job-name", "a"), ("b", None), ("J", "x")]


def test_late_and_malformed_directives_are_kept_apart():
    header = header_of("#!/bin/bash\n#SBATCH -N 2\nset -e\n#SBATCH --time=10\n  #SBATCH --mem=1G\n")
    assert [(d.name, d.value, d.placement) for d in header.directives] == [
        ("nodes", "2", "header"),
        ("time", "10", "late"),
    ]
    assert [m.kind for m in header.malformed] == ["indented"]


# -- helpers ------------------------------------------------------------------------------------
import os
import re

import pytest
from click.testing import CliRunner

from lintutil import fix_text, lint_text, said
from sbatchlint.cli import main
from sbatchlint.options import SBATCH, read_as_short

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "directives")
OURS = ["SBL005", "SBL006", "SBL007", "SBL008", "SBL009", "SBL010", "SBL011", "SBL012", "SBL013"]


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES, name), encoding="utf-8", newline="") as handle:
        return handle.read()


def found(text: str, select=OURS):
    """(code, line, the underlined text) of every finding."""
    data = text.encode("utf-8")
    out = []
    for d in lint_text(text, select):
        line = data.count(b"\n", 0, d.span.start) + 1
        out.append((d.code, line, data[d.span.start : d.span.end].decode("utf-8")))
    return out


def job(*header: str, body: str = "srun hostname\n") -> str:
    return "#!/bin/bash\n" + "".join(f"#SBATCH {line}\n" for line in header) + body


def codes_of(text: str, select=OURS):
    return [code for code, _, _ in found(text, select)]


# -- realistic fixtures -------------------------------------------------------------------------
def test_clean_bridge_job_has_no_header_findings():
    # several options per line, -N2, -c 16, quoted value, trailing comments, \#, a unique
    # abbreviation, repeated --mail-type, pyxis options only on srun.
    assert found(fixture("bridge_sft_clean.sh")) == []


def test_broken_legacy_job_reports_each_problem_where_it_is():
    assert found(fixture("legacy_torchrun_broken.sh")) == [
        ("SBL012", 2, "#v2"),
        ("SBL005", 4, "-ntasks-per-node=1"),
        ("SBL005", 5, "--gpu-per-node"),
        ("SBL006", 6, "48:00:00:00"),
        ("SBL005", 7, "--cpus-per"),
        ("SBL009", 8, "<YOUR_ACCOUNT>"),
        ("SBL010", 9, "logs/pretrain.log"),
        ("SBL011", 9, "logs/pretrain.log"),
        ("SBL006", 10, "$MEM"),
        ("SBL009", 17, "<SHARED_FS>"),
        ("SBL009", 19, "your_team_here"),
    ]


def test_broken_legacy_job_after_all_fixes():
    fixed = fix_text(fixture("legacy_torchrun_broken.sh"), OURS, unsafe=True)
    lines = fixed.splitlines()
    assert lines[1] == "#SBATCH --job-name=gpt-pretrain\\#v2 --nodes=4"
    assert lines[3] == "#SBATCH --ntasks-per-node=1"
    assert lines[4] == "#SBATCH --gpus-per-node=8"
    assert lines[8] == "#SBATCH --output=logs/pretrain_%j.log"
    # the escaped '#' brings --nodes=4 back, and now line 3 overrides it
    assert ("SBL008", 2, "--nodes=4") in found(fixed)
    assert fix_text(fixed, OURS, unsafe=True) == fixed


def test_pyxis_header_options_move_to_every_containerized_step():
    source = fixture("pyxis_header.sh")
    assert found(source) == [
        ("SBL007", 3, "--container-mounts=/lustre/team:/lustre/team,/scratch:/scratch"),
        ("SBL007", 4, "--no-container-mount-home"),
        ("SBL007", 5, "--container-workdir=/lustre/team/repo"),
    ]
    fixed = fix_text(source, OURS)
    assert fixed == fixture("pyxis_header.fixed.sh")
    assert found(fixed) == []
    assert fix_text(fixed, OURS, unsafe=True) == fixed


def test_array_job_logs():
    assert found(fixture("array_sweep.sh")) == [
        ("SBL011", 5, "sweeps/lr_%A.out"),
        ("SBL011", 6, "sweeps/lr_%a.err"),
    ]
    messages = [said(d) for d in lint_text(fixture("array_sweep.sh"), ["SBL011"])]
    assert "write over each other" in messages[0]
    assert "appends to" in messages[1]  # --open-mode=append
    fixed = fix_text(fixture("array_sweep.sh"), ["SBL011"], unsafe=True)
    assert "#SBATCH -o sweeps/lr_%A_%a.out\n" in fixed
    assert "#SBATCH -e sweeps/lr_%A_%a.err\n" in fixed


def test_template_placeholders_but_not_the_checks_for_them():
    assert found(fixture("placeholders.sh"), ["SBL009"]) == [
        ("SBL009", 3, "<YOUR_ACCOUNT>"),
        ("SBL009", 4, "your_partition_here"),
        ("SBL009", 19, "<REPO_DIR>"),
        ("SBL009", 20, "<PROJECT>"),
        ("SBL009", 21, "YOUR_TEAM"),
    ]


# -- SBL005 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "header",
    [
        "-N2",
        "-N 2",
        "--nodes 2",
        "-J train",
        "-Jtrain",
        "-pgpu",
        "--ntasks-per-n=8",  # unique abbreviation: getopt_long accepts it
        "--gpus-per-no=8",
        "--tasks-per-node=8",  # deprecated alias
        "-HQ",  # --hold and --quiet bundled
        "--container-image=nvcr.io\\#nvidia/pytorch:25.01-py3",
        "--no-container-mount-home",
        '--job-name "my job"',
        "--nodes=2   # a comment with --bogus in it",
    ],
)
def test_accepted_options(header):
    assert codes_of(job(header), ["SBL005"]) == []


@pytest.mark.parametrize(
    "header,underlined,fragment,fixed",
    [
        ("--ntask-per-node=8", "--ntask-per-node", "did you mean `--ntasks-per-node`", "--ntasks-per-node=8"),
        ("--ntasks_per_node=8", "--ntasks_per_node", "did you mean `--ntasks-per-node`", "--ntasks-per-node=8"),
        ("--walltime=60", "--walltime", "did you mean `--time`", "--time=60"),
        ("--gpu-per-node 8", "--gpu-per-node", "unrecognized option", "--gpus-per-node 8"),
        ("-ntasks-per-node=8", "-ntasks-per-node=8", "`-n tasks-per-node=8`", "--ntasks-per-node=8"),
        ("-ntasks-per-node 8", "-ntasks-per-node", "one dash", "--ntasks-per-node 8"),
        ("-partition=gpu", "-partition=gpu", "`-p artition=gpu`", "--partition=gpu"),
        ("-gres=gpu:8", "-gres=gpu:8", "unknown short option `-g`", "--gres=gpu:8"),
        ("-time=10", "-time=10", "(--time with the value \"ime=10\"), which it rejects", "--time=10"),
        ("-ntask-per-node=8", "-ntask-per-node=8", "one dash", "--ntasks-per-node=8"),
    ],
)
def test_unknown_options_and_their_fix(header, underlined, fragment, fixed):
    text = job(header)
    (diagnostic,) = lint_text(text, ["SBL005"])
    data = text.encode()
    assert data[diagnostic.span.start : diagnostic.span.end].decode() == underlined
    assert fragment in said(diagnostic)
    assert fix_text(text, ["SBL005"]) == text  # unsafe only
    assert fix_text(text, ["SBL005"], unsafe=True) == job(fixed)


@pytest.mark.parametrize(
    "header,fragment",
    [
        ("--cpus-per=4", "ambiguous abbreviation (`--cpus-per-gpu`, `--cpus-per-task`)"),
        ("--kill-on-bad-exit=1", "is an srun option"),
        ("--cpu-bind=cores", "is an srun option"),
        ("-g 8", "invalid option -- 'g'"),
        ("-Hz", "`-H -z`"),
        ("--job-name my job", "Invalid directive found in batch script: job"),
        ("--exclusive user", "Invalid directive found in batch script: user"),
        ("--mail-user=<your e-mail>", "Invalid directive found in batch script: e-mail>"),
    ],
)
def test_rejected_words_without_a_fix(header, fragment):
    diagnostics = lint_text(job(header), ["SBL005"])
    assert len(diagnostics) == 1 and fragment in said(diagnostics[0])
    assert diagnostics[0].fix is None


def test_a_stray_value_of_a_reported_option_is_not_reported_twice():
    assert codes_of(job("--ntask-per-node 8", "-g 8"), ["SBL005"]) == ["SBL005", "SBL005"]


def test_help_for_an_optional_value_written_apart():
    (diagnostic,) = lint_text(job("--exclusive user"), ["SBL005"])
    assert diagnostic.help == "an optional value must be attached: `--exclusive=user`"


def test_one_dash_reading():
    from sbatchlint.model.header import parse_header
    from sbatchlint.source import Source

    def first(word):
        return parse_header(Source(f"#SBATCH {word}\n".encode())).directives[0]

    assert first("-ntasks-per-node=8").one_dash_long == "ntasks-per-node"
    assert first("-nodes").one_dash_long == "nodes"
    assert first("-Jtraining").one_dash_long is None
    assert first("-N2").one_dash_long is None
    assert first("-N=2").one_dash_long is None
    assert read_as_short(SBATCH, "-verbose") == ("-v -e rbose", False)
    assert read_as_short(SBATCH, "-nodes=2") == ("-n odes=2", True)


def test_late_directives_are_checked_for_spelling_too():
    # sbatch ignores the late line today (SBL003); once it is moved up it must be valid.
    text = "#!/bin/bash\n#SBATCH --nodes=1\nset -e\n#SBATCH --ntask-per-node=8 --time=1:2:3:4\nsrun hostname\n"
    assert codes_of(text) == ["SBL005", "SBL006"]


# -- SBL006 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "header,underlined,fragment",
    [
        ("--nodes=two", "two", "not a valid node count"),
        ("-N 0", "0", "at least one node"),
        ("--mem=16GiB", "16GiB", "--mem"),
        ("--gres=gpu:a100:x", "gpu:a100:x", "--gres"),
        ("--array=1-", "1-", "--array"),
        ("--exclusive=yes", "yes", "--exclusive"),
        ("-N=2", "=2", 'gives --nodes the value "=2", which sbatch rejects'),
        ("-o=train.log", "=train.log", 'gives --output the value "=train.log"'),
        ("--nodes=$NNODES", "$NNODES", "does not expand variables"),
        ("--gpus-per-node=${GPUS}", "${GPUS}", "which sbatch rejects"),
        ("--output=$HOME/logs/x.out", "$HOME/logs/x.out", "is used literally"),
        ("--container-image=$IMAGE", "$IMAGE", "is used literally"),
        ("--hold=1", "--hold=1", "takes no value"),
    ],
)
def test_invalid_values(header, underlined, fragment):
    text = job(header)
    (diagnostic,) = lint_text(text, ["SBL006"])
    assert text.encode()[diagnostic.span.start : diagnostic.span.end].decode() == underlined
    assert fragment in said(diagnostic)


def test_missing_value():
    (last,) = lint_text(job("--nodes=2 --time"), ["SBL006"])
    assert "requires an argument" in last.message
    (middle,) = lint_text(job("--time", "--nodes=2"), ["SBL006"])
    assert "takes the next word" in middle.message


@pytest.mark.parametrize(
    "header",
    ["--job-name=$RUN", "--comment=${USER}", "-N 1-4", "--nodes=2,4,8", "--time=UNLIMITED", "--mem=0",
     "--gres=gpu:a100:4", "--array=[0-3]%2", "--exclusive=topo", "--exclusive", "-t 90"],
)
def test_valid_values(header):
    assert codes_of(job(header), ["SBL006"]) == []


# -- SBL007 -------------------------------------------------------------------------------------
def test_header_container_image_keeps_the_header_and_adds_to_steps():
    text = job(
        "--nodes=2",
        "--container-image=nvcr.io\\#nvidia/pytorch:25.01-py3",
        "--container-mounts=/lustre:/lustre",
        body="python prepare.py\nsrun --container-image=nvcr.io#nvidia/pytorch:25.01-py3 python train.py\n",
    )
    assert found(text) == [("SBL007", 4, "--container-mounts=/lustre:/lustre")]
    fixed = fix_text(text, OURS)
    assert fixed == text.replace("srun --container", "srun --container-mounts=/lustre:/lustre --container")


def test_container_options_already_on_the_step_are_not_reported():
    text = job(
        "--container-mounts=/data:/data --container-remap-root",
        body="srun --container-image=img --container-mounts=/scratch:/scratch,/data:/data "
        "--no-container-remap-root python x.py\n",
    )
    assert codes_of(text, ["SBL007"]) == []


def test_no_containerized_step_no_finding():
    text = job("--container-mounts=/data:/data", body="srun python x.py\n")
    assert codes_of(text, ["SBL007"]) == []


def test_no_fix_when_the_value_would_change_meaning_in_the_shell():
    text = job("--container-env=HF_HOME,$EXTRA", body="srun --container-image=img python x.py\n")
    (diagnostic,) = lint_text(text, ["SBL007"])
    assert diagnostic.fix is None


def test_truncated_image_is_escaped_first_then_moved():
    text = job(
        "--nodes=1",
        "--container-mounts=/lustre/a#b:/lustre/a#b",
        body="srun --container-image=img python x.py\n",
    )
    (moved,) = lint_text(text, ["SBL007"])
    assert moved.fix is None  # never move a value sbatch truncated
    fixed = fix_text(text, OURS)
    assert fixed == job("--nodes=1", body="srun --container-mounts=/lustre/a#b:/lustre/a#b --container-image=img python x.py\n")


# -- SBL008 -------------------------------------------------------------------------------------
def test_duplicates_across_spellings():
    text = job("-N 2 --time=60", "--nodes=4", "--time=1:00:00", "--tasks-per-node=8", "--ntasks-per-node=4")
    assert found(text, ["SBL008"]) == [
        ("SBL008", 2, "-N 2"),
        ("SBL008", 2, "--time=60"),
        ("SBL008", 5, "--tasks-per-node=8"),
    ]
    assert "on line 3" in lint_text(text, ["SBL008"])[0].message


def test_same_value_flags_and_accumulating_options_are_not_duplicates():
    text = job("-N 2", "--nodes=2", "--exclusive", "--exclusive", "-v -v",
               "--container-mounts=/a:/a", "--container-mounts=/b:/b,/a:/a", "--mail-type=BEGIN", "--mail-type=END")
    assert codes_of(text, ["SBL008"]) == []


def test_a_mount_list_the_last_one_leaves_out_is_lost():
    """pyxis receives only the last --container-mounts: a second list does not add to the first."""
    text = job("--nodes=1", "--container-mounts=/lustre/a:/a,/lustre/b:/b", "--container-env=HF_HOME",
               "--container-mounts=/lustre/b:/b", "--container-env=NCCL_DEBUG")
    assert found(text, ["SBL008"]) == [
        ("SBL008", 3, "--container-mounts=/lustre/a:/a,/lustre/b:/b"),
        ("SBL008", 4, "--container-env=HF_HOME"),
    ]
    first = lint_text(text, ["SBL008"])[0]
    assert first.message == "this `--container-mounts` list is lost: pyxis receives only the last one (line 5)"
    assert first.notes == ("a list given twice does not add up: the container gets `--container-mounts=/lustre/b:/b`, "
                           "not `--container-mounts=/lustre/a:/a,/lustre/b:/b`",)
    assert first.help == "write one comma-separated `--container-mounts` list"


def test_pyxis_single_value_options_twice_are_refused():
    (diagnostic,) = lint_text(job("--container-workdir=/a", "--container-workdir=/b"), ["SBL008"])
    assert "pyxis refuses the job" in diagnostic.message


def test_late_duplicate_is_not_an_override():
    text = "#!/bin/bash\n#SBATCH --nodes=2\nset -e\n#SBATCH --nodes=4\nsrun hostname\n"
    assert codes_of(text, ["SBL008"]) == []


# -- SBL009 -------------------------------------------------------------------------------------
def test_unquoted_placeholder_is_read_as_redirections():
    text = job("--nodes=1", body="srun --account=<YOUR_ACCOUNT> python train.py\n")
    (diagnostic,) = lint_text(text, ["SBL009"])
    assert text.encode()[diagnostic.span.start : diagnostic.span.end] == b"<YOUR_ACCOUNT>"
    assert "redirections" in said(diagnostic)


@pytest.mark.parametrize(
    "body",
    [
        "sort <input.txt >sorted.txt\n",
        "wc -l <in >out\n",
        "python x.py --eos '</s>' --pad \"<pad>\" --bos \"<|begin_of_text|>\"\n",
        "X=$(cat <file)\n",
        "(( a < b )) && echo yes\n",
        "# ACCOUNT=<YOUR_ACCOUNT>\n",
        "printf 'fill in %s\\n' '<YOUR_ACCOUNT>'\n",
        "mktemp -d /tmp/runXXXXXX\n",
        "export YOUR_VAR_NAME=1\necho $YOUR_VAR_NAME\n",
    ],
)
def test_not_placeholders(body):
    assert codes_of(job("--nodes=1", body=body), ["SBL009"]) == []


@pytest.mark.parametrize(
    "body,placeholder",
    [
        ("ACCOUNT=your_account_here\n", "your_account_here"),
        ("export PROJECT=CHANGE_ME\n", "CHANGE_ME"),
        ('DATA="${DATA:-<SHARED_FS>/data}"\n', "<SHARED_FS>"),
        ("srun bash -c \"cd <REPO_DIR> && python x.py\"\n", "<REPO_DIR>"),
        ("srun python x.py --nodes $((<NNODES>))\n", "<NNODES>"),
        ("export DATASET=REPLACE_IN\n", "REPLACE_IN"),
        ("srun python x.py --data Fill-In\n", "Fill-In"),
        # a heredoc and a here-string around it: the candidate search must not lose later words
        ("cat <<EOF > notes.txt\nrun\nEOF\nread -r A <<< \"$B\"\nsrun python x.py --user Your_User\n", "Your_User"),
    ],
)
def test_placeholders_in_commands_and_assignments(body, placeholder):
    assert [text for _, _, text in found(job("--nodes=1", body=body), ["SBL009"])] == [placeholder]


# -- SBL010 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "header,body",
    [
        ("--output=logs/%j.out", "mkdir -p logs\n"),
        ("--error=./logs/err_%j.txt", "mkdir logs\n"),
        ("--output=logs/%j.out", "LOGDIR=logs\nmkdir -p \"$LOGDIR\"\n"),
        ("--output=logs/%j.out", "mkdir -p \"$SLURM_SUBMIT_DIR/logs\"\n"),
        ("--output=logs/%j.out", "mkdir -p logs/tensorboard\n"),
        ("--output=/lustre/u/logs/%x/%j.out", "mkdir -p /lustre/u/logs/${SLURM_JOB_NAME}\n"),
        ("--output=out/%j.log --chdir=/lustre/run", "mkdir -p /lustre/run/out\n"),
        ("--output=logs/%j.out", "srun --ntasks=1 mkdir -p logs\n"),
        ("--output=logs/%j.out", "m\\kdir -p logs\n"),  # bash reads m\kdir as mkdir
    ],
)
def test_log_directory_created_by_the_job(header, body):
    assert codes_of(job(header, body=body + "srun hostname\n"), ["SBL010"]) == ["SBL010"]


@pytest.mark.parametrize(
    "header,body",
    [
        ("--output=%x_%j.out", "mkdir -p logs\n"),  # the log is in the submission directory
        ("--output=logs/%j.out", "mkdir -p logs_old\n"),
        ("--output=logs/%j.out", "cd /scratch/run\nmkdir -p logs\n"),  # another directory
        ("--output=logs/%j.out", "mkdir logs/tensorboard\n"),  # without -p: logs must exist already
        ("--output=logs/%j.out", "mkdir -p \"$HOME/logs\"\n"),
        ("--output=logs/%j.out --chdir=/lustre/run", "mkdir -p \"$SLURM_SUBMIT_DIR/logs\"\n"),
    ],
)
def test_log_directory_not_created_by_the_job(header, body):
    assert codes_of(job(header, body=body + "srun hostname\n"), ["SBL010"]) == []


# -- SBL011 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,fixed",
    [
        ("train.log", "train_%j.log"),
        ("out", "out_%j"),
        ("logs/run.1.log", "logs/run.1_%j.log"),
        ("%x.out", "%x_%j.out"),
        ('"my logs/train.log"', '"my logs/train_%j.log"'),
        ("'train.log'", "'train_%j.log'"),
        ("logs/%%j.out", "logs/%%j_%j.out"),  # %% is a literal percent sign
    ],
)
def test_log_without_job_id_gets_one(value, fixed):
    text = job(f"--output={value}")
    assert codes_of(text, ["SBL011"]) == ["SBL011"]
    assert fix_text(text, ["SBL011"]) == text
    assert fix_text(text, ["SBL011"], unsafe=True) == job(f"--output={fixed}")


@pytest.mark.parametrize("value", ["/dev/null", "none", "logs/%x_%j.out", "%J.log", "slurm-%A.out", "logs/"])
def test_log_names_left_alone(value):
    assert codes_of(job(f"--output={value}"), ["SBL011"]) == []


# -- SBL012 -------------------------------------------------------------------------------------
def test_hash_drops_the_rest_of_the_line():
    text = job("--container-image=nvcr.io#nvidia/pytorch:25.01-py3 --nodes=2")
    (diagnostic,) = lint_text(text, ["SBL012"])
    assert 'sbatch reads "nvcr.io"' in diagnostic.message
    assert "(`--nodes=2`)" in said(diagnostic)
    assert text.encode()[diagnostic.span.start : diagnostic.span.end] == b"#nvidia/pytorch:25.01-py3"
    assert fix_text(text, ["SBL012"]) == job("--container-image=nvcr.io\\#nvidia/pytorch:25.01-py3 --nodes=2")


@pytest.mark.parametrize("header", ["--nodes=2 # comment", "--job-name=a\\#b", '--comment="run #4"', "#--nodes=2"])
def test_hash_that_sbatch_reads_as_meant(header):
    assert codes_of(job(header), ["SBL012"]) == []


# -- SBL013 -------------------------------------------------------------------------------------
def test_crlf_reported_once_with_a_count():
    text = "#!/bin/bash\r\n#SBATCH --nodes=1\r\nsrun hostname\nexit 0\r\n"
    (diagnostic,) = lint_text(text, ["SBL013"])
    assert diagnostic.span.start == len("#!/bin/bash")
    assert "on 3 lines" in diagnostic.message
    assert fix_text(text, ["SBL013"]) == "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\nexit 0\n"


def test_a_lone_carriage_return_is_not_a_dos_line_break():
    assert codes_of("#!/bin/bash\n#SBATCH --nodes=1\nprintf 'a\rb\\n'\n", ["SBL013"]) == []


@pytest.mark.parametrize("name", ["legacy_torchrun_broken.sh", "pyxis_header.sh", "array_sweep.sh"])
def test_crlf_copy_has_the_same_findings_and_fixes_to_the_same_text(name):
    lf = fixture(name)
    crlf = lf.replace("\n", "\r\n")
    expected = [f for f in found(lf)]
    got = [f for f in found(crlf) if f[0] != "SBL013"]
    assert [(c, l, t) for c, l, t in got] == expected
    assert found(crlf)[0][0] == "SBL013" or "SBL013" in codes_of(crlf)
    for unsafe in (False, True):
        fixed_lf = fix_text(lf, OURS, unsafe=unsafe)
        assert fix_text(crlf, OURS, unsafe=unsafe) == fixed_lf
        assert fix_text(fixed_lf, OURS, unsafe=True) == fix_text(fixed_lf, OURS, unsafe=True)


# -- from the command line ----------------------------------------------------------------------
def test_cli_fix_writes_safe_fixes_only(tmp_path):
    path = tmp_path / "job.sh"
    source = fixture("legacy_torchrun_broken.sh").replace("\n", "\r\n")
    path.write_bytes(source.encode())
    result = CliRunner().invoke(main, ["--fix", "--select", "SBL0", str(path)], catch_exceptions=False)
    assert result.exit_code == 1  # findings without a safe fix remain
    data = path.read_bytes()
    assert b"\r\n" not in data
    assert b"--job-name=gpt-pretrain\\#v2 --nodes=4\n" in data
    assert b"-ntasks-per-node=1\n" in data  # SBL005's fix is unsafe
    assert b"--output=logs/pretrain.log\n" in data  # so is SBL011's
    again = CliRunner().invoke(main, ["--fix", "--select", "SBL0", str(path)], catch_exceptions=False)
    assert path.read_bytes() == data and again.exit_code == 1


def test_cli_diff_and_unsafe_fixes(tmp_path):
    path = tmp_path / "job.sh"
    path.write_text(job("-ntasks-per-node=8 --output=train.log"))
    diff = CliRunner().invoke(main, ["--diff", "--unsafe-fixes", str(path)], catch_exceptions=False)
    assert "+#SBATCH --ntasks-per-node=8 --output=train_%j.log" in diff.output
    assert path.read_text() == job("-ntasks-per-node=8 --output=train.log")
    CliRunner().invoke(main, ["--unsafe-fixes", str(path)], catch_exceptions=False)
    assert path.read_text() == job("--ntasks-per-node=8 --output=train_%j.log")


def test_cli_concise_output_names_the_rule(tmp_path):
    path = tmp_path / "job.sh"
    path.write_text(job("--nodes=$NNODES"))
    result = CliRunner().invoke(main, ["--output-format", "concise", str(path)], catch_exceptions=False)
    assert re.search(r'job\.sh:2:17: SBL006 --nodes gets the literal value "\$NNODES", which sbatch rejects$', result.output, re.M)


def test_unclosed_quote_is_recorded():
    header = header_of('#!/bin/bash\n#SBATCH --nodes=1 --job-name="my job\n')
    nodes, name = header.directives
    assert nodes.unclosed_quote is None
    assert name.unclosed_quote == len('#!/bin/bash\n#SBATCH --nodes=1 --job-name=')


def test_unmatched_quote_in_a_directive():
    text = job('--nodes=1 --job-name="my job', "--time=10")
    (diagnostic,) = lint_text(text, ["SBL006"])
    assert text.encode()[diagnostic.span.start : diagnostic.span.end] == b'"my job'
    assert 'Unmatched `"`' in diagnostic.message
    assert codes_of(text) == ["SBL006"]


# -- what a real sbatch says (skipped unless the local test cluster is up) ----------------------
import shutil
import subprocess

from sbatchlint import registry


def _cluster_up() -> bool:
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return False
    try:
        done = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


requires_slurm = pytest.mark.skipif(not _cluster_up(), reason="Slurm cluster not running: run tests/slurm/start-cluster.sh")


def sbatch_test_only(tmp_path, text: str) -> subprocess.CompletedProcess:
    path = tmp_path / "job.sh"
    path.write_bytes(text.encode())
    env = {k: v for k, v in os.environ.items() if k == "SLURM_CONF" or not k.startswith(("SLURM_", "SBATCH_"))}
    return subprocess.run(
        ["sbatch", "--test-only", str(path)], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env
    )


REFUSED = [
    pytest.param(example, id=f"{rule.code}-bad{index}")
    for rule in registry.all_rules()
    if rule.code in ("SBL005", "SBL006", "SBL013")
    for index, example in enumerate(rule.bad_examples())
]


@requires_slurm
@pytest.mark.parametrize("example", REFUSED)
def test_sbatch_refuses_the_bad_examples_and_accepts_their_fix(tmp_path, example):
    refused = sbatch_test_only(tmp_path, example.source)
    assert refused.returncode != 0, refused.stderr
    if example.fixed is not None:
        accepted = sbatch_test_only(tmp_path, example.fixed)
        assert accepted.returncode == 0, accepted.stderr


@requires_slurm
@pytest.mark.parametrize(
    "header,complaint",
    [
        ("-N=2", '"=2" is not a valid node count'),
        ("--mem-per=1G", "is ambiguous"),
        ("--nice 10", "Invalid directive found in batch script: 10"),
        ("-ntasks-per-node=2", 'Invalid numeric value "tasks-per-node=2" for --ntasks.'),
        ('--job-name="my job', "Unmatched"),
        ("--job-name=a\\ b", "Invalid directive found in batch script: b"),
    ],
)
def test_sbatch_says_what_the_messages_quote(tmp_path, header, complaint):
    assert codes_of(job(header)), header
    done = sbatch_test_only(tmp_path, job(header))
    assert done.returncode != 0 and complaint in done.stderr


@requires_slurm
def test_sbatch_drops_the_rest_of_a_line_after_a_glued_hash(tmp_path):
    # --nodes=99 would be refused; after the '#' sbatch never sees it.
    assert sbatch_test_only(tmp_path, job("--job-name=a#b --nodes=99")).returncode == 0
    assert sbatch_test_only(tmp_path, job("--job-name=a\\#b --nodes=99")).returncode != 0

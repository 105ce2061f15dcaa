"""``--add-noqa``: a suppression comment for every finding, placed where the shell still runs the
same script (never after a ``\\`` continuation, inside a string or a here-document's body), so
that a second run reports nothing and ``bash -n`` still accepts the script."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

import scriptgen
from sbatchlint.cli import main

ADDED_LINE = re.compile(r"^[ \t]*# sbatchlint: disable(-file)?=[A-Z0-9,]+$")
ADDED_TAIL = re.compile(r"  # sbatchlint: disable=[A-Z0-9,]+$")


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def without_added_comments(text: str) -> str:
    lines = [ADDED_TAIL.sub("", line) for line in text.split("\n") if not ADDED_LINE.match(line)]
    return "\n".join(lines)


def bash_accepts(path) -> bool:
    return subprocess.run(["bash", "-n", str(path)], capture_output=True).returncode == 0


def check_added(path, original: str) -> str:
    text = path.read_text()
    assert without_added_comments(text) == original, "only comments may be added"
    assert bash_accepts(path), text
    for number, line in enumerate(text.split("\n"), 1):
        if "sbatchlint: disable" in line and not ADDED_LINE.match(line):
            assert not line.split("  # sbatchlint:")[0].rstrip().endswith("\\"), (number, line)
    again = run("--isolated", "--output-format", "concise", str(path))
    assert again.exit_code == 0, again.output
    return text


SCRIPT = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --time=01:00:00
set -euo pipefail
echo "starting
#SBATCH --partition=late"
srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
  bash -c "torchrun --nnodes=2 --node_rank=$SLURM_NODEID \\
    --nproc_per_node=8 train.py"
sbatch <<EOT
#!/bin/bash
#SBATCH --nodes=1
hostname
#SBATCH --time=00:10:00
srun hostname
EOT
"""


def test_comments_stay_out_of_strings_continuations_and_heredocs(tmp_path):
    path = tmp_path / "job.sh"
    path.write_text(SCRIPT)
    first = run("--isolated", "--output-format", "concise", str(path))
    lines = {int(line.split(":")[1]) for line in first.output.splitlines() if line.startswith(str(path))}
    assert {7, 8, 9, 15} <= lines  # in a string, on a continued step, in a continued string, in a here-document
    result = run("--isolated", "--add-noqa", str(path))
    assert result.exit_code == 0
    text = check_added(path, SCRIPT)
    lines = text.split("\n")
    # the step's findings: a line of their own before `srun … \`, indented like it
    assert lines[lines.index("srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\") - 1].startswith(
        "# sbatchlint: disable=SBL107")
    # findings in the string, in its continued part and in the here-document: the file-wide comment after `#!`
    assert lines[0] == "#!/bin/bash" and lines[1].startswith("# sbatchlint: disable-file=SBL003")
    assert "#SBATCH --time=00:10:00" in lines  # the here-document's body is untouched
    assert "Added suppression comments for" in result.output


def test_a_finding_on_a_plain_line_gets_a_comment_at_its_end(tmp_path):
    original = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nset -e\nsrun hostname\nexport HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123\n"
    path = tmp_path / "job.sh"
    path.write_text(original)
    codes = {line.split()[1] for line in run("--isolated", "--output-format", "concise", str(path)).output.splitlines()
             if line.startswith(str(path) + ":6:")}
    assert codes
    run("--isolated", "--add-noqa", str(path))
    text = check_added(path, original)
    assert text.split("\n")[5] == "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123  # sbatchlint: disable=" + ",".join(sorted(codes))


def test_a_header_line_gets_its_comment_on_the_line_before(tmp_path):
    """sbatch reads the text after an ``#SBATCH`` option: the comment goes on a line of its own."""
    original = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n#SBATCH --no-such-option=1\nsrun hostname\n"
    path = tmp_path / "job.sh"
    path.write_text(original)
    run("--isolated", "--add-noqa", str(path))
    text = check_added(path, original)
    assert "# sbatchlint: disable=SBL014\n#SBATCH --no-such-option=1\n" in text


def test_an_existing_comment_for_the_line_gets_the_new_code(tmp_path):
    original = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n"
                "# sbatchlint: disable=SBL003 -- kept\n#SBATCH --no-such-option=1\nsrun hostname\n")
    path = tmp_path / "job.sh"
    path.write_text(original)
    run("--isolated", "--add-noqa", str(path))
    # the comment gets SBL014 for the option; its own unused SBL003 (SBL900) a file-wide comment
    assert path.read_text() == ("#!/bin/bash\n# sbatchlint: disable-file=SBL900\n#SBATCH --nodes=1\n"
                                "#SBATCH --time=00:10:00\n# sbatchlint: disable=SBL003,SBL014 -- kept\n"
                                "#SBATCH --no-such-option=1\nsrun hostname\n")
    assert run("--isolated", str(path)).exit_code == 0


def test_add_noqa_refuses_stdin_and_fix():
    assert run("--add-noqa", "-").exit_code == 2
    assert run("--add-noqa", "--fix", "job.sh").exit_code == 2


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_generated_scripts_are_clean_and_valid_after_add_noqa(tmp_path):
    jobs = scriptgen.corpus(10, seed=700) + scriptgen.corpus(2, seed=900, size=2)
    originals = {}
    for index, job in enumerate(jobs):
        path = tmp_path / f"job{index}.sh"
        path.write_text(job.text)
        originals[path] = job.text
    before = run("--isolated", "--output-format", "concise", str(tmp_path))
    assert before.exit_code == 1  # the generated scripts have findings to suppress
    result = run("--isolated", "--add-noqa", "-q", str(tmp_path))
    assert result.exit_code == 0, result.output
    for path, original in originals.items():
        text = path.read_text()
        assert without_added_comments(text) == original, path
        assert bash_accepts(path), path
    again = run("--isolated", str(tmp_path))
    assert again.exit_code == 0 and "All checks passed (12 files)" in again.output, again.output


# -- Python entry points (the SBL5xx findings) --------------------------------------------------------
def python_tokens(text: str):
    """The program's tokens without comments and blank-line tokens: what adding comments must keep."""
    import io
    import tokenize

    return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL)]


def check_added_python(path, original: str) -> str:
    text = path.read_text()
    assert text != original
    compile(text, str(path), "exec")  # still Python
    assert python_tokens(text) == python_tokens(original), "only comments may be added"
    again = run("--isolated", "--output-format", "concise", str(path))
    assert again.exit_code == 0, again.output
    return text


ENTRY = '''#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""A training entry point whose torchrun guards are written every way."""
import os
import sys

LIMIT = 3  # sbatchlint: disable=SBL502


def plain():
    if "WORLD_SIZE" not in os.environ:
        sys.exit("must be launched with torchrun")


def with_a_comment():
    if os.environ.get("WORLD_SIZE") == None:  # noqa: E711
        sys.exit(1)


def continued():
    if "WORLD_SIZE" not in os.environ \\
            and "RANK" not in os.environ:
        sys.exit(1)


def string_at_line_end():
    if "WORLD_SIZE" not in os.environ: print("""usage:
  torchrun train.py"""); sys.exit(2)


def in_brackets():
    if (
        "WORLD_SIZE" not in os.environ
    ):
        raise SystemExit(1)


def starts_and_ends_in_strings():
    print("""usage:
  torchrun train.py"""); assert "WORLD_SIZE" in os.environ, """must be
launched with torchrun # not a comment"""
'''


def test_python_comments_stay_out_of_strings_and_continuations(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(ENTRY)
    first = run("--isolated", "--output-format", "concise", str(path)).output
    assert first.count("SBL501") == 6 and "SBL900" in first
    result = run("--isolated", "--add-noqa", str(path))
    assert result.exit_code == 0, result.output
    assert "Added suppression comments for 7 findings." in result.output
    lines = check_added_python(path, ENTRY).split("\n")
    # a plain line, and one with a comment already: the comment at its end
    assert '    if "WORLD_SIZE" not in os.environ:  # sbatchlint: disable=SBL501' in lines
    assert '    if os.environ.get("WORLD_SIZE") == None:  # noqa: E711  # sbatchlint: disable=SBL501' in lines
    # inside brackets a comment may end the line
    assert '        "WORLD_SIZE" not in os.environ  # sbatchlint: disable=SBL501' in lines
    # a line continued by `\` or ending inside a string: a line of its own before it, indented like it
    for statement in ('    if "WORLD_SIZE" not in os.environ \\',
                      '    if "WORLD_SIZE" not in os.environ: print("""usage:'):
        assert lines[lines.index(statement) - 1] == "    # sbatchlint: disable=SBL501"
    # a line that starts and ends inside strings, and the unused comment's own finding: one
    # file-wide comment after the `#!` line and the encoding declaration (which must stay on line 2)
    assert lines[:3] == ["#!/usr/bin/env python3", "# -*- coding: utf-8 -*-",
                         "# sbatchlint: disable-file=SBL501,SBL900"]
    assert 'launched with torchrun # not a comment"""' in lines


def test_a_launched_entry_point_gets_its_comments_with_the_script(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
                   "#SBATCH --time=01:00:00\nsrun --kill-on-bad-exit=1 python train.py\n")
    train = tmp_path / "train.py"
    original = 'import os\nimport sys\n\nif "WORLD_SIZE" not in os.environ:\n    sys.exit("torchrun only")\n'
    train.write_text(original)
    assert "train.py:4:4: SBL501" in run("--isolated", "--output-format", "concise", str(job)).output
    result = run("--isolated", "--add-noqa", str(job))
    assert result.exit_code == 0, result.output
    text = check_added_python(train, original)
    assert text.split("\n")[3] == 'if "WORLD_SIZE" not in os.environ:  # sbatchlint: disable=SBL501'
    assert run("--isolated", str(job)).exit_code == 0


def test_every_python_fixture_compiles_and_is_clean_after_add_noqa(tmp_path):
    import os

    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "python")
    originals = {}
    for name in sorted(os.listdir(fixtures)):
        if name.endswith(".py"):
            with open(os.path.join(fixtures, name), encoding="utf-8") as handle:
                originals[tmp_path / name] = handle.read()
            (tmp_path / name).write_text(originals[tmp_path / name])
    before = run("--isolated", "--python", "--output-format", "concise", str(tmp_path))
    assert before.exit_code == 1 and "SBL50" in before.output
    result = run("--isolated", "--python", "--add-noqa", "-q", str(tmp_path))
    assert result.exit_code == 0, result.output
    for path, original in originals.items():
        text = path.read_text()
        compile(text, str(path), "exec")
        assert python_tokens(text) == python_tokens(original), path
    again = run("--isolated", "--python", str(tmp_path))
    assert again.exit_code == 0 and f"All checks passed ({len(originals)} files)" in again.output, again.output

"""A line that begins with `#SBATCH` in column 1 is a directive line whatever follows the magic
word, as sbatch 22.05 reads it (measured on the local cluster: tests/slurm/test_rule_proofs.py):
`#SBATCH--job-name=glued` names the job, `#SBATCHED …` is refused with "Invalid directive found
in batch script: ED". Below the first command only lines that still read as directives count."""
from __future__ import annotations

from lintutil import codes, fix_text, lint_text, said
from sbatchlint.model.header import parse_header
from sbatchlint.source import Source


def header(text: str):
    return parse_header(Source(text.encode(), "job.sh"))


def test_glued_option_is_a_directive():
    h = header("#!/bin/bash\n#SBATCH--job-name=glued\n#SBATCH-N2\nsrun hostname\n")
    assert [(d.name, d.value) for d in h.effective] == [("job-name", "glued"), ("nodes", "2")]
    assert h.malformed == []
    assert codes("#!/bin/bash\n#SBATCH--job-name=glued\n#SBATCH-N2\nsrun hostname\n") == []


def test_word_glued_to_the_magic_is_refused_once_per_line():
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCHED jobs are described below\nsrun hostname\n"
    (finding,) = lint_text(text)
    assert finding.code == "SBL005"
    assert 'sbatch stops with "Invalid directive found in batch script: ED"' in said(finding)
    assert text.encode()[finding.span.start : finding.span.end] == b"ED"
    assert "start it with `##`" in finding.help


def test_below_the_first_command():
    text = "#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname\n#SBATCHED is a comment here\n#SBATCH--time=5\n"
    assert codes(text) == ["SBL003"]  # only the late directive; the comment is a comment
    assert fix_text(text, ["SBL003"], unsafe=True) == (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH--time=5\nsrun hostname\n#SBATCHED is a comment here\n"
    )


def test_comments_that_only_look_like_directives_are_still_sbl004():
    assert codes("#!/bin/bash\n  #SBATCH-N2\nsrun hostname\n") == ["SBL004"]
    assert codes("#!/bin/bash\n#sbatch-N2\nsrun hostname\n") == ["SBL004"]
    assert codes("#!/bin/bash\n# SBATCH --nodes=2\nsrun hostname\n") == ["SBL004"]
    assert codes("#!/bin/bash\n##SBATCH --nodes=2\nsrun hostname\n") == []
    assert fix_text("#!/bin/bash\n  #SBATCH-N2\nsrun hostname\n", ["SBL004"]) == "#!/bin/bash\n#SBATCH -N2\nsrun hostname\n"


def test_directive_reports_what_sbatch_read_and_where():
    text = '#!/bin/bash\n#SBATCH --output="logs/a b.out" -J x#y z\n#SBATCH-N2 --time=1:00\nsrun hostname\n'
    h = header(text)
    output, name = h.lines[2]
    assert output.text == '--output="logs/a b.out"' and output.value == "logs/a b.out"
    # each byte of the value maps back to its source byte, the quotes skipped
    assert bytes(text.encode()[o] for o in output.value_offsets) == b"logs/a b.out"
    assert name.value == "x" and name.ignored_words == ["z"]
    assert text.encode()[name.hash_span.start : name.hash_span.end] == b"#y"
    nodes, time = h.lines[3]
    assert nodes.glued and not time.glued and not output.glued
    # removing one of two options on a line keeps the line; removing both drops it
    (span,) = h.removal_spans([time])
    assert text.encode()[span.start : span.end] == b" --time=1:00"
    (span,) = h.removal_spans([nodes, time])
    assert text.encode()[span.start : span.end] == b"#SBATCH-N2 --time=1:00\n"

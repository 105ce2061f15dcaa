"""A region the parser could not read is not analysed as code.

tree-sitter-bash recovers from what it cannot read by wrapping it in an ERROR node, often
together with many valid lines before the trouble (here: everything from ``set -eu`` down, for
one test word it cuts). SBL016 (or SBL001) reports that region as not analysed; the nodes below
it are the parser's guesses, so no analysis and no rule reads them as commands, assignments or
expansions. Comments and here-documents in it stay known as text: the header scan does not read
a here-document's ``#SBATCH`` lines as the script's, and the secrets scan reads the region as text
so a credential in it is still reported and masked.
"""
from __future__ import annotations

import subprocess
import sys

from lintutil import lint_text
from sbatchlint import shell
from sbatchlint.model.script import Script
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
# A test word tree-sitter-bash cuts (bash accepts it): the parser's error recovery then takes
# the lines above it, back to the first statement after the header, into one ERROR node.
UNREADABLE = (
    "for shard in a b; do\n"
    '  if [ $DATA/part_$RANK.bin = "$WANT" ]; then\n'
    '    echo "$shard"\n'
    "  fi\n"
    "done\n"
)
STEP = "srun python train.py --rank $SLURM_PROCID\n"
KEY = "9c41e0d2b7a65f38c1d0e9f8a7b6c5d4e3f2a1b0"
HEREDOC = "cat > next.sh <<EOF\n#!/bin/bash\n#SBATCH --time=01:00:00\nsrun hostname\nEOF\n"
BODY = (
    "set -eu\n"
    f"export WANDB_API_KEY={KEY}\n"
    "# the key is rotated weekly\n"
    + HEREDOC
    + STEP
    + UNREADABLE
)


def script(text: str) -> Script:
    return Script(Source(text.encode("utf-8"), "job.sh"))


def test_the_fixture_is_one_error_region_that_bash_accepts(tmp_path):
    model = script(HEADER + BODY)
    [region] = model.errors
    assert model.data[region.start:].startswith(b"set -eu")
    assert model.bash_verdict == (True, None)
    codes = [d.code for d in lint_text(HEADER + BODY)]
    assert "SBL016" in codes


def test_no_rule_reports_inside_the_region_it_says_was_not_analysed():
    # The same step in a script the parser reads is reported (SBL201: expanded by the batch
    # shell); inside the unread region it is not, and SBL016 says those lines were not checked.
    readable = lint_text(HEADER + "set -eu\n" + STEP)
    assert "SBL201" in [d.code for d in readable]
    found = lint_text(HEADER + BODY)
    model = script(HEADER + BODY)
    [region] = model.errors
    inside = [d for d in found if d.code not in ("SBL016", "SBL001", "SBL401") and region.overlaps(d.span)]
    assert inside == []
    assert [d.message for d in found if d.code == "SBL016"] == [
        "bash accepts lines 4-17, but they could not be parsed here and were not analysed"]


def test_the_header_is_still_analysed():
    # the directives above the region are read from the text, as in any script
    found = lint_text(HEADER + "#SBATCH --frobnicate=3\n" + BODY)
    assert [d.code for d in found] == ["SBL014", "SBL016", "SBL401"]


def test_the_index_keeps_only_text_nodes_below_an_error_node():
    model = script(HEADER + BODY + STEP)
    root = model.tree.root_node
    everything = list(shell._walk(root))

    def below_error(node) -> bool:
        return any(a.type == "ERROR" for a in shell.ancestors(node))

    assert any(n.type == "command" and below_error(n) for n in everything)  # the parser's guesses
    for kind in ("command", "variable_assignment", "simple_expansion", "string", "command_name"):
        expected = [n for n in everything if n.type == kind and not below_error(n)]
        assert list(model.nodes_of_type(kind)) == expected, kind
    for kind in sorted(shell.TEXT_IN_ERROR):
        expected = [n for n in everything if n.type == kind]
        assert any(below_error(n) for n in expected), kind
        assert list(model.nodes_of_type(kind)) == expected, kind
    # several types at once, in walk order
    wanted = ("comment", "command", "heredoc_body")
    expected = [n for n in everything if n.type in wanted and (n.type != "command" or not below_error(n))]
    assert list(model.nodes_of_type(*wanted)) == expected
    # a type the index does not keep is found by a walk that does not enter the ERROR node either
    assert "pipeline" not in shell.INDEXED
    pipes = HEADER + "set -eu\nsrun hostname | sort\n" + UNREADABLE.replace('echo "$shard"', 'echo "$shard" | tr a b')
    model = script(pipes)
    everything = list(shell._walk(model.tree.root_node))
    assert any(n.type == "pipeline" and below_error(n) for n in everything)
    assert list(model.nodes_of_type("pipeline")) == [n for n in everything if n.type == "pipeline" and not below_error(n)]


def test_a_whole_script_in_one_error_node():
    text = "while true; do\n  if [ $A/x_$B.c = y ]; then echo a; fi\ndone\n"
    model = script(text)
    assert model.tree.root_node.has_error
    assert list(model.nodes_of_type("command")) == [
        n for n in shell._walk(model.tree.root_node)
        if n.type == "command" and not any(a.type == "ERROR" for a in shell.ancestors(n))]


def test_a_heredoc_in_the_region_is_still_data_to_the_header_scan():
    # its `#SBATCH --time` line belongs to the file it writes, not to this script
    model = script(HEADER + BODY)
    assert [d.line for d in model.header.directives] == [2, 3]
    assert not [d for d in lint_text(HEADER + BODY) if d.code in ("SBL003", "SBL004")]


def test_a_credential_in_the_region_is_reported_as_text_and_masked(tmp_path):
    found = [d for d in lint_text(HEADER + BODY) if d.code == "SBL401"]
    assert [d.message for d in found] == [
        "hardcoded W&B API key (`9c4…`) given as WANDB_API_KEY=… in a region the parser could not read"]
    job = tmp_path / "job.sh"
    job.write_text(HEADER + BODY)
    for args in ([str(job), "--no-cache"], [str(job), "--no-cache", "--output-format", "json"]):
        done = subprocess.run([sys.executable, "-m", "sbatchlint", *args], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)
        assert done.returncode == 1, done.stderr
        assert "SBL016" in done.stdout
        assert KEY not in done.stdout and KEY not in done.stderr
        assert KEY[:12] not in done.stdout


def test_glued_assignments_are_undone_in_a_script_with_an_error_region():
    # the index holds no command of the region, so the glued-assignment search is not skipped
    # on its word: parse_indexed gives the tree parse gives
    text = HEADER + "A=1 B=2\nsrun hostname\n" + UNREADABLE
    data = text.encode("utf-8")
    tree, _index = shell.parse_indexed(data)
    assert str(tree.root_node) == str(shell.parse(data).root_node)
    inside = HEADER + "set -eu\nA=1 B=2\nsrun hostname\n" + UNREADABLE
    data = inside.encode("utf-8")
    tree, _index = shell.parse_indexed(data)
    assert str(tree.root_node) == str(shell.parse(data).root_node)


def test_the_line_where_the_parser_failed_is_named():
    # the region starts at `set -eu`; the test word the parser cuts is on the `if` line
    text = HEADER + BODY
    failed = text.splitlines().index('  if [ $DATA/part_$RANK.bin = "$WANT" ]; then') + 1
    [finding] = [d for d in lint_text(text) if d.code == "SBL016"]
    assert finding.notes == (f"the parser first failed on line {failed}: what it could not read is there",)
    assert failed > 4  # not the region's first line


def test_no_line_is_named_when_the_region_starts_where_the_parser_failed():
    text = HEADER + 'if [ $DATA/part_$RANK.bin = "$WANT" ]; then\n  srun hostname\nfi\n'
    [finding] = [d for d in lint_text(text) if d.code == "SBL016"]
    assert finding.notes == ()


def test_without_bash_the_syntax_error_names_the_line_too(monkeypatch):
    # SBL001 quotes bash's own complaint when bash can be asked; without it, the parser's line
    from sbatchlint.model import bash

    monkeypatch.setattr(bash, "bash_syntax_error", lambda data: (None, None))
    text = HEADER + BODY
    failed = text.splitlines().index('  if [ $DATA/part_$RANK.bin = "$WANT" ]; then') + 1
    [finding] = [d for d in lint_text(text) if d.code == "SBL001"]
    assert finding.notes == (f"the parser first failed on line {failed}: what it could not read is there",)

"""A job script with lines missing (a command cut in the middle, a string or a here-document left
open, a loop without its `done`) is still linted and fixed without an exception, and every
finding and edit stays inside the file. The lines are cut from a benchmark job of the kind that
once crashed a rule (``bad span 3100..3099``): a file that ends right after the opening quote of
an assignment (``MOUNTS="``) has a string node whose closing quote tree-sitter made up with no
width, and the text between the quotes was taken to end one byte before the node did."""
from __future__ import annotations

from pathlib import Path

import re

import pytest
from click.testing import CliRunner

from sbatchlint.cli import main

from sbatchlint.linter import Options, fix, lint
from sbatchlint.source import Source

FIXTURE = Path(__file__).parent / "fixtures" / "robustness" / "nccl-allreduce.sbatch"
LINES = FIXTURE.read_bytes().splitlines(keepends=True)


def _variants():
    for start in range(1, len(LINES)):
        for length in (1, 2, 3):
            if start + length <= len(LINES):
                yield f"without-{start + 1}-{start + length}", b"".join(LINES[:start] + LINES[start + length:])
        yield f"cut-after-{start}", b"".join(LINES[:start])


VARIANTS = list(_variants())
# where a line may be cut: on either side of a blank, a quote, `$`, a bracket, `=` or `\`
_BOUNDARY = re.compile(rb"[\s\"'`$(){}=\\;|&]")


def _cuts(index):
    """The fixture cut inside line ``index`` at each boundary: the file ending there, and the line
    ending there with the rest of the file kept."""
    line = LINES[index]
    body = line.rstrip(b"\n")
    before, after = b"".join(LINES[:index]), b"".join(LINES[index + 1 :])
    points = {m.start() for m in _BOUNDARY.finditer(body)} | {m.end() for m in _BOUNDARY.finditer(body)}
    for point in sorted(p for p in points if 0 < p < len(body)):
        yield f"ends-at-{index + 1}:{point}", before + body[:point]
        yield f"line-{index + 1}-cut-at-{point}", before + body[:point] + b"\n" + after


def _inside(source: Source, diagnostics) -> None:
    size = len(source.data)
    for d in diagnostics:
        assert 0 <= d.span.start <= d.span.end <= size, (d.code, d.span)
        for edit in d.fix.edits if d.fix is not None else ():
            assert 0 <= edit.span.start <= edit.span.end <= size, (d.code, edit.span)


def test_the_fixture_is_a_clean_job():
    assert lint(Source(FIXTURE.read_bytes(), str(FIXTURE)), Options()) == []


@pytest.mark.parametrize("name,data", VARIANTS, ids=[name for name, _ in VARIANTS])
def test_a_cut_script_is_linted_without_an_exception(name, data):
    source = Source(data, "job.sbatch")
    _inside(source, lint(source, Options()))  # no guard here: any rule's exception fails the test


@pytest.mark.parametrize("name,data", VARIANTS[::4], ids=[name for name, _ in VARIANTS[::4]])
def test_a_cut_script_is_fixed_without_an_exception(name, data):
    source = Source(data, "job.sbatch")
    outcome = fix(source, Options(), unsafe=True)
    again = Source(outcome.data, "job.sbatch")
    _inside(again, lint(again, Options()))


@pytest.mark.parametrize("index", range(1, len(LINES)), ids=lambda i: f"line-{i + 1}")
def test_a_script_cut_inside_a_line_is_linted_without_an_exception(index):
    for name, data in _cuts(index):
        source = Source(data, "job.sbatch")
        try:
            _inside(source, lint(source, Options()))
        except Exception as err:  # name the variant: the parameter is only the line
            raise AssertionError(f"{name}: {type(err).__name__}: {err}") from err


def test_a_script_ending_in_an_opening_quote_gets_a_syntax_finding_and_no_internal_error(tmp_path):
    mounts = next(i for i, line in enumerate(LINES) if line.startswith(b"MOUNTS="))
    job = tmp_path / "job.sbatch"
    job.write_bytes(b"".join(LINES[:mounts]) + b'MOUNTS="')
    result = CliRunner().invoke(main, ["--output-format", "concise", str(job)])
    assert result.exit_code == 1, result.output
    assert f"{job}:{mounts + 1}:8: SBL001" in result.stdout
    assert "internal error" not in result.output


def test_an_open_string_at_the_end_of_the_file_keeps_its_last_character(tmp_path):
    """The value of ``MOUNTS="/a:/a`` with no closing quote is ``/a:/a``: nothing is taken off
    for a quote that is not there."""
    from sbatchlint.model.script import Script

    for data, expected in ((b'MOUNTS="/a:/a', "/a:/a"), (b'MOUNTS="', ""), (b'MOUNTS="/a:/a"', "/a:/a")):
        script = Script(Source(b"#!/bin/bash\n#SBATCH --nodes=1\n" + data, "job.sbatch"))
        assert [v.text for v in script.values.lookup("MOUNTS", len(script.data))] == [expected]

"""A job script with lines missing (a command cut in the middle, a string or a here-document left
open, a loop without its `done`) is still linted and fixed without an exception, and every
finding and edit stays inside the file. The lines are cut from a benchmark job of the kind that
once crashed a rule (``bad span 3100..3099``)."""
from __future__ import annotations

from pathlib import Path

import pytest

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

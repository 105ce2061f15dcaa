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


def test_backslash_makes_any_character_literal():
    header = header_of('#!/bin/bash\n#SBATCH --job-name=a\\ b --comment="say \\"hi\\"" -J x\\#y\n')
    values = [(d.name, d.value) for d in header.directives]
    assert values == [("job-name", "a b"), ("comment", 'say "hi"'), ("job-name", "x#y")]
    assert all(d.truncated_at is None for d in header.directives)

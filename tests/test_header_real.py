"""The header family on the shapes real job scripts take (fixtures in fixtures/header)."""
from __future__ import annotations

from pathlib import Path

from lintutil import lint_text

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

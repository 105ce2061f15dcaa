"""The value model: ``set -a`` exports, and here-document bodies evaluated as bash does."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from sbatchlint.model.script import Script
from sbatchlint.source import Source


def script(text: str) -> Script:
    return Script(Source(text.encode("utf-8"), "job.sh"))


@pytest.mark.parametrize(
    "prefix,exported",
    [
        ("set -a\n", True),
        ("set -euao pipefail\n", True),
        ("set -o allexport\n", True),
        ("set -eo pipefail\n", False),
        ("set -a\nset +a\n", False),
        ("set -o allexport\nset +o allexport\n", False),
        ("", False),
    ],
)
def test_allexport_exports_later_assignments(prefix, exported):
    s = script("#!/bin/bash\n" + prefix + "PORT=29500\necho ok\n")
    assert s.values.is_exported("PORT") is exported


def test_allexport_applies_only_after_it():
    s = script("#!/bin/bash\nA=1\nset -a\nB=2\nset +a\nC=3\n")
    assert [s.values.is_exported(n) for n in "ABC"] == [False, True, False]


HEREDOC = (
    "#!/bin/bash\n"
    "WORKDIR=/lustre/work\n"
    "cat <<EOF\n"
    'cd $WORKDIR && echo "${WORKDIR}/x" \\$HOME \\" \\\\ done\n'
    "EOF\n"
    "cat <<'EOF'\n"
    "cd $WORKDIR \\$X\n"
    "EOF\n"
)


def _body(s: Script, index: int):
    bodies = [n for n in _walk(s.root) if n.type == "heredoc_body"]
    return s.values.evaluate(bodies[index])


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_heredoc_bodies_evaluate_like_bash():
    s = script(HEREDOC)
    done = subprocess.run(["bash", "-c", HEREDOC], capture_output=True, text=True, env={"HOME": "/h"})
    unquoted, quoted = _body(s, 0)[-1], _body(s, 1)[-1]
    # unknown pieces render as ${NAME}; none here besides the escaped ones
    assert unquoted.known and quoted.known
    assert unquoted.text + quoted.text == done.stdout


def test_heredoc_pieces_keep_their_origin():
    s = script(HEREDOC)
    unquoted, quoted = _body(s, 0)[-1], _body(s, 1)[-1]
    assert {p.quote for p in unquoted.pieces if p.via == ()} == {"<<"}
    escaped = [p for p in unquoted.pieces if p.escaped and p.text == "$"]
    assert [s.data[p.span.start : p.span.end] for p in escaped] == [b"\\$"]
    substituted = [p for p in unquoted.pieces if p.via]
    assert substituted and all(s.data[p.span.start : p.span.end] == b"/lustre/work" for p in substituted)
    assert [p.quote for p in quoted.pieces] == ["'"]
    assert s.data[quoted.pieces[0].span.start : quoted.pieces[0].span.end] == b"cd $WORKDIR \\$X\n"


def test_a_declaration_is_one_assignment():
    s = script("#!/bin/bash\nf() {\n  local SEED=1\n}\nexport X=2\ndeclare -x Y=3\nreadonly Z=4\nW=5\n")
    found = {name: [(a.declared_by, a.exported) for a in items] for name, items in s.values.assignments.items()}
    assert found == {
        "SEED": [("local", False)],
        "X": [("export", True)],
        "Y": [("declare", True)],
        "Z": [("readonly", False)],
        "W": [(None, False)],
    }

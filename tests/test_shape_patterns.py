"""Credential shapes are matched by patterns that start with their literal prefix and look
behind it afterwards (``hf_(?<![A-Za-z0-9_]hf_)…``), so the regex engine jumps between
occurrences of the prefix. These tests hold them to the patterns they replace, written the
obvious way (the look-behind first), on text built to sit at every edge: prefixes glued to
letters, digits, ``_`` and ``-``, repeated, at the start and end, bodies too short and long
enough, non-ASCII neighbours."""
from __future__ import annotations

import random
import re

import pytest

from sbatchlint import redaction

_GITLAB_BODY = r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*"
# the look-behind-first form of each shape (kind → pattern)
SPECIFICATION = {
    "GitHub fine-grained token": r"(?<![A-Za-z0-9_])github_pat_(?P<body>[A-Za-z0-9_]{40,})",
    "Hugging Face token": r"(?<![A-Za-z0-9_])hf_(?P<body>[A-Za-z0-9]{30,})",
    "GitHub token": r"(?<![A-Za-z0-9_])gh[pousr]_(?P<body>[A-Za-z0-9]{30,})",
    "AWS access key": r"(?<![A-Za-z0-9])(?:AKIA|ASIA)(?P<body>[A-Z0-9]{16})(?![A-Za-z0-9])",
    "Anthropic API key": r"(?<![A-Za-z0-9_\-])sk-ant-(?P<body>[A-Za-z0-9_\-]{20,})",
    "OpenAI-style API key": r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?P<body>[A-Za-z0-9_\-]{20,})",
    "GitLab access token": r"(?<![A-Za-z0-9_])glpat-(?P<body>%s)" % _GITLAB_BODY,
    "GitLab CI job token": r"(?<![A-Za-z0-9_])glcbt-(?P<body>%s)" % _GITLAB_BODY,
    "GitLab deploy token": r"(?<![A-Za-z0-9_])gldt-(?P<body>%s)" % _GITLAB_BODY,
    "GitLab runner token": r"(?<![A-Za-z0-9_])glrt-(?P<body>%s)" % _GITLAB_BODY,
}
_PREFIXES = ["hf_", "gh", "ghp_", "ghs_", "github_pat_", "AKIA", "ASIA", "A", "sk-", "sk-ant-", "glpat-", "glcbt-",
             "gldt-", "glrt-", "xoxb-"]
_GLUE = ["", "", "a", "Z", "0", "_", "-", ".", " ", "/", "=", "\n", "é", "\"", "hf", "sk", "gh"]
_BODY = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def _texts(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 6)):
            parts.append(rng.choice(_GLUE))
            parts.append(rng.choice(_PREFIXES))
            size = rng.choice([0, 5, 15, 16, 16, 17, 19, 20, 29, 30, 31, 39, 40, 45])
            alphabet = rng.choice([_BODY, _BODY[:62], _BODY[:26] + _BODY[52:62]])  # all, alphanumeric, upper and digits
            parts.append("".join(rng.choice(alphabet) for _ in range(size)))
        yield "".join(parts)


@pytest.mark.parametrize("shape", [s for s in redaction.SHAPES if s.kind in SPECIFICATION], ids=lambda s: s.kind)
def test_a_shape_matches_where_its_look_behind_first_pattern_does(shape):
    own, spec = re.compile(shape.pattern), re.compile(SPECIFICATION[shape.kind])
    own_bytes, spec_bytes = re.compile(shape.pattern.encode()), re.compile(SPECIFICATION[shape.kind].encode())
    matched = 0
    for text in _texts(3000, seed=hash(shape.kind) % 1000):
        found = [(m.span(), m.group("body")) for m in own.finditer(text)]
        assert found == [(m.span(), m.group("body")) for m in spec.finditer(text)], text
        data = text.encode("utf-8")
        assert [m.span() for m in own_bytes.finditer(data)] == [m.span() for m in spec_bytes.finditer(data)], text
        matched += bool(found)
    assert matched >= 10  # the texts reach the shape often enough to test it


def test_every_shape_with_a_leading_look_behind_is_held_to_its_specification():
    for shape in redaction.SHAPES:
        if shape.kind not in SPECIFICATION:
            assert shape.kind.startswith("Slack"), shape.kind  # written as before

"""Where secret values sit in a file, so that no output of the tool ever shows them.

``find`` returns the spans of credential values (known token shapes anywhere, and literals
assigned to secret-named variables); ``mask`` is the only form in which the tool prints one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List

from .source import Source, Span

# Known credential shapes, anchored so that they are not inside longer words.
TOKEN_PATTERNS = [
    ("Hugging Face token", re.compile(rb"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}")),
    ("GitHub token", re.compile(rb"(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}")),
    ("GitHub fine-grained token", re.compile(rb"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{40,}")),
    ("AWS access key", re.compile(rb"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")),
    ("API key", re.compile(rb"(?<![A-Za-z0-9_])sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}")),
]
SECRET_NAME = re.compile(r"(?:^|_)(?:TOKEN|API_KEY|APIKEY|SECRET|PASSWORD|PASSWD)(?:_|$)|SECRET|PASSWORD", re.I)
_ASSIGNMENT = re.compile(
    rb"(?m)(?:^|[\s;])(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<q>[\"']?)(?P<value>[^\s\"';#]+)(?P=q)"
)
_WANDB_LOGIN = re.compile(rb"wandb\s+login\s+(?:--relogin\s+)?(?P<value>[0-9a-f]{40})\b")
PLACEHOLDER = re.compile(
    r"^(?:<.*>|\$.*|x+|\*+|\.+|changeme|change_me|dummy|none|null|example|placeholder|redacted|todo|"
    r"(?:hf_|ghp_|sk-)?your[_-].*|.*_here|.*your_.*|\{\{.*\}\}|test|secret|token|password|\?+)$",
    re.I,
)


@dataclass(frozen=True)
class Secret:
    span: Span
    kind: str
    name: str = ""  # the variable it is assigned to, when known


def is_placeholder(value: str) -> bool:
    return not value or bool(PLACEHOLDER.match(value)) or len(set(value)) <= 2


def find(source: Source) -> List[Secret]:
    data = source.data
    found: List[Secret] = []
    for kind, pattern in TOKEN_PATTERNS:
        for match in pattern.finditer(data):
            found.append(Secret(Span(match.start(), match.end()), kind))
    for match in _WANDB_LOGIN.finditer(data):
        found.append(Secret(Span(match.start("value"), match.end("value")), "W&B API key", "WANDB_API_KEY"))
    for match in _ASSIGNMENT.finditer(data):
        name = match.group("name").decode("latin-1")
        if not SECRET_NAME.search(name):
            continue
        value = match.group("value").decode(source.encoding, errors="replace")
        if is_placeholder(value):
            continue
        found.append(Secret(Span(match.start("value"), match.end("value")), "secret", name))
    unique = {}
    for secret in sorted(found, key=lambda s: (s.span.start, -s.span.end)):
        if not any(other.span.contains(secret.span) for other in unique.values()):
            unique[secret.span] = secret
    return sorted(unique.values(), key=lambda s: s.span)


def mask(value: str) -> str:
    """The only form in which a secret is printed: its first 3 characters and an ellipsis."""
    return value[:3] + "…"


def redact(text: str, values: List[str]) -> str:
    """Replace every occurrence of each secret value in ``text`` by its masked form."""
    for value in sorted(set(values), key=len, reverse=True):
        if len(value) >= 4:
            text = text.replace(value, mask(value))
    return text


def values(source: Source) -> List[str]:
    return [source.text(s.span) for s in find(source)]

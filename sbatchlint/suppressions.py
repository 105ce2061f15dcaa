"""``# sbatchlint: disable=CODE[,CODE…] [-- reason]`` and ``# sbatchlint: disable-file=CODE``.

A ``disable`` comment at the end of a line silences those codes on that line; on a line of its
own it silences them on the next line. ``disable-file`` (a comment line starting in column 1)
silences them in the whole file. Codes may be prefixes (``SBL2``). Which suppressions were used is
recorded, so that unused ones can be reported.
"""
from __future__ import annotations

from .diagnostics import Diagnostic
from .lazyclass import dataclass, field
from .source import Source, Span
from .lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Set, Tuple

PATTERN = lazy(
    rb"#[ \t]*sbatchlint:[ \t]*(?P<kind>disable-file|disable)[ \t]*=[ \t]*(?P<codes>[A-Za-z0-9_]+(?:[ \t]*,[ \t]*[A-Za-z0-9_]+)*)"
    rb"(?P<rest>[^\r\n]*)"
)
_CODE = lazy(rb"[A-Za-z0-9_]+")


@dataclass
class Code:
    code: str
    span: Span


@dataclass
class Suppression:
    line: int
    span: Span  # from the '#' to the end of the comment
    codes: List[Code]
    file_wide: bool
    standalone: bool  # the comment is alone on its line
    used: Set[str] = field(default_factory=set)

    @property
    def target_line(self) -> int:
        return self.line + 1 if self.standalone else self.line

    def matches(self, code: str) -> List[Code]:
        return [c for c in self.codes if code.startswith(c.code.upper())]


def find(source: Source, model=None) -> List[Suppression]:
    data = source.data
    if b"sbatchlint:" not in data:
        return []
    found: List[Suppression] = []
    for match in PATTERN.finditer(data):
        start = match.start()
        if model is not None and hasattr(model, "is_comment") and not model.is_comment(start):
            continue
        line = source.line_of(start)
        line_span = source.line_span(line)
        before = data[line_span.start : start]
        standalone = not before.strip(b" \t")
        file_wide = match.group("kind") == b"disable-file"
        codes = []
        for code_match in _CODE.finditer(match.group("codes")):
            offset = match.start("codes") + code_match.start()
            codes.append(Code(code_match.group().decode("ascii"), Span(offset, offset + len(code_match.group()))))
        found.append(Suppression(line, Span(start, min(match.end(), line_span.end)), codes, file_wide, standalone))
    return found


def apply(source: Source, diagnostics: List[Diagnostic], suppressions: List[Suppression]) -> List[Diagnostic]:
    """The diagnostics no suppression silences; marks the suppressions that were used."""
    if not suppressions:
        return diagnostics
    kept = []
    file_wide = [s for s in suppressions if s.file_wide]
    by_line = {}
    for s in suppressions:
        if not s.file_wide:
            by_line.setdefault(s.target_line, []).append(s)
    for d in diagnostics:
        line = source.line_of(d.span.start)
        silenced = False
        for s in by_line.get(line, []) + file_wide:
            hits = s.matches(d.code)
            if hits:
                s.used.update(c.code for c in hits)
                silenced = True
        if not silenced:
            kept.append(d)
    return kept


def apply_to_own(source: Source, diagnostics: List[Diagnostic], suppressions: List[Suppression]) -> List[Diagnostic]:
    """Suppression findings can be silenced too, but never mark anything used."""
    own = [d for d in diagnostics if d.code.startswith("SBL90")]
    if not own:
        return diagnostics
    others = [d for d in diagnostics if not d.code.startswith("SBL90")]
    saved = [set(s.used) for s in suppressions]
    kept = apply(source, own, suppressions)
    for s, used in zip(suppressions, saved):
        s.used = used
    return others + kept

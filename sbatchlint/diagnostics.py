"""What a rule reports: a code, a span, a message and maybe a fix."""
from __future__ import annotations

from .lazyclass import dataclass, field
from .source import Span
from .stdlite import StrConstants

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Optional, Tuple


class Severity(StrConstants):  # (str, enum.Enum), without importing enum
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def letter(self) -> str:
        return self.value[0].upper()


class Applicability(StrConstants):
    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the bytes of ``span`` with ``text`` (an insertion when the span is empty)."""

    span: Span
    text: str

    @classmethod
    def insert(cls, offset: int, text: str) -> "Edit":
        return cls(Span(offset, offset), text)

    @classmethod
    def delete(cls, span: Span) -> "Edit":
        return cls(span, "")

    @classmethod
    def delete_word(cls, data: bytes, span: Span) -> "Edit":
        """Delete a shell word and the blank that separates it from its neighbours. A line that
        holds nothing but the word and a continuation backslash (``  --ntasks=2 \\``) goes
        entirely; a last continued line keeps its (now empty) line, so the command still ends there."""
        line_start = data.rfind(b"\n", 0, span.start) + 1
        line_end = data.find(b"\n", span.end)
        line_end = len(data) if line_end < 0 else line_end
        before = data[line_start : span.start]
        after = data[span.end : line_end].rstrip(b"\r")
        if not before.strip(b" \t") and after.strip(b" \t") == b"\\":
            return cls.delete(Span(line_start, min(len(data), line_end + 1)))
        start = span.start
        while start > line_start and data[start - 1] in b" \t":
            start -= 1
        if line_start < start < span.start:
            return cls.delete(Span(start, span.end))
        end = span.end
        while end < line_end and data[end] in b" \t":
            end += 1
        return cls.delete(Span(span.start, end))


@dataclass(frozen=True)
class Fix:
    edits: Tuple[Edit, ...]
    applicability: Applicability
    description: str

    @classmethod
    def safe(cls, description: str, *edits: Edit) -> "Fix":
        return cls(tuple(sorted(edits, key=lambda e: (e.span.start, e.span.end))), Applicability.SAFE, description)

    @classmethod
    def unsafe(cls, description: str, *edits: Edit) -> "Fix":
        return cls(tuple(sorted(edits, key=lambda e: (e.span.start, e.span.end))), Applicability.UNSAFE, description)

    @property
    def span(self) -> Span:
        return Span(min(e.span.start for e in self.edits), max(e.span.end for e in self.edits))


@dataclass
class Diagnostic:
    code: str
    name: str
    severity: Severity
    span: Span
    message: str
    fix: Optional[Fix] = None
    path: str = "-"
    label: Optional[str] = None  # short text under the underlined span
    help: Optional[str] = None  # a line of advice after the code frame
    notes: Tuple[str, ...] = field(default_factory=tuple)

    def sort_key(self):
        return (self.path, self.span.start, self.span.end, self.code)

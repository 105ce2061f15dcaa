"""A file's bytes, how they were encoded, and byte-offset spans into them.

Spans are byte offsets into the original bytes, BOM included; nothing is normalised, so an
edit changes exactly the bytes it covers. Line and column are computed only for printing.
"""
from __future__ import annotations

import bisect

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterable, Optional
    from .diagnostics import Edit

BOM = b"\xef\xbb\xbf"
MAX_BYTES = 10 * 1024 * 1024


class InputError(Exception):
    """A file that cannot be linted; the message is one line for the user."""


class Span:
    """Bytes [start, end) of the original data. Immutable, hashable, ordered by (start, end).

    A slotted class rather than a frozen dataclass: spans are made by the hundred thousand and
    read far more often, and slots with plain assignment make both cheaper. Nothing sets a
    field after ``__init__`` (spans are dictionary keys).
    """

    __slots__ = ("start", "end")
    start: int
    end: int

    def __init__(self, start: int, end: int) -> None:
        if start > end:
            raise ValueError(f"bad span {start}..{end}")
        self.start = start
        self.end = end

    def __reduce__(self):
        return (Span, (self.start, self.end))

    def __repr__(self) -> str:
        return f"Span(start={self.start}, end={self.end})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is Span:
            return self.start == other.start and self.end == other.end  # type: ignore[attr-defined]
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if other.__class__ is Span:
            return self.start != other.start or self.end != other.end  # type: ignore[attr-defined]
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __lt__(self, other: "Span") -> bool:
        if other.__class__ is not Span:
            return NotImplemented
        return (self.start, self.end) < (other.start, other.end)

    def __le__(self, other: "Span") -> bool:
        if other.__class__ is not Span:
            return NotImplemented
        return (self.start, self.end) <= (other.start, other.end)

    def __gt__(self, other: "Span") -> bool:
        if other.__class__ is not Span:
            return NotImplemented
        return (self.start, self.end) > (other.start, other.end)

    def __ge__(self, other: "Span") -> bool:
        if other.__class__ is not Span:
            return NotImplemented
        return (self.start, self.end) >= (other.start, other.end)

    def contains(self, other: "Span") -> bool:
        return self.start <= other.start and other.end <= self.end

    def overlaps(self, other: "Span") -> bool:
        return self.start < other.end and other.start < self.end

    def __len__(self) -> int:
        return self.end - self.start


class Source:
    """The content of one file.

    ``data`` is the bytes exactly as read. ``encoding`` is ``utf-8`` when they decode as UTF-8
    (with or without a BOM), otherwise ``latin-1``, which maps every byte to one character and
    back, so no file is ever decoded with loss.
    """

    def __init__(self, data: bytes, path: str = "-") -> None:
        self.path = path
        self.data = data
        self.has_bom = data.startswith(BOM)
        try:
            data.decode("utf-8")
            self.encoding = "utf-8"
        except UnicodeDecodeError:
            self.encoding = "latin-1"
        crlf = data.count(b"\r\n")
        lf = data.count(b"\n")
        if crlf and crlf == lf:
            self.newline = "\r\n"
        elif crlf:
            self.newline = "mixed"
        else:
            self.newline = "\n"
        starts = [0]
        find = data.find
        index = find(b"\n")
        while index >= 0:  # one search per line, not a Python step per byte
            starts.append(index + 1)
            index = find(b"\n", index + 1)
        self._line_starts = starts

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_text(cls, text: str, path: str = "-") -> "Source":
        return cls(text.encode("utf-8"), path)

    @classmethod
    def read(cls, path: str) -> "Source":
        """Read a file, or raise InputError with a one-line reason."""
        import os

        try:
            if os.path.isdir(path):
                raise InputError(f"{path}: is a directory")
            size = os.path.getsize(path)
            if size > MAX_BYTES:
                raise InputError(
                    f"{path}: file too large ({size / 1048576:.1f} MiB; the limit is {MAX_BYTES // 1048576} MiB)"
                )
            with open(path, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except InputError:
            raise
        except FileNotFoundError:
            raise InputError(f"{path}: no such file or directory") from None
        except PermissionError:
            raise InputError(f"{path}: permission denied") from None
        except OSError as err:
            raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
        return cls.checked(data, path)

    @classmethod
    def checked(cls, data: bytes, path: str) -> "Source":
        if len(data) > MAX_BYTES:
            raise InputError(f"{path}: file too large (the limit is {MAX_BYTES // 1048576} MiB)")
        if not data.strip(BOM + b" \t\r\n"):
            raise InputError(f"{path}: file is empty")
        if b"\0" in data[:65536]:
            raise InputError(f"{path}: binary file (contains NUL bytes), not a batch script")
        return cls(data, path)

    # -- text ---------------------------------------------------------------------------
    def decode(self, raw: bytes) -> str:
        return raw.decode(self.encoding, errors="replace")

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding, errors="replace")

    def edited(self, edits: Iterable["Edit"]) -> bytes:
        """The bytes with non-overlapping edits applied (``ValueError`` when two overlap); inserted
        text is encoded like the file and its line breaks follow the file's style."""
        data = self.data
        out = []
        position = 0
        for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
            if edit.span.start < position:
                raise ValueError("overlapping edits")
            out.append(data[position : edit.span.start])
            text = edit.text
            if self.newline == "\r\n" and "\n" in text:
                text = text.replace("\r\n", "\n").replace("\n", "\r\n")
            out.append(self.encode(text))
            position = edit.span.end
        out.append(data[position:])
        return b"".join(out)

    def text(self, span: Optional[Span] = None) -> str:
        if span is None:
            return self.decode(self.data)
        return self.decode(self.data[span.start : span.end])

    @property
    def line_count(self) -> int:
        return len(self._line_starts) - (1 if self.data.endswith(b"\n") else 0)

    def line_of(self, offset: int) -> int:
        """1-based line number of a byte offset."""
        return bisect.bisect_right(self._line_starts, offset)

    def line_span(self, line: int, with_newline: bool = False) -> Span:
        """The bytes of a 1-based line, without its line ending unless asked."""
        start = self._line_starts[line - 1]
        if line < len(self._line_starts):
            end = self._line_starts[line]
        else:
            end = len(self.data)
        if not with_newline:
            if end > start and self.data[end - 1 : end] == b"\n":
                end -= 1
            if end > start and self.data[end - 1 : end] == b"\r":
                end -= 1
        return Span(start, end)

    def lines(self):
        """(1-based number, span without line ending) of every line."""
        for number in range(1, self.line_count + 1):
            yield number, self.line_span(number)

    def position(self, offset: int) -> tuple:
        """(line, column), both 1-based; the column counts characters, not bytes."""
        line = self.line_of(offset)
        start = self._line_starts[line - 1]
        column = len(self.decode(self.data[start:offset])) + 1
        return line, column

    def line_ending_at(self, line: int) -> str:
        span = self.line_span(line, with_newline=True)
        raw = self.data[span.start : span.end]
        if raw.endswith(b"\r\n"):
            return "\r\n"
        if raw.endswith(b"\n"):
            return "\n"
        return ""

    def preferred_newline(self) -> str:
        return "\r\n" if self.newline == "\r\n" else "\n"

"""Where a comment may go in a Python file without changing the program: the Python side of
``model/placement.py``'s suppression-comment questions, answered from the tokens.

A comment may end a line whose end is outside every string (a triple-quoted string, an f-string
spanning lines, a string continued by ``\\``) and that is not continued by ``\\`` (a comment after
it is a syntax error); inside brackets it is fine. A comment line may go before a line that does
not start inside a string and does not follow a ``\\`` continuation. A file the tokenizer cannot
read gets neither: its findings take the file-wide comment.
"""
from __future__ import annotations

import io
import re
import tokenize
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

if TYPE_CHECKING:  # a type for annotations only
    Position = Tuple[int, int]  # 1-based line, 0-based character column, as tokenize gives them

_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


class _Tokens:
    """What the placement questions need from one tokenized text."""

    def __init__(self, text: str) -> None:
        self.lines: List[str] = io.StringIO(text, newline=None).readlines()
        self.strings: List[Tuple[Position, Position]] = []  # start and end of each string, f-strings whole
        self.comments: List[Tuple[Position, Position]] = []
        self.ok = True
        depth: List[Position] = []
        fstring_start = getattr(tokenize, "FSTRING_START", None)
        fstring_end = getattr(tokenize, "FSTRING_END", None)
        try:
            for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
                if token.type == tokenize.STRING:
                    self.strings.append((token.start, token.end))
                elif token.type == tokenize.COMMENT:
                    self.comments.append((token.start, token.end))
                elif fstring_start is not None and token.type == fstring_start:
                    depth.append(token.start)
                elif fstring_end is not None and token.type == fstring_end and depth:
                    start = depth.pop()
                    if not depth:  # an f-string nested in another's braces lies within it anyway
                        self.strings.append((start, token.end))
        except (tokenize.TokenError, SyntaxError, ValueError):
            self.ok = False

    def in_string(self, where: Position) -> bool:
        """Whether ``where`` lies strictly inside a string (its first quote and last quote excluded)."""
        return any(start < where < end for start, end in self.strings)

    def in_comment(self, where: Position) -> bool:
        return any(start <= where < end for start, end in self.comments)

    def text(self, line: int) -> str:
        return self.lines[line - 1].rstrip("\r\n") if 0 < line <= len(self.lines) else ""

    def continued(self, line: int) -> bool:
        """Whether ``line`` ends with a ``\\`` that joins it to the next (not one in a comment)."""
        text = self.text(line)
        if not text.endswith("\\"):
            return False
        where = (line, len(text) - 1)
        return not self.in_comment(where)


@lru_cache(maxsize=8)
def _tokens(text: str) -> _Tokens:
    return _Tokens(text)


def _line_end(module, line: int) -> int:
    """The byte offset of the end of ``line``'s text (before its line break)."""
    tokens = _tokens(module.text)
    return module.offset(line, len(tokens.text(line)))


def end_of_line(module, line: int) -> Optional[int]:
    """Where a comment can end line ``line``: the end of its text, when that is outside every
    string and not after a ``\\`` continuation; None otherwise."""
    tokens = _tokens(module.text)
    if not tokens.ok or not 0 < line <= len(tokens.lines):
        return None
    end = (line, len(tokens.text(line)))
    if tokens.in_string(end) or tokens.continued(line):
        return None
    return _line_end(module, line)


def line_before(module, line: int) -> Optional[Tuple[int, str]]:
    """Where a comment line can go right before line ``line``, with the indentation it takes; None
    when that line starts inside a string or follows a ``\\`` continuation."""
    tokens = _tokens(module.text)
    if not tokens.ok or not 1 < line <= len(tokens.lines):
        return None
    if tokens.in_string((line, 0)) or tokens.continued(line - 1):
        return None
    text = tokens.text(line)
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    return module.offset(line, 0), indent


def comment_line_first(module, line: int) -> bool:
    """A Python comment holds no directive: a suppression may join any comment on the line."""
    return False


def file_comment_line(module) -> int:
    """Where a file-wide comment line goes: after a ``#!`` line and an encoding declaration (which
    Python reads only on the first two lines), else at the top."""
    tokens = _tokens(module.text)
    line = 1
    if tokens.text(1).startswith("#!"):
        line = 2
    for candidate in (1, 2):
        if candidate >= line and _CODING.match(tokens.text(candidate)) and candidate <= 2:
            line = candidate + 1
            break
    if line > len(tokens.lines):
        return len(module.data)
    return module.offset(line, 0)

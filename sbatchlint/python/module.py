"""A Python file as the SBL5xx rules see it: a libcst tree, byte spans, and fixes as byte edits.

The file is decoded exactly like a batch script (``Source``), parsed once with libcst, and every
node a rule reports is mapped back to BYTE offsets of the original file, so a finding in a Python
file prints like any other and a fix goes through the same ``Edit``/``Fix`` engine: a rule builds
the changed tree with libcst, and ``PythonModule.edits`` turns the difference between the old and
the new code into the few byte ranges that changed, leaving every other byte (comments, layout,
line endings) as it was.

A file that cannot be analysed is not an exception: ``problem`` says why (a syntax error, a file
too large, or nesting deep enough to crash a parser), and SBL500 reports it once.
"""
from __future__ import annotations

import bisect
import difflib
import io
import re
import sys
import tokenize
from functools import cached_property
from contextlib import contextmanager

import warnings

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

with warnings.catch_warnings():  # libcst 1.0's metadata package imports deprecated typing helpers
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import Edit
from ..lazyclass import dataclass
from ..source import Source, Span
from ..lazyre import lazy

# libcst parses roughly 0.3 MB/s and its position metadata costs as much again: beyond this the
# file is reported as too large instead of stalling the run. Setting: ``python-max-bytes``
# (``python_max_bytes`` in the settings dict).
MAX_BYTES = 1024 * 1024
# CPython refuses more nested brackets than this ("too many nested parentheses"); the native
# libcst parser overflows its stack a few times deeper, killing the process.
MAX_NESTING = 200
# Tokens of one expression with no comma in between (``a + b + …``, ``f()()…``, ``'a' 'b' …``):
# each adds a level to the tree, and around ten thousand of them crash both libcst and ``ast``.
MAX_CHAIN = 1000

# libcst walks and prints trees recursively, a few Python frames per level: with the limits above
# a tree is at most about 1,200 levels deep, which needs more than Python's default of 1,000.
RECURSION_LIMIT = 15000

_LIBCST_POSITION = lazy(r"error at (\d+):(\d+)")
_NEWLINE = lazy(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ParseProblem:
    """Why a file was not analysed: ``kind`` is ``syntax``, ``too-large`` or ``too-complex``."""

    kind: str
    message: str
    line: int  # 1-based
    column: int  # 0-based, in characters


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Room for libcst's recursive visitors and code generation on a deep (but accepted) tree."""
    old = sys.getrecursionlimit()
    if old < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        if sys.getrecursionlimit() == RECURSION_LIMIT and old < RECURSION_LIMIT:
            sys.setrecursionlimit(old)


def decode(source: Source) -> str:
    """The file's text as libcst reads it: decoded like the Source, byte-order mark removed."""
    text = source.text()
    return text[1:] if source.has_bom and text.startswith("\ufeff") else text


def parse(text: str, size: int, max_bytes: int = MAX_BYTES) -> Tuple[Optional[cst.Module], Optional[ParseProblem]]:
    """The libcst tree, or the reason there is none. Never raises for any input."""
    if size > max_bytes:
        return None, ParseProblem(
            "too-large",
            f"file too large to analyse ({size / 1048576:.1f} MiB; the limit for Python files is "
            f"{max_bytes / 1048576:g} MiB)",
            1,
            0,
        )
    complexity = _too_complex(text)
    if complexity is not None:
        return None, complexity
    try:
        tree = cst.parse_module(text)
    except cst.ParserSyntaxError as err:
        return None, _syntax_problem(text, err)
    except (RecursionError, MemoryError):
        return None, ParseProblem("too-complex", "too deeply nested to analyse", 1, 0)
    except BaseException as err:  # the native parser reports internal failures as PanicException
        if isinstance(err, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        return None, _syntax_problem(text, err)
    return tree, None


def parse_error_count(data: bytes) -> int:
    """0 when the bytes are Python libcst can analyse, else 1 (the fix engine's parse check)."""
    source = Source(data, "-.py")
    return 0 if parse(decode(source), len(data))[1] is None else 1


def _too_complex(text: str) -> Optional[ParseProblem]:
    """Nesting or an operator chain deep enough to overflow a parser's stack, found by tokenizing."""
    depth = 0
    runs: List[int] = [0]  # tokens since the last comma, per open bracket
    total = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            kind, string = token.type, token.string
            if kind == tokenize.OP:
                if string in "([{":
                    depth += 1
                    runs[-1] += 1
                    total += 1
                    runs.append(0)
                    if depth > MAX_NESTING:
                        return ParseProblem(
                            "too-complex", f"more than {MAX_NESTING} nested brackets: Python itself refuses this",
                            token.start[0], token.start[1])
                elif string in ")]}":
                    if len(runs) > 1:
                        total -= runs.pop()
                    depth = max(0, depth - 1)
                elif string in (",", ";"):
                    total -= runs[-1]
                    runs[-1] = 0
                else:
                    runs[-1] += 1
                    total += 1
            elif kind in (tokenize.NEWLINE, tokenize.ENDMARKER):
                depth, runs, total = 0, [0], 0
            elif kind in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
                runs[-1] += 1
                total += 1
            if total > MAX_CHAIN:
                return ParseProblem(
                    "too-complex", f"an expression of more than {MAX_CHAIN} chained terms is too deep to analyse",
                    token.start[0], token.start[1])
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None  # the parser reports the error itself
    return None


def _syntax_problem(text: str, err: BaseException) -> ParseProblem:
    """The clearest message available: CPython's own, else libcst's."""
    import ast

    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    try:
        ast.parse(text)
    except SyntaxError as syntax:
        line = syntax.lineno or 1
        column = max(0, (syntax.offset or 1) - 1)
        return ParseProblem("syntax", f"invalid Python syntax (as Python {version} reads it): {syntax.msg}", line, column)
    except (RecursionError, MemoryError, ValueError):
        pass
    # CPython accepts it but libcst does not: syntax newer than the installed libcst knows.
    detail = str(getattr(err, "message", "") or err).strip().splitlines()
    first = detail[0] if detail else type(err).__name__
    found = _LIBCST_POSITION.search(str(getattr(err, "message", "")) or str(err))
    if found:
        line, column = int(found.group(1)), int(found.group(2))
    else:
        line, column = getattr(err, "raw_line", 1) or 1, getattr(err, "raw_column", 0) or 0
    first = re.sub(r"expected one of .*", "unexpected token", first)
    return ParseProblem(
        "syntax",
        f"libcst {_libcst_version()} cannot parse this file ({first}); Python {version} accepts it, so it may use "
        "syntax newer than this libcst supports",
        line,
        column,
    )


def _libcst_version() -> str:
    try:
        from importlib.metadata import version

        return version("libcst")
    except Exception:  # pragma: no cover - metadata missing
        return ""


class PythonModule:
    """One ``.py`` file: what the Python rules query, built once per file."""

    language = "python"

    def __init__(self, source: Source, settings: Optional[Dict[str, Any]] = None) -> None:
        self.source = source
        self.data = source.data
        self.settings: Dict[str, Any] = dict(settings or {})
        self.text = decode(source)
        self._bom = len(source.data) - len(source.encode(self.text)) if source.has_bom else 0
        self._derived: Dict[str, Any] = {}

    @property
    def path(self) -> str:
        return self.source.path

    # -- parsing ------------------------------------------------------------------------
    @cached_property
    def _parsed(self) -> Tuple[Optional[cst.Module], Optional[ParseProblem]]:
        limit = self.settings.get("python_max_bytes", MAX_BYTES)
        tree, problem = parse(self.text, len(self.data), int(limit))
        return tree, problem

    @property
    def tree(self) -> Optional[cst.Module]:
        """The libcst module, or None when the file could not be analysed (see ``problem``)."""
        return self._parsed[0]

    @property
    def problem(self) -> Optional[ParseProblem]:
        return self._parsed[1]

    def derived(self, key: str, build: Callable[["PythonModule"], Any]) -> Any:
        """An analysis shared by several rules, computed once per file."""
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]

    @cached_property
    def names(self):
        """What each imported name refers to (``dist`` → ``torch.distributed``)."""
        from .names import Names

        assert self.tree is not None
        return Names(self.tree)

    # -- positions ------------------------------------------------------------------------
    @cached_property
    def _positions(self):
        assert self.tree is not None
        with deep_recursion():
            return MetadataWrapper(self.tree, unsafe_skip_copy=True).resolve(PositionProvider)

    @cached_property
    def _lines(self) -> Tuple[List[int], List[int]]:
        """Where each line starts, as (character offsets into ``text``, byte offsets into the file).
        Lines end at ``\r\n``, ``\r`` or ``\n``, as Python, libcst and tokenize count them."""
        chars = [0] + [match.end() for match in _NEWLINE.finditer(self.text)]
        offsets = []
        position = self._bom
        previous = 0
        for start in chars:
            position += len(self.source.encode(self.text[previous:start]))
            offsets.append(position)
            previous = start
        return chars, offsets

    def offset(self, line: int, column: int) -> int:
        """The byte offset of a 1-based line and 0-based character column."""
        chars, offsets = self._lines
        line = max(1, min(line, len(chars)))
        begin = chars[line - 1]
        end = chars[line] if line < len(chars) else len(self.text)
        return offsets[line - 1] + len(self.source.encode(self.text[begin : min(begin + column, end)]))

    @cached_property
    def _comments(self) -> List[Tuple[int, int]]:
        """Byte spans of the comments, in order (tokenized: a ``#`` inside a string is no comment)."""
        spans = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.text, newline=None).readline):
                if token.type == tokenize.COMMENT:
                    spans.append((self.offset(*token.start), self.offset(*token.end)))
        except (tokenize.TokenError, SyntaxError, ValueError):
            pass
        return spans

    def is_comment(self, offset: int) -> bool:
        """Whether the byte at ``offset`` is inside a comment (for suppression comments)."""
        spans = self._comments
        index = bisect.bisect_right(spans, (offset, float("inf"))) - 1
        return index >= 0 and spans[index][0] <= offset < spans[index][1]

    def char_to_byte(self, index: int) -> int:
        chars = self._lines[0]
        line = bisect.bisect_right(chars, index)
        return self.offset(line, index - chars[line - 1])

    def span(self, node: cst.CSTNode) -> Span:
        """The bytes of a node of ``tree`` (without surrounding whitespace)."""
        where = self._positions[node]
        return Span(self.offset(where.start.line, where.start.column), self.offset(where.end.line, where.end.column))

    def line(self, node: cst.CSTNode) -> int:
        return self._positions[node].start.line

    def code(self, node: cst.CSTNode) -> str:
        """A node's source as written."""
        assert self.tree is not None
        with deep_recursion():
            return self.tree.code_for_node(node)

    def problem_span(self) -> Span:
        """The character a parse problem points at (its whole line when it points past the end)."""
        problem = self.problem
        assert problem is not None
        chars = self._lines[0]
        last = max(1, len([c for c in chars if c < len(self.text)]))  # the last line with text
        line = max(1, min(problem.line, last))
        begin = chars[line - 1]
        end = chars[line] if line < len(chars) else len(self.text)
        content = self.text[begin:end].rstrip("\r\n")
        column = problem.column if line == problem.line else len(content)
        if column >= len(content):
            return Span(self.offset(line, 0), self.offset(line, len(content)))
        return Span(self.offset(line, column), self.offset(line, column + 1))

    # -- fixes ----------------------------------------------------------------------------
    @cached_property
    def _round_trips(self) -> bool:
        """libcst prints the unchanged tree as the exact text (it promises to): a fix is a diff
        against that text, so without it there is no fix."""
        assert self.tree is not None
        with deep_recursion():
            return self.tree.code == self.text

    def edits(self, new_tree: cst.Module) -> Tuple[Edit, ...]:
        """The byte edits that turn this file into ``new_tree``'s code: only the changed ranges."""
        with deep_recursion():
            new = new_tree.code
        old = self.text
        if old == new or not self._round_trips:
            return ()
        old_lines = old.splitlines(keepends=True)
        new_lines = new.splitlines(keepends=True)
        old_starts = [0]
        for text in old_lines:
            old_starts.append(old_starts[-1] + len(text))
        out: List[Edit] = []
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            start, end = old_starts[i1], old_starts[i2]
            before, after = old[start:end], "".join(new_lines[j1:j2])
            prefix = _common_prefix(before, after)
            suffix = _common_suffix(before[prefix:], after[prefix:])
            before_end = len(before) - suffix
            replacement = after[prefix : len(after) - suffix]
            out.append(Edit(Span(self.char_to_byte(start + prefix), self.char_to_byte(start + before_end)), replacement))
        return tuple(out)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def _common_suffix(a: str, b: str) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[-1 - n] == b[-1 - n]:
        n += 1
    return n

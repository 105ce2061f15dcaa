"""Streaming a job log: large chunks, one prefilter, and only candidate lines parsed.

A multi-GB log is read in chunks of a few MB. Each chunk is searched with a handful of fast
byte searches (each a literal, or a literal first character followed by an alternation, which
CPython's regular expression engine scans for as fast as for a plain literal); only the lines
they hit are decoded and parsed. Line numbers are counted between hits with ``bytes.count``.

A consumer sees each candidate line once, may ask for the lines that follow it (a torchrun
``Failures:`` block after ``ChildFailedError``), and may look back at the lines before it (the
last stack frame before an exception) within the current chunk and the tail of the previous one.
Memory stays bounded: one chunk, a tail, and whatever the consumer keeps.
"""
from __future__ import annotations

import gzip
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import BinaryIO, Callable, Dict, Iterable, List, Optional, Pattern, Sequence, Tuple

CHUNK = 8 << 20  # bytes read at once
LOOKBACK = 256 << 10  # bytes of the previous chunk kept for looking back
LONGEST_LINE = 1 << 20  # a "line" longer than this (binary garbage) is cut

# What makes a line a candidate: few patterns, each one pass over the chunk.
PREFILTER: Tuple[Pattern[bytes], ...] = (
    re.compile(rb"rror"),  # Error, error: Python exceptions, srun/slurmstepd errors, NCCL errors
    re.compile(rb"E(?:xception|RROR|\d{4} \d\d:\d\d)"),  # exceptions, ERROR, glog error lines
    re.compile(rb"imeout"),  # collective and rendezvous timeouts
)

# Looked for only when the first pass leaves a question open (and the input can be read again),
# each group only when its question is asked.
SECOND_PASS: Dict[str, Tuple[Pattern[bytes], ...]] = {
    "messages": (re.compile(rb"ommand not found"), re.compile(rb"must be launched"), re.compile(rb"No space left")),
    "world": (re.compile(rb"world|WORLD"),),
    "sizes": (re.compile(rb"xpert"), re.compile(rb"parallel_size")),
    "rank0": (re.compile(rb"\[rank0\]"), re.compile(rb"\n *0: ")),
}


class InputError(Exception):
    """A log that cannot be read: the command exits 2 with this one-line message."""


class Log:
    """One input: a path, or ``-`` for stdin; gzip is recognised by its magic bytes."""

    def __init__(self, path: str, index: int, stdin: Optional[BinaryIO] = None) -> None:
        self.path = path
        self.index = index
        self._stdin = stdin
        self.size: Optional[int] = None

    @property
    def rereadable(self) -> bool:
        return self.path != "-"

    def open(self) -> BinaryIO:
        if self.path == "-":
            raw = self._stdin
            if raw is None:
                raise InputError("stdin was already read")
            self._stdin = None
        else:
            try:
                raw = open(self.path, "rb")
            except IsADirectoryError:
                raise InputError(f"{self.path}: is a directory, not a log")
            except FileNotFoundError:
                raise InputError(f"{self.path}: no such file")
            except OSError as err:
                raise InputError(f"{self.path}: cannot read: {err.strerror or err}")
        peek = _peek(raw)
        if peek.startswith(b"\x1f\x8b"):
            return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
        return raw


def _peek(raw) -> bytes:
    if hasattr(raw, "peek"):
        try:
            return raw.peek(2)[:2]
        except (OSError, ValueError):
            return b""
    return b""


if TYPE_CHECKING:  # a type for annotations only
    Consumer = Callable[["Cursor"], int]
STOP = -1  # a consumer's answer: read no further


class Cursor:
    """The candidate line a consumer is looking at, with access to its neighbours."""

    __slots__ = ("data", "lo", "start", "end", "number", "_tail")

    def __init__(self) -> None:
        self.data = b""
        self.lo = 0
        self.start = 0
        self.end = 0
        self.number = 0
        self._tail = b""

    @property
    def raw(self) -> bytes:
        return self.data[self.start : self.end]

    def before(self, count: int) -> List[Tuple[int, bytes]]:
        """Up to ``count`` lines before this one (nearest last), with their line numbers."""
        lines: List[Tuple[int, bytes]] = []
        end = self.start - 1  # the newline ending the previous line
        number = self.number
        data = self.data
        while len(lines) < count and end >= self.lo:
            nl = data.rfind(b"\n", self.lo, end)
            start = nl + 1 if nl >= 0 else self.lo
            number -= 1
            lines.append((number, data[start:end]))
            end = start - 1
        if len(lines) < count and self._tail:
            tail = self._tail
            end = len(tail) - 1
            while len(lines) < count and end >= 0:
                start = tail.rfind(b"\n", 0, end) + 1  # the tail holds whole lines
                number -= 1
                lines.append((number, tail[start:end]))
                end = start - 1
        lines.reverse()
        return lines


def scan(handle: BinaryIO, consumer: Consumer, patterns: Sequence[Pattern[bytes]] = PREFILTER,
         chunk: int = CHUNK) -> Tuple[int, int, bytes]:
    """Feed every candidate line of ``handle`` to ``consumer``; returns the number of lines and
    bytes read, and the input's last bytes (for a look at how it ends).

    ``consumer(cursor)`` returns how many of the following lines it also wants to see (0 for
    none, ``STOP`` to read no further); those are fed to it whether they match the prefilter or not.
    A chunk is searched where it lies (no copy): only the line cut by the chunk's start is joined
    to the rest of it from the previous chunk.
    """
    state = _State(consumer, patterns)
    carry = b""
    while True:
        try:
            block = handle.read(chunk)
        except (OSError, EOFError, gzip.BadGzipFile) as err:  # a truncated .gz, a read error
            raise InputError(f"cannot read further: {err}")
        if not block:
            if carry:
                state.segment(carry + b"\n", 0, len(carry) + 1)
            break
        state.total += len(block)
        first = block.find(b"\n")
        if first < 0:
            carry += block
            if len(carry) >= LONGEST_LINE:
                state.segment(carry + b"\n", 0, len(carry) + 1)
                carry = b""
            continue
        head = carry + block[: first + 1]
        if state.segment(head, 0, len(head)):
            break
        last = block.rfind(b"\n")
        if last > first and state.segment(block, first + 1, last + 1):
            break
        carry = block[last + 1 :]
    return state.number - 1, state.total, state.tail


class _State:
    """Where the scan is: the line number, the tail kept for looking back, pending follow-ups."""

    def __init__(self, consumer: Consumer, patterns: Sequence[Pattern[bytes]]) -> None:
        self.consumer = consumer
        self.patterns = patterns
        self.cursor = Cursor()
        self.number = 1  # line number of the next line to be read
        self.follow = 0
        self.total = 0
        self.tail = b""

    def segment(self, data: bytes, lo: int, hi: int) -> bool:
        """Lines ``data[lo:hi]`` (``hi`` just past a newline); True when the consumer said STOP."""
        starts = set()
        for pattern in self.patterns:
            for match in pattern.finditer(data, lo, hi):
                nl = data.rfind(b"\n", lo, max(match.end() - 1, lo))
                starts.add(nl + 1 if nl >= 0 else lo)
        cursor = self.cursor
        cursor.data, cursor.lo, cursor._tail = data, lo, self.tail
        position = lo  # where ``line_number`` counts from
        line_number = self.number
        pending = sorted(starts)
        if self.follow:  # lines a consumer asked for at the end of the previous segment
            carried = self.follow
            self.follow = max(0, carried - data.count(b"\n", lo, hi))
            pending = _with_following(data, lo, hi, carried, pending)
        i = 0
        while i < len(pending):
            start = pending[i]
            i += 1
            line_number += data.count(b"\n", position, start)
            position = start
            end = data.find(b"\n", start, hi)
            cursor.start, cursor.end, cursor.number = start, end, line_number
            wanted = self.consumer(cursor)
            if wanted is STOP:
                return True
            if wanted:
                rest = data.count(b"\n", end + 1, hi)
                if wanted > rest:
                    self.follow = max(self.follow, wanted - rest)
                pending = pending[:i] + _with_following(data, end + 1, hi, wanted, pending[i:])
        self.number = line_number + data.count(b"\n", position, hi)
        if hi - lo >= LOOKBACK:
            tail = data[hi - LOOKBACK : hi]
        else:
            tail = (self.tail + data[lo:hi])[-LOOKBACK:]
        if len(tail) == LOOKBACK:  # starts in the middle of a line: keep whole lines only
            tail = tail[tail.find(b"\n") + 1 :]
        self.tail = tail
        return False


def _with_following(data: bytes, start: int, hi: int, count: int, rest: Iterable[int]) -> List[int]:
    """``rest`` merged with the starts of ``count`` lines from ``start`` on (sorted, no repeats)."""
    starts = []
    position = start
    while count and position < hi:
        starts.append(position)
        nl = data.find(b"\n", position, hi)
        if nl < 0:
            break
        position = nl + 1
        count -= 1
    return sorted(set(starts).union(rest))

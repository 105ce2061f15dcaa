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
from typing import BinaryIO, Callable, Iterable, List, Optional, Pattern, Sequence, Tuple

CHUNK = 8 << 20  # bytes read at once
LOOKBACK = 256 << 10  # bytes of the previous chunk kept for looking back
LONGEST_LINE = 1 << 20  # a "line" longer than this (binary garbage) is cut

# What makes a line a candidate: few patterns, each one pass over the chunk.
PREFILTER: Tuple[Pattern[bytes], ...] = (
    re.compile(rb"rror"),  # Error, error: Python exceptions, srun/slurmstepd errors, NCCL errors
    re.compile(rb"E(?:xception|RROR|\d{4} \d\d:\d\d)"),  # exceptions, ERROR, glog error lines
    re.compile(rb"S(?:IG(?:TERM|KILL|ABRT|SEGV|BUS|INT)|egmentation fault)"),  # signals
    re.compile(rb"imeout"),  # collective and rendezvous timeouts
)

# Looked for only when the first pass leaves a question open (and the input can be read again).
SECOND_PASS: Tuple[Pattern[bytes], ...] = (
    re.compile(rb"ommand not found"),
    re.compile(rb"must be launched"),
    re.compile(rb"No space left"),
    re.compile(rb"world|WORLD"),
    re.compile(rb"xperts?\b|parallel_size"),
    re.compile(rb"\[rank0\]"),
    re.compile(rb"\n *0: "),
)


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


Consumer = Callable[["Cursor"], int]


class Cursor:
    """The candidate line a consumer is looking at, with access to its neighbours."""

    __slots__ = ("data", "start", "end", "number", "_tail", "_tail_start_number")

    def __init__(self) -> None:
        self.data = b""
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
        while len(lines) < count and end >= 0:
            start = data.rfind(b"\n", 0, end) + 1
            number -= 1
            lines.append((number, data[start:end]))
            end = start - 1
        if len(lines) < count and self._tail:
            tail = self._tail
            end = len(tail) - 1
            while len(lines) < count and end > 0:
                start = tail.rfind(b"\n", 0, end) + 1
                if start == 0:
                    break  # the tail's first line may be cut: leave it out
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
    none); those are fed to it whether they match the prefilter or not.
    """
    cursor = Cursor()
    carry = b""
    number = 1  # line number of the first line of ``data``
    follow = 0
    total = 0
    tail = b""
    while True:
        try:
            block = handle.read(chunk)
        except (OSError, EOFError, gzip.BadGzipFile) as err:  # a truncated .gz, a read error
            raise InputError(f"cannot read further: {err}")
        if not block:
            if not carry:
                break
            data, carry = carry + b"\n", b""
        else:
            total += len(block)
            buffer = carry + block if carry else block
            cut = buffer.rfind(b"\n") + 1
            if cut == 0:
                if len(buffer) < LONGEST_LINE:
                    carry = buffer
                    continue
                data, carry = buffer + b"\n", b""
            else:
                data, carry = buffer[:cut], buffer[cut:]
                if len(carry) > LONGEST_LINE:
                    data, carry = data + carry + b"\n", b""
        starts = set()
        for pattern in patterns:
            for match in pattern.finditer(data):
                starts.add(data.rfind(b"\n", 0, max(match.end() - 1, 0)) + 1)
        cursor.data = data
        cursor._tail = tail
        position = 0  # where ``number`` counts from
        line_number = number
        pending = sorted(starts)
        if follow:
            pending = _with_following(data, 0, follow, pending)
            follow = 0
        i = 0
        while i < len(pending):
            start = pending[i]
            i += 1
            line_number += data.count(b"\n", position, start)
            position = start
            end = data.find(b"\n", start)
            cursor.start, cursor.end, cursor.number = start, end, line_number
            wanted = consumer(cursor)
            if wanted:
                rest = data.count(b"\n", end + 1)
                if wanted > rest:
                    follow = wanted - rest
                pending = pending[:i] + _with_following(data, end + 1, wanted, pending[i:])
        number += data.count(b"\n", position) + (line_number - number)
        tail = data[-LOOKBACK:]
    return number - 1, total, tail


def _with_following(data: bytes, start: int, count: int, rest: Iterable[int]) -> List[int]:
    """``rest`` merged with the starts of ``count`` lines from ``start`` on (sorted, no repeats)."""
    starts = []
    position = start
    size = len(data)
    while count and position < size:
        starts.append(position)
        nl = data.find(b"\n", position)
        if nl < 0:
            break
        position = nl + 1
        count -= 1
    return sorted(set(starts).union(rest))

"""One log line: cleaned (``\\r`` progress bars, CRLF, binary bytes), its prefix (which task,
rank or host wrote it) and its time stamp, if it carries one."""
from __future__ import annotations

import re
from ..lazyclass import dataclass
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

# -- cleaning ------------------------------------------------------------------------------------
_CONTROL = lazy(r"[\x00-\x08\x0b-\x1f\x7f]")
_ANSI = lazy(r"\x1b\[[0-9;?]*[A-Za-z]")


def clean(raw: bytes) -> str:
    """The text a terminal would end up showing for a raw log line."""
    text = raw.decode("utf-8", "replace")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.rstrip("\r")
        if "\r" in text:  # a progress bar redrawn in place: the last state counts
            parts = [p for p in text.split("\r") if p.strip()]
            text = parts[-1] if parts else ""
    if _CONTROL.search(text):
        text = _CONTROL.sub("\ufffd", text)
    return text.rstrip()


# -- prefixes ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Origin:
    """Who wrote a line, as far as its prefixes tell."""

    task: Optional[int] = None  # srun -l label: the task's index in the step (SLURM_PROCID)
    rank: Optional[int] = None  # [rankN]: the global rank
    host: Optional[str] = None  # pdsh-style "host: ", "[host:1]:", NCCL "host:pid:tid"
    local: Optional[int] = None  # [defaultN]: or "[host:N]:": the local rank

    def key(self) -> Tuple:
        return (self.task, self.rank, self.host, self.local)

    def merged(self, other: "Origin") -> "Origin":
        return Origin(
            self.task if self.task is not None else other.task,
            self.rank if self.rank is not None else other.rank,
            self.host if self.host is not None else other.host,
            self.local if self.local is not None else other.local,
        )

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.task, self.rank, self.host, self.local))


NOBODY = Origin()

_SRUN_LABEL = lazy(r"\s*(\d{1,6}): ")
_RANK = lazy(r"\[rank(\d{1,6})\]:\s?")
_DEFAULT = lazy(r"(?:\S+/\d+ )?\[default(\d{1,4})\]:")
_HOST_LOCAL = lazy(r"\[([A-Za-z][\w.-]*):(\d{1,4})\]:\s?")
_NCCL_HOST = lazy(r"([A-Za-z][\w.-]*):(\d+):(\d+) \[(\d+)\] NCCL ")
_PDSH_HOST = lazy(r"([A-Za-z][A-Za-z0-9._-]*\d[A-Za-z0-9._-]*): ")
# Words before ": " that are programs or messages, not host names.
_NOT_HOSTS = lazy(r"(?:slurmstepd|srun|sbatch|salloc|scontrol|pyxis|enroot|bash|sh|python\d?(?:\.\d+)?|rank\d+|"
                        r"cuda|gpu|node_rank|local_rank|error|warning|info)", re.IGNORECASE)


def split_origin(text: str) -> Tuple[Origin, str]:
    """The line's origin and its body with the prefixes removed."""
    task = rank = local = None
    host = None
    position = 0
    for _ in range(4):  # prefixes nest: "0: [rank0]:", "host: [default1]:[rank1]:"
        match = _SRUN_LABEL.match(text, position)
        if match and task is None and host is None and rank is None:
            task = int(match.group(1))
            position = match.end()
            continue
        match = _RANK.match(text, position)
        if match and rank is None:
            rank = int(match.group(1))
            position = match.end()
            continue
        match = _DEFAULT.match(text, position)
        if match and local is None:
            local = int(match.group(1))
            position = match.end()
            continue
        match = _HOST_LOCAL.match(text, position)
        if match and host is None:
            host, local = match.group(1), int(match.group(2))
            position = match.end()
            continue
        match = _NCCL_HOST.match(text, position)
        if match and host is None:
            host, local = match.group(1), int(match.group(4))
            break  # keep "NCCL …" in the body
        match = _PDSH_HOST.match(text, position)
        if match and host is None and task is None and not _NOT_HOSTS.fullmatch(match.group(1)):
            host = match.group(1)
            position = match.end()
            continue
        break
    return Origin(task, rank, host, local), text[position:]


_SECOND_RANK = lazy(r"(?<=\S)(?=\[rank\d{1,6}\]:)")


def split_writers(body: str) -> List[str]:
    """Two ranks writing into one line (``…frame[rank3]: Traceback``): the pieces."""
    if body.count("[rank") < 1 or not _SECOND_RANK.search(body):
        return [body]
    return [piece for piece in _SECOND_RANK.split(body) if piece]


# -- time stamps ---------------------------------------------------------------------------------
_DATE_TIME = lazy(
    r"(?<!\d)(\d{4})-(\d\d)-(\d\d)[ T_](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
_GLOG = lazy(r"(?:^|[\[\s:])[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\b")


@dataclass(frozen=True)
class Stamp:
    """A time stamp; glog's carries no year (filled in from the log's other stamps)."""

    year: Optional[int]
    month: int
    day: int
    seconds: float  # within the day

    def value(self, default_year: int) -> float:
        """Seconds on a common scale (days counted from a fixed epoch, not wall time)."""
        import datetime

        year = self.year if self.year is not None else default_year
        try:
            days = datetime.date(year, self.month, self.day).toordinal()
        except ValueError:
            days = 0
        return days * 86400.0 + self.seconds

    def text(self) -> str:
        h, rest = divmod(self.seconds, 3600)
        m, s = divmod(rest, 60)
        date = f"{self.year:04d}-{self.month:02d}-{self.day:02d}" if self.year else f"{self.month:02d}-{self.day:02d}"
        return f"{date} {int(h):02d}:{int(m):02d}:{s:06.3f}"


def stamp(text: str) -> Optional[Stamp]:
    match = _DATE_TIME.search(text)
    if match:
        y, mo, d, h, mi, s, frac = match.groups()
        return Stamp(int(y), int(mo), int(d), int(h) * 3600 + int(mi) * 60 + int(s) + _fraction(frac))
    match = _GLOG.search(text)
    if match:
        mo, d, h, mi, s, frac = match.groups()
        if 1 <= int(mo) <= 12 and 1 <= int(d) <= 31:
            return Stamp(None, int(mo), int(d), int(h) * 3600 + int(mi) * 60 + int(s) + _fraction(frac))
    return None


def _fraction(digits: Optional[str]) -> float:
    return int(digits) / 10 ** len(digits) if digits else 0.0


@dataclass
class Line:
    """A candidate line: where it is, who wrote it, what it says."""

    log: int  # index of the input file
    number: int  # 1-based line number in that file
    text: str  # cleaned, prefixes included (what the evidence shows)
    body: str  # without the prefixes
    origin: Origin
    stamp: Optional[Stamp]


def parse(log: int, number: int, raw: bytes) -> List[Line]:
    text = clean(raw)
    origin, body = split_origin(text)
    pieces = split_writers(body)
    if len(pieces) == 1:
        return [Line(log, number, text, body, origin, stamp(text))]
    out = []
    for piece in pieces:
        inner, rest = split_origin(piece)
        out.append(Line(log, number, text, rest, inner.merged(origin) if inner else origin, stamp(piece)))
    return out

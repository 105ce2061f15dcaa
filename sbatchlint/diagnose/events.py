"""From candidate lines to events: what each line says about which task.

The collector is the reader's consumer. It keeps only what the analysis needs: the events
(bounded per kind), the links between task indices, ranks and hosts, and a few counters.
"""
from __future__ import annotations

import re
from collections import Counter, OrderedDict

from . import lines as L
from ..lazyclass import dataclass, field
from .reader import STOP, Cursor
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Set, Tuple

# -- classes of evidence -------------------------------------------------------------------------
CAUSE = "cause"  # a task failed on its own
PEER = "peer"  # a task failed because another one did not answer (timeouts, closed connections)
VICTIM = "victim"  # a task was stopped (SIGTERM, cancelled, killed after the step ended)

MAX_PER_KIND = 200  # evidence lines kept per kind of event; the rest are only counted

# -- line shapes ---------------------------------------------------------------------------------
SRUN_TASK = lazy(r"^srun: error: (?P<node>[^\s:]+): tasks? (?P<tasks>[0-9][0-9,\- ]*): (?P<what>.+)$")
CANCEL = lazy(
    r"\*\*\* (?P<what>STEP|JOB) (?P<id>\S+) ON (?P<node>\S+) CANCELLED AT (?P<at>\S+)"
    r"(?: DUE (?:TO|to) (?P<why>[A-Za-z ]+?))?(?:,| \*\*\*|$)")
OOM_KILL = lazy(r"oom[-_]kill event|OUT_OF_MEMORY|: Out Of Memory$")
EXCEPTION = lazy(
    r"^(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure|ErrorType))"
    r"(?::\s?(?P<message>.*))?$")
FRAME = lazy(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
TORCHRUN_FAILED = lazy(r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<local>\d+) \(pid: \d+\)")
CLOSING_SIGNAL = lazy(r"Sending process \d+ closing signal (?P<signal>SIG[A-Z]+)")
BLOCK_FIELD = lazy(r"^\s*(?P<name>time|host|rank|exitcode|error_file|traceback)\s*:\s?(?P<value>.*)$")
BLOCK_ENTRY = lazy(r"^\s*\[(\d+)\]:\s*$")
WORLD = lazy(
    r"\b(?:global[ _]rank|rank|RANK)\s*[=: ]\s*(?P<rank>\d+)\b.{0,60}?"
    r"\b(?:world[ _]size|WORLD_SIZE|world)\s*(?:[=:]|of|is)?\s*(?P<world>\d+)\b")
SIZES = lazy(
    r"\b(?P<name>num_moe_experts|num_experts|expert_model_parallel_size|expert_tensor_parallel_size|"
    r"tensor_model_parallel_size|pipeline_model_parallel_size)\b[\s.:=]*?(?P<value>\d+|None)\b")
HOSTLIKE = lazy(r"\b[A-Za-z][\w.-]*\d[\w.-]*\b")
NOISE = lazy(
    r"UserWarning|FutureWarning|DeprecationWarning|warnings\.warn|AllocatorConfig|expandable_segments|"
    r"PYTORCH_CUDA_ALLOC_CONF|transformer_engine|\bTE\b.*[Ww]arning|NCCL INFO|it/s\]|s/it\]|^\s*frame #\d+|"
    r"^Exception raised from|^\s*\d+%\|")

# Messages that say what went wrong: (diagnosis id, class, pattern).
SIGNATURES: Tuple[Tuple[str, str, "re.Pattern[str]"], ...] = tuple(
    (kind, cls, lazy(pattern)) for kind, cls, pattern in (
        ("address-in-use", CAUSE, r"EADDRINUSE|[Aa]ddress already in use"),
        ("duplicate-gpu", CAUSE, r"Duplicate GPU detected"),
        ("torchrun-only-guard", CAUSE, r"must be launched (?:with|using|via|by) torchrun"),
        ("packed-sequence-not-shared", CAUSE, r"'NoneType' object is not an iterator"),
        ("megatron-core-shadowed", CAUSE, r"No module named '?megatron\.core"),
        ("cuda-out-of-memory", CAUSE, r"CUDA out of memory|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED"),
        ("host-out-of-memory", CAUSE, r"oom[-_]kill event|OUT_OF_MEMORY|: Out Of Memory$"),
        ("import-error", CAUSE, r"^(?:\w+\.)*(?:ImportError|ModuleNotFoundError)\b"),
        ("no-space-left", CAUSE, r"No space left on device"),
        ("fp8-weight-mismatch", CAUSE, r"Weight mismatch detected"),
        ("usage-error", CAUSE, r"error: (?:unrecognized arguments|the following arguments are required|argument \S+: )"),
        ("command-not-found", CAUSE, r": command not found$"),
        ("segmentation-fault", CAUSE, r"Segmentation fault|\bSIGSEGV\b|Signal 11 \("),
        ("slurm-gpu-spec-missing", CAUSE, r"Cannot find GPU specification"),
        ("slurm-invalid-partition", CAUSE, r"[Ii]nvalid partition (?:name )?specified"),
        ("slurm-invalid-account", CAUSE, r"Invalid account or account/partition combination"),
        ("slurm-node-config-unavailable", CAUSE, r"Requested node configuration is not available"),
        ("rank0-unreachable", PEER, r"ncclUniqueId from \[0\]|crash on rank 0"),
        ("nccl-watchdog-timeout", PEER, r"Watchdog caught collective operation timeout"),
        ("nccl-network-error", PEER,
         r"unhandled system error|ncclSystemError|ncclRemoteError|NCCL WARN NET/|NET/IB : |NET/Socket : |"
         r"remote process exited or there was a network error"),
        ("rendezvous-timeout", PEER,
         r"RendezvousTimeoutError|failed to join the rendezvous|client socket has timed out|"
         r"Timed out after \d+ seconds waiting for clients|Socket Timeout|DistStoreError: .*[Tt]ime"),
        ("", PEER, r"Connection closed by peer|Connection reset by peer|remote worker crashing|"
                   r"Timed out waiting \d+ms for (?:recv|send)|wait timeout after \d+ms|[Tt]imed out .*barrier"),
    )
)
VICTIM_SIGNS = lazy(
    r"SignalException|KeyboardInterrupt|got signal: ?(?:15|2|9)\b|Signal 15 \(SIGTERM\)|"
    r"forcefully exiting via 9|Received \d+ death signal|SIGTERM received")


@dataclass
class Event:
    kind: str  # exception, exit, cancel, torchrun, signature, oom, closing, world, block
    cls: str  # CAUSE / PEER / VICTIM / "" (information)
    line: L.Line
    order: int  # position in reading order over all inputs
    diagnosis: str = ""  # a catalog id the line points at
    detail: Dict[str, object] = field(default_factory=dict)


@dataclass
class Block:
    """One entry of torchrun's ``Failures:`` / ``Root Cause`` summary."""

    root: bool
    line: L.Line
    order: int
    fields: Dict[str, str] = field(default_factory=dict)


class Collector:
    """Consumes candidate lines of one input after another."""

    def __init__(self) -> None:
        self.events: List[Event] = []
        self.counts: Counter = Counter()  # kind of event -> how many (also beyond the kept ones)
        self.noise = 0
        self.candidates = 0
        self.log = 0
        self.order = 0
        self.rank_tasks: Dict[int, Set[int]] = {}  # rank -> srun task indices that printed it
        self.task_nodes: Dict[int, str] = {}
        self.task_offsets: Dict[str, int] = {}  # het job: node -> its component's first task (JobRecord)
        self.blocks: List[Block] = []
        self._block: Optional[Block] = None
        self._block_root = False
        self._in_summary = 0  # lines of a torchrun summary still expected
        self.torchrun = False
        self.stamps_seen = 0
        self.years: Counter = Counter()
        self.sizes: "OrderedDict[str, Tuple[str, L.Line]]" = OrderedDict()
        self.world_lines: Counter = Counter()
        self.world_first: Dict[str, L.Line] = {}
        self.rank0_lines: List[L.Line] = []
        self.open_traceback: Dict[Tuple, L.Line] = {}  # origin -> "Traceback" line not yet closed
        self.tail_traceback: Optional[L.Line] = None
        self.wants: Set[str] = set()  # what the second pass looks for
        self.stop_at: Optional[Tuple[int, int]] = None  # (log, line) where the second pass may stop

    # -- the reader's consumer -------------------------------------------------------------------
    def __call__(self, cursor: Cursor) -> int:
        self.candidates += 1
        follow = 0
        for line in L.parse(self.log, cursor.number, cursor.raw):
            follow = max(follow, self._line(line, cursor))
        return follow

    def _add(self, kind: str, cls: str, line: L.Line, diagnosis: str = "", **detail) -> Optional[Event]:
        key = f"{kind}:{diagnosis}:{cls}"
        self.counts[key] += 1
        self.order += 1
        if self.counts[key] > MAX_PER_KIND and kind not in ("exit", "cancel", "block"):
            return None
        event = Event(kind, cls, line, self.order, diagnosis, detail)
        self.events.append(event)
        return event

    def _link(self, origin: L.Origin) -> None:
        if origin.task is not None and origin.rank is not None:
            self.rank_tasks.setdefault(origin.rank, set()).add(origin.task)

    def _line(self, line: L.Line, cursor: Cursor) -> int:
        body = line.body.strip()
        if line.stamp is not None:
            self.stamps_seen += 1
            if line.stamp.year:
                self.years[line.stamp.year] += 1
        self._link(line.origin)
        if self._in_summary:
            self._in_summary -= 1
            if self._summary_line(line, body):
                return 0
        if not body:
            return 0
        match = SRUN_TASK.match(body)
        if match:
            self._srun_task(line, match)
            return 0
        match = CANCEL.search(body)
        if match:
            why = (match.group("why") or "").strip().upper()
            self._add("cancel", VICTIM, line, what=match.group("what"), id=match.group("id"),
                      node=match.group("node"), why=why)
            return 0
        if "ChildFailedError" in body:
            self.torchrun = True
            self._add("childfailed", "", line)
            self._in_summary = 60
            return 60
        match = TORCHRUN_FAILED.search(body)
        if match:
            self.torchrun = True
            code = int(match.group("code"))
            cls = VICTIM if code in (-15, 143, -2) else CAUSE
            self._add("torchrun", cls, line, code=code, local=int(match.group("local")))
            return 0
        match = CLOSING_SIGNAL.search(body)
        if match:
            self.torchrun = True
            self._add("closing", VICTIM, line, signal=match.group("signal"))
            return 0
        exception = EXCEPTION.match(body)
        if exception is None and NOISE.search(body):
            self.noise += 1
            return 0
        if VICTIM_SIGNS.search(body):
            self._add("signal", VICTIM, line, text=body)
            return 0
        if OOM_KILL.search(body):
            self._add("oom", CAUSE, line, "host-out-of-memory")
            return 0
        diagnosis, cls = "", ""
        for kind, kind_cls, pattern in SIGNATURES:
            if pattern.search(body):
                diagnosis, cls = kind, kind_cls
                break
        if exception is not None:
            self._exception(line, exception, cursor, diagnosis, cls)
            return 3  # NCCL puts the reason on the lines after the exception ("Last error:")
        if cls:
            self._add("signature", cls, line, diagnosis)
        return 0

    def _srun_task(self, line: L.Line, match) -> None:
        node = match.group("node")
        offset = self.task_offsets.get(node, 0)
        tasks = [task + offset for task in parse_ranges(match.group("tasks"))]
        what = match.group("what").strip()
        for task in tasks:
            self.task_nodes.setdefault(task, node)
        code = None
        m = re.match(r"Exited with exit code (\d+)", what)
        if m:
            code = int(m.group(1))
        signal = None
        if what.startswith("Terminated"):
            signal = 15
        elif what.startswith("Killed"):
            signal = 9
        elif what.startswith("Segmentation fault"):
            signal = 11
        elif what.startswith("Aborted"):
            signal = 6
        elif what.startswith("Out Of Memory"):
            signal = 9
        self._add("exit", "", line, tasks=tasks, node=node, code=code, signal=signal, what=what,
                  oom=what.startswith("Out Of Memory"))

    def _exception(self, line: L.Line, match, cursor: Cursor, diagnosis: str, cls: str) -> None:
        kind = match.group("type")
        message = (match.group("message") or "").strip()
        short = kind.rsplit(".", 1)[-1]
        if short in ("SignalException", "KeyboardInterrupt") or VICTIM_SIGNS.search(message):
            self._add("exception", VICTIM, line, type=kind, message=message)
            return
        if short == "ChildFailedError":
            return
        frame, frames, stamp = None, [], line.stamp
        started = False
        for number, raw in reversed(cursor.before(60)):  # nearest first
            text = L.clean(raw)
            origin, body = L.split_origin(text)
            if not same_writer(line.origin, origin):
                continue
            if not started:
                found = FRAME.match(body)
                if found:
                    frames.append((found.group("file"), int(found.group("line")), found.group("func")))
                    continue
                if body.startswith("Traceback (most recent call last)"):
                    started = True
                    continue
                if body.startswith("  ") or not body.strip() or set(body.strip()) <= set("^~ "):
                    continue  # source lines and markers inside the traceback
                started = True
            if stamp is None:
                stamp = L.stamp(text)
            if stamp is not None:
                break
        frames.reverse()
        if frames:
            frame = frames[-1]
        self._add("exception", cls or CAUSE, line, diagnosis, type=kind, message=message, frame=frame,
                  frames=frames, stamp=stamp)

    def _summary_line(self, line: L.Line, body: str) -> bool:
        """Lines of torchrun's summary after ChildFailedError; True when the line was one."""
        stripped = body.strip()
        if stripped.startswith("Root Cause"):
            self._block_root = True
            return True
        if stripped.startswith("Failures:"):
            self._block_root = False
            return True
        entry = BLOCK_ENTRY.match(stripped)
        if entry:
            self._block = Block(self._block_root, line, self.order)
            self.order += 1
            self.blocks.append(self._block)
            return True
        field_match = BLOCK_FIELD.match(body)
        if field_match and self._block is not None:
            self._block.fields[field_match.group("name")] = field_match.group("value").strip()
            return True
        if stripped.startswith("====="):
            if self._block is not None:
                self._in_summary = 0
                self._block = None
            return True
        return stripped.startswith("-----") or stripped.endswith("FAILED") or "<NO_OTHER_FAILURES>" in stripped

    # -- the second pass -------------------------------------------------------------------------
    def second(self, cursor: Cursor) -> int:
        if self.stop_at is not None and (self.log, cursor.number) >= self.stop_at:
            return STOP
        for line in L.parse(self.log, cursor.number, cursor.raw):
            body = line.body.strip()
            self._link(line.origin)
            sizes = SIZES.search(body)
            if sizes:
                self.sizes[sizes.group("name")] = (sizes.group("value"), line)
            world = WORLD.search(body)
            if world and not EXCEPTION.match(body):
                key = HOSTLIKE.sub("", body)  # the same announcement, whichever host made it
                self.world_lines[key] += 1
                self.world_first.setdefault(key, line)
            if line.origin.rank == 0 or line.origin.task == 0 or "[rank0]" in body:
                self.rank0_lines.append(line)
                del self.rank0_lines[:-40]
            for kind, cls, pattern in SIGNATURES:
                if kind in ("command-not-found", "torchrun-only-guard", "no-space-left") and pattern.search(body):
                    self._add("signature", cls, line, kind)
        return 0


def same_writer(a: L.Origin, b: L.Origin) -> bool:
    """Whether line ``b`` may come from the writer of line ``a`` (by the prefixes they carry)."""
    if a.task is not None:
        return b.task == a.task
    if a.rank is not None:
        return b.rank == a.rank
    if a.host is not None:
        return b.host == a.host and (a.local is None or b.local == a.local)
    return not b


def parse_ranges(text: str) -> List[int]:
    """``0-5,7`` → [0, 1, 2, 3, 4, 5, 7]."""
    out: List[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            a = int(low)
            b = int(high) if high else a
        except ValueError:
            continue
        if b - a > 100000:
            continue
        out.extend(range(a, b + 1))
    return out


def format_ranges(values) -> str:
    """[0, 1, 2, 5] → ``0-2,5``."""
    values = sorted(set(values))
    parts = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(parts)

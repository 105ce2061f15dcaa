"""From events to a verdict: which task failed first, why, and which ones only died after it.

Tasks are told apart by what the lines carry: srun's ``-l`` label (the task index), torch's
``[rankN]:``, a host prefix, srun's own ``task N`` lines and torchrun's failure summary.
Evidence of three classes is weighed: a task failing on its own (an exception, an exit code,
an out-of-memory kill), a task failing because a peer did not answer (timeouts, closed
connections: a cause only when nothing else failed) and a task that was stopped (SIGTERM,
``Terminated``, the step cancelled). The first failure is the earliest by the time stamps the
lines carry; failures within ``TIE_SECONDS`` of each other are a tie (clocks of different hosts
differ), reported as such.
"""
from __future__ import annotations

import re

from . import catalog
from . import lines as L
from .events import CAUSE, PEER, VICTIM, Block, Collector, Event, format_ranges
from .job import JobRecord
from ..lazyclass import dataclass, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

TIE_SECONDS = 2.0
EXITED = "exited"  # a non-zero exit code and nothing else known about the task
EVIDENCE_LINES = 8  # distinct evidence lines shown per diagnosis

SPECIFIC = {k.id for k in catalog.KINDS} - {"python-exception", "task-failed", ""}


def lower_first(text: str) -> str:
    """``The job …`` → ``the job …``, but ``CUDA …`` and ``NCCL …`` stay."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def exit_meaning(code: int, oom: bool = False) -> str:
    if code in (9, -9, 137):
        return "killed by the kernel's OOM killer (host memory)" if oom else "killed by signal 9"
    return {
        0: "success",
        1: "error exit (a Python exception)",
        2: "usage error",
        127: "command not found",
        -6: "aborted (signal 6, often the NCCL watchdog)",
        134: "aborted (signal 6, often the NCCL watchdog)",
        -11: "segmentation fault",
        139: "segmentation fault",
        -15: "SIGTERM (time limit, or stopped after another task failed)",
        143: "SIGTERM (time limit, or stopped after another task failed)",
        -2: "interrupted (SIGINT)",
        130: "interrupted (SIGINT)",
    }.get(code, "error exit")


@dataclass
class Unit:
    """One task (or rank, or host) and what the log says about it."""

    key: Tuple
    task: Optional[int] = None
    rank: Optional[int] = None
    host: Optional[str] = None
    events: List[Event] = field(default_factory=list)
    exit_code: Optional[int] = None
    exit_text: str = ""
    time: Optional[float] = None
    stamp: Optional[L.Stamp] = None  # the time stamp ``time`` was read from
    order: Optional[int] = None  # reading order of its first own failure
    cls: str = ""  # its strongest evidence: CAUSE > PEER > VICTIM

    def name(self) -> str:
        if self.task is not None and self.key[0] == "rank":
            who = f"rank {self.rank}"
        elif self.task is not None:
            who = f"task {self.task}"
            if self.rank is not None and self.rank != self.task:
                who += f" (rank {self.rank})"
        elif self.rank is not None:
            who = f"rank {self.rank}"
        elif self.host is not None:
            who = "a task"
        else:
            who = "a task"
        if self.host:
            who += f" on {self.host}"
        if self.task is not None and self.key[0] == "rank":
            who += f" (srun task {self.task})"
        return who


@dataclass
class Finding:
    id: str
    cause: str
    evidence: List[Tuple[L.Line, int]]  # (line, how many times it repeats)
    primary: bool = False
    extra: List[str] = field(default_factory=list)

    @property
    def kind(self) -> catalog.Kind:
        return catalog.BY_ID[self.id]


@dataclass
class Verdict:
    text: str
    found: bool
    first: Optional[Unit]
    tie: List[Unit]
    ordered_by: str
    findings: List[Finding]
    victims: List[Unit]
    victim_lines: List[Tuple[L.Line, int]]  # what the victims printed, repeated lines counted once
    exit_codes: List[Tuple[str, List[Unit], str]]
    notes: List[str]
    job: Optional[JobRecord]


# ------------------------------------------------------------------------------------------------
def analyse(collector: Collector, job: Optional[JobRecord] = None) -> Verdict:
    year = collector.years.most_common(1)[0][0] if collector.years else 2000
    units = _units(collector, year)
    cancels = [e for e in collector.events if e.kind == "cancel"]
    first_cancel = min((e.order for e in cancels), default=None)
    _victims_after_cancel(units, first_cancel)
    external = [e for e in cancels if "TIME LIMIT" in e.detail["why"] or "NODE FAIL" in e.detail["why"]]
    if external:
        _victims_of(units, min(e.order for e in external))
    notes: List[str] = []

    causes = [u for u in units.values() if u.cls == CAUSE]
    peers = [u for u in units.values() if u.cls == PEER]
    exited = [u for u in units.values() if u.cls == EXITED]
    candidates = causes or peers or exited
    first, tie, ordered_by = _first(candidates)
    findings: List[Finding] = []
    time_limit = next((e for e in cancels if "TIME LIMIT" in e.detail["why"]), None)
    node_fail = next((e for e in cancels if "NODE FAIL" in e.detail["why"]), None)

    if first is not None:
        findings.append(_explain(first, collector, units, year))
        if time_limit is not None and first.order is not None and first.order < time_limit.order:
            findings.append(Finding("hang-until-time-limit", _hang_text(first), [(time_limit.line, 1)]))
    else:
        job_level = _job_level(collector, job)
        if job_level:
            findings.append(job_level)
        elif node_fail is not None:
            findings.append(Finding("node-failure", "a node failed during the job", [(node_fail.line, 1)]))
        elif time_limit is not None:
            findings.append(Finding("time-limit", "the job reached its time limit while its tasks were still running",
                                    [(time_limit.line, 1)]))
        elif job is not None and "TIMEOUT" in job.states():
            findings.append(Finding("time-limit", "the job reached its time limit", []))
        elif job is not None and "NODE_FAIL" in job.states():
            findings.append(Finding("node-failure", "a node failed during the job", []))
        elif cancels:
            findings.append(Finding("cancelled", "the job was cancelled before any task failed", [(cancels[0].line, 1)]))
        elif job is not None and (job.state or "").startswith("CANCELLED"):
            findings.append(Finding("cancelled", f"Slurm recorded the job as {job.state}", []))
        else:
            world = _duplicate_world(collector)
            if world:
                findings.append(world)
    for finding in findings[:1]:
        finding.primary = True
    cut = _cut_traceback(collector, first)
    if cut:
        findings.append(cut)
    for event in collector.events:  # an FP8 round trip's mismatch is worth a word wherever it is
        if event.diagnosis == "fp8-weight-mismatch" and all(f.id != "fp8-weight-mismatch" for f in findings):
            findings.append(Finding("fp8-weight-mismatch", "the FP8 round trip's weight comparison failed, as expected",
                                    [(event.line, 1)]))
    agent = _agent_of(first, units) if collector.torchrun else None
    if agent is not None and first is not None:
        first.task = agent.task  # the srun task that ran the failed rank's launcher
    victims = [u for u in units.values() if u is not first and u is not agent and u not in tie
               and u.key[0] in ("task", "rank") and u.cls in (VICTIM, PEER, CAUSE, EXITED)]
    said = [e for u in victims for e in u.events if e.kind in ("exception", "signature") and e.cls in (PEER, VICTIM, CAUSE)]
    victim_lines = sorted(_collapse(said, limit=None), key=lambda item: -item[1])[:3]
    exit_codes = _exit_codes(units, collector)
    found = bool(findings) and findings[0].primary and findings[0].id not in ("task-failed",)
    text = _verdict_text(first, tie, findings, victims, ordered_by)
    if ordered_by == "line order" and first is not None and len(candidates) > 1:
        notes.append("the failing lines carry no time stamps: the first failure is the first in the log")
    return Verdict(text, found, first, tie, ordered_by, findings, victims, victim_lines, exit_codes, notes, job)


# -- units ---------------------------------------------------------------------------------------
def _units(collector: Collector, year: int) -> Dict[Tuple, Unit]:
    srun_native = not collector.torchrun
    task_of_rank: Dict[int, int] = {}
    for rank, tasks in collector.rank_tasks.items():
        if len(tasks) == 1:
            task_of_rank[rank] = next(iter(tasks))

    def key_for(origin: L.Origin) -> Optional[Tuple]:
        if origin.task is not None:
            return ("task", origin.task)
        if origin.rank is not None:
            if origin.rank in task_of_rank:
                return ("task", task_of_rank[origin.rank])
            if srun_native:
                return ("task", origin.rank)
            return ("rank", origin.rank)
        if origin.host is not None:
            return ("host", origin.host, origin.local)
        return None

    units: Dict[Tuple, Unit] = {}

    def unit(key: Tuple) -> Unit:
        if key not in units:
            u = Unit(key)
            if key[0] == "task":
                u.task = key[1]
                u.host = collector.task_nodes.get(key[1])
                ranks = [r for r, t in task_of_rank.items() if t == key[1]]
                u.rank = ranks[0] if len(ranks) == 1 else (key[1] if srun_native else None)
            elif key[0] == "rank":
                u.rank = key[1]
            elif key[0] == "host":
                u.host = key[1]
            units[key] = u
        return units[key]

    anonymous: List[Event] = []
    for event in collector.events:
        if event.kind in ("cancel", "childfailed", "world") or event.diagnosis.startswith("slurm-"):
            continue
        if event.kind == "torchrun" and collector.blocks:
            continue  # the summary block says the same, with the rank and host
        if event.kind == "exit":
            for task in event.detail["tasks"]:  # type: ignore[union-attr]
                u = unit(("task", task))
                u.events.append(event)
                if event.detail["code"] is not None:
                    u.exit_code = event.detail["code"]  # type: ignore[assignment]
                elif event.detail["signal"] is not None:
                    u.exit_code = 128 + event.detail["signal"]  # type: ignore[operator]
                u.exit_text = str(event.detail["what"])
            continue
        key = key_for(event.line.origin)
        if key is None:
            anonymous.append(event)
        else:
            u = unit(key)
            u.events.append(event)
            if u.host is None and event.line.origin.host is not None:
                u.host = event.line.origin.host
    for block in collector.blocks:
        _block_unit(block, unit, units, task_of_rank, srun_native)
    # Lines without a prefix belong to the task that failed on its own, when only one did.
    own = [u for u in units.values() if _exit_class(u) == CAUSE]
    together = len({id(next(e for e in u.events if e.kind == "exit")) for u in own}) == 1
    own.sort(key=lambda u: (u.task if u.task is not None else 1 << 30))
    for event in anonymous:
        if event.cls in (CAUSE, PEER) and own and (len(own) == 1 or together):
            own[0].events.append(event)
        elif event.cls in (CAUSE, PEER) and not own:
            unit(("anonymous",)).events.append(event)
    for u in units.values():
        _classify(u, year)
    return units


def _block_unit(block: Block, unit, units, task_of_rank, srun_native) -> None:
    fields = block.fields
    rank_match = re.match(r"(-?\d+)(?: \(local_rank: (\d+)\))?", fields.get("rank", ""))
    if not rank_match:
        return
    rank = int(rank_match.group(1))
    host = fields.get("host") or None
    key = ("task", task_of_rank[rank]) if rank in task_of_rank else ("rank", rank)
    u = unit(key)
    u.rank = rank
    if host:
        u.host = host
    code_match = re.match(r"(-?\d+)", fields.get("exitcode", ""))
    code = int(code_match.group(1)) if code_match else None
    stamp = L.stamp(fields.get("time", "").replace("_", " "))
    cls = VICTIM if code in (-15, 143, -2, 130) or "SIGTERM" in fields.get("traceback", "") else CAUSE
    line = L.Line(block.line.log, block.line.number, block.line.text, block.line.body, block.line.origin, stamp)
    u.events.append(Event("block", cls, line, block.order, "", {"code": code, "root": block.root}))
    if code is not None:
        u.exit_code = code


def _exit_class(u: Unit) -> str:
    exits = [e for e in u.events if e.kind == "exit"]
    if not exits:
        return ""
    e = exits[0]
    if e.detail.get("victim"):
        return VICTIM
    code, signal = e.detail["code"], e.detail["signal"]
    if signal == 15 or code in (143, 130):
        return VICTIM
    return CAUSE


def _victims_after_cancel(units: Dict[Tuple, Unit], first_cancel: Optional[int]) -> None:
    """An exit srun reports after the step was cancelled is a consequence of the cancellation."""
    if first_cancel is None:
        return
    for u in units.values():
        for e in u.events:
            if e.kind == "exit" and e.order > first_cancel:
                e.detail["victim"] = True
        _classify(u, None)


def _victims_of(units: Dict[Tuple, Unit], order: int) -> None:
    """After a time limit or a node failure, what tasks print on their way out is no cause."""
    for u in units.values():
        if u.cls in (CAUSE, PEER, EXITED) and u.order is not None and u.order > order:
            u.cls = VICTIM


def _classify(u: Unit, year: Optional[int]) -> None:
    own = [e for e in u.events if e.cls == CAUSE and e.kind != "exit"]
    peer = [e for e in u.events if e.cls == PEER]
    exit_cls = _exit_class(u)
    if own:
        u.cls, relevant = CAUSE, own
    elif peer:
        u.cls, relevant = PEER, peer
    elif exit_cls == CAUSE:
        u.cls, relevant = EXITED, [e for e in u.events if e.kind == "exit"]
    elif exit_cls == VICTIM or any(e.cls == VICTIM for e in u.events):
        u.cls, relevant = VICTIM, []
    else:
        u.cls, relevant = "", []
    times = []
    for e in relevant:
        stamp = e.line.stamp or e.detail.get("stamp")
        if stamp is not None and year is not None:
            times.append((stamp.value(year), stamp))  # type: ignore[union-attr]
    if year is not None:
        u.time, u.stamp = min(times, key=lambda t: t[0]) if times else (None, None)
    u.order = min((e.order for e in relevant), default=None)


def _first(candidates: List[Unit]) -> Tuple[Optional[Unit], List[Unit], str]:
    if not candidates:
        return None, [], ""
    timed = [u for u in candidates if u.time is not None]
    if timed and len(timed) == len(candidates):
        timed.sort(key=lambda u: (u.time, u.order or 0))
        earliest = timed[0]
        tie = [u for u in timed[1:] if u.time - earliest.time <= TIE_SECONDS]  # type: ignore[operator]
        if tie:
            group = [earliest] + tie
            # within the window the clocks do not decide: a specific cause beats a generic one,
            # then the reading order
            group.sort(key=lambda u: (not _has_specific(u), u.time, u.order or 0))
            return group[0], group[1:], "time stamps"
        return earliest, [], "time stamps"
    ordered = sorted(candidates, key=lambda u: (u.order if u.order is not None else 1 << 60))
    return ordered[0], [], "line order"


def _has_specific(u: Unit) -> bool:
    return any(e.diagnosis in SPECIFIC and e.cls == CAUSE for e in u.events)


# -- explaining the first failure ----------------------------------------------------------------
def _explain(first: Unit, collector: Collector, units, year: int) -> Finding:
    own = [e for e in first.events if e.cls in (CAUSE, PEER)]
    exceptions = [e for e in own if e.kind == "exception"]
    exception = next((e for e in exceptions if e.cls == CAUSE), exceptions[0] if exceptions else None)
    diagnosed = [e for e in own if e.diagnosis]
    priority = [k.id for k in catalog.KINDS]
    diagnosed.sort(key=lambda e: (e.cls != CAUSE, priority.index(e.diagnosis) if e.diagnosis in priority else 99, e.order))
    exits = [e for e in first.events if e.kind == "exit"]
    evidence: List[Event] = []
    if diagnosed:
        chosen = diagnosed[0].diagnosis
        evidence = [e for e in own if e.diagnosis == chosen] + ([exception] if exception and exception.diagnosis != chosen else [])
    elif first.cls == PEER and first.rank != 0 and not _failed_on_its_own(units, rank=0):
        chosen = "rank0-unreachable"  # the others timed out or lost a peer while rank 0 had not failed
        evidence = [e for e in own if e.cls == PEER][:3]
    elif exception is not None:
        chosen = "python-exception"
        evidence = [exception]
    else:
        chosen = _by_exit_code(first, collector)
        evidence = own[:3]
    evidence += exits[:1]
    cause = _cause_text(chosen, exception, diagnosed[0] if diagnosed else None, first)
    finding = Finding(chosen, cause, _collapse(evidence))
    if chosen in ("cuda-out-of-memory",) or (chosen == "moe-expert-memory"):
        moe = _moe(collector)
        if moe:
            finding.id = "moe-expert-memory"
            finding.extra.extend(moe[0])
            finding.evidence.extend((line, 1) for line in moe[1])
    if chosen in ("rank0-unreachable", "nccl-watchdog-timeout", "") or chosen == "task-failed" and first.cls == PEER:
        finding.extra.extend(_rank0_activity(collector, units))
    if chosen == "task-failed" and not own:
        finding.extra.append("the log holds no error message of this task: its output may have been cut off "
                             "when the step was cancelled, or it went to another file (--error)")
    if chosen == "import-error" and exception is not None:
        frames = " ".join(f"{f[0]} {f[2]}" for f in exception.detail.get("frames") or [])  # type: ignore[union-attr]
        if "save_artifacts" in frames or "transformers_modules" in str(exception.detail.get("message")) or "remote" in frames:
            finding.extra.append("it happened while loading remote model code or saving artifacts: "
                                 "catch ImportError there (SBL503)")
    return finding


def _agent_of(first: Optional[Unit], units) -> Optional[Unit]:
    """The srun task on the failed rank's host whose torchrun launcher exited with the failure."""
    if first is None or first.host is None or first.key[0] != "rank":
        return None
    agents = [u for u in units.values() if u.key[0] == "task" and u.host == first.host and u.cls == EXITED]
    return agents[0] if len(agents) == 1 else None


def _failed_on_its_own(units, rank: int) -> bool:
    return any(u.rank == rank and u.cls == CAUSE for u in units.values())


def _by_exit_code(first: Unit, collector: Collector) -> str:
    code = first.exit_code
    oom = any(e.kind == "oom" for e in collector.events) or any(e.detail.get("oom") for e in first.events)
    if code in (9, -9, 137):
        return "host-out-of-memory" if oom else "killed"
    if code in (-11, 139):
        return "segmentation-fault"
    if code in (-6, 134):
        watchdog = any(e.diagnosis == "nccl-watchdog-timeout" for e in collector.events)
        return "nccl-watchdog-timeout" if watchdog else "task-failed"
    if code == 2:
        return "usage-error"
    if code == 127:
        return "command-not-found"
    return "task-failed"


def _cause_text(chosen: str, exception: Optional[Event], signature: Optional[Event], first: Unit) -> str:
    if exception is not None:
        kind = str(exception.detail["type"]).rsplit(".", 1)[-1] if chosen != "python-exception" else str(exception.detail["type"])
        message = str(exception.detail.get("message") or "")
        text = f"{kind}: {message}" if message else kind
        if len(text) > 160:
            text = text[:157] + "…"
        frame = exception.detail.get("frame")
        if frame:
            path, line, func = frame  # type: ignore[misc]
            text += f" (in {func}, {path.rsplit('/', 1)[-1]}:{line})"
        if chosen in ("python-exception", "import-error"):
            return text
        title = catalog.BY_ID[chosen].title
        if " ".join(title.split()[:3]).lower() in text.lower():
            return text  # the message says it already ("CUDA out of memory")
        return f"{lower_first(title)}: {text}"
    if signature is not None:
        body = signature.line.body.strip()
        if len(body) > 140:
            body = body[:137] + "…"
        return f"{lower_first(catalog.BY_ID[chosen].title)} ({body})"
    if first.exit_code is not None:
        return f"exit code {first.exit_code}: {exit_meaning(first.exit_code)}"
    return catalog.BY_ID[chosen].title


def _hang_text(first: Unit) -> str:
    return f"after {first.name()} failed, the other tasks waited until the job's time limit"


def _job_level(collector: Collector, job: Optional[JobRecord]) -> Optional[Finding]:
    """Causes that belong to no task: Slurm refusals, an OOM kill, a launch failure."""
    order = [k.id for k in catalog.KINDS]
    events = sorted((e for e in collector.events if e.diagnosis and e.cls == CAUSE), key=lambda e: (order.index(e.diagnosis), e.order))
    if events:
        chosen = events[0].diagnosis
        same = [e for e in events if e.diagnosis == chosen]
        body = same[0].line.body.strip()
        return Finding(chosen, f"{lower_first(catalog.BY_ID[chosen].title)} ({body[:140]})",
                       _collapse(same))
    if job is not None:
        if job.launch_failed:
            return Finding("missing-output-directory", "the job failed at launch (exit code 0:53): Slurm could not open its output file", [])
        if "OUT_OF_MEMORY" in job.states():
            return Finding("host-out-of-memory", "Slurm recorded an out-of-memory kill (OUT_OF_MEMORY)", [])
    return None


def _duplicate_world(collector: Collector) -> Optional[Finding]:
    doubled = [(count, key) for key, count in collector.world_lines.items() if count > 1]
    twice_by_task = {r: t for r, t in collector.rank_tasks.items() if len(t) > 1}
    evidence: List[Tuple[L.Line, int]] = []
    for count, key in sorted(doubled, key=lambda x: collector.world_first[x[1]].number):
        line = collector.world_first[key]
        if re.search(r"\b(?:global[ _]rank|rank|RANK)\s*[=: ]\s*0\b", line.body):
            evidence.append((line, count))
    if twice_by_task:
        rank, tasks = sorted(twice_by_task.items())[0]
        return Finding("duplicate-world", f"rank {rank} was printed by tasks {format_ranges(tasks)}: "
                       "the same world was formed more than once", evidence[:4])
    if evidence:
        return Finding("duplicate-world", "rank 0 announced itself more than once: "
                       "the same world was formed more than once", evidence[:4])
    return None


def _cut_traceback(collector: Collector, first: Optional[Unit]) -> Optional[Finding]:
    tail = getattr(collector, "tail_traceback", None)
    if tail is None:
        return None
    who = f" ({first.name()})" if first is not None else ""
    return Finding("traceback-cut-off", f"the log stops inside a traceback{who}, before its exception line",
                   [(tail, 1)])


def _moe(collector: Collector) -> Optional[Tuple[List[str], List[L.Line]]]:
    sizes = {name: value for name, (value, _) in collector.sizes.items()}
    experts = sizes.get("num_moe_experts") or sizes.get("num_experts")
    if not experts or experts == "None":
        return None
    from ..parallelism import expert_layout

    def num(name: str) -> Optional[int]:
        value = sizes.get(name)
        return int(value) if value and value.isdigit() else None

    layout = expert_layout(int(experts), ep=num("expert_model_parallel_size"), tp=num("tensor_model_parallel_size"),
                           etp=num("expert_tensor_parallel_size"))
    lines = [line for _, line in collector.sizes.values()]
    return [layout.describe()], lines


def _rank0_activity(collector: Collector, units) -> List[str]:
    failed = [e.line for u in units.values() if u.cls in (CAUSE, PEER) for e in u.events if e.cls in (CAUSE, PEER)]
    first_line = min(((line.log, line.number) for line in failed), default=(1 << 30, 0))
    rank0 = [line for line in collector.rank0_lines if (line.log, line.number) < first_line
             and not line.body.lstrip().startswith(("File ", "Traceback"))]
    if not rank0:
        return []
    last = rank0[-1]
    body = last.body.strip()
    out = [f"rank 0's last line before that: line {last.number}: {body[:160]}"]
    lowered = body.lower()
    if any(w in lowered for w in ("save", "export", "artifact", "checkpoint", "tokenizer")):
        out.append("rank 0 was still saving or exporting: give the process group a longer timeout "
                   "for work before a barrier (SBL502)")
    return out


def _collapse(events: Sequence[Optional[Event]], limit: Optional[int] = EVIDENCE_LINES) -> List[Tuple[L.Line, int]]:
    """Evidence lines, repeated ones (the same text from many ranks) shown once with a count."""
    out: Dict[str, List] = {}
    for e in events:
        if e is None:
            continue
        key = re.sub(r"\d+", "#", e.line.body.strip())
        if key in out:
            out[key][1] += 1
        else:
            out[key] = [e.line, 1]
    return [(line, count) for line, count in list(out.values())[:limit]]


def _exit_codes(units, collector: Collector) -> List[Tuple[str, List[Unit], str]]:
    oom = any(e.kind == "oom" for e in collector.events)
    by_code: Dict[int, List[Unit]] = {}
    for u in units.values():
        if u.exit_code is not None and u.exit_code != 0:
            by_code.setdefault(u.exit_code, []).append(u)
    return [(str(code), us, exit_meaning(code, oom)) for code, us in sorted(by_code.items(), key=lambda x: -len(x[1]))]


def _verdict_text(first: Optional[Unit], tie: List[Unit], findings: List[Finding], victims: List[Unit],
                  ordered_by: str) -> str:
    primary = findings[0] if findings else None
    if first is None:
        if primary is not None:
            return upper_first(primary.cause)
        return "No failure found in the log"
    text = f"{first.name()} failed first"
    if tie:
        text += f" (within {TIE_SECONDS:g} s of {', '.join(u.name() for u in tie[:3])}{' …' if len(tie) > 3 else ''}: a tie by the clocks)"
    text += f": {primary.cause}" if primary else ""
    stopped = len(victims)
    if stopped:
        text += f"; {stopped} other task{'s' * (stopped != 1)} failed or {'were' if stopped != 1 else 'was'} stopped after it"
    return text

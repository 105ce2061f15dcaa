"""``sbatchlint diagnose``: from a failed multi-node job's log to its cause.

Reading (:mod:`.reader`) streams each log once through a prefilter; :mod:`.events` turns the
candidate lines into events; :mod:`.analysis` finds the first failure and its cause;
:mod:`.render` prints text or JSON. :mod:`.catalog` lists every diagnosis (documented in
``diagnoses/``). A second, targeted pass over a log runs only when the first leaves a question
open (what rank 0 was doing, the MoE sizes behind an out-of-memory, a message without an
exception), and only for inputs that can be read again (not stdin).
"""
from __future__ import annotations

import os

from . import lines as L
from .analysis import Finding, Verdict, analyse
from .events import Collector
from .job import JobRecord
from ..lazyclass import dataclass, field
from .reader import PREFILTER, SECOND_PASS, InputError, Log, scan
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import BinaryIO, List, Optional

__all__ = ["InputError", "Diagnosis", "diagnose"]



def _questions(verdict: Verdict) -> set:
    """What a second look at the logs should find out, if anything."""
    primary = verdict.findings[0].id if verdict.findings else None
    if primary is None:
        return {"messages", "world"}
    if primary in ("cuda-out-of-memory",):
        return {"sizes"}
    if primary in ("rank0-unreachable", "nccl-watchdog-timeout"):
        return {"rank0"}
    if primary in ("task-failed", "command-not-found"):
        return {"messages"}
    return set()


def _first_line(verdict: Verdict):
    """(log, line) of the first failure's earliest evidence: rank 0's lines after it do not matter."""
    first = verdict.first
    if first is None:
        return None
    lines = [(e.line.log, e.line.number) for e in first.events]
    return min(lines) if lines else None


@dataclass
class LogInfo:
    path: str
    lines: int = 0
    bytes: int = 0
    exists: bool = True


@dataclass
class Diagnosis:
    verdict: Verdict
    logs: List[LogInfo]
    lint: List[dict] = field(default_factory=list)
    second_pass: bool = False


def diagnose(paths: List[str], stdin: Optional[BinaryIO] = None, job: Optional[JobRecord] = None) -> Diagnosis:
    """Read the logs of one job and explain its failure. Raises InputError for bad input.

    With a ``job`` record (``diagnose --job``), a log that is not there is no error: the verdict
    then rests on the record, and a note says which log was missing."""
    if job is not None and job.source != "log":
        return _with_record(paths, stdin, job)
    return _from_logs(paths, stdin, job)


def _with_record(paths: List[str], stdin: Optional[BinaryIO], job: JobRecord) -> Diagnosis:
    present = [p for p in paths if p == "-" or os.path.exists(p)]
    absent = [p for p in paths if p not in present]
    if absent and not present and job.launch_failed and any(not os.path.isdir(os.path.dirname(p) or ".") for p in absent):
        result = _missing_log_directory(absent, job)
        if result is not None:
            return result
    result = _from_logs(present, stdin, job)
    if not present and not result.verdict.findings:
        recorded = " ".join(x for x in (job.state, job.exit_code) if x) or "no state"
        result.verdict.text = f"There is no log to read; Slurm recorded {recorded}"
    result.logs.extend(LogInfo(p, exists=False) for p in absent)
    for path in absent:
        result.verdict.notes.append(f"the job's log {path} is not there: the verdict rests on what Slurm recorded")
    return result


def _from_logs(paths: List[str], stdin: Optional[BinaryIO], job: Optional[JobRecord]) -> Diagnosis:
    missing = _missing_log_directory(paths)
    if missing is not None:
        return missing
    collector = Collector()
    if job is not None:
        collector.task_offsets = job.het_task_offsets()
    logs = [Log(path, index, stdin) for index, path in enumerate(paths)]
    infos = []
    for log in logs:
        collector.log = log.index
        handle = log.open()
        try:
            count, size, tail = scan(handle, collector, PREFILTER)
        finally:
            if handle is not stdin:
                handle.close()
        infos.append(LogInfo(log.path, count, size))
        _look_at_the_end(collector, log.index, count, tail)
    verdict = analyse(collector, job)
    again = False
    needs = _questions(verdict)
    if needs and all(log.rereadable for log in logs):
        patterns = tuple(p for need in sorted(needs) for p in SECOND_PASS[need])
        collector.wants = needs
        # rank 0's last lines and the sizes printed at start-up are found before the first failure
        collector.stop_at = _first_line(verdict) if needs <= {"rank0", "sizes"} else None
        for log in logs:
            collector.log = log.index
            handle = log.open()
            try:
                scan(handle, collector.second, patterns)
            finally:
                handle.close()
        verdict = analyse(collector, job)
        again = True
    elif not verdict.found and not all(log.rereadable for log in logs):
        verdict.notes.append("stdin is read once: the messages a second look would find (command not found, "
                             "what rank 0 was doing) were not searched for")
    return Diagnosis(verdict, infos, second_pass=again)


def _missing_log_directory(paths: List[str], job: Optional[JobRecord] = None) -> Optional[Diagnosis]:
    """No log at all, in a directory that does not exist: the job failed at launch (0:53)."""
    absent = [p for p in paths if p != "-" and not os.path.exists(p)]
    if not absent:
        return None
    no_directory = [p for p in absent if not os.path.isdir(os.path.dirname(p) or ".")]
    if len(no_directory) != len(paths):
        if job is not None:
            return None
        raise InputError(f"{absent[0]}: no such file")
    directory = os.path.dirname(no_directory[0])
    finding = Finding(
        "missing-output-directory",
        f"there is no log: its directory {directory}/ does not exist, so Slurm could not open the job's "
        "output file and failed the job at launch (JobLaunchFailure, exit code 0:53)",
        [], primary=True)
    text = finding.cause[0].upper() + finding.cause[1:]
    verdict = Verdict(text, True, None, [], "", [finding], [], [], [], [], job)
    return Diagnosis(verdict, [LogInfo(p, exists=False) for p in paths])


_TRACEBACK = lazy(r"Traceback \(most recent call last\):")


def _look_at_the_end(collector: Collector, log: int, count: int, tail: bytes) -> None:
    """A log that stops inside a traceback: the failing rank's error is missing."""
    lines = tail.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = lines[-40:]
    start = count - len(lines) + 1
    last_traceback = None
    for offset, raw in enumerate(lines):
        text = L.clean(raw)
        origin, body = L.split_origin(text)
        if _TRACEBACK.search(body):
            last_traceback = (offset, origin, text)
        elif last_traceback is not None and origin.key() == last_traceback[1].key():
            stripped = body.strip()
            if stripped and not stripped.startswith(("File ", "^", "~")) and not body.startswith("  "):
                last_traceback = None  # the exception line (or other output) came
    if last_traceback is not None:
        offset, origin, text = last_traceback
        collector.tail_traceback = L.Line(log, start + offset, text, text, origin, None)

"""``diagnose --job ID``: what Slurm's own commands say about a job, in a stated order.

1. ``sacct`` (the accounting database, through slurmdbd): the job's state and exit code, every
   step's, the node list, the working directory and the submission line. It knows a job long
   after it ended, but only where the site runs accounting.
2. ``scontrol show job``: the controller's view, kept only while the job runs and for
   ``MinJobAge`` (300 s by default) after it ends; it alone names the output files
   (``StdOut``/``StdErr``) in Slurm 22.05. It fills in what sacct left open, and is the source of
   the verdict where sacct has no record.
3. The job's log given with ``--log``: the log reader alone, when Slurm knows nothing.

The batch script comes from ``scontrol write batch_script`` while the controller knows the job,
else from ``sacct --batch-script`` (kept where the site sets ``AccountingStoreFlags=job_script``).
Without ``StdOut``, the output file is worked out as sbatch names it: the submission line's
``--output``/``--error``, else the script's header, else ``slurm-%j.out``, with the ``%``
patterns filled in from the record.

Only this module runs Slurm's programs; a :data:`Runner` can be given instead (tests).
"""
from __future__ import annotations

import os
import shlex

from .job import JobRecord, StepRecord, expand_hostlist
from ..lazyclass import dataclass, field, replace
from ..lazyre import lazy
from ..slurm_commands import run

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

# argv -> (exit status, stdout, stderr); raises OSError when the program is missing
if TYPE_CHECKING:  # a type for annotations only
    Runner = Callable[[Sequence[str]], Tuple[int, str, str]]


#: What ``sacct --parsable2`` is asked for, in this order. ``SubmitLine`` is last: it is the one
#: field that may hold the separator.
SACCT_FIELDS = ("JobID", "JobIDRaw", "JobName", "Partition", "Account", "State", "ExitCode",
                "DerivedExitCode", "Reason", "NodeList", "NNodes", "NTasks", "Start", "End", "Elapsed",
                "Timelimit", "User", "WorkDir", "SubmitLine")

_JOB_ID = lazy(r"(?P<job>[0-9]+)(?:_(?P<task>[0-9]+))?(?:\+(?P<offset>[0-9]+))?")
_ROW = lazy(r"[0-9]+(?:_[0-9]+)?(?:\+[0-9]+)?(?:\.[A-Za-z0-9]+)?\|")
_KEY_VALUE = lazy(r"(?:^|\s)(?P<key>[A-Za-z][A-Za-z0-9_:/]*)=(?P<value>.*?)(?=\s+[A-Za-z][A-Za-z0-9_:/]*=|\s*$)")
_PATTERN = lazy(r"%(?P<pad>[0-9]*)(?P<char>[%AajJNnstuxb])")


class JobError(Exception):
    """The job id is malformed, or no source knows the job: a one-line message for the user."""


def check_job_id(text: str) -> str:
    """``12345``, ``12345_7`` (an array element) or ``12345+1`` (a het job component)."""
    text = text.strip()
    if not _JOB_ID.fullmatch(text):
        raise JobError(f"--job {text!r}: not a job id (12345, 12345_7 for an array element, 12345+1 for a "
                       "het job component)")
    return text


# -- sacct -------------------------------------------------------------------------------------------
def sacct_command(job_id: str) -> List[str]:
    return ["sacct", "-j", job_id, "--parsable2", "--noheader", "--format=" + ",".join(SACCT_FIELDS)]


def parse_sacct(text: str, job_id: str) -> Optional[JobRecord]:
    """The record of ``sacct -j ID --parsable2 --noheader --format=<SACCT_FIELDS>``: the job (or
    its het components) and its steps; None when sacct printed no row."""
    lines: List[str] = []
    for line in text.splitlines():
        if _ROW.match(line) or not lines:
            lines.append(line)
        else:  # a submission line with a newline in an argument (python -c '…') goes on
            lines[-1] += "\n" + line
    rows = []
    for line in lines:
        if not line.strip():
            continue
        values = line.split("|", len(SACCT_FIELDS) - 1)
        if len(values) < len(SACCT_FIELDS):
            continue
        rows.append(dict(zip(SACCT_FIELDS, values)))
    if not rows:
        return None
    jobs = [r for r in rows if "." not in r["JobID"]]
    steps = [r for r in rows if "." in r["JobID"] and not r["JobID"].endswith((".extern", ".interactive"))]
    if not jobs:
        return None
    components = tuple(_step(r) for r in jobs) if len(jobs) > 1 or "+" in jobs[0]["JobID"] else ()
    main = next((r for r in jobs if _state(r) not in ("COMPLETED", "")), jobs[0])
    nodes = [r["NodeList"] for r in jobs if _value(r["NodeList"])]
    first = jobs[0]
    return JobRecord(
        job_id=job_id,
        state=_value(main["State"]),
        exit_code=_value(main["ExitCode"]),
        reason=_value(main["Reason"]),
        nodes=",".join(nodes) or None,
        steps=tuple(_step(r) for r in steps),
        source="sacct",
        name=_value(first["JobName"]),
        partition=_value(first["Partition"]),
        account=_value(first["Account"]),
        raw_id=_value(first["JobIDRaw"]),
        work_dir=_value(first["WorkDir"]),
        submit_line=_value(first["SubmitLine"]),
        user=_value(first["User"]),
        elapsed=_value(first["Elapsed"]),
        time_limit=_value(first["Timelimit"]),
        components=components,
    )


def _value(text: Optional[str]) -> Optional[str]:
    text = (text or "").strip()
    return None if text in ("", "None", "(null)", "None assigned", "Unknown") else text


def _state(row: Dict[str, str]) -> str:
    return (row.get("State") or "").split(" ")[0]


def _step(row: Dict[str, str]) -> StepRecord:
    tasks = (row.get("NTasks") or "").strip()
    return StepRecord(row["JobID"], _value(row["State"]), _value(row["ExitCode"]), _value(row["NodeList"]),
                      int(tasks) if tasks.isdigit() else None)


# -- scontrol ----------------------------------------------------------------------------------------
def parse_scontrol(text: str, job_id: str) -> Optional[JobRecord]:
    """The record of ``scontrol --oneliner show job ID`` (one line per het component)."""
    records = []
    for line in text.splitlines():
        fields = {m.group("key"): m.group("value") for m in _KEY_VALUE.finditer(line.strip())}
        if "JobId" in fields:
            records.append(fields)
    if not records:
        return None
    main = next((f for f in records if (f.get("JobState") or "") != "COMPLETED"), records[0])
    first = records[0]
    components = ()
    if len(records) > 1 or first.get("HetJobOffset"):
        components = tuple(StepRecord(f"{f.get('HetJobId', f['JobId'])}+{f.get('HetJobOffset', '0')}",
                                      _value(f.get("JobState")), _value(f.get("ExitCode")), _value(f.get("NodeList")))
                           for f in records)
    array_id = _value(first.get("ArrayJobId"))
    task = _value(first.get("ArrayTaskId"))
    return JobRecord(
        job_id=job_id,
        state=_value(main.get("JobState")),
        exit_code=_value(main.get("ExitCode")),
        reason=_value(main.get("Reason")),
        nodes=",".join(f["NodeList"] for f in records if _value(f.get("NodeList"))) or None,
        source="scontrol",
        name=_value(first.get("JobName")),
        partition=_value(first.get("Partition")),
        account=_value(first.get("Account")),
        raw_id=_value(first.get("JobId")),
        work_dir=_value(first.get("WorkDir")),
        std_out=_path(first.get("StdOut")),
        std_err=_path(first.get("StdErr")),
        array_job_id=array_id,
        array_task_id=task,
        components=components,
    )


def _path(value: Optional[str]) -> Optional[str]:
    value = _value(value)
    return None if value in (None, "/dev/null") else value


# -- the job, from every source in turn ------------------------------------------------------------
@dataclass
class Lookup:
    """What the sources said: the record the verdict uses, the job's logs and batch script, and
    why a source was passed over."""

    record: Optional[JobRecord]
    logs: List[str] = field(default_factory=list)
    script: Optional[bytes] = None
    script_from: Optional[str] = None
    notes: List[str] = field(default_factory=list)


def look_up(job_id: str, runner: Optional[Runner] = None, want_script: bool = True) -> Lookup:
    """Ask sacct, then scontrol; raises :class:`JobError` for a malformed id (not for an unknown job:
    then the record is None and the notes say what each source answered)."""
    job_id = check_job_id(job_id)
    runner = runner or run
    notes: List[str] = []
    accounted = None
    answer = _ask(runner, sacct_command(job_id))
    if isinstance(answer, str):
        accounted = parse_sacct(answer, job_id)
        if accounted is None:
            notes.append(f"sacct has no record of job {job_id}")
    else:
        notes.append(f"sacct gave no answer ({answer[1]})")
    controller = None
    answer = _ask(runner, ["scontrol", "--oneliner", "show", "job", job_id])
    if isinstance(answer, str):
        controller = parse_scontrol(answer, job_id)
    elif accounted is not None:
        notes.append(f"the controller no longer knows job {job_id}: its log was looked for where sbatch "
                     "put it, by the submission line and the batch script")
    else:
        notes.append(f"scontrol does not know job {job_id} ({answer[1]})")
    record = accounted or controller
    if record is None:
        return Lookup(None, notes=notes)
    if accounted is not None and controller is not None:
        record = replace(accounted, std_out=controller.std_out, std_err=controller.std_err,
                         array_job_id=controller.array_job_id, array_task_id=controller.array_task_id)
    script, script_from = None, None
    if want_script or not record.std_out:
        script, script_from = _batch_script(runner, job_id, record, controller is not None, notes)
    logs = log_paths(record, script)
    return Lookup(record, logs, script, script_from, notes)


def _ask(runner: Runner, argv: Sequence[str]):
    """The command's output, or ``(None, reason)``."""
    try:
        status, out, err = runner(argv)
    except OSError as error:
        return None, (f"{argv[0]} not found" if isinstance(error, FileNotFoundError) else f"{argv[0]}: {error}")
    if status != 0:
        lines = [line.strip() for line in (err or out).splitlines() if line.strip()]
        return None, (lines[0][:200] if lines else f"{argv[0]} exit status {status}")
    return out


def _batch_script(runner: Runner, job_id: str, record: JobRecord, known: bool, notes: List[str]):
    base = _script_job(job_id, record)
    if known:
        answer = _ask(runner, ["scontrol", "write", "batch_script", base, "-"])
        if isinstance(answer, str) and answer.strip():
            return answer.encode(), "scontrol write batch_script"
    answer = _ask(runner, ["sacct", "-j", base, "--batch-script"])
    if isinstance(answer, str):
        script = _strip_sacct_banner(answer)
        if script:
            return script.encode(), "sacct --batch-script"
    notes.append("Slurm did not keep the job's batch script (give it with --job-script)")
    return None, None


def _script_job(job_id: str, record: JobRecord) -> str:
    """The id whose batch script it is: an array element's own, a het job's first component."""
    m = _JOB_ID.fullmatch(job_id)
    return m.group("job") + (f"_{m.group('task')}" if m.group("task") else "")


def _strip_sacct_banner(text: str) -> str:
    """``sacct --batch-script`` prints ``Batch Script for N`` and a rule of dashes first."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].startswith("Batch Script for"):
        lines = lines[1:]
        if lines and set(lines[0].strip()) == {"-"}:
            lines = lines[1:]
    body = "".join(lines)
    if body.endswith("\n"):
        body = body[:-1]  # the newline sacct prints after the script
    return "" if body.strip() in ("", "NONE") else body


# -- where the logs are ------------------------------------------------------------------------------
def log_paths(record: JobRecord, script: Optional[bytes]) -> List[str]:
    """The job's output and error files: as the controller names them, else as sbatch would."""
    if record.std_out:
        paths = [record.std_out]
        if record.std_err and record.std_err != record.std_out:
            paths.append(record.std_err)
        return paths
    output, error = _requested_files(record, script)
    array = _array_ids(record)
    if output is None:
        output = "slurm-%A_%a.out" if array else "slurm-%j.out"
    paths = [expand(output, record)]
    if error is not None:
        paths.append(expand(error, record))
    work_dir = record.work_dir or ""
    out = []
    for path in paths:
        full = os.path.join(work_dir, path) if work_dir else path
        if full not in out:
            out.append(full)
    return out


def _requested_files(record: JobRecord, script: Optional[bytes]) -> Tuple[Optional[str], Optional[str]]:
    """``--output`` and ``--error`` as the submission line gives them, else as the header does."""
    from .. import options as opt

    output = error = None
    for name, value in _submission_options(record.submit_line or ""):
        if name == opt.OUTPUT:
            output = value
        elif name == opt.ERROR:
            error = value
    if script is not None and (output is None or error is None):
        from ..model.header import parse_header
        from ..source import Source

        header = parse_header(Source(script))
        if output is None:
            output = _directive_value(header.winning(opt.OUTPUT))
        if error is None:
            error = _directive_value(header.winning(opt.ERROR))
    return output, error


def _directive_value(directive) -> Optional[str]:
    return directive.value.strip() if directive is not None and directive.value else None


def _submission_options(line: str) -> List[Tuple[str, str]]:
    """(canonical name, value) of the options on an ``sbatch …`` submission line, up to the script."""
    from .. import options as opt

    try:
        words = shlex.split(line)
    except ValueError:
        return []
    if not words or os.path.basename(words[0]) != "sbatch":
        return []
    out: List[Tuple[str, str]] = []
    i = 1
    while i < len(words):
        word = words[i]
        if not word.startswith("-") or word == "-":
            break  # the script
        name, value = word, None
        if word.startswith("--"):
            name, eq, rest = word[2:].partition("=")
            value = rest if eq else None
        else:
            name, rest = word[1:2], word[2:]
            value = rest or None
        spec = opt.lookup(opt.SBATCH, name)
        if spec is not None and spec.arg == "required" and value is None and i + 1 < len(words):
            i += 1
            value = words[i]
        if spec is not None and value is not None:
            out.append((spec.canonical or spec.long, value))
        i += 1
    return out


def _array_ids(record: JobRecord) -> Optional[Tuple[str, str]]:
    if record.array_job_id and record.array_task_id:
        return record.array_job_id, record.array_task_id
    m = _JOB_ID.fullmatch(record.job_id or "")
    if m and m.group("task"):
        return m.group("job"), m.group("task")
    return None


def expand(pattern: str, record: JobRecord) -> str:
    """sbatch's filename patterns (``%j``, ``%A``, ``%a``, ``%x``, ``%u``, ``%N`` …) for the batch step."""
    array = _array_ids(record)
    m = _JOB_ID.fullmatch(record.job_id or "")
    job = record.raw_id or (m.group("job") if m else "")
    values = {
        "%": "%",
        "A": array[0] if array else job,
        "a": array[1] if array else "4294967294",
        "j": job,
        "J": job,
        "N": first_node(record.nodes) or "",
        "n": "0",
        "t": "0",
        "s": "batch",
        "u": record.user or "",
        "x": record.name or "",
        "b": str(int(array[1]) % 10) if array else "0",
    }

    def fill(match) -> str:
        value = values[match.group("char")]
        pad = match.group("pad")
        if pad and value.isdigit() and match.group("char") != "%":
            return value.zfill(int(pad))
        return value

    return _PATTERN.sub(fill, pattern)


def first_node(nodes: Optional[str]) -> Optional[str]:
    """The first host of a Slurm host list (``n[1-2],m3`` → ``n1``)."""
    names = expand_hostlist(nodes)
    return names[0] if names else None

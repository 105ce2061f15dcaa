"""Helpers to drive the local test Slurm cluster (tests/slurm/start-cluster.sh).

The cluster is found the way any Slurm client finds it: through the default
client config, /etc/slurm/slurm.conf (start-cluster.sh links it to its state
dir), or SLURM_CONF when that is set in the environment. Nothing here reads
the state dir directly; the job completion log is located through
``scontrol show config``.

Module-level functions take a job id; :class:`SlurmSession` (what the
``slurm`` fixture returns) binds them to one working directory and cancels the
jobs it submitted when the test ends.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

SKIP_REASON = "Slurm cluster not running: run tests/slurm/start-cluster.sh"
NODES = ("n1", "n2")
DEFAULT_CONF = "/etc/slurm/slurm.conf"  # Debian's client default; SLURM_CONF overrides
UP_STATES = {"idle", "alloc", "mix", "comp"}

#: Job states after which the job will not change any more.
FINAL_STATES = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "OUT_OF_MEMORY",
    "BOOT_FAIL",
    "DEADLINE",
}

PathLike = Union[str, "os.PathLike[str]"]

# Variables that would change what sbatch or srun does if they leaked from the
# environment pytest runs in (e.g. when pytest itself runs inside a job).
_LEAKY_PREFIXES = ("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")
_KEEP = {"SLURM_CONF"}

# What we saw of each job while scontrol still knew it (StdOut path, ...).
_seen: Dict[int, Dict[str, str]] = {}
_submitted_in: Dict[int, Path] = {}


def clean_env(extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The current environment without Slurm job/submission variables, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k in _KEEP or not k.startswith(_LEAKY_PREFIXES)
    }
    if extra:
        env.update(extra)
    return env


def _run(args: Sequence[str], timeout: float = 30.0, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        list(args), capture_output=True, text=True, timeout=timeout, **kw
    )


# --------------------------------------------------------------- cluster state


def node_states() -> Dict[str, str]:
    """``{node: short state}`` from sinfo, e.g. ``{"n1": "idle", "n2": "mix"}``.

    Raises ``FileNotFoundError`` if sinfo is absent, ``RuntimeError`` if it fails.
    """
    cp = _run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=15)
    if cp.returncode != 0:
        raise RuntimeError((cp.stderr or cp.stdout).strip() or f"sinfo rc={cp.returncode}")
    states: Dict[str, str] = {}
    for line in cp.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states.setdefault(parts[0], parts[1])
    return states


def cluster_problem() -> Optional[str]:
    """None when both nodes are up, else a short description of what is wrong."""
    if shutil.which("sinfo") is None:
        return "sinfo not found"
    # Checked first because the clients retry for a long time otherwise:
    # sinfo waits 60 s for a missing slurm.conf and ~9 s for a dead slurmctld.
    conf = os.environ.get("SLURM_CONF") or DEFAULT_CONF
    if not os.path.exists(conf):
        return f"no {conf}"
    try:
        ping = _run(["scontrol", "ping"], timeout=15)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"scontrol ping failed: {exc!r}"
    if "is UP" not in ping.stdout:
        return "slurmctld not answering"
    try:
        states = node_states()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        return f"sinfo failed: {str(exc).splitlines()[0] if str(exc) else exc!r}"
    bad = {n: states.get(n, "absent") for n in NODES if states.get(n) not in UP_STATES}
    if bad:
        return "nodes not up: " + ", ".join(f"{n}={s}" for n, s in bad.items())
    return None


def cluster_is_up() -> bool:
    return cluster_problem() is None


def wait_idle(timeout: float = 120.0, poll: float = 1.0) -> bool:
    """Wait until every node is idle (no job holds any of its CPUs); whether they became so
    within ``timeout`` seconds. Another test session on the same cluster may keep them busy."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            states = node_states()
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            states = {}
        if states and all(states.get(node) == "idle" for node in NODES):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)


# ------------------------------------------------------------------- submitting


@dataclass
class SbatchResult:
    """What one sbatch call returned."""

    returncode: int
    stdout: str
    stderr: str
    args: List[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.returncode == 0

    @property
    def output(self) -> str:
        """stdout and stderr together (``--test-only`` answers on stderr)."""
        return self.stdout + self.stderr


def sbatch(
    script: PathLike,
    *sbatch_args: str,
    cwd: Optional[PathLike] = None,
    env: Optional[Mapping[str, str]] = None,
    timeout: float = 30.0,
) -> SbatchResult:
    """Run ``sbatch [args] script`` and return rc/stdout/stderr; never raises on rc."""
    args = ["sbatch", *sbatch_args, str(script)]
    cp = _run(
        args,
        timeout=timeout,
        cwd=str(cwd) if cwd is not None else None,
        env=dict(env) if env is not None else clean_env(),
    )
    return SbatchResult(cp.returncode, cp.stdout, cp.stderr, args)


def submit(
    script: PathLike,
    *sbatch_args: str,
    cwd: Optional[PathLike] = None,
    env: Optional[Mapping[str, str]] = None,
) -> int:
    """Submit with ``sbatch --parsable``; return the job id. Raises on rejection.

    The job's working directory is ``cwd`` (default: the script's directory).
    """
    script = Path(script)
    workdir = Path(cwd) if cwd is not None else script.resolve().parent
    res = sbatch(script, "--parsable", *sbatch_args, cwd=workdir, env=env)
    if not res.accepted:
        raise SubmitError(res)
    job_id = int(res.stdout.strip().split(";")[0])
    _submitted_in[job_id] = workdir
    return job_id


def test_only(
    script: PathLike,
    *sbatch_args: str,
    cwd: Optional[PathLike] = None,
    env: Optional[Mapping[str, str]] = None,
) -> SbatchResult:
    """``sbatch --test-only``: validate a script's options against the cluster.

    Slurm answers on stderr either way: ``sbatch: Job N to start at ...`` when
    accepted, the error (rc 255 for option errors) when not.
    """
    script = Path(script)
    workdir = Path(cwd) if cwd is not None else script.resolve().parent
    return sbatch(script, "--test-only", *sbatch_args, cwd=workdir, env=env)


test_only.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


class SubmitError(RuntimeError):
    def __init__(self, result: SbatchResult):
        self.result = result
        super().__init__(
            f"sbatch rejected the job (rc={result.returncode}): {result.output.strip()}"
        )


# ------------------------------------------------------------------- job state


@dataclass
class JobInfo:
    """A job's state as far as it is known.

    ``source`` tells where it came from: ``"scontrol"`` while slurmctld still
    holds the job (until MinJobAge, 2 min, after it ends), ``"jobcomp"`` (the
    job completion log) after that, ``"none"`` if neither knows the job.
    """

    job_id: int
    state: str
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    reason: Optional[str] = None
    nodes: Optional[str] = None
    std_out: Optional[Path] = None
    std_err: Optional[Path] = None
    work_dir: Optional[Path] = None
    source: str = "none"
    fields: Dict[str, str] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def ok(self) -> bool:
        return self.state == "COMPLETED" and self.exit_code == 0 and not self.signal

    @property
    def exit_code_str(self) -> Optional[str]:
        """Slurm's ``rc:signal`` form, e.g. ``"0:0"``, ``"0:15"``, ``"0:53"``."""
        if self.exit_code is None:
            return None
        return f"{self.exit_code}:{self.signal or 0}"


_KV = re.compile(r"(\S+?)=(.*?)(?=\s+\S+?=|\s*$)")


def _parse_kv(text: str) -> Dict[str, str]:
    """Parse scontrol/jobcomp ``Key=Value`` text. Values may contain spaces."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        for m in _KV.finditer(line.strip()):
            out.setdefault(m.group(1), m.group(2))
    return out


def _exit(value: Optional[str]) -> Tuple[Optional[int], Optional[int]]:
    if not value or ":" not in value:
        return None, None
    rc, sig = value.split(":", 1)
    try:
        return int(rc), int(sig)
    except ValueError:
        return None, None


def _path(value: Optional[str]) -> Optional[Path]:
    return Path(value) if value and value not in ("(null)", "/dev/null") else None


def _info_from_fields(job_id: int, f: Dict[str, str], source: str) -> JobInfo:
    rc, sig = _exit(f.get("ExitCode"))
    state = (f.get("JobState") or "UNKNOWN").split()[0]
    reason = f.get("Reason")
    return JobInfo(
        job_id=job_id,
        state=state,
        exit_code=rc,
        signal=sig,
        reason=None if reason in (None, "None") else reason,
        nodes=f.get("NodeList") if f.get("NodeList") not in (None, "(null)") else None,
        std_out=_path(f.get("StdOut")),
        std_err=_path(f.get("StdErr")),
        work_dir=_path(f.get("WorkDir")),
        source=source,
        fields=f,
    )


def scontrol_info(job_id: int) -> Optional[JobInfo]:
    """The job as slurmctld shows it, or None once it has forgotten it."""
    cp = _run(["scontrol", "show", "job", str(job_id)], timeout=15)
    if cp.returncode != 0 or f"JobId={job_id} " not in cp.stdout:
        return None
    f = _parse_kv(cp.stdout)
    _seen[job_id] = f
    return _info_from_fields(job_id, f, "scontrol")


_jobcomp_loc: Optional[str] = None


def jobcomp_path() -> Optional[Path]:
    """Where slurmctld logs finished jobs (JobCompLoc of jobcomp/filetxt)."""
    global _jobcomp_loc
    if _jobcomp_loc is None:
        cp = _run(["scontrol", "show", "config"], timeout=15)
        m = re.search(r"^JobCompLoc\s*=\s*(\S+)", cp.stdout, re.M)
        m2 = re.search(r"^JobCompType\s*=\s*(\S+)", cp.stdout, re.M)
        ok = m and m2 and m2.group(1).endswith("filetxt")
        _jobcomp_loc = m.group(1) if ok else ""
    return Path(_jobcomp_loc) if _jobcomp_loc else None


def jobcomp_info(job_id: int) -> Optional[JobInfo]:
    """The job's final record in the job completion log, if there is one."""
    path = jobcomp_path()
    if path is None:
        return None
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    last = None
    prefix = f"JobId={job_id} "
    for line in text.splitlines():
        if line.startswith(prefix):
            last = line  # a requeued job appears more than once: the last wins
    if last is None:
        return None
    f = _parse_kv(last)
    # The completion log has no StdOut; keep what scontrol showed earlier.
    for key in ("StdOut", "StdErr"):
        if key in _seen.get(job_id, {}):
            f.setdefault(key, _seen[job_id][key])
    return _info_from_fields(job_id, f, "jobcomp")


def job_info(job_id: int) -> JobInfo:
    """State and exit code: scontrol while visible, then the completion log."""
    info = scontrol_info(job_id)
    if info is None:
        info = jobcomp_info(job_id)
    if info is None:
        info = JobInfo(job_id=job_id, state="UNKNOWN", source="none")
    return info


class JobTimeout(TimeoutError):
    def __init__(self, info: JobInfo, timeout: float):
        self.info = info
        super().__init__(
            f"job {info.job_id} not finished after {timeout:.0f}s (state {info.state}, "
            f"reason {info.reason})"
        )


def wait(job_id: int, timeout: float = 150.0, poll: float = 0.25) -> JobInfo:
    """Block until the job reaches a final state; return its :class:`JobInfo`.

    Raises :class:`JobTimeout` (the job is left alone; cancel it if you like).
    """
    deadline = time.monotonic() + timeout
    info = job_info(job_id)
    while not info.finished:
        if time.monotonic() >= deadline:
            raise JobTimeout(info, timeout)
        time.sleep(poll)
        info = job_info(job_id)
    return info


def output_path(job: Union[int, JobInfo], which: str = "out") -> Optional[Path]:
    """The job's stdout (``which="out"``) or stderr (``"err"``) file."""
    info = job if isinstance(job, JobInfo) else job_info(job)
    path = info.std_out if which == "out" else info.std_err
    if path is None:
        seen = _seen.get(info.job_id, {})
        path = _path(seen.get("StdOut" if which == "out" else "StdErr"))
    if path is None:
        # sbatch's default when neither --output nor --error was given.
        workdir = info.work_dir or _submitted_in.get(info.job_id)
        if workdir is not None:
            path = Path(workdir) / f"slurm-{info.job_id}.out"
    return path


def read_output(job: Union[int, JobInfo], which: str = "out") -> str:
    """Text of the job's output log ('' when there is none yet)."""
    path = output_path(job, which)
    if path is None:
        return ""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def cancel(job_id: int, signal: Optional[str] = None) -> None:
    """scancel the job (optionally with ``--signal``); ignores jobs already gone."""
    args = ["scancel"]
    if signal:
        args.append(f"--signal={signal}")
    _run([*args, str(job_id)], timeout=15)


def run(
    script: PathLike,
    *sbatch_args: str,
    cwd: Optional[PathLike] = None,
    env: Optional[Mapping[str, str]] = None,
    timeout: float = 150.0,
) -> Tuple[JobInfo, str]:
    """Submit, wait, and return ``(JobInfo, stdout log text)``. Cancels on timeout."""
    job_id = submit(script, *sbatch_args, cwd=cwd, env=env)
    try:
        info = wait(job_id, timeout=timeout)
    except JobTimeout:
        cancel(job_id)
        raise
    return info, read_output(info)


def write_script(path: PathLike, text: str) -> Path:
    """Write a batch script (text is dedented by the caller) and make it executable."""
    path = Path(path)
    path.write_text(text)
    path.chmod(0o755)
    return path


# ---------------------------------------------------------------- the fixture


class SlurmSession:
    """The ``slurm`` fixture: the helpers above bound to one working directory.

    Jobs run in ``workdir`` (the test's tmp_path unless given otherwise);
    every job submitted through the session is cancelled at teardown if it is
    still queued or running.
    """

    def __init__(self, workdir: PathLike):
        self.workdir = Path(workdir)
        self.jobs: List[int] = []

    # scripts
    def script(self, text: str, name: str = "job.sbatch") -> Path:
        """Write ``text`` to ``workdir/name`` and return its path."""
        return write_script(self.workdir / name, text)

    # submission
    def submit(self, script: PathLike, *sbatch_args: str, env: Optional[Mapping[str, str]] = None) -> int:
        job_id = submit(script, *sbatch_args, cwd=self.workdir, env=env)
        self.jobs.append(job_id)
        return job_id

    def test_only(self, script: PathLike, *sbatch_args: str, env: Optional[Mapping[str, str]] = None) -> SbatchResult:
        return test_only(script, *sbatch_args, cwd=self.workdir, env=env)

    test_only.__test__ = False  # type: ignore[attr-defined]

    def sbatch(self, script: PathLike, *sbatch_args: str, env: Optional[Mapping[str, str]] = None) -> SbatchResult:
        return sbatch(script, *sbatch_args, cwd=self.workdir, env=env)

    # following a job
    def wait(self, job_id: int, timeout: float = 150.0) -> JobInfo:
        return wait(job_id, timeout=timeout)

    def info(self, job_id: int) -> JobInfo:
        return job_info(job_id)

    def output(self, job: Union[int, JobInfo], which: str = "out") -> str:
        return read_output(job, which)

    def cancel(self, job_id: int, signal: Optional[str] = None) -> None:
        cancel(job_id, signal)

    def run(self, script: PathLike, *sbatch_args: str, env: Optional[Mapping[str, str]] = None,
            timeout: float = 150.0) -> Tuple[JobInfo, str]:
        """Submit, wait, return ``(JobInfo, stdout text)``."""
        job_id = self.submit(script, *sbatch_args, env=env)
        try:
            info = wait(job_id, timeout=timeout)
        except JobTimeout:
            cancel(job_id)
            raise
        return info, read_output(info)

    def close(self) -> None:
        for job_id in self.jobs:
            info = scontrol_info(job_id)
            if info is not None and not info.finished:
                cancel(job_id)


def parse_lines(text: str, tag: str) -> List[Dict[str, str]]:
    """Lines ``TAG k=v k=v ...`` of a job log as dicts (order kept)."""
    rows = []
    for line in text.splitlines():
        if line.startswith(tag + " "):
            rows.append(dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv))
    return rows


__all__: Iterable[str] = [
    "SKIP_REASON",
    "NODES",
    "FINAL_STATES",
    "clean_env",
    "node_states",
    "cluster_problem",
    "cluster_is_up",
    "SbatchResult",
    "sbatch",
    "submit",
    "test_only",
    "SubmitError",
    "JobInfo",
    "scontrol_info",
    "jobcomp_path",
    "jobcomp_info",
    "job_info",
    "JobTimeout",
    "wait",
    "output_path",
    "read_output",
    "cancel",
    "run",
    "write_script",
    "SlurmSession",
    "parse_lines",
]

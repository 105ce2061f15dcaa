"""Helpers for the rule proofs (test_rule_proofs.py, test_placement.py): run sbatchlint the way a
user does, follow several jobs at once, and keep job logs as fixtures for log triage."""
from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import slurm_cluster

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LOG_FIXTURES = REPO / "tests" / "data" / "slurm-logs"
PY = sys.executable
DEMO = HERE / "demo" / "allreduce.py"

PRELUDE = """\
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
export OMP_NUM_THREADS=1
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))"""


def script(text: str) -> str:
    """Dedent a job script written inline; ``@PRELUDE@`` becomes the torch.distributed setup."""
    return textwrap.dedent(text).lstrip().replace("@PRELUDE@", PRELUDE)


# ------------------------------------------------------------------ sbatchlint, as a user runs it


def sbatchlint(*args: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "sbatchlint", *args],
        capture_output=True, text=True, timeout=120, cwd=str(cwd or REPO),
    )


def findings(path: Path) -> List[dict]:
    """Every finding of every rule for ``path`` (not for the Python files it launches)."""
    done = sbatchlint("check", "--isolated", "--output-format", "json", str(path))
    assert done.returncode in (0, 1), done.stderr
    return [d for d in json.loads(done.stdout) if Path(d["path"]).resolve() == path.resolve()]


def codes(path: Path) -> List[str]:
    return sorted(d["code"] for d in findings(path))


def fixed_by_sbatchlint(broken: Path, name: str, unsafe: bool = False) -> Path:
    """Copy ``broken`` to ``name`` and let the CLI fix it in place; the result lints clean."""
    fixed = broken.with_name(name)
    shutil.copyfile(broken, fixed)
    fixed.chmod(0o755)
    done = sbatchlint("check", "--isolated", "--unsafe-fixes" if unsafe else "--fix", str(fixed))
    assert done.returncode == 0, done.stdout + done.stderr
    assert fixed.read_bytes() != broken.read_bytes()
    return fixed


def changed_lines(before: Path, after: Path) -> List[Tuple[str, str]]:
    """The (old, new) pairs of lines that differ (the fixes here never add or remove lines)."""
    a, b = before.read_text().splitlines(), after.read_text().splitlines()
    return [(x, y) for x, y in zip(a, b) if x != y]


# ---------------------------------------------------------------------------- jobs


def submit_all(session: slurm_cluster.SlurmSession, *scripts: Path) -> List[int]:
    return [session.submit(path) for path in scripts]


def wait_all(session: slurm_cluster.SlurmSession, job_ids: List[int], timeout: float = 150.0) -> List[slurm_cluster.JobInfo]:
    """Wait for several concurrent jobs; cancel them all if one does not finish in time."""
    deadline = time.monotonic() + timeout
    infos = []
    try:
        for job_id in job_ids:
            infos.append(session.wait(job_id, timeout=max(1.0, deadline - time.monotonic())))
    except slurm_cluster.JobTimeout:
        for job_id in job_ids:
            session.cancel(job_id)
        raise
    return infos


def elapsed(info: slurm_cluster.JobInfo) -> float:
    """Seconds from the job's start to its end, as slurmctld recorded them."""
    start, end = info.fields.get("StartTime"), info.fields.get("EndTime")
    fmt = "%Y-%m-%dT%H:%M:%S"
    return (datetime.datetime.strptime(end, fmt) - datetime.datetime.strptime(start, fmt)).total_seconds()


def held(session: slurm_cluster.SlurmSession, path: Path) -> Dict[str, str]:
    """What slurmctld recorded for a submission (submitted held, then cancelled: it never runs)."""
    job_id = session.submit(path, "--hold")
    try:
        info = slurm_cluster.scontrol_info(job_id)
        assert info is not None
        return info.fields
    finally:
        session.cancel(job_id)


# ----------------------------------------------------------------------------- log fixtures


def _scrub(text: str, workdir: Path) -> str:
    """Replace this machine's paths with neutral ones."""
    pairs = [(str(workdir), "/home/user/run"), (str(workdir.resolve()), "/home/user/run"),
             (str(REPO), "/home/user/sbatchlint")]
    for prefix in {sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}:
        pairs.append((prefix, "/opt/venv"))
    pairs.append((os.path.expanduser("~"), "/home/user"))
    for old, new in sorted(pairs, key=lambda p: -len(p[0])):
        if old and old != "/":
            text = text.replace(old, new)
    return text


def save_log(name: str, info: slurm_cluster.JobInfo, log: str, job_script: Path) -> None:
    """With SBATCHLINT_SAVE_SLURM_LOGS=1: keep the job's script, log and outcome as a fixture."""
    if os.environ.get("SBATCHLINT_SAVE_SLURM_LOGS") != "1":
        return
    LOG_FIXTURES.mkdir(parents=True, exist_ok=True)
    workdir = job_script.parent
    (LOG_FIXTURES / f"{name}.sbatch").write_text(_scrub(job_script.read_text(), workdir))
    (LOG_FIXTURES / f"{name}.out").write_text(_scrub(log, workdir))
    outcome = {
        "state": info.state,
        "exit_code": info.exit_code_str,
        "reason": info.reason,
        "elapsed_seconds": elapsed(info),
        "nodes": info.nodes,
    }
    (LOG_FIXTURES / f"{name}.json").write_text(json.dumps(outcome, indent=2) + "\n")



"""What Slurm knows about a job, apart from its logs: its state and exit codes.

The log reader works without it. ``diagnose --job ID`` (reading a job on the cluster) fills a
``JobRecord`` from sacct or scontrol, and the analysis then uses the state and the exit codes
alongside the log: TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, a ``0:53`` launch failure.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple


def split_exit(value: Optional[str]) -> Tuple[Optional[int], Optional[int]]:
    """Slurm's ``rc:signal`` (``"1:0"``, ``"0:53"``) as two numbers."""
    if not value or ":" not in value:
        return None, None
    rc, _, signal = value.partition(":")
    try:
        return int(rc), int(signal)
    except ValueError:
        return None, None


@dataclass(frozen=True)
class StepRecord:
    step_id: str  # "1234.0", "1234.batch"
    state: Optional[str] = None  # COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL …
    exit_code: Optional[str] = None  # "rc:signal"
    nodes: Optional[str] = None


@dataclass(frozen=True)
class JobRecord:
    job_id: Optional[str] = None
    state: Optional[str] = None
    exit_code: Optional[str] = None
    reason: Optional[str] = None
    nodes: Optional[str] = None
    steps: Tuple[StepRecord, ...] = ()
    source: str = "log"  # where the record came from: "sacct", "scontrol", "log"

    def states(self) -> List[str]:
        out = [self.state] if self.state else []
        out.extend(step.state for step in self.steps if step.state)
        return [s.split()[0] for s in out]

    @property
    def launch_failed(self) -> bool:
        """Exit code 0:53 (or reason JobLaunchFailure): the job never started."""
        return split_exit(self.exit_code)[1] == 53 or (self.reason or "") == "JobLaunchFailure"

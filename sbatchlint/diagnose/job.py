"""What Slurm knows about a job, apart from its logs: its state and exit codes.

The log reader works without it. ``diagnose --job ID`` (reading a job on the cluster) fills a
``JobRecord`` from sacct or scontrol (:mod:`.slurm`), and the analysis then uses the state and the
exit codes alongside the log: TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, a ``0:53`` launch failure.
"""
from __future__ import annotations


from ..lazyclass import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple


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
    tasks: Optional[int] = None


def expand_hostlist(nodes: Optional[str]) -> List[str]:
    """A Slurm host list as names: ``n[1-2,05],m3`` → ``n1 n2 n05 m3`` (one bracket per name)."""
    out: List[str] = []
    depth, start = 0, 0
    parts = []
    for i, char in enumerate(nodes or ""):
        depth += char == "["
        depth -= char == "]"
        if char == "," and depth == 0:
            parts.append(nodes[start:i])
            start = i + 1
    parts.append((nodes or "")[start:])
    for part in filter(None, parts):
        prefix, bracket, rest = part.partition("[")
        if not bracket:
            out.append(part)
            continue
        ranges, _, suffix = rest.partition("]")
        for item in ranges.split(","):
            low, dash, high = item.partition("-")
            if dash and low.isdigit() and high.isdigit():
                out.extend(f"{prefix}{str(n).zfill(len(low))}{suffix}" for n in range(int(low), int(high) + 1))
            else:
                out.append(f"{prefix}{item}{suffix}")
    return out


@dataclass(frozen=True)
class JobRecord:
    job_id: Optional[str] = None  # as asked for: "1234", "1234_7", "1234+1"
    state: Optional[str] = None  # the job's, or for a het job the first component's that did not complete
    exit_code: Optional[str] = None
    reason: Optional[str] = None
    nodes: Optional[str] = None
    steps: Tuple[StepRecord, ...] = ()
    source: str = "log"  # where the record came from: "sacct", "scontrol", "log"
    name: Optional[str] = None
    partition: Optional[str] = None
    account: Optional[str] = None
    raw_id: Optional[str] = None  # Slurm's own number for it (an array element's is not the array's)
    work_dir: Optional[str] = None
    std_out: Optional[str] = None
    std_err: Optional[str] = None
    submit_line: Optional[str] = None
    user: Optional[str] = None  # only to fill in %u of an output file name
    elapsed: Optional[str] = None
    time_limit: Optional[str] = None
    array_job_id: Optional[str] = None
    array_task_id: Optional[str] = None
    components: Tuple[StepRecord, ...] = ()  # a het job's components ("1234+0", "1234+1")

    def states(self) -> List[str]:
        out = [self.state] if self.state else []
        out.extend(c.state for c in self.components if c.state)
        out.extend(step.state for step in self.steps if step.state)
        return [s.split()[0] for s in out]

    @property
    def launch_failed(self) -> bool:
        """Exit code 0:53 (or reason JobLaunchFailure): the job never started."""
        return split_exit(self.exit_code)[1] == 53 or (self.reason or "") == "JobLaunchFailure"

    def het_task_offsets(self) -> Dict[str, int]:
        """For a het job: node → the global number of its component's first task in a step that
        spans the components. srun's ``task N`` lines count from 0 in each component, its ``-l``
        labels across all of them. Nodes shared by two components are left out (ambiguous)."""
        by_step: Dict[str, Dict[int, StepRecord]] = {}
        for step in self.steps:
            head, _, name = step.step_id.partition(".")
            if "+" in head and name.isdigit():
                by_step.setdefault(name, {})[int(head.rpartition("+")[2])] = step
        spanning = [parts for _, parts in sorted(by_step.items(), key=lambda kv: int(kv[0])) if len(parts) > 1]
        if not spanning:
            return {}
        parts = spanning[0]
        offsets: Dict[str, int] = {}
        seen: Dict[str, int] = {}
        total = 0
        for component in sorted(parts):
            step = parts[component]
            if step.tasks is None:
                return {}
            for node in expand_hostlist(step.nodes):
                seen[node] = seen.get(node, 0) + 1
                offsets[node] = total
            total += step.tasks
        return {node: offset for node, offset in offsets.items() if seen[node] == 1 and offset}

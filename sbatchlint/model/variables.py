"""The environment variables Slurm and the launchers set, and how their value varies.

One table, the only place these names are spelled: which variables differ between the tasks of a
step, between its nodes, between steps, and which are the same in every task of the job. The
batch shell is the batch step's one process on the first node, so it holds task 0's and node 0's
values (or none at all, for what a launcher sets in its workers): rules that ask which shell
expands a variable, which tasks run a command, or what a Python program can read all read the
same entry.

Scopes:

- ``TASK``: Slurm gives every task its own value (``SLURM_PROCID``);
- ``NODE``: the same for the tasks of one node, different between nodes (``SLURM_NODEID``);
- ``STEP``: set for the step's tasks (``SLURM_STEP_*``, ``SLURM_GTIDS``); the batch shell is not
  part of the step;
- ``LAUNCHER``: set per worker by a launcher (torchrun's ``RANK``, Open MPI's
  ``OMPI_COMM_WORLD_RANK``): empty or stale in the batch shell and in srun's tasks;
- ``LAUNCHER_WIDE``: set by a launcher, the same in all its workers (``WORLD_SIZE``);
- ``GPU``: the GPUs a task sees: per task when GPUs are bound per task, else the node's;
- ``JOB``: the same in every task of the job.
"""
from __future__ import annotations


from ..lazyclass import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, FrozenSet, Optional, Tuple

TASK, NODE, STEP, LAUNCHER, LAUNCHER_WIDE, GPU, JOB = "task", "node", "step", "launcher", "launcher-wide", "gpu", "job"
# What an index variable counts: the task's rank in the step, its index on its node, its node's index.
RANK, LOCAL, NODE_INDEX, HOST = "rank", "local", "node", "host"
SLURM, TORCHRUN, MPI, PMI, SHELL, CONVENTION = "slurm", "torchrun", "mpi", "pmi", "shell", "convention"


@dataclass(frozen=True)
class Variable:
    name: str
    scope: str
    set_by: str = SLURM
    # What the value identifies (RANK, LOCAL, NODE_INDEX, HOST), for the variables that tell tasks apart.
    index: Optional[str] = None
    # srun sets it in every task of every step (what a program started by srun can always read).
    in_every_task: bool = False
    # srun sets it again for each step (its own node/task counts, CPUs, GPUs): a step that uses part
    # of the allocation sees its own value, not the job's.
    per_step_value: bool = False
    # What Slurm itself sets per task with the same meaning (a launcher's ``RANK``: ``SLURM_PROCID``).
    slurm: Optional[str] = None
    # The pattern srun's file-name options (--output, --error, --input) replace with this value.
    file_pattern: Optional[str] = None
    # Slurm sets it in the batch shell and in every task of every step: inside a job, a default
    # such as ``${SLURM_NNODES:-1}`` never applies.
    always_set: bool = False


_V = Variable
TABLE: Tuple[Variable, ...] = (
    # -- Slurm, per task -----------------------------------------------------------------------
    _V("SLURM_PROCID", TASK, index=RANK, in_every_task=True, file_pattern="%t", always_set=True),
    _V("SLURM_LOCALID", TASK, index=LOCAL, in_every_task=True, always_set=True),
    # -- per node ------------------------------------------------------------------------------
    _V("SLURM_NODEID", NODE, index=NODE_INDEX, in_every_task=True, file_pattern="%n", always_set=True),
    _V("SLURMD_NODENAME", NODE, index=HOST, always_set=True),
    _V("SLURM_TOPOLOGY_ADDR", NODE, index=HOST, always_set=True),
    _V("HOSTNAME", NODE, SHELL, index=HOST),
    # -- per step (every SLURM_STEP_* name is, see scope_of) --------------------------------------
    _V("SLURM_STEPID", STEP, in_every_task=True),
    _V("SLURM_STEP_ID", STEP, in_every_task=True),
    _V("SLURM_STEP_NODEID", STEP, index=NODE_INDEX),
    _V("SLURM_STEP_NUM_TASKS", STEP, in_every_task=True),
    _V("SLURM_STEP_NUM_NODES", STEP, in_every_task=True),
    _V("SLURM_STEP_NODELIST", STEP, in_every_task=True),
    _V("SLURM_STEP_TASKS_PER_NODE", STEP, in_every_task=True),
    _V("SLURM_GTIDS", STEP, index=RANK, always_set=True),
    _V("SLURM_TASK_PID", STEP, always_set=True),
    _V("SLURM_SRUN_COMM_PORT", STEP),
    # -- set per worker by a launcher ------------------------------------------------------------
    _V("RANK", LAUNCHER, TORCHRUN, index=RANK, slurm="SLURM_PROCID"),
    _V("LOCAL_RANK", LAUNCHER, TORCHRUN, index=LOCAL, slurm="SLURM_LOCALID"),
    _V("NODE_RANK", LAUNCHER, CONVENTION, index=NODE_INDEX, slurm="SLURM_NODEID"),
    _V("GROUP_RANK", LAUNCHER, TORCHRUN, index=NODE_INDEX, slurm="SLURM_NODEID"),
    _V("ROLE_RANK", LAUNCHER, TORCHRUN, index=RANK, slurm="SLURM_PROCID"),
    _V("PMI_RANK", LAUNCHER, PMI, index=RANK, slurm="SLURM_PROCID"),
    _V("PMIX_RANK", LAUNCHER, PMI, index=RANK, slurm="SLURM_PROCID"),
    _V("PMI_LOCAL_RANK", LAUNCHER, PMI, index=LOCAL, slurm="SLURM_LOCALID"),
    _V("OMPI_COMM_WORLD_RANK", LAUNCHER, MPI, index=RANK, slurm="SLURM_PROCID"),
    _V("OMPI_COMM_WORLD_LOCAL_RANK", LAUNCHER, MPI, index=LOCAL, slurm="SLURM_LOCALID"),
    _V("OMPI_COMM_WORLD_NODE_RANK", LAUNCHER, MPI, index=NODE_INDEX, slurm="SLURM_NODEID"),
    _V("MV2_COMM_WORLD_RANK", LAUNCHER, MPI, index=RANK, slurm="SLURM_PROCID"),
    # -- set by torchrun, the same in all its workers ---------------------------------------------
    _V("WORLD_SIZE", LAUNCHER_WIDE, TORCHRUN, slurm="SLURM_NTASKS"),
    _V("LOCAL_WORLD_SIZE", LAUNCHER_WIDE, TORCHRUN),
    _V("GROUP_WORLD_SIZE", LAUNCHER_WIDE, TORCHRUN),
    _V("ROLE_WORLD_SIZE", LAUNCHER_WIDE, TORCHRUN),
    _V("ROLE_NAME", LAUNCHER_WIDE, TORCHRUN),
    _V("TORCHELASTIC_RUN_ID", LAUNCHER_WIDE, TORCHRUN),
    _V("TORCHELASTIC_RESTART_COUNT", LAUNCHER_WIDE, TORCHRUN),
    _V("TORCHELASTIC_MAX_RESTARTS", LAUNCHER_WIDE, TORCHRUN),
    _V("TORCHELASTIC_USE_AGENT_STORE", LAUNCHER_WIDE, TORCHRUN),
    # -- the GPUs a task sees --------------------------------------------------------------------
    _V("CUDA_VISIBLE_DEVICES", GPU),
    _V("ROCR_VISIBLE_DEVICES", GPU),
    _V("HIP_VISIBLE_DEVICES", GPU),
    _V("GPU_DEVICE_ORDINAL", GPU),
    # -- the same in every task of the job -------------------------------------------------------
    _V("SLURM_JOB_ID", JOB, in_every_task=True, always_set=True),
    _V("SLURM_JOBID", JOB, in_every_task=True, always_set=True),
    _V("SLURM_JOB_NAME", JOB, always_set=True),
    _V("SLURM_JOB_NUM_NODES", JOB, in_every_task=True, always_set=True),
    _V("SLURM_NNODES", JOB, in_every_task=True, per_step_value=True, always_set=True),
    _V("SLURM_JOB_NODELIST", JOB, in_every_task=True, always_set=True),
    _V("SLURM_NODELIST", JOB, in_every_task=True, per_step_value=True, always_set=True),
    _V("SLURM_NTASKS", JOB, in_every_task=True, per_step_value=True),
    _V("SLURM_NPROCS", JOB, in_every_task=True, per_step_value=True),
    _V("SLURM_NTASKS_PER_NODE", JOB, per_step_value=True),
    _V("SLURM_TASKS_PER_NODE", JOB, in_every_task=True, per_step_value=True, always_set=True),
    _V("SLURM_JOB_CPUS_PER_NODE", JOB, always_set=True),
    _V("SLURM_CPUS_ON_NODE", JOB, per_step_value=True, always_set=True),
    _V("SLURM_CPUS_PER_TASK", JOB, per_step_value=True),
    _V("SLURM_GPUS_ON_NODE", JOB, per_step_value=True),
    _V("SLURM_GPUS_PER_NODE", JOB),
    _V("SLURM_JOB_PARTITION", JOB, always_set=True),
    _V("SLURM_JOB_ACCOUNT", JOB),
    _V("SLURM_JOB_QOS", JOB),
    _V("SLURM_SUBMIT_DIR", JOB, in_every_task=True, always_set=True),
    _V("SLURM_SUBMIT_HOST", JOB, always_set=True),
    _V("SLURM_CLUSTER_NAME", JOB, always_set=True),
    _V("SLURM_ARRAY_JOB_ID", JOB),
    _V("SLURM_ARRAY_TASK_ID", JOB),
    _V("SLURM_ARRAY_TASK_COUNT", JOB),
    _V("SLURM_ARRAY_TASK_MIN", JOB),
    _V("SLURM_ARRAY_TASK_MAX", JOB),
    _V("SLURM_RESTART_COUNT", JOB),
)
BY_NAME: Dict[str, Variable] = {v.name: v for v in TABLE}
STEP_PREFIX = "SLURM_STEP_"


def lookup(name: Optional[str]) -> Optional[Variable]:
    """The table's entry for a variable (a ``SLURM_STEP_*`` name not listed is a step variable)."""
    if not name:
        return None
    found = BY_NAME.get(name)
    if found is None and name.startswith(STEP_PREFIX):
        return Variable(name, STEP)
    return found


def scope_of(name: Optional[str]) -> Optional[str]:
    """How the variable's value varies (TASK, NODE, STEP, LAUNCHER, LAUNCHER_WIDE, GPU, JOB), or
    None for a variable neither Slurm nor a launcher sets."""
    found = lookup(name)
    return found.scope if found is not None else None


def _names(**where) -> FrozenSet[str]:
    """The names of the variables whose every field ``where`` names has one of the wanted values
    (filtered one field at a time: the table is read at every start-up)."""
    found = TABLE
    for key, want in where.items():
        found = [v for v in found if getattr(v, key) in want]
    return frozenset(v.name for v in found)


# Derived views, for the questions rules ask most.
# Differ between the tasks (or nodes) of one step: a task must expand them itself.
PER_TASK: FrozenSet[str] = _names(scope=(TASK, NODE, STEP, LAUNCHER))
# Tell tasks apart by a number: ranks, local ranks, node indices.
INDEX: FrozenSet[str] = _names(index=(RANK, LOCAL, NODE_INDEX))
# Name the task's host: the first node's name, frozen early, names the rendezvous host.
HOST_NAMES: FrozenSet[str] = _names(index=(HOST,))
# Set by a launcher in its workers only (never by srun, never by the batch shell).
LAUNCHED: FrozenSet[str] = _names(scope=(LAUNCHER, LAUNCHER_WIDE))
# What torchrun sets in each worker.
TORCHRUN_SET: FrozenSet[str] = _names(set_by=(TORCHRUN,))
# Launcher index variables a script commonly exports by hand (``export RANK=$SLURM_PROCID``).
HAND_SET_RANKS: Tuple[str, ...] = tuple(
    v.name for v in TABLE if v.scope == LAUNCHER and v.set_by in (TORCHRUN, CONVENTION) and v.index is not None
)
# A task's rank or local rank, as srun or torchrun give it: 0 is "the first task" to a program.
RANK_OR_LOCAL: Tuple[str, ...] = tuple(
    v.name for v in TABLE if v.index in (RANK, LOCAL) and v.set_by in (SLURM, TORCHRUN) and v.scope in (TASK, LAUNCHER)
)
# What a task's shell must expand itself, never the batch shell (or the shell that submits).
TASK_EXPANDS_SCOPES = (TASK, NODE, STEP, LAUNCHER, LAUNCHER_WIDE, GPU)
# What srun sets in every task of every step.
SRUN_TASK: FrozenSet[str] = _names(in_every_task=(True,))
# Set again by srun for each step.
PER_STEP_VALUE: FrozenSet[str] = _names(per_step_value=(True,))
# The launcher's world size (torchrun's; srun's is SLURM_NTASKS).
WORLD_SIZE = next(v.name for v in TABLE if v.set_by == TORCHRUN and v.slurm is not None and v.index is None)
# What every shell sets itself.
SHELL_SET: FrozenSet[str] = _names(set_by=(SHELL,))
# srun's file-name patterns for the values it can put into a file name itself.
FILE_PATTERN: Dict[str, str] = {v.name: v.file_pattern for v in TABLE if v.file_pattern}
# Set by Slurm in the batch shell and in every task (checked with ``env`` in a batch script and in
# an ``srun`` step on Slurm 22.05).
ALWAYS_SET: FrozenSet[str] = _names(always_set=(True,))
# Slurm's own rank variable: the task's index in its step.
SLURM_RANK = next(v.name for v in TABLE if v.set_by == SLURM and v.index == RANK and v.scope == TASK)
# What a program reads to join a world that srun started: its rank, its local rank, the task count.
SLURM_WORLD: FrozenSet[str] = _names(set_by=(SLURM,), index=(RANK, LOCAL)) | frozenset(
    v.name for v in TABLE if v.set_by == SLURM and v.scope == JOB and v.per_step_value and v.in_every_task
    and v.name.endswith(("NTASKS", "NPROCS"))
)


def slurm_equivalent(name: str) -> Optional[str]:
    """What Slurm itself sets with the same meaning as a launcher's variable (``RANK`` → ``SLURM_PROCID``)."""
    found = BY_NAME.get(name)
    return found.slurm if found is not None else None


# Variables whose value changes when a step's task count changes.
TASK_COUNT_VARIABLES: FrozenSet[str] = frozenset(
    {
        "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
        "SLURM_STEP_NUM_TASKS", "SLURM_STEP_TASKS_PER_NODE",
    }
)

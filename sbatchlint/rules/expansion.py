"""SBL201–SBL203: which shell expands a variable of a step's task command, and whether it has it.

The batch shell runs once, on the job's first node. A task command written as a string
(``srun … bash -c "$TRAIN_CMD"``, ``srun bash <<EOF``) is expanded twice: by the batch shell when the
string is built, then by every task's shell. Per-task values must be left to the second
expansion (SBL201); job-wide ones may go either way (SBL202); and a variable left to the task
must exist in the task's environment, which holds only what the batch shell exported (SBL203).
The analysis of who expands what lives in ``model/boundary.py``.
"""
from __future__ import annotations


from .. import options as option_table
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..model.boundary import (
    IDENTIFIER,
    EarlyExpansion,
    Occurrence,
    early_expansions,
    export_edit,
    late_expansions,
    reaching_assignments,
)
from ..model import variables
from ..model.heredocs import submission_expansions
from ..model.geometry import geometry
from ..registry import register
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Set, Tuple

# -- which variables differ between tasks, nodes, steps (the table: model/variables.py) ---------------
PER_STEP_VALUE = variables.PER_STEP_VALUE
# Step options that make a step use less (or other) than the whole allocation.
PARTIAL_STEP_OPTIONS = (
    option_table.NODES,
    option_table.NTASKS,
    option_table.NTASKS_PER_NODE,
    option_table.NODELIST,
    option_table.EXCLUDE,
    option_table.RELATIVE,
    option_table.CPUS_PER_TASK,
    option_table.GPUS,
    option_table.GPUS_PER_NODE,
    option_table.GPUS_PER_TASK,
    option_table.GRES,
)


# The scopes ``early_scope`` answers for (any other variable: None).
_SCOPES = frozenset({variables.GPU, variables.TASK, variables.LAUNCHER, variables.NODE, variables.STEP, variables.JOB})


def early_scope(name: str, script, step) -> Optional[str]:
    """How a variable's value varies for this step: "task", "node", "launcher", "step", "gpu"
    (each task has its own), "job" (the same everywhere), or None (not a variable Slurm or a
    launcher provides)."""
    scope = variables.scope_of(name)
    if scope == variables.GPU:
        return "gpu" if _gpus_bound_per_task(script, step) else "job"
    if scope in (variables.TASK, variables.LAUNCHER, variables.NODE, variables.STEP, variables.JOB):
        return scope
    return None


def _gpus_bound_per_task(script, step) -> bool:
    if step.has(option_table.GPUS_PER_TASK, option_table.GPU_BIND, option_table.NTASKS_PER_GPU):
        return True
    if step.has(option_table.GPUS, option_table.GPUS_PER_NODE, option_table.GRES):
        return False
    header = script.header
    return any(header.get(name) is not None for name in (option_table.GPUS_PER_TASK, option_table.GPU_BIND, option_table.NTASKS_PER_GPU))


def _same_as_batch_shell(name: str, scope: str, script, step) -> bool:
    """The batch shell's value is the task's own: a one-task step (or a one-node step for the
    node's variables) running where the batch shell runs."""
    if scope not in ("task", "node"):
        return False
    if step.has(option_table.NODELIST, option_table.EXCLUDE, option_table.RELATIVE) or step.options_incomplete:
        return False
    shape = geometry(script, step)
    if shape.ntasks.is_set and shape.ntasks.value == 1:
        return True
    if shape.nodes_at_submission:
        return False  # ``sbatch -N`` decides how many nodes (and tasks) run it
    if scope == "task":
        return shape.ntasks.value == 1
    return shape.nodes.value == 1


def _assigned_by_task(step, name: str) -> bool:
    """The task command string assigns the variable itself (``export RANK=$SLURM_PROCID; …``)."""
    return step.task_values is not None and step.task_values.defined(name)


# The batch shell's host is the job's first node: its name frozen early is the usual way to give
# every task the rendezvous host (MASTER_ADDR=$SLURMD_NODENAME, --rdzv_endpoint=$HOSTNAME:29500).
HOST_NAME_VARIABLES = variables.HOST_NAMES
RENDEZVOUS_HINTS = ("MASTER", "ADDR", "ENDPOINT", "RDZV", "HEAD", "COORD", "LEADER", "HOST", "SERVER", "DIST_URL", "INIT_METHOD")


def _first_node_on_purpose(entry: EarlyExpansion, occurrence: Occurrence) -> bool:
    """A host name frozen early to name the rendezvous host: the first node's is the right one."""
    if entry.name not in HOST_NAME_VARIABLES:
        return False
    if entry.holder and any(hint in entry.holder.upper() for hint in RENDEZVOUS_HINTS):
        return True
    before = occurrence.value.text.encode("utf-8")[: occurrence.offset].decode("utf-8", errors="replace")
    if before and not before[-1].isspace():
        # inside a word: ``--master_addr=$HOSTNAME`` / ``MASTER_ADDR=$HOSTNAME``, not ``/logs/$HOSTNAME``
        token = before.split()[-1]
        if "=" not in token:
            return False
        option = token.split("=", 1)[0]
    elif occurrence.in_string:
        words = before.split()  # ``--master_addr $HOSTNAME``
        option = words[-1] if words and words[-1].startswith("-") else ""
    else:
        argv = occurrence.step.task_argv
        index = next((i for i, word in enumerate(argv) if word is occurrence.word), 0)
        option = argv[index - 1].text if index > 0 and argv[index - 1].text.startswith("-") else ""
    option = option.upper().replace("-", "_")
    return any(hint in option for hint in RENDEZVOUS_HINTS)


def _scripts_own(script, name: str, scope: Optional[str]) -> bool:
    """A launcher's variable name the script assigns itself from values of its own (a loop
    ``for NODE_RANK in 0 1``): the batch shell's value is the one the script meant."""
    if scope != "launcher":
        return False
    values = script.values
    assignments = values.assignments.get(name, [])
    if not assignments:
        return False
    for assignment in assignments:
        if assignment.value_node is None:
            continue
        for value in values.evaluate(assignment.value_node):
            if any(not p.known and variables.scope_of(p.name) not in (None, variables.JOB) for p in value.pieces):
                return False  # taken from a per-task value: still wrong in every task
    return True


def _read_only_by_static_rendezvous(script, entry: EarlyExpansion, occurrence: Occurrence) -> bool:
    """The value of torchrun's ``--node_rank`` (accelerate's ``--machine_rank``) under a dynamic
    rendezvous (c10d, etcd), which assigns ranks itself and reads it only with the static one."""
    from ..model.launch import launches_of

    for launch in launches_of(script, occurrence.step):
        option = launch.option("node_rank") or launch.option("machine_rank")  # accelerate's name
        if option is None:
            continue
        backends = launch.option_values("rdzv_backend")
        if not backends or not all(v is not None and v.known and v.text in DYNAMIC_BACKENDS for v in backends):
            continue
        if any(p.span == entry.site for word in option.words for p in word.pieces):
            return True
    return False


# Rendezvous backends that assign node ranks themselves.
DYNAMIC_BACKENDS = frozenset({"c10d", "etcd", "etcd-v2"})


CONSEQUENCE = {
    "task": "every task gets the batch shell's value (task 0's) instead of its own",
    "node": "every task gets the first node's value instead of its own node's",
    "launcher": "the batch shell has no per-task value for it, so every task gets the same one (usually empty)",
    "step": "the batch shell is not part of this step, so every task gets the batch step's value (or nothing)",
    "gpu": "every task gets the first node's GPU list instead of the GPUs bound to it",
}


def _line(script, offset: int) -> int:
    return script.source.line_of(offset)


def _where(script, entry: EarlyExpansion, step) -> str:
    line = _line(script, step.span.start)
    if entry.holder:
        return f"when it builds `{entry.holder}` (the task command of the step on line {line})"
    return f"in the command string of the step on line {line}"


def _bash_c_form(occurrence: Occurrence, name: str) -> str:
    """The argument as it would read inside ``bash -c '…'``, the variable left to the task."""
    return occurrence.word.text.replace("${" + name + "}", "$" + name)


def _task_expands(name: str) -> Optional[bool]:
    """Inside ``bash -c '…'`` run by each task: True when the task's shell has the value meant
    (a per-task, per-node or per-step value, or one srun sets alike in every task), False when only
    the batch shell has it (passed as an argument), None when neither has it (a launcher's)."""
    scope = variables.scope_of(name)
    if scope in (variables.LAUNCHER, variables.LAUNCHER_WIDE):
        return None
    if scope in variables.TASK_EXPANDS_SCOPES:
        return True
    return name in variables.SRUN_TASK and name not in variables.PER_STEP_VALUE


def _same_everywhere(name: str) -> bool:
    """The batch shell and every task of a step hold the same value (the job's id, its nodes)."""
    return variables.scope_of(name) == variables.JOB and name not in variables.PER_STEP_VALUE


def _task_shell_fix(script, occurrence: Occurrence, entry: EarlyExpansion, why: Optional[List[str]] = None) -> Optional[Fix]:
    """The step's task command run through the task's own shell (``bash -c 'exec …'``): safe when
    nothing in it needs the batch shell, unsafe when batch-shell values go in as arguments
    (their word splitting no longer applies)."""
    def keep(name: str) -> Optional[bool]:
        decision = _task_expands(name)
        if decision is None and _scripts_own(script, name, variables.LAUNCHER):
            return False  # a launcher's name the script assigns itself: the batch shell's value is meant
        return decision

    from ..model import placement  # only for a finding's fix

    wrapped = placement.wrap_in_task_shell(script, occurrence.step, entry.site, keep, _same_everywhere, why)
    if wrapped is None:
        return None
    edits, arguments = wrapped
    description = "run the task command through each task's own shell (`bash -c 'exec …'`), which expands the value"
    if arguments:
        passed = ", ".join(f"`{a}`" for a in arguments)
        return Fix.unsafe(f"{description}; the batch shell's {passed} passed as arguments", *edits)
    return Fix.safe(description, *edits)


# -- srun's own file-name options ------------------------------------------------------------------
# srun opens these files for the tasks; a value the batch shell filled in is the same for all of them.
FILE_NAME_OPTIONS = ("output", "error", "input")
# The per-task values srun can put into a file name itself (its %t and %n patterns).
FILE_NAME_PATTERN = variables.FILE_PATTERN
# Scopes whose variable was meant to tell the tasks' (or nodes') files apart.
FILE_NAME_SCOPES = ("task", "node", "launcher")


def _file_name_pattern(name: str) -> Optional[str]:
    """srun's pattern for what the variable holds in a task (None: srun has none)."""
    if name in HOST_NAME_VARIABLES:
        return "%N"
    return FILE_NAME_PATTERN.get(variables.slurm_equivalent(name) or name)


def _value_start(option, text: str) -> int:
    """Where the option's value starts in the rendered text of its last word."""
    if len(option.words) > 1:
        return 0
    if option.written.startswith("--"):
        return text.find("=") + 1
    return 3 if text[2:3] == "=" else 2


def _joins_a_pattern(before: str) -> bool:
    """The value text before a spot ends in an open ``%`` (``%``, ``%3``, not ``%%``): srun would
    read the next character as part of that pattern."""
    stripped = before.rstrip("0123456789")
    return (len(stripped) - len(stripped.rstrip("%"))) % 2 == 1


def _file_name_findings(script, step, option, reported: Set[Tuple[int, int]]):
    """(piece, scope, fixable pattern or None, why not fixed) for each per-task variable the batch
    shell expands into one of srun's file-name options. ``reported`` holds the sites already
    reported (and gains the new ones)."""
    data = script.data
    word = option.words[-1]
    for value in (word.alternatives or [word.value]):
        text = value.text
        start = _value_start(option, text)
        offset = 0
        for piece in value.pieces:
            at = offset
            offset += len(piece.render())
            if piece.known or piece.task or not piece.name or piece.span is None or at < start:
                continue
            name = piece.name
            scope = early_scope(name, script, step)
            if scope not in FILE_NAME_SCOPES:
                continue
            site = piece.span
            key = (site.start, site.end)
            written = data[site.start : site.end].decode("utf-8", errors="replace")
            if key in reported or not (written.startswith("$" + name) or written.startswith("${" + name)):
                continue
            if at == start and offset == len(text) and name not in HOST_NAME_VARIABLES:
                continue  # a bare number: srun's "only this task" mode, not a file name
            if _same_as_batch_shell(name, scope, script, step):
                continue
            reported.add(key)
            pattern = FILE_NAME_PATTERN.get(name)
            reason = ""
            if name in HOST_NAME_VARIABLES:
                reason = f"`%N` is the node's short host name, which may differ from `{name}`"
            elif scope == "launcher":
                reason = f"`{name}` is set by a launcher, never by srun"
            elif pattern is None:
                reason = "srun has no file-name pattern for it"
            elif written not in ("$" + name, "${" + name + "}"):
                reason = f"`{written}` is more than the plain variable"
            elif piece.via or not (word.span.start <= site.start and site.end <= word.span.end):
                reason = "the value comes through another variable"
            elif "\\" in text[start:]:
                reason = "srun replaces no pattern in a file name that holds a backslash"
            elif _joins_a_pattern(text[start:at]):
                reason = "a `%` right before it would change the pattern"
            yield piece, scope, (None if reason else pattern), reason


@register
class PerTaskVariableExpandedEarly(Rule):
    code = "SBL201"
    name = "per-task-variable-expanded-early"
    severity = Severity.ERROR
    summary = "A per-task variable (`$SLURM_PROCID`, `$SLURM_NODEID`, `$RANK`…) is expanded by the batch shell: every task gets the same value."
    what = """
        Finds variables whose value differs between the tasks of a step (`SLURM_PROCID`,
        `SLURM_LOCALID`, `SLURM_NODEID`, `SLURMD_NODENAME`, `SLURM_STEP_*`, `SLURM_GTIDS`,
        `SLURM_TASK_PID`, the launchers' `RANK`, `LOCAL_RANK`, `NODE_RANK`, `GROUP_RANK`, and
        `CUDA_VISIBLE_DEVICES` when GPUs are bound per task) that the batch shell expands into a
        step's task command: unescaped inside a double-quoted string that the step runs with
        `bash -c` (also when the string is built over several assignments, `CMD="$CMD …"`, in a
        loop, or fed to `srun bash` as a here-document), or written directly on the step's
        command line (`srun torchrun --node_rank=$SLURM_NODEID …`, `RANK=$SLURM_PROCID srun …`).
        The report points at the `$` where it was written, even several assignments away from
        the `srun` line. An expansion in a command the batch shell runs itself (`echo "node
        $SLURM_NODEID"`) is not reported: the batch shell legitimately is task 0 of node 0.
        A one-task step (or a one-node step, for the node's variables) gets the batch shell's
        value anyway and is not reported; a script that gives no node count is not taken for one
        node (`sbatch -N` decides at submission), so its steps are reported unless they set
        their own single node or task, nor is a host name frozen into a rendezvous address
        (`MASTER_ADDR=$SLURMD_NODENAME`, `--rdzv_endpoint=$HOSTNAME:29500`): the first node's
        name is the right one there. Not reported either: the value of torchrun's `--node_rank`
        under a dynamic rendezvous (`--rdzv_backend=c10d` or etcd), which assigns node ranks
        itself and reads `--node_rank` only with the static one; and a launcher's variable name
        that the script assigns itself from its own values (`for NODE_RANK in 0 1; do srun -N1
        … --node_rank=$NODE_RANK …`): the batch shell's value is the one meant.

        It also finds such a variable in a file name the step's srun opens for its tasks:
        `--output`/`-o`, `--error`/`-e`, `--input`/`-i` (`srun --output=logs/rank_$SLURM_PROCID.log
        …`), written in the option itself or reaching it through a variable (`-o "$LOG"`). A value
        that is only the number (`--output=$SLURM_PROCID`) is srun's "this task only" form, not a
        file name, and is left alone; `#SBATCH --output` lines are not shell-expanded at all and
        belong to the directive rules.

        And it finds one in a job the script submits from an unquoted here-document
        (`sbatch <<EOF … srun train.py --rank $SLURM_PROCID … EOF`): the submitting shell fills
        it in before the job exists. `\\$SLURM_PROCID` there, or a quoted delimiter (`<<'EOF'`),
        leaves it to the job.
    """
    why = """
        The batch shell runs once, on the first node of the job. It expands the string when the
        assignment runs, and every task then receives the same text: `--node_rank=0` on every
        node, so torchrun waits forever for the other node ranks, or every process claims rank 0
        and the job hangs at initialization or overwrites the same files. In an srun file name the
        batch shell's value makes every task write (or read) one and the same file:
        `logs/rank_0.log` holds every rank's output interleaved, or the last writer's, and there is
        no trace of which rank failed. srun fills in per-task names itself: `%t` is the task's
        rank (what `SLURM_PROCID` holds), `%n` its node's index in the job (what `SLURM_NODEID`
        holds), `%N` the node's short host name.
    """
    fix_safety = """
        Safe inside a string: a backslash before exactly that `$` (`\\$SLURM_NODEID`) leaves it to
        each task's shell, and nothing else changes. It is only offered when the variable that
        holds the text flows into task command strings alone (printing it with `echo` is fine)
        and is not exported, and when the task's shell really expands that spot (not inside
        single quotes of the command string). The launchers' `RANK`, `LOCAL_RANK`, `NODE_RANK`
        are only escaped when the command string sets them itself; otherwise the task's shell
        has no value for them either, and the help names Slurm's own variable (`SLURM_PROCID`,
        `SLURM_LOCALID`, `SLURM_NODEID`).

        On the step's command line no shell runs in the task, so the fix gives it one: the task
        command is run through `bash -c 'exec …'`, its words and lines as they were written,
        so each task's shell expands the variable, and `exec` leaves the program as the task
        itself (signals, `--kill-on-bad-exit` and the exit code reach it as before). Values
        only the batch shell has (`$DATA`, `$(…)`) are passed as arguments: `bash -c 'exec
        python t.py --data "${1}" --rank $SLURM_PROCID' _ "$DATA"`. Safe when nothing else in
        the command needs the batch shell (variables srun sets alike in every task, such as
        `$SLURM_JOB_NUM_NODES`, stay inside the quotes); unsafe when values go in as arguments,
        since the batch shell no longer splits them into words. A word the batch shell expands
        to several (`"${ARGS[@]}"`, an unquoted `$LAUNCH`) cannot be one argument: the words from
        the first to the last that need the batch shell move, as written, behind the quotes and
        run as `"$@"` (`bash -c 'exec python t.py "$@" --rank $SLURM_PROCID' _ "${ARGS[@]}"`), so
        the batch shell expands them exactly as before; also unsafe. A launcher's name the script
        assigns itself (`MASTER_ADDR=$(…)`) is the batch shell's value and goes in as an argument.
        No fix, with the reason in the help, when the command comes from a variable (`srun
        $CMD`), uses a launcher's variable (`$RANK`) that no shell of the task has, takes a
        per-task value the batch shell already put into another variable, or has such lists on
        both sides of the task's value.

        Safe in srun's file-name options: exactly the bytes `$SLURM_PROCID`/`${SLURM_PROCID}`
        become `%t` and `$SLURM_NODEID`/`${SLURM_NODEID}` become `%n`, which srun replaces with
        the same numbers per task; every other byte stays. Only offered when the expansion is
        written in that option word (not when it comes through a variable, which other commands
        may use too), when it is a plain expansion (not `${SLURM_PROCID:-0}`), when the file name
        holds no backslash (srun then replaces no pattern at all) and when no open `%` stands
        right before it. `SLURM_LOCALID` and the launchers' variables have no srun pattern, and
        `%N` (the short host name) may differ from `SLURMD_NODENAME`: those are reported with a
        hint and no fix.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                WORKDIR=/lustre/fsw/llm/Megatron-LM
                TRAIN_CMD="cd $WORKDIR && torchrun --nproc_per_node=8 \
                  --nnodes=\$SLURM_JOB_NUM_NODES --node_rank=$SLURM_NODEID \
                  --master_addr=\$MASTER_ADDR --master_port=29500 \
                  pretrain_gpt.py"
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"
                """
            ),
            fixed=clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                WORKDIR=/lustre/fsw/llm/Megatron-LM
                TRAIN_CMD="cd $WORKDIR && torchrun --nproc_per_node=8 \
                  --nnodes=\$SLURM_JOB_NUM_NODES --node_rank=\$SLURM_NODEID \
                  --master_addr=\$MASTER_ADDR --master_port=29500 \
                  pretrain_gpt.py"
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"
                """
            ),
            count=1,
            contains="first node",
            title="a TRAIN_CMD string over several lines",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                IMAGE=nvcr.io/nvidia/nemo:25.09
                CMD="python train.py --global-rank $SLURM_PROCID"
                CMD="$CMD --local-rank ${SLURM_LOCALID}"
                SRUN_CMD="srun --kill-on-bad-exit=1 --container-image=$IMAGE"
                $SRUN_CMD bash -lc "$CMD"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                IMAGE=nvcr.io/nvidia/nemo:25.09
                CMD="python train.py --global-rank \\$SLURM_PROCID"
                CMD="$CMD --local-rank \\${SLURM_LOCALID}"
                SRUN_CMD="srun --kill-on-bad-exit=1 --container-image=$IMAGE"
                $SRUN_CMD bash -lc "$CMD"
                """
            ),
            count=2,
            title="a command built by concatenation and run through $SRUN_CMD",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 --nnodes=2 --node_rank=$SLURM_NODEID \\
                  --master_addr=$MASTER_ADDR --master_port=29500 train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c 'exec torchrun --nproc_per_node=8 --nnodes=2 --node_rank=$SLURM_NODEID \\
                  --master_addr="${1}" --master_port=29500 train.py' _ "$MASTER_ADDR"
                """
            ),
            unsafe=True,
            contains="command line",
            title="written directly on the step's command line: the task's own shell, the batch shell's value as an argument",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 python train.py --rank $SLURM_PROCID --world $SLURM_NTASKS
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'exec python train.py --rank $SLURM_PROCID --world "${1}"' _ "$SLURM_NTASKS"
                """
            ),
            unsafe=True,
            title="a job-wide count srun sets per step stays the batch shell's, passed as an argument",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 python train.py --rank $SLURM_PROCID --job $SLURM_JOB_ID
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'exec python train.py --rank $SLURM_PROCID --job $SLURM_JOB_ID'
                """
            ),
            title="nothing else needs the batch shell: a safe fix",
        ),
        Good(
            clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                WORKDIR=/lustre/fsw/llm/Megatron-LM
                echo "batch shell on node $SLURM_NODEID of $SLURM_JOB_NUM_NODES"
                TRAIN_CMD="cd $WORKDIR && torchrun --nproc_per_node=8 \
                  --nnodes=\${SLURM_JOB_NUM_NODES} --node_rank=\${SLURM_NODEID} train.py"
                srun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"
                srun --kill-on-bad-exit=1 bash -c 'echo "task $SLURM_PROCID on $(hostname)"'
                """
            ),
            title="escaped in the string, single-quoted, or in the batch shell's own commands",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                srun --nodes=1 --ntasks=1 bash -c "echo prepared by task $SLURM_PROCID > /lustre/fsw/llm/ready"
                """
            ),
            title="a one-task step gets the batch shell's value anyway",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                #SBATCH --output=logs/%x_%j.out
                srun --kill-on-bad-exit=1 --output=logs/rank_${SLURM_PROCID}.log \\
                  -e "logs/node_$SLURM_NODEID.err" python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                #SBATCH --output=logs/%x_%j.out
                srun --kill-on-bad-exit=1 --output=logs/rank_%t.log \\
                  -e "logs/node_%n.err" python train.py
                """
            ),
            count=2,
            contains="every task writes the same file",
            title="a per-task file name in srun's own --output/--error",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                LOG=logs/rank_$SLURM_PROCID.log
                srun --kill-on-bad-exit=1 -o "$LOG" -e logs/local_$SLURM_LOCALID.err python train.py
                """
            ),
            count=2,
            title="through a variable, or with no srun pattern: reported, not fixed",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                echo "batch shell: task $SLURM_PROCID" > logs/batch_$SLURM_PROCID.txt
                srun --kill-on-bad-exit=1 --output=logs/%j_rank_%t.log --error=logs/%j_node_%n.err python train.py
                srun --ntasks=1 --output=logs/prepare_$SLURM_PROCID.log python prepare.py
                """
            ),
            title="srun's own patterns, the batch shell's own files, a one-task step",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        reported: Set[Tuple[int, int]] = set()
        for diagnostic in self._task_commands(script):
            reported.add((diagnostic.span.start, diagnostic.span.end))
            yield diagnostic
        for step in script.steps:
            for option in step.options:
                if option.name in FILE_NAME_OPTIONS:
                    for finding in _file_name_findings(script, step, option, reported):
                        yield self._file_name_report(script, step, option, *finding)
        if b"<<" in script.data:
            for span, name, scope in submission_expansions(script):
                written = script.text(span)
                yield self.report(
                    script,
                    span,
                    f"`{written}` in an unquoted here-document is expanded by the submitting shell",
                    label="expanded at submission",
                    help=f"write `\\${name}` so that the job's own shell expands it, or quote the delimiter (<<'EOF')",
                    notes=(
                        "the here-document is the job this script submits: it is expanded before the job exists, so "
                        f"every task of the job gets the submitting shell's value of `{name}` (usually empty)",
                    ),
                )

    def _file_name_report(self, script, step, option, piece, scope: str, pattern: Optional[str], reason: str) -> Diagnostic:
        written = script.text(piece.span)
        line = _line(script, step.span.start)
        frozen = {
            "task": "to task 0's value",
            "node": "to the first node's value",
        }.get(scope, "to the batch shell's own value (usually empty)")
        if option.name == "input":
            consequence = "every task reads the same file instead of its own"
        else:
            consequence = "every task writes the same file, so their outputs interleave or overwrite each other"
        message = f"`{written}` in `srun {option.written}` (line {line}) is expanded once by the batch shell"
        notes = (f"it is expanded {frozen}: {consequence}",)
        if pattern is not None:
            meaning = "rank" if pattern == "%t" else "node id"
            fix = Fix.safe(f"write srun's `{pattern}` pattern", Edit(piece.span, pattern))
            help = f"write `{pattern}`: srun fills in each task's {meaning} itself"
            return self.report(script, piece.span, message, fix, label="the same for every task", help=help, notes=notes)
        hint = _file_name_pattern(piece.name)
        if hint is not None:
            help = f"write srun's file-name pattern `{hint}` instead (not fixed automatically: {reason})"
        else:
            help = (
                "srun has no file-name pattern for the node-local id: name the files by rank with `%t` "
                "(or `%N_%t`), or redirect inside the task with `bash -c '… > file_$SLURM_LOCALID'`"
            )
        return self.report(script, piece.span, message, None, label="the same for every task", help=help, notes=notes)

    def _task_commands(self, script) -> Iterator[Diagnostic]:
        for entry in early_expansions(script):
            if variables.scope_of(entry.name) not in _SCOPES:
                continue  # no variable Slurm or a launcher provides: ``early_scope`` is None everywhere
            relevant = []
            for o in entry.occurrences:
                scope = early_scope(entry.name, script, o.step)  # (asked once per occurrence)
                if (
                    scope not in (None, "job")
                    and not _same_as_batch_shell(entry.name, scope, script, o.step)
                    and not _first_node_on_purpose(entry, o)
                    and not _scripts_own(script, entry.name, scope)
                    and not _read_only_by_static_rendezvous(script, entry, o)
                ):
                    relevant.append(o)
            if not relevant:
                continue
            first = relevant[0]
            scope = early_scope(entry.name, script, first.step) or "task"
            consequence = CONSEQUENCE[scope]
            written = f"${entry.name}" if not script.data[entry.site.start : entry.site.start + 2] == b"${" else f"${{{entry.name}}}"
            direct = next((o for o in relevant if not o.in_string), None)
            if direct is not None:
                line = _line(script, direct.step.span.start)
                message = f"`{written}` is expanded by the batch shell on the step's command line (line {line})"
                notes = (f"it is expanded once, on the job's first node: {consequence}",)
                help = (
                    "let each task's shell expand it: `srun … bash -c 'exec … "
                    + _bash_c_form(direct, entry.name)
                    + " …'`"
                )
                why: List[str] = []
                fix = _task_shell_fix(script, direct, entry, why)
                if fix is None and why:
                    help += f" (no automatic fix: {why[0]})"
                yield self.report(
                    script, entry.site, message, fix, label="expanded by the batch shell", help=help, notes=notes
                )
                continue
            message = f"`{written}` is expanded once by the batch shell, not by each task"
            notes = (f"the batch shell expands it on the job's first node, {_where(script, entry, first.step)}", consequence)
            escaped = "\\" + script.text(entry.site)
            fix = None
            if scope == "launcher" and not all(_assigned_by_task(o.step, entry.name) for o in relevant):
                # The task's shell has no such variable either: escaping would not give it a value.
                help = f"use Slurm's per-task value instead: `\\${variables.slurm_equivalent(entry.name) or variables.SLURM_RANK}`"
            elif entry.escapable:
                fix = Fix.safe(f"escape it as `{escaped}` so each task's shell expands it", entry.escape())
                help = f"write `{escaped}` so each task's shell expands its own value"
            else:
                help = f"write `{escaped}` so each task's shell expands its own value (not fixed automatically: {entry.reason})"
            yield self.report(
                script, entry.site, message, fix, label="expanded by the batch shell", help=help, notes=notes
            )


@register
class JobVariableExpandedEarly(Rule):
    code = "SBL202"
    name = "job-variable-expanded-early"
    severity = Severity.INFO
    summary = "A job-wide Slurm variable in a task command string is expanded by the batch shell, unlike the per-task ones."
    what = """
        Finds job-wide Slurm variables (`SLURM_JOB_NUM_NODES`, `SLURM_NNODES`, `SLURM_JOB_ID`,
        `SLURM_NODELIST`, `SLURM_NTASKS`, `SLURM_GPUS_ON_NODE`… and `CUDA_VISIBLE_DEVICES` when
        GPUs are not bound per task) left unescaped inside a double-quoted string that a step
        runs with `bash -c` (or a here-document fed to `srun bash`). On the step's command line
        they are fine and not reported, and so is a value of its own that the string takes
        in later: a count, a directory or a name with no blank in it
        (`NNODES=${SLURM_JOB_NUM_NODES:-8}`, `SAVE_DIR=/results/${SLURM_JOB_ID}`), which the batch
        shell computes once on purpose.
    """
    why = """
        The value is the same in every task, so nothing breaks today. But the string then mixes
        values frozen by the batch shell with values each task expands, which hides the
        per-task mistakes (SBL201) among correct-looking ones and breaks silently when the
        command moves to a step that uses part of the allocation, where Slurm sets some of these
        again for the step.
    """
    fix_safety = """
        Safe: a backslash before the `$` makes each task's shell expand the variable, which Slurm
        sets in every task. Not offered when the variable holding the text is used outside task
        command strings or exported, or for the counts srun sets again per step (`SLURM_NNODES`,
        `SLURM_NTASKS`, `SLURM_CPUS_PER_TASK`…) when the step asks for less than the whole
        allocation: escaped, they would give the step's value instead of the job's.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                CMD="torchrun --nproc_per_node=8 --nnodes=$SLURM_JOB_NUM_NODES \
                  --node_rank=\$SLURM_NODEID --rdzv_backend=c10d \
                  --rdzv_endpoint=\$MASTER_ADDR:29500 train.py --run-name run-$SLURM_JOB_ID"
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c "$CMD"
                """
            ),
            fixed=clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                CMD="torchrun --nproc_per_node=8 --nnodes=\$SLURM_JOB_NUM_NODES \
                  --node_rank=\$SLURM_NODEID --rdzv_backend=c10d \
                  --rdzv_endpoint=\$MASTER_ADDR:29500 train.py --run-name run-\$SLURM_JOB_ID"
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c "$CMD"
                """
            ),
            count=2,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=8
                srun --nodes=1 --ntasks=1 bash -c "python prepare.py --world $SLURM_NTASKS"
                """
            ),
            title="a count srun sets again for a smaller step: reported, not fixed",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=8
                echo "job $SLURM_JOB_ID on $SLURM_JOB_NUM_NODES nodes"
                srun --kill-on-bad-exit=1 python train.py --nodes $SLURM_JOB_NUM_NODES --run-name run-$SLURM_JOB_ID
                """
            ),
            title="in the batch shell and on the step's command line",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for entry in early_expansions(script):
            if not entry.in_string:
                continue
            steps = entry.steps
            if not steps or any(early_scope(entry.name, script, step) != "job" for step in steps):
                continue
            # (asked after the scope: the blocker is judged when first asked, which may parse the
            # alternatives of the task strings, and most entries are no job-wide variable)
            if entry.blocker == "elsewhere":
                continue  # a host-side value (a results path…) the batch shell also uses: expanded early on purpose
            if _value_of_its_own(script, entry):  # (asked last: it evaluates the assignment)
                continue
            step = steps[0]
            written = script.text(entry.site)
            escaped = "\\" + written
            message = f"`{written}` is expanded by the batch shell, not by each task"
            notes = (
                f"the batch shell expands it {_where(script, entry, step)}",
                "harmless for a job-wide value, but inconsistent with the per-task variables the tasks expand",
            )
            reason = entry.reason
            fixable = entry.escapable
            if fixable and entry.name in PER_STEP_VALUE:
                partial = [s for s in steps if s.options_incomplete or s.has(*PARTIAL_STEP_OPTIONS)]
                if partial:
                    fixable = False
                    reason = (
                        f"srun sets `{entry.name}` again for the step on line {_line(script, partial[0].span.start)}, "
                        "which asks for part of the allocation: escaped, it would hold the step's value"
                    )
            if fixable:
                fix = Fix.safe(f"escape it as `{escaped}`", entry.escape())
                help = f"write `{escaped}` so the task expands it, like the per-task variables"
            else:
                fix = None
                help = f"keep it as is, or write `{escaped}` by hand (not fixed automatically: {reason})"
            yield self.report(
                script, entry.site, message, fix, label="expanded by the batch shell", help=help, notes=notes
            )


def _value_of_its_own(script, entry: EarlyExpansion) -> bool:
    """The site is in the assignment of a value of its own, not of a command string: a count, a
    directory or a name with no blank in it (``NNODES=${SLURM_JOB_NUM_NODES:-8}``,
    ``SAVE_DIR=/results/${SLURM_JOB_ID}``), computed once by the batch shell on purpose."""
    if not entry.holder:
        return False
    for assignment in script.values.assignments.get(entry.holder, []):
        if assignment.value_node is None or not assignment.span.start <= entry.site.start < assignment.span.end:
            continue
        if script.blank_in_quoted_literal(assignment.value_node):
            return False  # every value holds that blank: not worth evaluating the expansions
        values = script.values.evaluate(assignment.value_node)
        return bool(values) and not any(_has_blank(value.text) for value in values)
    return False


def _has_blank(text: str) -> bool:
    """Whether a character of ``text`` is whitespace (``str.isspace``): ``str.split`` cuts at
    exactly those, so a text without one comes back whole (and only an empty text splits to
    nothing)."""
    return bool(text) and text.split() != [text]


# -- SBL203 ----------------------------------------------------------------------------------------
# Set by Slurm or a launcher in every task's environment.
PROVIDED_PREFIXES = ("SLURM_", "SLURMD_", "PMI_", "PMIX_", "OMPI_")
PROVIDED = frozenset(v.name for v in variables.TABLE if v.scope == variables.GPU) | {"NVIDIA_VISIBLE_DEVICES"}
# Every shell sets these itself.
SHELL_VARIABLES = frozenset(
    {
        "BASH", "BASHPID", "BASH_SOURCE", "BASH_VERSION", "BASH_LINENO", "EPOCHREALTIME",
        "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HOSTTYPE", "IFS", "LINENO",
        "MACHTYPE", "OLDPWD", "OPTARG", "OPTIND", "OSTYPE", "PIPESTATUS", "PPID", "PS1", "PS2",
        "PS4", "PWD", "RANDOM", "REPLY", "SECONDS", "SHELLOPTS", "SHLVL", "SRANDOM", "UID",
    }
) | variables.SHELL_SET
# Inherited from the login environment, hence already exported before the script assigns them.
LOGIN_VARIABLES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "MAIL", "LC_ALL", "LC_CTYPE", "TZ"}
)


def _provided(name: str) -> bool:
    return (
        name.startswith(PROVIDED_PREFIXES)
        or name in PROVIDED
        or name in SHELL_VARIABLES
        or name in LOGIN_VARIABLES
    )


def _export_list(step) -> Tuple[Optional[bool], Set[str], Set[str], str]:
    """srun's ``--export``: (passes the whole environment?, names given a value (``X=…``), names
    selected from srun's environment (bare ``X``), as written). (None, …) when unknown.

    A bare name only selects a variable that is in srun's environment, i.e. exported: measured on
    Slurm 22.05, ``PLAIN=1; srun --export=ALL,PLAIN …`` gives the task no ``PLAIN``.
    """
    option = step.option(option_table.EXPORT)
    if option is None:
        return True, set(), set(), ""
    if option.value is None or not option.value_known:
        return None, set(), set(), ""
    items = [item.strip() for item in option.value.split(",") if item.strip()]
    given = {item.split("=", 1)[0] for item in items if "=" in item}
    selected = {item for item in items if "=" not in item}
    everything = "ALL" in selected
    return everything, given, selected - {"ALL", "NONE", "NIL"}, option.value


# Task commands that may define any variable: the names the string uses are then unknown.
DEFINES_ANYTHING = frozenset({"source", ".", "eval", "module", "ml", "conda", "mamba", "micromamba", "spack"})


def _defines_anything(step) -> bool:
    return any(command.program in DEFINES_ANYTHING for command in step.task_commands)


def _given_to_task(step, name: str) -> bool:
    """``NAME=… srun``, ``env NAME=… srun``, ``srun env NAME=… bash -c`` give it to the task."""
    if any(env.name == name for env in step.command.env):
        return True
    before = step.command.argv[: step.srun_index] + step.task_argv[: step.shell_index or 0]
    for word in before:
        if word.known and "=" in word.text and word.text.split("=", 1)[0] == name:
            return True
    return False


@register
class VariableNotExportedToTask(Rule):
    code = "SBL203"
    name = "variable-not-exported-to-task"
    severity = Severity.ERROR
    summary = "The task's shell expands a variable that the batch script set but did not export: the task sees it empty."
    what = """
        Finds variables that a step's task command expands itself (escaped `\\$VAR` in a
        double-quoted command string, `$VAR` in a single-quoted one or in a quoted here-document)
        while the batch script only assigned them as plain shell variables: not `export`ed,
        not `declare -x`, not under `set -a`, not given a value with `srun --export=…,VAR=…` or a
        `VAR=… srun` prefix. A bare name in `--export=ALL,VAR` does not help: srun can only select
        variables from its own environment, which holds the exported ones. Names the command string assigns itself (`X=1; … $X`, loop
        variables), names Slurm or the shell set in every task (`SLURM_*`, `CUDA_VISIBLE_DEVICES`,
        `HOSTNAME`…) and names the script never assigns (they come from the environment) are not
        reported, nor is anything in a command string that `source`s a file or loads modules
        (those may define the variable in the task), or in a step whose srun options cannot be
        read (`srun $ARGS …` may carry an `--export` list). With `srun --export=` listing variables without `ALL`, a variable missing from
        the list is reported even when it is exported.
    """
    why = """
        srun starts every task with the batch shell's *environment*: exported variables only.
        A plain `MASTER_PORT=29500` stays in the batch shell, so the task's `$MASTER_PORT` is
        empty and the launcher fails with a parse error or falls back to a default on some
        nodes, or a path like `$DATA/train` silently becomes `/train`.
    """
    fix_safety = """
        Unsafe: exporting the variable at its assignment (`export X=…`, `local -x X=…`) makes it
        visible to every later command of the batch script as well, which can change what those
        commands do. Not offered for arrays (bash cannot export them), `readonly`, loop or `read`
        variables, several assignments on one line, or an `srun --export` list.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                MASTER_PORT=29500
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c "torchrun --nproc_per_node=8 --nnodes=\$SLURM_JOB_NUM_NODES \
                  --node_rank=\$SLURM_NODEID --master_addr=\$MASTER_ADDR --master_port=\$MASTER_PORT train.py"
                """
            ),
            fixed=clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_PORT=29500
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c "torchrun --nproc_per_node=8 --nnodes=\$SLURM_JOB_NUM_NODES \
                  --node_rank=\$SLURM_NODEID --master_addr=\$MASTER_ADDR --master_port=\$MASTER_PORT train.py"
                """
            ),
            unsafe=True,
            count=1,
            contains="MASTER_PORT",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                DATA=/lustre/fsw/llm/data
                srun --kill-on-bad-exit=1 bash -c 'python train.py --rank "$SLURM_PROCID" --data "$DATA/train"'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                export DATA=/lustre/fsw/llm/data
                srun --kill-on-bad-exit=1 bash -c 'python train.py --rank "$SLURM_PROCID" --data "$DATA/train"'
                """
            ),
            unsafe=True,
            title="a single-quoted command string",
        ),
        Good(
            clean(
                r"""
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                set -a
                DATA=/lustre/fsw/llm/data
                set +a
                CKPT=/lustre/fsw/llm/ckpt
                srun --kill-on-bad-exit=1 --export=ALL,CKPT=$CKPT bash -c 'OUT=$CKPT/run; python train.py --data "$DATA" --out "$OUT" --rank "$SLURM_PROCID"'
                """
            ),
            title="exported with set -a, passed with --export, or assigned by the command itself",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        values = script.values
        reported: Set[Tuple[str, int, int]] = set()
        for late in late_expansions(script):
            name = late.name
            key = (name, late.site.start, late.site.end)
            if key in reported or _provided(name) or not IDENTIFIER.match(name):
                continue
            step = late.step
            if _given_to_task(step, name) or _defines_anything(step) or step.options_incomplete:
                continue  # (unreadable srun options may hold an --export list)
            everything, given, selected, written_export = _export_list(step)
            if everything is None or name in given:
                continue
            at = len(script.data) if step.command.in_function else step.command.node.start_byte
            found = values.lookup(name, step.command.node.start_byte, step.command.node)
            assignments = reaching_assignments(script, name, step)
            if not found or not assignments:
                continue  # never assigned before the step: the environment's (not this rule)
            passes_exported = everything or name in selected
            exported = values.is_exported(name, at)
            if passes_exported and exported:
                continue
            if passes_exported and values.sourced and values.unresolved_source(at, after=assignments[0].span.start) is not None:
                continue  # a file the model cannot read, sourced after the assignment, may export it (or set -a)
            if all(any(not p.known and p.name == name for p in value.pieces) for value in found) or any(
                a.kind == "append" for a in assignments
            ):
                continue  # X=$X:… extends an inherited (hence exported) value
            last = assignments[-1]
            line = _line(script, last.span.start)
            site = script.text(late.site)
            if not passes_exported:
                message = (
                    f"`{site}` is expanded by the task's shell, but `srun --export={written_export}` does not "
                    f"pass `{name}`"
                )
                help = f"add `{name}` to the `--export` list (exported, or as `{name}=${name}`), or let the batch shell expand it into the string"
                yield self.report(
                    script, late.site, message, None, label="empty in the task", help=help,
                    notes=("the task sees it empty",),
                )
                reported.add(key)
                continue
            unset_alternative = any(
                len(value.pieces) == 1 and not value.pieces[0].known and value.pieces[0].name == name for value in found
            )
            array = any(a.kind == "array" for a in assignments)
            passed_by = f" (`--export={written_export}` only selects exported variables)" if name in selected else ""
            empty = f"srun does not pass it{passed_by}, so the task sees it empty"
            if array:
                message = f"`{site}` is expanded by the task's shell, but `{name}` (line {line}) is an array"
                note = f"`{name}` is an array of the batch script, and bash cannot export arrays: {empty}"
            else:
                message = f"`{site}` is expanded by the task's shell, but `{name}` (line {line}) is not exported"
                note = f"`{name}` is a plain variable of the batch script: {empty}"
            if unset_alternative:
                note += " (unless the submission environment exports it)"
            edits = [export_edit(script, a) for a in assignments]
            fix = None
            if not array and edits and all(e is not None for e in edits):
                lines = ", ".join(str(_line(script, a.span.start)) for a in assignments)
                fix = Fix.unsafe(f"export `{name}` where it is assigned (line {lines})", *[e for e in edits if e is not None])
            if array:
                help = "let the batch shell expand it into the string, or pass the elements another way"
            else:
                help = f"export it (`export {name}=…`), or let the batch shell expand it into the string"
            yield self.report(script, late.site, message, fix, label="empty in the task", help=help, notes=(note,))
            reported.add(key)

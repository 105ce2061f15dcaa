"""SBL101–SBL104, SBL106: does the launcher start the processes the allocation is sized for?"""
from __future__ import annotations


from .. import options as option_table
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..model.geometry import (
    Geometry,
    Origin,
    TaskLayout,
    geometry,
    gives_per_node,
    job_geometry,
    header_directive,
    job_task_count_set,
    step_option,
    task_layout,
)
from ..model.launch import (
    ELASTIC,
    SRUN_NATIVE,
    TORCH_LAUNCH,
    TORCHRUN,
    Configuration,
    Launch,
    launches,
    launches_of,
    literal_span,
    batch_launches,
    runs_remote_starter,
)
from ..lazyre import lazy
from ..model import variables
from ..model.branches import branch_of, step_alternatives, variant_branch
from ..model.steps import Step, task_wrapper_index
from ..model.variables import TASK_COUNT_VARIABLES
from ..model.tasks import tasks_running
from ..model.workload import Workload, classify
from ..registry import register
from ..source import Span
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Tuple

# Dynamic rendezvous backends: ranks come from the rendezvous, no --node_rank needed.
DYNAMIC_BACKENDS = frozenset({"c10d", "etcd", "etcd-v2"})
# torchrun reads every option from PET_<NAME> as well.
PET = "PET_"


def _launcher_name(launch: Launch) -> str:
    return {TORCHRUN: "torchrun", TORCH_LAUNCH: "torch.distributed.launch"}.get(launch.kind, launch.program)


def _env_sets(script, launch: Launch, *options: str) -> bool:
    """The environment may set these torchrun options (``PET_NNODES=…``) for the launcher."""
    names = {PET + o.upper() for o in options}
    step_env = launch.step.command.env if launch.step is not None else []
    if any(e.name in names for e in launch.command.env + step_env):
        return True
    return any(name in script.values.assignments for name in names)


def _guarded_per_task(script, launch: Launch) -> bool:
    """Inside the task's shell, a per-task test decides whether the launch runs
    (``if [ $SLURM_LOCALID = 0 ]``, ``[ "$SLURM_PROCID" = 0 ] && torchrun …``)."""
    return launch.in_string and tasks_running(script, launch.command).tested


def _nodes_phrase(geo: Geometry) -> str:
    if geo.nodes_at_submission:
        return "several nodes (`sbatch -N`)"
    if geo.nodes.value is not None:
        return f"{geo.nodes.value} nodes"
    if geo.nodes.low is not None and geo.nodes.high is not None:
        return f"{geo.nodes.low}-{geo.nodes.high} nodes"
    return "several nodes"


def _origin_phrase(script, origin) -> str:
    """ (from `#SBATCH --ntasks-per-node=8`, line 3) / (from the step's `--ntasks-per-node=8`)."""
    if origin is not None and origin.where == "derived":
        origin = next((o for o in origin.sources if o.span is not None and o.option == option_table.NTASKS), None)
    if origin is None or origin.span is None:
        return ""
    text = script.text(origin.span)
    if origin.where == "header":
        line = script.source.line_of(origin.span.start)
        return f" (from `#SBATCH {text}`, line {line})"
    if origin.where == "step":
        return f" (from the step's `{text}`)"
    return ""


def _origin_notes(script, origin) -> Tuple[str, ...]:
    """Where a task count comes from, as a note: "the task count comes from `#SBATCH …`, line 3"."""
    where = _origin_phrase(script, origin)
    return (f"the task count comes {where.strip()[1:-1]}",) if where else ()


def _ignored_phrase(script, step: Step, layout: TaskLayout) -> str:
    """Why srun drops the step's own ``--ntasks-per-node`` (see model/geometry.py, TASK_LAYOUT)."""
    ignored = layout.ignored
    assert ignored is not None
    head = f"srun ignores the step's `{ignored.written}={ignored.value}`"
    own = step.option(option_table.NTASKS)
    if own is None:
        return f"{head} because the job fixes {layout.total} tasks (`SLURM_NTASKS`) and the step gives no `--ntasks`"
    span = Origin("step", option_table.NTASKS, step_option=own).span
    written = script.text(span) if span is not None else own.written
    nodes = f" on {_plural(layout.nodes, 'node')}" if layout.nodes else ""
    return f"{head} because it does not match the step's `{written}`{nodes}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}{'es' if word.endswith('s') else 's'}"


def _other_steps_inherit(script, step: Step) -> bool:
    """Another step takes its task count from the header and is not itself a torchrun launch."""
    for other in script.steps:
        if other is step or other.option(option_table.NTASKS) is not None:
            continue
        found = launches_of(script, other)
        if found and all(l.kind in ELASTIC for l in found):
            continue
        return True
    return False




def _reads_task_counts(script) -> bool:
    """The script (or a task command) reads Slurm's task counts, e.g.
    ``--nproc_per_node=$SLURM_NTASKS_PER_NODE``: changing the count would change that too."""
    if script.names_any(TASK_COUNT_VARIABLES):
        return True
    for launch in launches(script):
        for word in launch.command.argv:
            if any(p.name in TASK_COUNT_VARIABLES for p in word.pieces):
                return True
    for step in script.steps:
        for command in step.task_commands:
            if any(p.name in TASK_COUNT_VARIABLES for w in command.argv for p in w.pieces):
                return True
    return False


def _step_insertion(step: Step) -> Tuple[Optional[int], str]:
    """Where to add an option to this step only, and the quoting there.

    When ``srun`` comes from a variable (``$SRUN_CMD bash -c …``), other steps may expand the same
    variable: the option goes right after the expansion at this use, where the batch shell splits
    words (unquoted), instead of into the variable's assignment.
    """
    word = step.srun_word
    if any(p.via for p in word.pieces):
        node = word.node
        if node is None or node.type not in ("simple_expansion", "expansion", "command_name"):
            return None, ""
        return word.span.end, ""
    return step.insertion_after_srun()


def _node_count_text(script, step: Step, geo: Geometry, quote: str) -> Optional[str]:
    """What to write for "one task per node" in ``--ntasks=…`` at a point with this quoting."""
    nodes_opt = step.option(option_table.NODES)
    if nodes_opt is not None:
        return str(geo.nodes.value) if geo.nodes.value is not None else None
    if quote in ("", '"'):
        return "${SLURM_JOB_NUM_NODES}"  # the batch shell expands it: the job's node count
    return str(geo.nodes.value) if geo.nodes.value is not None else None


# -- SBL101 ---------------------------------------------------------------------------------------
@register
class TorchrunMultipleTasksPerNode(Rule):
    code = "SBL101"
    name = "torchrun-multiple-tasks-per-node"
    severity = Severity.ERROR
    summary = "torchrun started by more than one task per node: N tasks × nproc processes per node."
    what = """
        Finds steps that run `torchrun` (or `python -m torch.distributed.run` / `.launch`) with
        more than one task on a node. The count comes from the step's own `--ntasks-per-node` /
        `--ntasks`, or from the header the step inherits. A step's `--ntasks-per-node` without
        its own `--ntasks` does not count: srun keeps the job's task count (`SLURM_NTASKS`) and
        ignores it ("can't honor --ntasks-per-node"), so `srun --ntasks-per-node=1 torchrun …`
        inside a job with `#SBATCH --ntasks-per-node=8` still starts 8 launchers per node. srun
        also drops a `--ntasks-per-node` that does not match the step's own `--ntasks` over its
        nodes (`-n8 --ntasks-per-node=2` on 2 nodes runs 4 tasks per node).
        When the script gives no node count (`sbatch -N` decides at submission), the rule
        reports as usual whenever the tasks per node are known: they do not depend on it.
        When srun's words come from a variable the script sets differently in branches
        (`SRUN_CMD` in an `if` and in its `else`), the step each branch writes is checked, and
        the finding names the branch that triggers it (without a fix: the edit would belong to
        that branch). At most 16 values of such a variable are read, the most recent ones.
    """
    why = """
        torchrun is itself a launcher: each copy starts `--nproc_per_node` workers. With 8 tasks
        per node, 8 launchers start 8 workers each, 64 processes for 8 GPUs. With a fixed
        `--master_port` the second launcher on the node dies with `EADDRINUSE`; without one,
        each launcher silently forms its own world with its own rank 0, and the job "succeeds"
        having trained eight independent copies.
    """
    fix_safety = """
        Safe: the step gets one task per node where its count is set. The header's
        `--ntasks-per-node` is set to 1 when no other step relies on it; otherwise the torchrun
        step gets `--ntasks=<nodes> --ntasks-per-node=1` of its own (both are needed: srun ignores
        a step's `--ntasks-per-node` alone when the job fixes the task count). There is no fix
        when the script reads the task count itself (`$SLURM_NTASKS_PER_NODE`,
        `$SLURM_NTASKS`…, often as `--nproc_per_node`): that value would change too.
        Each node keeps its CPUs and GPUs: `--cpus-per-task` is multiplied by the old tasks per
        node (in the header, on the step, or added to the step when it had Slurm's one CPU per
        task), and `--gpus-per-task` becomes the `--gpus-per-node` it amounted to. When that
        cannot be done exactly (CPUs only known at run time, tasks spread unevenly) there is no fix,
        and the help says why. A GPU binding follows the task count: `--gpu-bind=per_task:1`
        becomes `per_task:8`, `single:N` is rescaled the other way, `none` stays, and a step's
        `--ntasks-per-gpu` (which srun refuses next to `--ntasks-per-node`) becomes the
        `--gpu-bind=single:…` it implied; `closest`, `map_gpu`/`mask_gpu` lists and counts that do
        not scale to a whole number leave the step without a fix.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --cpus-per-task=12
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 --master_port=29500 train.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --cpus-per-task=96
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 --master_port=29500 train.py'
                """
            ),
            contains="8 tasks × 8 processes per node",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python convert.py
                srun --kill-on-bad-exit=1 --ntasks-per-node=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 pretrain_gpt.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python convert.py
                srun --ntasks=${SLURM_JOB_NUM_NODES} --cpus-per-task=8 --kill-on-bad-exit=1 --ntasks-per-node=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 pretrain_gpt.py'
                """
            ),
            contains="srun ignores the step's `--ntasks-per-node=1`",
            title="the step's own --ntasks-per-node=1 is ignored: the job's 16 tasks win (the step keeps its 8 CPUs per node)",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python convert.py
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 pretrain_gpt.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python convert.py
                srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --cpus-per-task=8 --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 pretrain_gpt.py'
                """
            ),
            title="the header's count also serves an srun-native step: only the torchrun step changes",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python convert.py
                srun --kill-on-bad-exit=1 \\
                  --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                  bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 pretrain_gpt.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python convert.py
                srun --kill-on-bad-exit=1 \\
                  --ntasks=${SLURM_JOB_NUM_NODES} \\
                  --ntasks-per-node=1 \\
                  --cpus-per-task=8 \\
                  --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                  bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 pretrain_gpt.py'
                """
            ),
            title="a step written one option per line gets its new options on lines of their own",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 train.py'
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 --ntasks=2 --ntasks-per-node=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 train.py'
                """
            ),
            title="the step sets its own task count",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        seen = set()
        for launch in launches(script):
            if not launch.elastic or launch.unparsed:
                continue
            step = launch.step
            layout = task_layout(script, step)
            branch = None
            if not layout.more_than_one:
                # another way the script may write the step (SRUN_CMD set in an if and its else)
                other = next(
                    (a for a in step_alternatives(script, step) if task_layout(script, a.step).more_than_one), None
                )
                if other is None:
                    continue
                step, layout, branch = other.step, task_layout(script, other.step), other.branch or "another branch"
            if _guarded_per_task(script, launch):  # (asked last: it reads the task's shell)
                continue
            tasks = layout.per_node
            nproc = launch.certain_number("nproc_per_node")
            name = _launcher_name(launch)
            from_total = layout.origin is not None and (layout.origin.option == option_table.NTASKS or layout.origin.where == "derived")
            if from_total and layout.total and layout.nodes:
                each = f" × {nproc} processes" if nproc is not None else ""
                message = f"{layout.total} tasks{each} on {_plural(layout.nodes, 'node')}: {name} runs once per task"
            elif tasks is not None and nproc is not None:
                message = f"{tasks} tasks × {nproc} processes per node: {name} runs once per task"
            elif tasks is not None:
                message = f"{tasks} tasks per node each run {name}"
            else:
                message = f"some nodes run several tasks, each running {name}"
            notes = []
            if branch is not None:
                notes.append(f"this is the step as it is written in {branch}")
            if layout.ignored is not None:
                notes.append(_ignored_phrase(script, step, layout))
            else:
                notes.extend(_origin_notes(script, layout.origin))
            if launch.has("master_port") or launch.has("rdzv_endpoint"):
                notes.append("with a fixed port the second launcher on each node fails with EADDRINUSE")
            else:
                notes.append("without a fixed --master_port each task forms its own world (duplicate rank 0s)")
            if (launch.span, message, tuple(notes)) in seen:
                continue  # one command string run by two steps (the branches of an if): one finding
            seen.add((launch.span, message, tuple(notes)))
            help = "run torchrun once per node: one task per node, --nproc_per_node=<GPUs per node>"
            fix = None
            if branch is None:
                from ..budget import Unkept

                try:
                    fix = self._fix(script, step, layout)
                except Unkept as unkept:
                    help = f"{help} (no automatic fix: {unkept})"
            yield self.report(
                script,
                launch.span,
                message,
                fix,
                label="one launcher per task",
                help=help,
                notes=notes,
            )

    def _fix(self, script, step: Step, layout) -> Optional[Fix]:
        """One task per node where the count is set, keeping each node's CPUs and GPUs
        (``budget.py``); raises :class:`Unkept` when they cannot be kept."""
        from .. import budget  # here and in the other fixes: a script with no finding needs neither
        from ..model import placement

        if step.options_incomplete or _reads_task_counts(script):
            return None
        geo = geometry(script, step)
        description = "run one task per node in the torchrun step"
        own_ntasks = step.option(option_table.NTASKS)
        own_per_node = step_option(step, option_table.NTASKS_PER_NODE)
        offset, quote = _step_insertion(step)
        old = _tasks_per_node(layout)
        if own_ntasks is None and own_per_node is None:
            # the count is inherited from the header
            origin = layout.origin
            header = script.header
            directive = header_directive(script, option_table.NTASKS_PER_NODE)
            if (
                origin is not None
                and origin.where == "header"
                and origin.directive is directive
                and directive is not None
                and directive.value_span is not None
                and header.get(option_table.NTASKS) is None
                and not _other_steps_inherit(script, step)
            ):
                inheriting = [s for s in script.steps if s.option(option_table.NTASKS) is None]
                kept = budget.header_change(script, old, 1, inheriting, after_line=directive.line)
                return Fix.safe(
                    "set `#SBATCH --ntasks-per-node=1`" + kept.description, Edit(directive.value_span, "1"), *kept.edits
                )
            if offset is None:
                return None
            count = _node_count_text(script, step, geo, quote)
            if count is None:
                return None
            kept = budget.step_change(script, step, old, 1)
            words = [f"--ntasks={count}", "--ntasks-per-node=1"] + kept.words
            return Fix.safe(description + kept.description, placement.add_step_options(script, step, words, offset, quote), *kept.edits)
        edits: List[Edit] = []
        words: List[str] = []
        if own_per_node is not None and own_per_node.value != "1":
            span = _option_value_span(own_per_node)
            if span is None:
                return None
            edits.append(Edit(span, "1"))
        if own_ntasks is not None:
            span = _option_value_span(own_ntasks)
            count = _node_count_text(script, step, geo, own_ntasks.words[-1].pieces[-1].quote if own_ntasks.words[-1].pieces else "")
            if span is None or count is None:
                return None
            edits.append(Edit(span, count))  # --ntasks=<nodes>: one per node
        elif job_task_count_set(script):
            # a step's --ntasks-per-node alone is ignored when the job fixes the task count
            if offset is None:
                return None
            count = _node_count_text(script, step, geo, quote)
            if count is None:
                return None
            words.append(f"--ntasks={count}")
        if not edits and not words:
            return None
        kept = budget.step_change(script, step, old, 1)
        words += kept.words
        if words:
            if offset is None:
                return None
            edits.append(placement.add_step_options(script, step, words, offset, quote))
        return Fix.safe(description + kept.description, *edits, *kept.edits)


def _tasks_per_node(layout: TaskLayout) -> int:
    """The tasks per node a step runs now, for the budget its nodes keep."""
    from ..budget import Unkept

    if layout.per_node is not None and (layout.total is None or layout.nodes is None or layout.per_node * layout.nodes == layout.total):
        return layout.per_node
    raise Unkept("the step's tasks are spread unevenly over its nodes, so the CPUs each node had are not known")


def _missing_node_args(launch: Launch, dynamic: bool) -> List[str]:
    """What torchrun needs on several nodes and this launch (or variant) lacks."""
    missing: List[str] = []
    if launch.option("nnodes") is None:
        missing.append("nnodes")
    if launch.option("node_rank") is None and not dynamic:
        missing.append("node_rank")
    return missing


def _static_without_address(launch: Launch) -> bool:
    """A launch (or variant) with a node rank, the static rendezvous and no master address."""
    if launch.has("master_addr", "rdzv_endpoint", "standalone") or not launch.has("node_rank"):
        return False
    backend = launch.option("rdzv_backend")
    return backend is None or (backend.value is not None and backend.value.known and backend.value.text == "static")


def _dynamic_rendezvous(launch: Launch) -> Optional[bool]:
    """A c10d/etcd rendezvous with an endpoint (True), the static one (False), None when its
    backend is not known."""
    backend = launch.option("rdzv_backend")
    if backend is None:
        return False
    if backend.value is None or not backend.value.known:
        return None
    return backend.value.text in DYNAMIC_BACKENDS and launch.option("rdzv_endpoint") is not None


def _option_value_span(opt) -> Optional[Span]:
    """The source bytes of a step option's value, written literally at the step."""
    word = opt.words[-1]
    if len(opt.words) == 1:
        if opt.value is None:
            return None
        total = len(word.text.encode("utf-8"))
        value = word.value.slice(total - len(opt.value.encode("utf-8")), total)
    else:
        value = word.value
    return literal_span(value)


# -- SBL102 ---------------------------------------------------------------------------------------
@register
class PreferSrunNative(Rule):
    code = "SBL102"
    name = "prefer-srun-native"
    severity = Severity.WARNING
    summary = "A Megatron-Bridge entry point launched through torchrun instead of one srun task per GPU."
    what = """
        Finds Megatron-Bridge entry points started by `torchrun` or `python -m
        torch.distributed.run`/`.launch`: a `megatron.bridge…` module, a script inside a
        Megatron-Bridge checkout (a directory named `Megatron-Bridge`, from the path itself or the
        step's working directory), or a path only Bridge has (`scripts/training/…`,
        `examples/recipes/…`). Megatron-LM's own `pretrain_*.py` (under `Megatron-LM/`, or with no
        Bridge directory in sight) is left alone: it needs torchrun's variables. More entry points
        can be declared with the `bridge-entry-points` setting (globs over the script path or the
        module name).
        When the launcher or the entry point comes from a variable the script sets differently
        in branches (`torchrun` in an `if`, `python` in its `else`), the launch each branch
        writes is checked, and a finding that only one branch triggers names it (without a
        migration: the launcher is chosen in that branch).
    """
    why = """
        Bridge initializes torch.distributed from Slurm's own variables (`SLURM_PROCID`,
        `SLURM_NTASKS`, `SLURM_LOCALID`, the first node of the allocation), so srun can start one
        process per GPU directly. Going through torchrun adds a launcher per node whose node
        rank, node count and rendezvous must be passed by hand, usually in a string the batch
        shell expands too early; with the wrong task count it multiplies the processes.
    """
    fix_safety = """
        Unsafe: the fix migrates the step. The task count becomes the GPUs per node where it is
        set (the header's `--ntasks-per-node`, a new header line, or the step's own flags), the
        entry point is started directly (`uv run python -m torch.distributed.run OPTS x.py ARGS`
        becomes `uv run python x.py ARGS`, `torchrun` becomes `python`, in a `bash -c` string
        too, escapes of the removed options included), and `MASTER_ADDR`/`MASTER_PORT`/`RANK`…
        assignments that nothing else reads are removed. Each node keeps its CPUs and memory:
        `--cpus-per-task` is divided among the new tasks (64 CPUs for 1 task become 8 for each of
        8), a whole-node `--exclusive` job shares out the cluster profile's CPUs per node, and
        `--mem-per-cpu` becomes the `--mem` a node had when one CPU per task means more CPUs than
        before; when the CPUs do not divide exactly there is no fix. A `--gpu-bind=per_task:8` for
        the one task becomes `per_task:1` for each of 8, `none` stays; a binding that does not
        scale exactly leaves no fix. Every other byte stays. It
        changes how the job starts, so it needs `--unsafe-fixes`. There is no fix when the migration cannot
        be certain, and the help says why: torchrun options srun has no equivalent for
        (`--max_restarts=3`, `--redirects`…), `--nproc_per_node` different from the GPUs per node
        (the world size would change: SBL104 first), options hidden in a run-time value, a
        command string assembled in a way a byte edit cannot follow, or a header task count
        other steps rely on. The edited script is parsed again before the fix is offered: the
        migrated command must be the old one without the launcher, every other step unchanged.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                cd /lustre/proj/Megatron-Bridge
                srun --kill-on-bad-exit=1 bash -c 'uv run python -m torch.distributed.run --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 examples/recipes/llama/pretrain_llama3_8b.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                cd /lustre/proj/Megatron-Bridge
                srun --kill-on-bad-exit=1 bash -c 'uv run python examples/recipes/llama/pretrain_llama3_8b.py'
                """
            ),
            unsafe=True,
            contains="srun-native",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                export MASTER_PORT=29500
                TRAIN_CMD="cd /lustre/proj/Megatron-Bridge && uv run python -m torch.distributed.run \\
                  --nproc_per_node=8 --nnodes=\\${SLURM_JOB_NUM_NODES} --node_rank=\\${SLURM_NODEID} \\
                  --master_addr=\\$MASTER_ADDR --master_port=\\$MASTER_PORT \\
                  scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config"
                srun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                TRAIN_CMD="cd /lustre/proj/Megatron-Bridge && uv run python \\
                  scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config"
                srun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"
                """
            ),
            unsafe=True,
            title="a TRAIN_CMD string: torchrun, its escaped node rank and the rendezvous exports go",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                cd /lustre/proj/Megatron-Bridge
                srun --kill-on-bad-exit=1 bash -c 'torchrun --max_restarts=3 --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 scripts/training/run_recipe.py'
                """
            ),
            title="restarts have no srun-native equivalent: reported, not migrated",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                cd /lustre/proj/Megatron-Bridge
                srun --kill-on-bad-exit=1 uv run python examples/recipes/llama/pretrain_llama3_8b.py
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                cd /lustre/proj/Megatron-Bridge
                srun --kill-on-bad-exit=1 bash -c 'PYTHONPATH=3rdparty/Megatron-LM torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 3rdparty/Megatron-LM/pretrain_gpt.py'
                """
            ),
            title="Megatron-LM's pretrain_gpt.py needs torchrun",
        ),
    ))

    @staticmethod
    def _bridge_through_launcher(script, launch: Launch) -> bool:
        return (
            launch.elastic
            and launch.entry is not None
            and not launch.unparsed
            and classify(launch, script.settings) is Workload.BRIDGE
        )

    def check(self, script) -> Iterator[Diagnostic]:
        seen = set()
        for launch in launches(script):
            if not self._bridge_through_launcher(script, launch):
                # the launch as another branch writes it (torchrun in an if, python in its else)
                yield from self._branch(script, launch, seen)
                continue
            from ..migrate import plan

            geo = geometry(script, launch.step)
            gpus = geo.gpus_per_node.value
            per_gpu = f"--ntasks-per-node={gpus}" if gpus else "--ntasks-per-node=<GPUs per node>"
            migration = plan(script, launch)
            entry = ("-m " if launch.entry.kind == "module" else "") + launch.entry.name
            by_hand = f"srun {per_gpu} … uv run python {entry} …"
            yield self.report(
                script,
                launch.span,
                f"Megatron-Bridge `{launch.entry.name}` runs under {_launcher_name(launch)}",
                migration.fix,
                label="launcher not needed",
                help=by_hand if migration.fix is not None else f"no automatic migration: {migration.reason}; by hand: {by_hand}",
                notes=(
                    "a Megatron-Bridge entry point sets up distributed from Slurm's variables, so run it srun-native "
                    "(one task per GPU) and drop the launcher's node rank, node count and rendezvous",
                ),
            )

    def _branch(self, script, launch: Launch, seen: set) -> Iterator[Diagnostic]:
        """One finding naming the first other branch whose launch starts a Bridge entry point
        through torchrun (no fix: the edit would belong to that branch)."""
        for variant in launch.variants + launch.others:
            if variant is launch or not self._bridge_through_launcher(script, variant):
                continue
            branch = branch_of(script, launch, variant)
            if branch is None or (launch.span, branch) in seen:
                continue
            seen.add((launch.span, branch))
            assert variant.entry is not None
            entry = ("-m " if variant.entry.kind == "module" else "") + variant.entry.name
            yield self.report(
                script,
                launch.span,
                f"Megatron-Bridge `{variant.entry.name}` runs under {_launcher_name(variant)} in one branch",
                label="launcher not needed",
                help=f"no automatic migration: the launcher is chosen in that branch; by hand: srun --ntasks-per-node=<GPUs per node> … uv run python {entry} …",
                notes=(
                    f"this is the launch as it is written in {branch}",
                    "a Megatron-Bridge entry point sets up distributed from Slurm's variables, so run it srun-native "
                    "(one task per GPU) and drop the launcher's node rank, node count and rendezvous",
                ),
            )
            return


# -- SBL103 ---------------------------------------------------------------------------------------
@register
class TorchrunMissingNodeArgs(Rule):
    code = "SBL103"
    name = "torchrun-missing-node-args"
    severity = Severity.ERROR
    summary = "A multi-node job runs torchrun without `--nnodes` and `--node_rank` (or a c10d rendezvous)."
    what = """
        Finds torchrun launches (also `python -m torch.distributed.run`/`.launch`) in steps that
        span several nodes when torchrun is not told the node count (`--nnodes`) and either this
        node's rank (`--node_rank`) or a dynamic rendezvous (`--rdzv_backend=c10d` with
        `--rdzv_endpoint`). `--standalone` and `--nnodes=1` on several nodes are reported too.
        When the script gives no node count (`sbatch -N` decides at submission), the node count
        is unknown, not one: a launch written for several nodes (a `--nnodes` above 1 or from a
        variable such as `$SLURM_NNODES`, a `--node_rank`, a master or rendezvous address) that
        lacks the rest is reported as a warning, not as an error; a launch with none of these
        options is not reported.
        When torchrun's options come from a variable the script sets differently in branches,
        each branch's launch is checked and the finding names the branch that lacks the node
        arguments (without a fix: the edit would belong to that branch).
    """
    why = """
        torchrun defaults to one node and node rank 0. Without `--nnodes`, each node's launcher
        forms its own single-node world: the job runs N independent copies. With `--nnodes` but
        no `--node_rank` and the default static rendezvous, every node claims rank 0 and the
        rendezvous waits until its timeout.
    """
    fix_safety = """
        Safe when the command is a string run by the task's shell (`bash -c "$CMD"`): the missing
        `--nnodes=${SLURM_JOB_NUM_NODES} --node_rank=${SLURM_NODEID}` are inserted right after the
        launcher, with `\\$` inside a double-quoted string so each task expands its own node ID
        (`${SLURM_NNODES}`, the step's own count, when the step sets `--nodes` itself).
        When torchrun is written directly on srun's command line, the batch shell would expand
        `$SLURM_NODEID` once, on the first node, and give every node rank 0. So the fix gives
        torchrun what needs no per-node value instead: the job's node count and a c10d
        rendezvous on the first node of the allocation (`--rdzv_backend=c10d
        --rdzv_endpoint=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29500
        --rdzv_id=$SLURM_JOB_ID`; the launch's own `--master_addr`/`--master_port` when it
        writes them), which assigns the node ranks itself. No fix when the launch already names
        part of a rendezvous.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                CMD="torchrun --master_addr=$HEAD --nproc_per_node=8 \\
                  pretrain_gpt.py --tensor-model-parallel-size 2"
                srun --kill-on-bad-exit=1 bash -c "$CMD"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                CMD="torchrun --nnodes=\\${SLURM_JOB_NUM_NODES} --node_rank=\\${SLURM_NODEID} --master_addr=$HEAD --nproc_per_node=8 \\
                  pretrain_gpt.py --tensor-model-parallel-size 2"
                srun --kill-on-bad-exit=1 bash -c "$CMD"
                """
            ),
            contains="forms its own single-node world",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 pretrain_gpt.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 torchrun --nnodes=${SLURM_JOB_NUM_NODES} --rdzv_backend=c10d --rdzv_endpoint=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29500 --rdzv_id=$SLURM_JOB_ID --nproc_per_node=8 pretrain_gpt.py
                """
            ),
            title="torchrun directly on srun's command line: a c10d rendezvous, which needs no node rank",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 torchrun --nnodes=2 --nproc_per_node=8 \\
                  --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 pretrain_gpt.py
                """
            ),
            title="a c10d rendezvous assigns node ranks itself",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 torchrun --standalone --nproc_per_node=8 pretrain_gpt.py
                """
            ),
            title="one node",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for launch in launches(script):
            if not launch.elastic or launch.options_incomplete or launch.entry is None:
                continue
            geo = geometry(script, launch.step)
            severity = None
            if not geo.multi_node:
                if not (geo.nodes_at_submission and _multi_node_options(launch)):
                    continue
                # written for several nodes, their count given at submission: a warning
                severity = Severity.WARNING
            if _env_sets(script, launch, "nnodes", "node_rank", "rdzv_endpoint", "rdzv_backend", "standalone"):
                continue
            nodes = _nodes_phrase(geo)
            nnodes = launch.option("nnodes")
            backends = launch.option_values("rdzv_backend")
            if any(v is not None and not v.known for v in backends):
                continue  # a backend chosen at run time
            dynamic = _dynamic_rendezvous(launch)
            name = _launcher_name(launch)
            if launch.has("standalone"):
                yield self.report(
                    script,
                    launch.option("standalone").span,  # type: ignore[union-attr]
                    f"`--standalone` on {nodes}: each node's {name} runs its own single-node rendezvous",
                    label="single-node rendezvous",
                    help=self._help(launch),
                    severity=severity,
                    notes=("so every node trains a separate copy",),
                )
                continue
            if nnodes is not None:
                single = all(v is not None and v.known and v.text in ("1", "1:1") for v in launch.option_values("nnodes"))
                if single:
                    yield self.report(
                        script,
                        nnodes.span,
                        f"`{nnodes.written}={nnodes.text}` on {nodes}: each node's {name} forms its own "
                        "single-node world",
                        label="one node per world",
                        help=self._help(launch),
                        severity=severity,
                        notes=("so every node trains a separate copy",),
                    )
                    continue
            missing = _missing_node_args(launch, dynamic)
            branch = None
            if not missing:
                # the launch as another branch writes it (DIST set in an if and its else)
                for variant in (launch.variants or [launch])[:-1]:
                    variant_dynamic = _dynamic_rendezvous(variant)
                    if variant_dynamic is None:
                        continue
                    found = _missing_node_args(variant, variant_dynamic)
                    where = variant_branch(script, launch, variant) if found else None
                    if where is not None:
                        missing, branch = found, where
                        break
                if not missing:
                    continue
            written = " and ".join(launch.spelling(m) for m in missing)
            if "nnodes" in missing:
                consequence = f"each node's {name} forms its own single-node world, so every node trains a separate copy"
            else:
                consequence = "every node claims node rank 0 and the rendezvous waits until it times out"
            notes = [consequence]
            if branch is not None:
                notes.insert(0, f"this is the launch as it is written in {branch}")
            yield self.report(
                script,
                launch.span,
                f"{name} on {nodes} without {written}",
                self._fix(script, launch, missing) if branch is None else None,
                label=f"missing {written}",
                help=self._help(launch),
                severity=severity,
                notes=notes,
            )

    def _help(self, launch: Launch) -> str:
        nnodes, rank = launch.spelling("nnodes"), launch.spelling("node_rank")
        if launch.in_string:
            return f"pass {nnodes}=\\${{SLURM_JOB_NUM_NODES}} {rank}=\\${{SLURM_NODEID}} (escaped, so each task expands its own)"
        return (
            "let each task's shell expand its node ID: "
            f"srun … bash -c '{_launcher_name(launch)} {nnodes}=$SLURM_JOB_NUM_NODES {rank}=$SLURM_NODEID …' "
            "(written directly on srun's command line the batch shell expands it once, to 0), "
            "or use --rdzv_backend=c10d --rdzv_endpoint=<first node>:29500"
        )

    def _fix(self, script, launch: Launch, missing: List[str]) -> Optional[Fix]:
        from ..model import placement

        offset, quote = launch.insertion_after_launcher()
        if offset is None:
            return None
        own_nodes = launch.step.option(option_table.NODES) is not None
        if launch.in_string:
            # the task's shell expands them: each node its own ID; a step with its own -N sees
            # its node count as SLURM_NNODES (SLURM_JOB_NUM_NODES is the job's)
            if quote == '"':
                dollar = "\\$"
            elif quote in ("'", "$'"):
                dollar = "$"
            else:
                return None
            values = {
                "nnodes": dollar + ("{SLURM_NNODES}" if own_nodes else "{SLURM_JOB_NUM_NODES}"),
                "node_rank": dollar + "{SLURM_NODEID}",
            }
        else:
            # the batch shell expands them once: right for the node count, never for the node ID
            if quote not in ("", '"'):
                return None
            if own_nodes:
                count = geometry(script, launch.step).nodes.value
                if count is None:
                    return None
                values = {"nnodes": str(count)}
            else:
                values = {"nnodes": "${SLURM_JOB_NUM_NODES}"}
            if "node_rank" in missing:
                # no node ID the batch shell could give each node: a c10d rendezvous on the first
                # node assigns the ranks, from job-wide values only
                if quote != "" or launch.has("rdzv_backend", "rdzv_endpoint", "rdzv_id", "standalone"):
                    return None
                words = [f"{launch.spelling(m)}={values[m]}" for m in missing if m != "node_rank"]
                spell = launch.spelling
                words += [
                    f"{spell('rdzv_backend')}=c10d",
                    f"{spell('rdzv_endpoint')}={self._endpoint(script, launch)}",
                    f"{spell('rdzv_id')}=$SLURM_JOB_ID",
                ]
                edit = placement.add_launcher_options(script, launch, words)
                if edit is None:
                    return None
                return Fix.safe("add a c10d rendezvous on the first node" + (" and the node count" if "nnodes" in missing else ""), edit)
        words = [f"{launch.spelling(m)}={values[m]}" for m in missing]
        edit = placement.add_launcher_options(script, launch, words)
        if edit is None:
            return None
        return Fix.safe(f"add {' '.join(words)} after the launcher", edit)

    @staticmethod
    def _endpoint(script, launch: Launch) -> str:
        """``<first node>:<port>``: the launch's own master address and port when it gives them
        (as written), else the allocation's first node and port 29500."""
        parts = []
        for name, default in (("master_addr", FIRST_NODE), ("master_port", str(RDZV_PORT))):
            option = launch.option(name)
            text = script.text(option.span) if option is not None and option.span is not None and option.value is not None else ""
            value = text[len(option.written):].lstrip("= \t") if option is not None and text.startswith(option.written) else ""
            parts.append(value or default)
        return ":".join(parts)


# -- SBL104 ---------------------------------------------------------------------------------------
@register
class TasksGpusMismatch(Rule):
    code = "SBL104"
    name = "tasks-gpus-mismatch"
    severity = Severity.ERROR
    summary = "Processes per node ≠ GPUs per node (srun tasks for srun-native, `--nproc_per_node` for torchrun)."
    what = """
        Compares the number of processes a launch starts on each node with the GPUs per node
        the step gets (`--gpus-per-node`, `--gres=gpu:N`, `--gpus`, from the step or the header).
        srun-native: the tasks per node (when more than one). torchrun: `--nproc_per_node`
        (1 when not given; `gpu`/`auto` always match).
        When the count comes from a variable the script sets differently in branches
        (`NPROC=4` in an `if`, `NPROC=8` in its `else`; `SRUN_CMD` with different
        `--ntasks-per-node`), each branch's launch or step is checked, and the finding names the
        branch whose count differs from the GPUs (without a fix: the edit would belong to that
        branch).
    """
    why = """
        One process drives one GPU. Fewer processes than GPUs leave GPUs idle while the job is
        billed for them; more processes than GPUs make several ranks share a device (out of
        memory) or fail with "invalid device ordinal" when a rank selects `cuda:$LOCAL_RANK`.
    """
    fix_safety = """
        Unsafe: the process count is set to the GPU count where it is written (torchrun's
        `--nproc_per_node`, or the step's / the header's `--ntasks-per-node` when no other step
        relies on it). That changes the world size, so batch sizes and parallelism that were
        tuned for the old count change meaning. A step's own `--ntasks-per-node` is only changed
        when srun would keep the new count (the step's task count follows it, or equals nodes ×
        GPUs per node); otherwise there is no fix. Each node keeps its CPUs: `--cpus-per-task` is
        rescaled with the task count, and there is no fix when it does not divide exactly. A
        `--gpu-bind=per_task:G` or `single:N` is rescaled so each node's tasks stay bound to the
        GPUs they had (`per_task:2` for 4 tasks becomes `per_task:1` for 8); `closest` and
        per-task lists leave no fix.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=4 pretrain_gpt.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 pretrain_gpt.py'
                """
            ),
            unsafe=True,
            contains="4 GPUs per node stay idle",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=4
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            ),
            unsafe=True,
            title="srun-native: 4 tasks for 8 GPUs",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=gpu pretrain_gpt.py'
                """
            ),
            title="--nproc_per_node=gpu uses every visible GPU",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for launch in launches(script):
            if launch.entry is None or launch.entry.kind == "code":
                continue
            geo = geometry(script, launch.step)
            gpus = geo.gpus_per_node.value
            if gpus is None or gpus == 0 or geo.gpus_per_task.value is not None:
                continue
            if launch.unparsed:
                continue
            if launch.elastic:
                yield from self._elastic(script, launch, gpus, geo)
            elif launch.kind == SRUN_NATIVE:
                yield from self._native(script, launch, gpus, geo)

    @staticmethod
    def _consequence(processes: int, gpus: int) -> str:
        if processes < gpus:
            return f"{gpus - processes} GPUs per node stay idle"
        return f"{processes - gpus} processes per node have no GPU of their own (shared devices, out of memory or \"invalid device ordinal\")"

    def _elastic(self, script, launch: Launch, gpus: int, geo: Geometry) -> Iterator[Diagnostic]:
        if launch.options_incomplete:
            return
        option = launch.option("nproc_per_node")
        if option is None:
            if _env_sets(script, launch, "nproc_per_node") or gpus <= 1:
                return
            nproc = 1
            span = launch.span
            text = f"{launch.spelling('nproc_per_node')}={gpus}"
            from ..model import placement  # only for a finding's fix

            edit = placement.add_launcher_options(script, launch, [text])
            fix = Fix.unsafe(f"add {text}", edit) if edit is not None else None
            written = f"{_launcher_name(launch)} starts 1 process per node (no --nproc_per_node)"
        else:
            if option.known and option.text in ("gpu", "auto", "cuda"):
                return
            nproc = launch.certain_number("nproc_per_node")
            if nproc is None:
                yield from self._elastic_branch(script, launch, gpus)
                return
            if nproc == gpus:
                return
            span = option.span
            value_span = option.value_span()
            fix = Fix.unsafe(f"set {option.written}={gpus}", Edit(value_span, str(gpus))) if value_span else None
            written = f"`{option.written}={nproc}`"
        yield self.report(
            script,
            span,
            f"{written} but the step has {gpus} GPUs per node",
            fix,
            label=f"{nproc} for {gpus} GPUs",
            notes=(self._consequence(nproc, gpus),),
        )

    def _elastic_branch(self, script, launch: Launch, gpus: int) -> Iterator[Diagnostic]:
        """The variants disagree on `--nproc_per_node` (set in an if and its else): one finding
        naming the first branch whose count differs from the GPUs, without a fix."""
        for variant in launch.variants:
            option = variant.option("nproc_per_node")
            if option is None:
                continue  # SBL104 does not guess which variant lacks it on purpose
            nproc = option.number
            if nproc is None or nproc == gpus:
                continue
            branch = branch_of(script, launch, variant)
            if branch is None:
                continue
            yield self.report(
                script,
                option.span if variant is launch else launch.span,
                f"`{option.written}={nproc}` in one branch but the step has {gpus} GPUs per node",
                label=f"{nproc} for {gpus} GPUs",
                notes=(f"this is the launch as it is written in {branch}", self._consequence(nproc, gpus)),
            )
            return

    def _native(self, script, launch: Launch, gpus: int, geo: Geometry) -> Iterator[Diagnostic]:
        layout = task_layout(script, launch.step)
        tasks = layout.per_node
        if launch.step.options_incomplete:
            return
        if tasks is None or tasks <= 1 or tasks == gpus:
            yield from self._native_branch(script, launch)
            return
        fix = None
        help = None
        origin = layout.origin
        step = launch.step
        from .. import budget  # only for a finding's fix
        from ..budget import Unkept
        from ..model import placement

        try:
            if layout.ignored is None and origin is not None and origin.option == option_table.NTASKS_PER_NODE:
                span = origin.value_span
                if span is not None and origin.where == "step" and gives_per_node(script, step, gpus):
                    kept = budget.step_change(script, step, tasks, gpus)
                    edits = [Edit(span, str(gpus))] + kept.edits
                    if kept.words:
                        edit = placement.add_step_options(script, step, kept.words)
                        if edit is None:
                            raise Unkept("the step's `srun` is not written in one place")
                        edits.append(edit)
                    fix = Fix.unsafe(f"run {gpus} tasks per node" + kept.description, *edits)
                elif span is not None and origin.where == "header" and script.header.get(option_table.NTASKS) is None and not any(
                    other is not step and other.option(option_table.NTASKS) is None and step_option(other, option_table.NTASKS_PER_NODE) is None
                    for other in script.steps
                ):
                    inheriting = [s for s in script.steps if s.option(option_table.NTASKS) is None]
                    line = origin.directive.line if origin.directive is not None else None
                    kept = budget.header_change(script, tasks, gpus, inheriting, after_line=line)
                    fix = Fix.unsafe(f"run {gpus} tasks per node" + kept.description, Edit(span, str(gpus)), *kept.edits)
        except Unkept as unkept:
            fix, help = None, f"no automatic fix: {unkept}"
        yield self.report(
            script,
            launch.span,
            f"{tasks} tasks per node but {gpus} GPUs per node",
            fix,
            label=f"{tasks} processes for {gpus} GPUs",
            help=help,
            notes=_origin_notes(script, origin) + (
                f"srun-native starts one process per task, so {self._consequence(tasks, gpus)}",
            ),
        )

    def _native_branch(self, script, launch: Launch) -> Iterator[Diagnostic]:
        """The step as another branch writes it (``SRUN_CMD`` set in an if and its else): one
        finding naming the first branch whose tasks per node differ from its GPUs, without a fix."""
        for alternative in step_alternatives(script, launch.step):
            other = alternative.step
            if alternative.branch is None or other.options_incomplete:
                continue
            geo = geometry(script, other)
            gpus = geo.gpus_per_node.value
            if not gpus or geo.gpus_per_task.value is not None:
                continue
            layout = task_layout(script, other)
            tasks = layout.per_node
            if tasks is None or tasks <= 1 or tasks == gpus:
                continue
            yield self.report(
                script,
                launch.span,
                f"{tasks} tasks per node in one branch but {gpus} GPUs per node",
                label=f"{tasks} processes for {gpus} GPUs",
                notes=(
                    f"this is the step as it is written in {alternative.branch}",
                    f"srun-native starts one process per task, so {self._consequence(tasks, gpus)}",
                ),
            )
            return


# -- SBL106 ---------------------------------------------------------------------------------------
@register
class ParallelismDoesNotDivide(Rule):
    code = "SBL106"
    name = "parallelism-does-not-divide"
    severity = Severity.ERROR
    summary = "TP·PP·CP (or ETP·EP·PP) does not divide the world size nodes × GPUs per node."
    what = """
        Reads the parallelism sizes the task command passes (`--tp 2`,
        `--tensor-model-parallel-size 2`, `model.tensor_model_parallel_size=2`, `--pp`, `--cp`,
        `--ep`, `--etp`, `--expert-tensor-parallel-size`…), following variables, and checks
        that the world size (nodes × GPUs per node) is a multiple of TP·PP·CP and of
        ETP·EP·PP, for launches that start one process per GPU (torchrun and friends, or
        srun-native with several tasks per node). A step in a loop over configurations (`for CONFIG in "${CONFIGS[@]}"` with
        `IFS=, read -r TP PP EP`) is checked once per configuration. Sizes that are not known
        statically are left out (never guessed).
    """
    why = """
        Megatron splits the world into TP × PP × CP model-parallel groups and data-parallel
        replicas of them (DP = world / (TP·PP·CP)); the expert layers need ETP × EP × PP to
        divide it too. When they do not, initialization stops with "world size is not
        divisible by …" after the job waited in the queue and loaded the container.
    """
    fix_safety = "No fix: which size to change is a modelling decision."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                TP=2
                PP=3
                srun --kill-on-bad-exit=1 uv run python pretrain.py model.tensor_model_parallel_size=$TP model.pipeline_model_parallel_size=$PP
                """
            ),
            contains="world size 16",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                CONFIGS=("2,1,4" "2,2,3" "1,1,8")
                for CONFIG in "${CONFIGS[@]}"; do
                  IFS=, read -r TP PP EP <<< "$CONFIG"
                  srun --kill-on-bad-exit=1 uv run python train.py --tp "$TP" --pp "$PP" --ep "$EP"
                done
                """
            ),
            count=1,
            contains="TP=2, PP=2, EP=3",
            title="one configuration of a loop fails",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                CONFIGS=("2,1,4" "4,2,2" "1,1,8")
                for CONFIG in "${CONFIGS[@]}"; do
                  IFS=, read -r TP PP EP <<< "$CONFIG"
                  srun --kill-on-bad-exit=1 uv run python train.py --tp "$TP" --pp "$PP" --ep "$EP"
                done
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python train.py --tp "${TP:-3}"
                """
            ),
            title="a size the environment may override is not known",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for launch in launches(script):
            if launch.entry is None or launch.entry.kind == "code" or launch.unparsed:
                continue
            if launch.kind == SRUN_NATIVE and not task_layout(script, launch.step).more_than_one:
                # one process per node (vLLM, Ray, a single-process multi-GPU program): its
                # sizes are not split over nodes × GPUs ranks
                continue
            world, how = self._world(script, launch)
            if world is None:
                continue
            if not any(_may_name_a_size(variant.args) for variant in launch.variants or [launch]):
                continue  # no size given: no configuration can fail to divide the world
            configurations = launch.configurations()
            several = len(configurations) > 1
            for configuration in configurations:
                problem = self._problem(configuration, world)
                if problem is None:
                    continue
                prefix = f"configuration {configuration.describe()}: " if several else ""
                product, _, why = problem.partition(" (")  # "TP·PP·CP = 2·3·1 = 6 (DP would be 16/6 = 2.67)"
                yield self.report(
                    script,
                    configuration.span(),
                    f"{prefix}world size {world} is not divisible by {product}",
                    label="does not divide the world",
                    help="choose sizes whose product divides nodes × GPUs per node",
                    notes=(f"the world size is {world} ({how})", why.rstrip(")"), "Megatron stops at initialization"),
                )

    @staticmethod
    def _world(script, launch: Launch) -> Tuple[Optional[int], str]:
        geo = geometry(script, launch.step)
        nodes = geo.nodes.value
        if nodes is None:
            return None, ""
        if geo.gpus_per_node.value:
            return nodes * geo.gpus_per_node.value, f"{_plural(nodes, 'node')} × {_plural(geo.gpus_per_node.value, 'GPU')}"
        # no GPU count: the processes the launch starts
        if launch.elastic:
            nproc = launch.certain_number("nproc_per_node")
            if nproc:
                return nodes * nproc, f"{_plural(nodes, 'node')} × {_plural(nproc, 'process')}"
            return None, ""
        layout = task_layout(script, launch.step)
        if layout.total:
            return layout.total, f"{layout.total} tasks"
        return None, ""

    @staticmethod
    def _problem(configuration: Configuration, world: int) -> Optional[str]:
        sizes = configuration.sizes
        tp, pp, cp = sizes.get("tp", 1), sizes.get("pp", 1), sizes.get("cp", 1)
        dense = tp * pp * cp
        if dense and world % dense:
            return f"TP·PP·CP = {tp}·{pp}·{cp} = {dense} (DP would be {world}/{dense} = {world / dense:.2f})"
        if "ep" in sizes or "etp" in sizes:
            from ..parallelism import expert_group  # only for expert-parallel settings

            names, factors, expert = expert_group(sizes)
            if expert and world % expert:
                product_text = "·".join(names) + " = " + "·".join(str(f) for f in factors) + f" = {expert}"
                return f"{product_text} (DP = {world}/{dense} = {world // dense}, but the expert layers need {expert} to divide {world})"
        return None


# Where ``parallel_sizes`` can find a size among arguments joined by NUL bytes and lowered: a
# long name holds "parallel"; a short one (``tp``, ``etp_size``…) names a size only as a whole
# dashed option, so it follows a dash and ends the word or meets its "=". Far cheaper than
# reading every argument of every variant, and a superset: where it finds nothing, neither does
# ``parallel_sizes``.
_MAY_NAME_A_SIZE = lazy(r"parallel|-(?:e?tp|pp|cp|ep)(?:[-_]size)?(?=[=\x00])")


def _may_name_a_size(args) -> bool:
    """Whether these entry-point arguments may give a parallelism size (see ``_MAY_NAME_A_SIZE``)."""
    if not args:
        return False
    joined = "\x00".join([word.text for word in args]) + "\x00"
    return _MAY_NAME_A_SIZE.search(joined.lower()) is not None


# -- SBL112 ---------------------------------------------------------------------------------------
# The first node of the allocation, as the batch shell (which runs there) finds it.
FIRST_NODE = '$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'
RDZV_PORT = 29500


def _multi_node_options(launch: Launch) -> bool:
    """The launch's own options ask for several nodes (``--nnodes=2``, ``--nnodes=$SLURM_NNODES``,
    a ``--node_rank``, a rendezvous endpoint)."""
    if launch.has("node_rank", "rdzv_endpoint", "master_addr"):
        return True
    nnodes = launch.option("nnodes")
    if nnodes is None or nnodes.value is None:
        return False
    if nnodes.known:
        high = nnodes.text.split(":")[-1] if nnodes.text else ""
        return high.isdigit() and int(high) > 1
    return True  # a node count only known at run time: written for several nodes


def _per_task_arguments(launch: Launch) -> bool:
    return any(
        not p.known and variables.scope_of(p.name) in (variables.TASK, variables.NODE, variables.LAUNCHER)
        for word in launch.command.argv
        for p in word.pieces
    )


@register
class LauncherInBatchShell(Rule):
    code = "SBL112"
    name = "launcher-in-batch-shell"
    severity = Severity.ERROR
    summary = "torchrun run by the batch shell of a multi-node job, without srun: only the first node works."
    what = """
        Finds `torchrun`, `python -m torch.distributed.run` or `.launch` (also behind `uv run`,
        `conda run`, `apptainer exec`, `nsys profile`, `numactl`…, directly or in a `bash -c`
        string) that the batch script
        runs itself, outside any `srun` step, in a job of several nodes (`#SBATCH --nodes=2`),
        or with its own `--nnodes` above 1.
        Not reported: launchers that reach the other nodes themselves (the `deepspeed` launcher,
        `mpirun`/`mpiexec`, a script that starts work over `ssh`/`pdsh`), and a single-node
        launch (no `--nnodes` above 1, no `--node_rank` or rendezvous address) in a script
        whose other work runs in `srun` steps: that is a deliberate run on the first node
        (an evaluation after the training step, say).
        When the header gives no node count, the rule reports only a launch whose own options
        ask for several nodes.
    """
    why = """
        The batch shell runs once, on the first node of the allocation. A launcher started
        there starts its workers on that node only: with `--nnodes=1` (or none) one node trains
        and the others sit idle for the whole job; with `--nnodes=2` the rendezvous waits for
        nodes that never start an agent, until it times out. It is the usual first mistake
        when a single-node command moves to several nodes.
    """
    fix_safety = """
        Unsafe: the fix runs the launch as an srun step with one task per node
        (`srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --kill-on-bad-exit=1`) and
        (with `--cpus-per-task=<the job's CPUs per node>` when the header asks for more than one,
        so torchrun keeps the CPUs it had in the batch step) and gives torchrun the job's node
        count and a c10d rendezvous on the first node
        (`--nnodes=${SLURM_JOB_NUM_NODES} --rdzv_backend=c10d --rdzv_endpoint=<first node>:29500
        --rdzv_id=$SLURM_JOB_ID`), which needs no per-node rank. It changes how many processes
        run and where: check the entry point's batch sizes. No fix when the launch is built
        from a variable or a string, already names a rendezvous, a node rank or a master
        address, sets `--standalone` or a node count other than the job's, or passes a per-task
        value the batch shell would expand once. A Megatron-Bridge entry point gets the same
        step, with the job's own one task per node where it has one (`srun --kill-on-bad-exit=1`
        under `#SBATCH --ntasks-per-node=1`, `srun --ntasks-per-node=1 --kill-on-bad-exit=1`
        when the job gives no task count), so that SBL102's migration, applied with the same
        `--unsafe-fixes`, turns it into srun-native: one task per GPU running the entry point
        without torchrun (a header `--ntasks` equal to the node count is such a count; any
        other header `--ntasks` gets no fix, since the migration could not follow the step's
        own count, and the help says how to start it srun-native). Wrappers that act on each process (`nsys
        profile`, `ncu`, `perf record`, `valgrind`, `numactl`, `taskset`) go into the step, after `srun`; `time`, `timeout` and
        `env` stay in front of it.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gpus-per-node=8
                cd /lustre/fsw/alice/vision
                uv run python -m torch.distributed.run --nproc_per_node=8 train.py --epochs 90
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gpus-per-node=8
                cd /lustre/fsw/alice/vision
                srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --kill-on-bad-exit=1 uv run python -m torch.distributed.run --nnodes=${SLURM_JOB_NUM_NODES} --rdzv_backend=c10d --rdzv_endpoint=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29500 --rdzv_id=$SLURM_JOB_ID --nproc_per_node=8 train.py --epochs 90
                """
            ),
            unsafe=True,
            title="a single-node command moved to two nodes",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                TRAIN="torchrun --nnodes=4 --node_rank=0 --nproc_per_node=8 pretrain.py"
                bash -c "$TRAIN"
                """
            ),
            title="through a string: the rendezvous waits for three nodes that never come",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gpus-per-node=8
                cd /lustre/fsw/alice/Megatron-Bridge
                rm -rf nemo_experiments
                uv run --no-sync python -m torch.distributed.run --nproc_per_node=8 \\
                  scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                cd /lustre/fsw/alice/Megatron-Bridge
                rm -rf nemo_experiments
                srun --kill-on-bad-exit=1 uv run --no-sync python \\
                  scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config
                """
            ),
            unsafe=True,
            also=("SBL102",),
            title="a Megatron-Bridge entry point: the step SBL102 then migrates to srun-native",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=$SLURM_JOB_NUM_NODES --node_rank=$SLURM_NODEID \\
                  --master_addr=$MASTER_ADDR --nproc_per_node=8 train.py'
                torchrun --standalone --nproc_per_node=8 evaluate.py
                """
            ),
            title="training in an srun step, then an evaluation on the first node",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gpus-per-node=8
                scontrol show hostnames "$SLURM_JOB_NODELIST" | sed 's/$/ slots=8/' > hostfile
                deepspeed --hostfile hostfile --num_gpus 8 train.py --deepspeed ds_config.json
                """
            ),
            title="the deepspeed launcher reaches the other nodes over pdsh itself",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        found = [launch for launch in batch_launches(script) if launch.elastic]
        if not found or runs_remote_starter(script):
            return
        job = job_geometry(script)
        has_steps = bool(script.steps)
        for launch in found:
            wants_nodes = _multi_node_options(launch)
            if not job.multi_node and not wants_nodes:
                continue
            if not wants_nodes and has_steps:
                continue  # a deliberate first-node run beside the srun steps
            name = _launcher_name(launch)
            nodes = _nodes_phrase(job) if job.multi_node else "several nodes"
            if wants_nodes:
                consequence = "no other node starts an agent, so the rendezvous waits for them until it times out"
            else:
                consequence = "its workers start on that node only: one node trains while the others idle"
            help = (
                f"start it with srun, one task per node: srun --ntasks-per-node=1 … {name} "
                "--nnodes=$SLURM_JOB_NUM_NODES --rdzv_backend=c10d --rdzv_endpoint=<first node>:29500 …"
            )
            from ..budget import Unkept  # only for a finding's fix

            try:
                fix = self._fix(script, launch, job)
            except Unkept as unkept:
                fix, help = None, f"no automatic fix: {unkept}"
            yield self.report(
                script,
                launch.span,
                f"{name} runs in the batch shell, which runs on the first of the job's {nodes} only",
                fix,
                label="first node only",
                notes=(consequence,),
                help=help,
            )

    def _fix(self, script, launch: Launch, job: Geometry) -> Optional[Fix]:
        from .. import budget
        from ..budget import Unkept
        from ..model import placement

        if launch.in_string or launch.options_incomplete or not job.multi_node:
            return None
        if launch.has("standalone", "node_rank", "master_addr", "rdzv_backend", "rdzv_endpoint"):
            return None
        if _env_sets(script, launch, "nnodes", "node_rank", "master_addr", "rdzv_endpoint", "rdzv_backend", "standalone"):
            return None
        if _per_task_arguments(launch):
            return None
        nnodes = launch.option("nnodes")
        if nnodes is not None and not (nnodes.known and job.nodes.value is not None and nnodes.text == str(job.nodes.value)):
            return None
        wrapper = task_wrapper_index(launch.command.argv[: launch.index])
        first = launch.command.argv[launch.index if wrapper is None else wrapper]
        start = literal_span(first.value)
        offset, quote = launch.insertion_after_launcher()
        if start is None or offset is None or quote != "":
            return None
        spell = launch.spelling
        added = "" if nnodes is not None else f" {spell('nnodes')}=${{SLURM_JOB_NUM_NODES}}"
        added += (
            f" {spell('rdzv_backend')}=c10d {spell('rdzv_endpoint')}={FIRST_NODE}:{RDZV_PORT}"
            f" {spell('rdzv_id')}=$SLURM_JOB_ID"
        )
        # the launcher had the first node's CPUs in the batch step; as one task per node it keeps them
        cpus = budget.node_cpus(script)
        keep = f"--cpus-per-task={cpus} " if cpus is not None and cpus > 1 else ""
        srun = f"srun --ntasks=${{SLURM_JOB_NUM_NODES}} --ntasks-per-node=1 {keep}--kill-on-bad-exit=1 "
        description = "run it as an srun step, one torchrun per node, with a c10d rendezvous on the first node"
        if classify(launch, script.settings) is Workload.BRIDGE:
            # A Bridge entry point runs best srun-native: give the step a task count SBL102's
            # migration can turn into one task per GPU (a step --ntasks it would refuse).
            if not job_task_count_set(script):
                srun = f"srun --ntasks-per-node=1 {keep}--kill-on-bad-exit=1 "  # kept: the job gives no count
            elif job.tasks_per_node.value == 1:
                # the header's one task per node (`--ntasks-per-node=1`, or `--ntasks` equal to
                # the nodes), and its CPUs: the migration rewrites the header's count
                srun = "srun --kill-on-bad-exit=1 "
            else:
                # the step would need its own count next to the header's, which the migration
                # cannot turn into one task per GPU: the c10d step would be a dead end
                total = script.header.get(option_table.NTASKS)
                written = f"`#SBATCH {total.text}`" if total is not None and total.text else "the header's task count"
                raise Unkept(
                    f"{written} is not one task per node; a Megatron-Bridge entry point runs srun-native, one task "
                    "per GPU: `srun --ntasks-per-node=<GPUs per node> … uv run python <entry point>`, without torchrun"
                )
            description += " (SBL102 then migrates it to srun-native)"
        return Fix.unsafe(description, Edit.insert(start.start, srun), Edit.insert(offset, added))


# -- SBL113 ---------------------------------------------------------------------------------------
@register
class StaticRendezvousWithoutMasterAddress(Rule):
    code = "SBL113"
    name = "torchrun-missing-master-addr"
    severity = Severity.ERROR
    summary = "Multi-node torchrun with a static rendezvous and no `--master_addr`: each node waits on its own localhost."
    what = """
        Finds torchrun (or `python -m torch.distributed.run` / `.launch`) launched by a step on
        several nodes with the static rendezvous (a `--node_rank`, no `--rdzv_backend` other
        than `static`, no `--rdzv_endpoint`) and without `--master_addr`, in options or in
        torchrun's own environment variable `PET_MASTER_ADDR`. An exported `MASTER_ADDR` does
        not count: torchrun does not read it.
        When the step's node count is unknown (a variable, or no node count in the script at all,
        so that `sbatch -N` decides at submission), the rule reports a launch whose `--nnodes`
        is above 1 or a node-count variable. When torchrun's options come from a variable set
        differently in branches, the finding names the branch that lacks the address (no fix).
    """
    why = """
        torchrun's `--master_addr` defaults to 127.0.0.1 and is read from `PET_MASTER_ADDR`, not
        from `MASTER_ADDR` (torch's `distributed/run.py`): node 0's agent opens the rendezvous
        store on its own loopback, and every other node's agent connects to *its* loopback,
        where nothing listens. The job hangs until the rendezvous timeout, although the script
        exported `MASTER_ADDR` a few lines earlier.
    """
    fix_safety = """
        Safe: `--master_addr=$MASTER_ADDR` is added after the launcher when the script exports
        `MASTER_ADDR` (escaped as `\\$MASTER_ADDR` inside a double-quoted string, so each task
        reads the exported value); otherwise the first node of the allocation, which the batch
        shell finds with `scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1` where it
        expands the command. No fix inside a single-quoted string without an exported
        `MASTER_ADDR`, or when the launcher's words come from a variable.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 train.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c 'torchrun --master_addr=$MASTER_ADDR --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 train.py'
                """
            ),
            title="MASTER_ADDR exported, but torchrun reads PET_MASTER_ADDR",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                CMD="python -m torch.distributed.run --nnodes=2 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 train.py"
                srun --kill-on-bad-exit=1 bash -c "$CMD"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                CMD="python -m torch.distributed.run --master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1) --nnodes=2 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 train.py"
                srun --kill-on-bad-exit=1 bash -c "$CMD"
                """
            ),
            title="nothing names the first node",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID \\
                  --master_addr=$MASTER_ADDR --master_port=29500 --nproc_per_node=8 train.py'
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 torchrun --nnodes=2 --rdzv_backend=c10d \\
                  --rdzv_endpoint=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29500 --nproc_per_node=8 train.py
                """
            ),
            title="a c10d rendezvous names its host in the endpoint",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        seen = set()
        for launch in launches(script):
            if not launch.elastic or launch.options_incomplete or launch.unparsed or launch.entry is None:
                continue
            if launch.span in seen:
                continue  # one command string run by two steps (the branches of an if): one finding
            seen.add(launch.span)
            subject, branch = launch, None
            backends = launch.option_values("rdzv_backend")
            if not _static_without_address(launch) or (
                launch.has("rdzv_backend") and not all(v is not None and v.known and v.text == "static" for v in backends)
            ):
                # the launch as each branch writes it (its options set in an if and its else)
                variants = launch.variants or [launch]
                for variant in variants:
                    if not _static_without_address(variant):
                        continue
                    if variant is launch:  # the branch the script runs last, told from the others
                        where = next(
                            (w for w in (variant_branch(script, v, launch) for v in variants if v is not launch) if w), None
                        )
                    else:
                        where = variant_branch(script, launch, variant)
                    if where is not None:
                        subject, branch = variant, where
                        break
                if branch is None:
                    continue
            if _env_sets(script, launch, "master_addr", "rdzv_endpoint"):
                continue
            geo = geometry(script, launch.step)
            nnodes = subject.option("nnodes")
            known = geo.nodes.value is not None and not geo.nodes_at_submission
            if known or (geo.nodes.low is not None and geo.nodes.high is not None and geo.nodes.high > 1):
                if not geo.multi_node:
                    continue
            elif nnodes is None or (nnodes.known and not (nnodes.number or 0) > 1):
                continue  # node count unknown: only a launch written for several nodes
            if nnodes is not None and nnodes.known and nnodes.text in ("1", "1:1"):
                continue  # SBL103: each node its own world
            name = _launcher_name(launch)
            exported = script.values.is_exported("MASTER_ADDR", launch.step.command.node.start_byte)
            notes = ["it defaults to 127.0.0.1, so every node's agent waits on its own localhost and the job hangs"]
            if exported:
                notes.append("the exported `MASTER_ADDR` is not read by torchrun")
            if branch is not None:
                notes.insert(0, f"this is the launch as it is written in {branch}")
            yield self.report(
                script,
                launch.span,
                f"{name} on {_nodes_phrase(geo)} with a static rendezvous and no `--master_addr`",
                self._fix(script, launch, exported) if branch is None else None,
                label="no master address",
                help="pass --master_addr=$MASTER_ADDR (exported, the first node), or use --rdzv_backend=c10d --rdzv_endpoint=<first node>:29500",
                notes=notes,
            )

    def _fix(self, script, launch: Launch, exported: bool) -> Optional[Fix]:
        offset, quote = launch.insertion_after_launcher()
        if offset is None:
            return None
        option = launch.spelling("master_addr")
        if exported:
            value = {"": "$MASTER_ADDR", '"': "\\$MASTER_ADDR" if launch.in_string else "$MASTER_ADDR", "'": "$MASTER_ADDR"}.get(quote)
        elif quote in ("", '"') and not (launch.in_string and quote == ""):
            value = FIRST_NODE  # the batch shell expands it, on the first node
        else:
            value = None
        if value is None:
            return None
        return Fix.safe(f"add {option}={'$MASTER_ADDR' if exported else 'the first node'} after the launcher",
                        Edit.insert(offset, f" {option}={value}"))

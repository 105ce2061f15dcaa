"""SBL105, SBL107–SBL111: how the tasks of a step land on nodes and GPUs, and what they inherit."""
from __future__ import annotations



from .. import options as option_table
from ..model.slurm import target_version
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..model import variables
from ..model.geometry import Geometry, Origin, geometry, job_geometry
from ..model import launch as launch_model
from ..model.workload import cpu_tool, training_launch, uses_gpus
from ..model.branches import branch_of, step_alternatives
from ..model.steps import Step
from ..model.sourced import origin_of
from ..registry import register
from ..shell import ancestors, node_span
from ..source import Span
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from tree_sitter import Node
    from typing import Iterator, List, Optional, Set, Tuple, Union

# -- what a step launches -------------------------------------------------------------------------
# The rules ask two questions of model/workload.py: does the step start a training launch (not a
# ``python -c`` snippet or ``python -m pip``), and does that launch certainly want GPUs.


def launch_name(launch: launch_model.Launch) -> str:
    if launch.kind == launch_model.SRUN_NATIVE:
        return "python"
    return launch.kind


# -- shared helpers -------------------------------------------------------------------------------
def _min_tasks(g: Geometry) -> int:
    """A lower bound of the step's task count (1 when unknown)."""
    if g.ntasks.value is not None:
        return g.ntasks.value
    bound = 1
    if g.nodes.value is not None:
        bound = g.nodes.value
    elif g.nodes.low is not None:
        bound = g.nodes.low
    if g.tasks_per_node.value is not None:
        bound *= g.tasks_per_node.value
    return bound


def _report_span(step: Step) -> Span:
    return step.srun_word.span


def _line_bounds(data: bytes, start: int, end: int) -> Tuple[int, int]:
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    return line_start, (len(data) if line_end < 0 else line_end + 1)


def _delete_option(script, span: Span) -> Edit:
    return Edit.delete_word(script.data, span)


def _delete_directive(script, origin: Origin) -> Optional[Edit]:
    directive = origin.directive
    if directive is None:
        span = origin.span
        return _delete_option(script, span) if span is not None else None
    if len(script.header.lines.get(directive.line, [])) == 1:
        return Edit.delete(script.source.line_span(directive.line, with_newline=True))
    return _delete_option(script, directive.span)


# -- SBL105 -------------------------------------------------------------------------------------------
# A value that differs per task (Slurm's, a launcher's): set once in the batch shell, it is task 0's.
PER_TASK_VARIABLES = variables.INDEX
RANK_VARIABLES = variables.HAND_SET_RANKS
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "127.0.1.1"})
STATEMENT_BLOCKS = frozenset({"program", "compound_statement", "do_group"})
BRANCHES = frozenset({"if_statement", "elif_clause", "else_clause", "case_item", "list"})


def _statement_removal(script, node: Node) -> Optional[Edit]:
    """Remove an assignment: the whole ``export X=…`` line, or just that assignment."""
    data = script.data
    parent = node.parent
    if parent is not None and parent.type in ("declaration_command", "variable_assignments"):
        siblings = [c for c in parent.named_children if c.type in ("variable_assignment", "variable_name")]
        if len(siblings) > 1:
            return _delete_option(script, node_span(node, data))
        node = parent
        parent = node.parent
    if parent is None or parent.type not in STATEMENT_BLOCKS:
        return None  # inside an if, a pipeline, a && list…: removing it could change the syntax
    statements = [c for c in parent.named_children if c.type != "comment"]
    if parent.type != "program" and len(statements) <= 1:
        return None  # the block would become empty
    span = node_span(node, data)
    line_start, line_end = _line_bounds(data, span.start, span.end)
    before = data[line_start : span.start]
    after = data[span.end : line_end].rstrip(b"\r\n").strip(b" \t")
    if before.strip(b" \t") or (after and not after.startswith(b"#")):
        return None  # shares its line with another command
    return Edit.delete(Span(line_start, line_end))


def _unique(assignments):
    """Each assignment once (an ``export X=…`` may be recorded both as declaration and assignment)."""
    seen = set()
    for assignment in assignments:
        key = (assignment.span.start, assignment.span.end)
        if key not in seen:
            seen.add(key)
            yield assignment


def _conditional(node: Node) -> bool:
    return any(a.type in BRANCHES or a.type in ("case_statement", "if_statement") for a in ancestors(node))


def _unknown_launcher(script) -> bool:
    """A step runs a task command the model recognises no launch in, with a word it cannot know
    where the launcher would stand (``srun $LAUNCHER train.py``, ``uv run $PY -m …``)."""
    for step in script.steps:
        if launch_model.launches_of(script, step):
            continue
        if step.options_incomplete:
            return True  # ``srun … $LAUNCHER train.py``: srun's reading took the word for an option
        for command in step.task_commands:
            begin = command.begin
            if any(not word.known for word in command.argv[begin : begin + 4]):
                return True
    steps = {id(step.command) for step in script.steps}
    for command in script.commands:  # ``$LAUNCHER train.py`` in the batch shell itself
        if id(command) in steps or command.program:
            continue
        argv = command.argv
        begin = command.begin
        if begin + 1 < len(argv) and not argv[begin].known and any(w.known and w.text.endswith(".py") for w in argv[begin + 1 : begin + 6]):
            return True
    return False


def _expanded_in_batch(script, name: str) -> bool:
    return script.expands(name)


@register
class RendezvousEnvInBatchShell(Rule):
    code = "SBL105"
    name = "rendezvous-env-in-batch-shell"
    severity = Severity.ERROR
    summary = "`RANK`/`LOCAL_RANK`/`NODE_RANK` set once in the batch shell, or `MASTER_ADDR=localhost` on several nodes."
    what = """
        Finds `RANK`, `LOCAL_RANK`, `NODE_RANK` (and `GROUP_RANK`) exported by the batch script
        with a value taken from a per-task variable such as `$SLURM_PROCID`, `$SLURM_LOCALID` or
        `$SLURM_NODEID`, and `MASTER_ADDR` set to `localhost` or `127.0.0.1` in a job that spans
        several nodes.
        Not reported when every launch of the script is torchrun (or
        `python -m torch.distributed.run`/`.launch`) and the variable is one torchrun sets for
        each worker itself (`RANK`, `LOCAL_RANK`, `GROUP_RANK`): the exported value is
        overwritten. `NODE_RANK`, which torchrun does not set, is still reported, and so is
        every variable before srun-native or plain `python` launches. A launcher that only
        the submission environment names (`srun $LAUNCHER train.py`) may be torchrun: beside
        torchrun launches, or alone, it leaves the variables torchrun sets unreported. When a branch chooses
        another launcher (`torchrun` in an `if`, `python` in its `else`), the finding names the
        branch whose launch reads the exported value; when only a branch's step spans several
        nodes (`SRUN_CMD="srun -N2"` in an `if`), the loopback finding names that branch.
    """
    why = """
        The batch shell runs once, on the first node, where `SLURM_PROCID`, `SLURM_LOCALID` and
        `SLURM_NODEID` are all 0. Every task then inherits that single value: all ranks claim to
        be rank 0, the process group never forms and the job hangs until its time limit or fails
        with duplicate ranks. A loopback `MASTER_ADDR` sends the tasks of every other node to
        their own host, where no rendezvous is listening, so they time out. Megatron-Bridge and
        torchrun derive all of these per task from Slurm's variables when they are left unset.
    """
    fix_safety = """
        Unsafe: the assignment is removed, so the variable is no longer set for anything else in
        the script that reads it (a hand-written `--node_rank=$NODE_RANK`, a log line). Check
        that the launcher derives it, or pass the per-task value inside the task command.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export RANK=$SLURM_PROCID
                export LOCAL_RANK=$SLURM_LOCALID
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
            count=2,
            contains="in the batch shell, which runs once",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=localhost MASTER_PORT=29500
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 --master_addr=$MASTER_ADDR train.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export MASTER_PORT=29500
                srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=2 --node_rank=$SLURM_NODEID --nproc_per_node=8 --master_addr=$MASTER_ADDR train.py'
                """
            ),
            unsafe=True,
            contains="MASTER_ADDR",
            title="a loopback rendezvous address on two nodes",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export MASTER_ADDR=127.0.0.1
                srun --kill-on-bad-exit=1 bash -c 'RANK=$SLURM_PROCID uv run python train.py'
                """
            ),
            title="one node, and a rank set by each task itself",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        values = script.values
        torchrun = None  # (all launches torchrun, the branch of one that is not): asked once, when needed
        for name in RANK_VARIABLES:
            assignments = values.assignments.get(name)
            if not assignments or not values.is_exported(name):
                continue  # (only an assignment can take a per-task value)
            in_branch = ()
            if name in variables.TORCHRUN_SET:
                if torchrun is None:
                    torchrun = self._torchrun(script)
                all_torchrun, elsewhere = torchrun
                if all_torchrun:
                    if elsewhere is None:
                        continue
                    in_branch = (f"torchrun would set it for each worker, but the launch as written in {elsewhere} is no torchrun",)
            for assignment in _unique(assignments):
                # a file the script sources runs in the batch shell too: reported at its own line
                origin = origin_of(assignment) if assignment.sourced is not None else None
                own, where = (origin.assignment, origin.values) if origin is not None else (assignment, values)
                if own.kind not in ("assign", "append") or own.value_node is None:
                    continue
                used = sorted(
                    {
                        piece.name
                        for value in where.evaluate(own.value_node)
                        for piece in value.pieces
                        if not piece.known and piece.name in PER_TASK_VARIABLES
                    }
                )
                if not used:
                    continue
                yield self._report(
                    script,
                    assignment,
                    f"`{name}` is set from `${used[0]}` in the batch shell, which runs once, on the first node",
                    label="one value for every task",
                    note=f"every task inherits task 0's value ({name}=0 everywhere), so ranks collide and the job "
                         "hangs or fails at initialization",
                    origin=origin,
                    more=in_branch,
                )
        multi = None  # whether the job spans several nodes: asked only of a loopback MASTER_ADDR
        for assignment in _unique(values.assignments.get("MASTER_ADDR", [])):
            if assignment.kind != "assign" or assignment.value_node is None or _conditional(assignment.node):
                continue
            alternatives = values.evaluate(assignment.value_node)
            if not alternatives or not all(v.known and v.text.strip() in LOOPBACK for v in alternatives):
                continue
            if not (values.is_exported("MASTER_ADDR") or _expanded_in_batch(script, "MASTER_ADDR")):
                continue
            if multi is None:
                multi = self._multi_node(script)
            if not multi:
                return
            in_branch = () if multi is True else (f"the step as written in {multi} spans several nodes",)
            nodes = self._nodes_text(script)
            yield self._report(
                script,
                assignment,
                f"`MASTER_ADDR={alternatives[-1].text.strip()}` in a {nodes} job",
                label="loopback on a multi-node job",
                note="the tasks on every other node look for the rendezvous on their own host and time out",
                more=in_branch,
            )

    @staticmethod
    def _torchrun(script) -> Tuple[bool, Optional[str]]:
        """Whether every launch of the script is torchrun (which sets RANK, LOCAL_RANK, GROUP_RANK…
        for each worker itself, so a value exported for it is overwritten and harms nothing), and
        the branch that chooses another launcher for one of them, if any."""
        launched = launch_model.launches(script)
        all_torchrun = bool(launched) and all(launch.elastic for launch in launched)
        # a step whose launcher only the submission environment names (``srun $LAUNCHER …``)
        # may be torchrun too: for the variables torchrun sets, nothing can be told
        unknown = _unknown_launcher(script)
        if unknown and all(launch.elastic for launch in launched):
            all_torchrun = True
        # ... unless a branch chooses another launcher (torchrun in an if, python in its else):
        # then the value harms that branch's launch, which the finding names
        elsewhere = None
        if launched and all(any(a.elastic for a in [launch] + launch.others) for launch in launched):
            elsewhere = next(
                (
                    where
                    for launch in launched
                    for other in [launch] + launch.others
                    if not other.elastic
                    for where in [branch_of(script, launch, other)]
                    if where is not None
                ),
                None,
            )
            all_torchrun = all_torchrun or elsewhere is not None
        return all_torchrun, elsewhere

    def _report(
        self, script, assignment, message: str, label: str, note: str, origin=None, more: Tuple[str, ...] = ()
    ) -> Diagnostic:
        fix = None
        if origin is None:
            edit = _statement_removal(script, assignment.node)
            fix = Fix.unsafe(f"remove the `{assignment.name}` assignment", edit) if edit is not None else None
        return self.report(script, assignment.span, message, fix, label=label,
                           help="leave it unset: the launcher derives it for each task", notes=(note,) + tuple(more),
                           origin=origin)

    @staticmethod
    def _multi_node(script) -> Union[bool, str]:
        """True when the job or a step spans several nodes; else the branch that writes a step
        spanning several (``SRUN_CMD="srun -N2"`` in an if), or False."""
        if job_geometry(script).multi_node:
            return True
        if any(geometry(script, step).multi_node for step in script.steps):
            return True
        for step in script.steps:
            for alternative in step_alternatives(script, step):
                if alternative.branch is not None and geometry(script, alternative.step).multi_node:
                    return alternative.branch
        return False

    @staticmethod
    def _nodes_text(script) -> str:
        job = job_geometry(script)
        if job.nodes.value is not None and job.nodes.value > 1:
            return f"{job.nodes.value}-node"
        return "multi-node"


# -- SBL107 -------------------------------------------------------------------------------------------
HANG = "if one rank dies, the others wait for it until the time limit, holding the whole allocation"


@register
class MissingKillOnBadExit(Rule):
    code = "SBL107"
    name = "missing-kill-on-bad-exit"
    severity = Severity.WARNING
    summary = "A multi-task training step without `--kill-on-bad-exit=1`: one dead rank leaves the rest hanging."
    what = """
        Finds steps that start a training launch (`python`, `uv run python`, `torchrun`,
        `python -m torch.distributed.run`, `accelerate launch`, `deepspeed`) in more than one task
        without `--kill-on-bad-exit=1` (or `-K`), also behind wrappers (`nsys profile`, `ncu`,
        `perf record`, `valgrind`, `numactl`, `apptainer exec`) and when a single-quoted task string takes the launcher from a variable
        the batch script exported (`srun bash -c '$LAUNCHER $CMD'`). One-task steps and steps that run tools such as
        `hostname`, `nvidia-smi` or `uv sync` are not reported. A step that says
        `--kill-on-bad-exit=0` made an explicit choice and is left alone, as is a script that
        exports `SLURM_KILL_BAD_EXIT`.
    """
    why = """
        When one rank crashes (an exception, an out-of-memory kill), the others keep waiting for
        it in their next collective operation. Slurm ends the step only when every task has
        exited, so the job sits idle until its time limit, burning the whole allocation, and the
        real error is buried under a timeout. With `--kill-on-bad-exit=1` Slurm cancels the step
        as soon as one task exits with a non-zero code.
    """
    fix_safety = """
        Safe: the option only changes what happens after a task has already failed. It is added
        to the `srun` itself, also when the command is assembled in a variable such as
        `SRUN_CMD` (once for every step that uses it). When only one branch's `SRUN_CMD` lacks
        the option (an `if` and its `else`), the finding names that branch and has no fix.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun uv run python train.py --config configs/llama.yaml
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python train.py --config configs/llama.yaml
                """
            ),
            contains="16 tasks without `--kill-on-bad-exit=1`",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                SRUN_CMD="srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3"
                $SRUN_CMD --ntasks=1 --nodes=1 nvidia-smi
                $SRUN_CMD bash -c "torchrun --nnodes=4 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 train.py"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                SRUN_CMD="srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3"
                $SRUN_CMD --ntasks=1 --nodes=1 nvidia-smi
                $SRUN_CMD bash -c "torchrun --nnodes=4 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 train.py"
                """
            ),
            count=1,
            title="an srun assembled in a variable",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --nodes=1 --ntasks=1 uv sync
                srun -K uv run python train.py
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                srun hostname
                srun --ntasks=1 python summarize.py
                """
            ),
            title="tools and one-task steps",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        if script.values.is_exported("SLURM_KILL_BAD_EXIT"):
            return
        for step in script.steps:
            if step.options_incomplete:
                continue
            if step.has(option_table.KILL_ON_BAD_EXIT):
                yield from self._branches(script, step)
                continue
            launch = training_launch(script, step)
            if launch is None:
                continue
            g = geometry(script, step)
            tasks = _min_tasks(g)
            if tasks < 2:
                continue
            fix = None
            offset, quote = step.insertion_after_srun()
            srun_pieces = [p for p in step.srun_word.pieces if p.span is not None]
            if offset is not None and srun_pieces and srun_pieces[-1].via and srun_pieces[-1].quote == "":
                # ``SRUN=srun`` then ``$SRUN …``: add the option where the variable is used.
                offset, quote = step.srun_word.span.end, ""
            if offset is not None:
                from ..model import placement  # only for a finding's fix

                edit = placement.add_step_options(script, step, ["--kill-on-bad-exit=1"], offset, quote)
                fix = Fix.safe("add `--kill-on-bad-exit=1` to the srun", edit)
            count = f"{g.ntasks.value} tasks" if g.ntasks.value is not None else "several tasks"
            yield self.report(
                script,
                _report_span(step),
                f"this {launch_name(launch)} step runs {count} without `--kill-on-bad-exit=1`",
                fix,
                label="no --kill-on-bad-exit",
                notes=(HANG,),
            )

    def _branches(self, script, step) -> Iterator[Diagnostic]:
        """The step as another branch writes it (``SRUN_CMD`` set in an if and its else), when
        that one lacks the option: one finding naming the branch, without a fix."""
        launch = training_launch(script, step)
        if launch is None:
            return  # (asked first: the branches are read only for a training step)
        for alternative in step_alternatives(script, step):
            other = alternative.step
            if other.options_incomplete or other.has(option_table.KILL_ON_BAD_EXIT) or alternative.branch is None:
                continue
            g = geometry(script, other)
            if _min_tasks(g) < 2:
                continue
            count = f"{g.ntasks.value} tasks" if g.ntasks.value is not None else "several tasks"
            yield self.report(
                script,
                _report_span(step),
                f"this {launch_name(launch)} step runs {count} without `--kill-on-bad-exit=1` in one of its branches",
                None,
                label="no --kill-on-bad-exit",
                notes=(f"the step as written in {alternative.branch}", HANG),
            )
            return


# -- SBL108 -------------------------------------------------------------------------------------------
@register
class MissingGpuRequest(Rule):
    code = "SBL108"
    name = "missing-gpu-request"
    severity = Severity.ERROR
    summary = "A GPU training launch in a job that requests no GPU at all."
    what = """
        Finds steps that launch GPU training (`torchrun`, `python -m torch.distributed.run`,
        `deepspeed`, a Megatron-LM `pretrain_*.py` or Megatron-Bridge entry point, or a Python
        launch that asks for the NCCL backend) while neither the header nor the step requests
        GPUs with `--gpus-per-node`, `--gres=gpu:N`, `--gpus` or `--gpus-per-task`. Launches that
        say they run on CPU (`gloo`, `--cpu`, `--no-cuda`) are left alone, and so are CPU tools:
        data preparation entry points (`preprocess_data.py`, `prepare_*data*.py`, tokenizers),
        launches with `NVIDIA_VISIBLE_DEVICES=void`, and jobs sent to a partition named for CPU
        nodes (`--partition=cpu`). A job or step with `--exclusive` (whole nodes) is not
        reported: Slurm then allocates every CPU and GRES of its nodes, GPUs included.
        Sites that give a job its nodes' GPUs without any GPU request (no GRES gating) set
        `gpu-request = "optional"` in the configuration, which turns the rule off.
    """
    why = """
        Without a GPU request Slurm gives the job no GPUs: the tasks see an empty
        `CUDA_VISIBLE_DEVICES`, and training fails at start with "no CUDA GPUs are available",
        "Cannot find GPU specification" or an NCCL error, after the job waited in the queue.
    """
    fix_safety = """
        There is no automatic fix: how many GPUs, of which type and in which form the cluster
        expects them is a choice only the author can make.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --time=02:00:00
                srun --kill-on-bad-exit=1 bash -c "torchrun --nnodes=2 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 train.py"
                """
            ),
            contains="no GPU",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=8
                srun --kill-on-bad-exit=1 uv run python 3rdparty/Megatron-LM/pretrain_gpt.py --num-layers 12
                """
            ),
            title="Megatron-LM pretraining",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gres=gpu:8
                srun --kill-on-bad-exit=1 bash -c "torchrun --nnodes=2 --node_rank=\\$SLURM_NODEID --nproc_per_node=8 train.py"
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=4
                srun --kill-on-bad-exit=1 python train.py --backend gloo
                """
            ),
            title="a CPU job",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        if str(script.settings.get("gpu_request", "required")).lower() == "optional":
            return  # the site gives a job its nodes' GPUs without a GPU request
        for step in script.steps:
            launch = training_launch(script, step)
            if launch is None:
                continue
            g = geometry(script, step)  # (asked first: most steps request GPUs, and it is read anyway)
            if g.gpu_requested or g.options_incomplete or _whole_nodes(script, step):
                continue
            if not uses_gpus(launch, script.settings) or cpu_tool(script, launch):
                continue
            what = launch.entry.name if launch.kind == launch_model.SRUN_NATIVE and launch.entry else launch.kind
            yield self.report(
                script,
                _report_span(step),
                f"`{what}` needs GPUs but the job requests no GPU",
                label="no GPU requested",
                help="add e.g. `#SBATCH --gpus-per-node=8` to the header",
                notes=("no `--gpus-per-node`, `--gres=gpu:N`, `--gpus` or `--gpus-per-task`: Slurm gives the tasks "
                       "none and training fails at start",),
            )


def _whole_nodes(script, step) -> bool:
    """``--exclusive`` (whole nodes, not =user/=mcs/=topo) in the step or the header: Slurm
    allocates every CPU and GRES of the nodes, GPUs included, without a GPU request."""
    option = step.option("exclusive")
    if option is not None:
        return option.value in (None, "")
    directive = script.header.winning("exclusive")
    return directive is not None and (directive.value or "") == ""


# -- SBL109 -------------------------------------------------------------------------------------------
@register
class CpusPerTaskNotInherited(Rule):
    code = "SBL109"
    name = "cpus-per-task-not-inherited"
    severity = Severity.WARNING
    summary = "`#SBATCH --cpus-per-task` does not reach the steps: each task runs on one CPU."
    what = """
        Finds steps of a job whose header asks for `--cpus-per-task` greater than 1, when the step
        gives no `-c`/`--cpus-per-task` of its own and the script has not exported
        `SRUN_CPUS_PER_TASK` before it. It applies only when the target Slurm release drops the
        value: from 22.05 up to 23.11. Set the target with `slurm-version = "22.05"` in the
        configuration or `--slurm-version` (`auto` asks the `sbatch` on the machine); the
        default, 24.05, passes the value on, so the rule is silent.
    """
    why = """
        Slurm 22.05 stopped passing `--cpus-per-task` from the job to srun (22.05 release notes:
        "srun will no longer read in SLURM_CPUS_PER_TASK"): the allocation holds the CPUs, but
        every task of the step is confined to one of them. Data loader workers, tokenization and
        CPU-side preprocessing then share a single core and the GPUs wait for input. Slurm 23.11
        restored it (23.11 release notes: srun reads `SLURM_CPUS_PER_TASK` again), so jobs on
        newer clusters are not affected.
    """
    fix_safety = """
        Safe: `export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK` right after the header gives every
        step the CPU count the job already requested, which is what the header meant; a step's
        own `-c` still wins. It is inserted once for all steps.
    """
    examples = Examples(lambda: (
        Bad(
            settings=(("slurm_version", "22.05"),),
            source=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                #SBATCH --cpus-per-task=12

                set -euo pipefail
                srun --nodes=1 --ntasks=1 uv sync
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                #SBATCH --cpus-per-task=12
                export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK

                set -euo pipefail
                srun --nodes=1 --ntasks=1 uv sync
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            ),
            count=1,
            contains="is not passed on to srun by Slurm 22.05",
        ),
        Good(
            settings=(("slurm_version", "22.05"),),
            source=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                #SBATCH --cpus-per-task=12
                srun --kill-on-bad-exit=1 --cpus-per-task=$SLURM_CPUS_PER_TASK uv run python train.py
                """
            )
        ),
        Good(
            settings=(("slurm_version", "22.05"),),
            source=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --cpus-per-task=12
                export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --cpus-per-task=12
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            ),
            title="the default target, Slurm 24.05, passes --cpus-per-task on",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        version = target_version(script.settings)
        if option_table.steps_inherit(option_table.SBATCH[option_table.CPUS_PER_TASK], version):
            return  # this release passes the job's --cpus-per-task on to srun
        job = job_geometry(script)
        cpus = job.job_cpus_per_task
        if cpus.value is None or cpus.value <= 1 or cpus.origin is None:
            return
        header = script.header
        fix = None
        if header.last_header_line:
            source = script.source
            at = source.line_span(header.last_header_line, with_newline=True)
            newline = source.line_ending_at(header.last_header_line)
            prefix = "" if newline else source.preferred_newline()
            fix = Fix.safe(
                "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK after the header",
                Edit.insert(at.end, prefix + "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK" + (newline or "")),
            )
        directive = cpus.origin.directive
        if directive is None:
            return
        written = script.text(directive.span)
        lines = []
        for step in script.steps:
            if step.options_incomplete:
                continue
            origin = geometry(script, step).cpus_per_task.origin
            if origin is None or origin.where != "default":
                continue
            line = script.source.line_of(_report_span(step).start)
            if line not in lines:
                lines.append(line)
        if not lines:
            return
        where = ("the step on line {} runs" if len(lines) == 1 else "the steps on lines {} run").format(
            ", ".join(map(str, lines)))
        yield self.report(
            script,
            directive.span,
            f"`{written}` is not passed on to srun by Slurm {version[0]}.{version[1]:02d}",
            fix,
            label="not inherited by srun",
            help="export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK, or give each step --cpus-per-task",
            notes=(f"{where} each task on one CPU, so data loading and preprocessing starve",
                   "Slurm 22.05 to 23.02 drop it, 23.11 passes it on again"),
        )


# -- SBL110 -------------------------------------------------------------------------------------------
PLACEMENT_PINS = (option_table.NTASKS_PER_NODE, option_table.DISTRIBUTION, option_table.GPUS_PER_TASK, option_table.NTASKS_PER_GPU)


@register
class UnevenTaskDistribution(Rule):
    code = "SBL110"
    name = "uneven-task-distribution"
    severity = Severity.ERROR
    summary = "`--ntasks` without `--ntasks-per-node` on several GPU nodes: Slurm may pack 15 + 1."
    what = """
        Finds multi-node jobs with GPUs whose task count is given as a total, `--ntasks` (in the
        header or on a step), with nothing that fixes how many tasks go on each node: no
        `--ntasks-per-node`, `--distribution`, `--gpus-per-task` or `--ntasks-per-gpu`.
    """
    why = """
        Slurm places a total task count by free CPUs, not evenly: on two 16-CPU nodes,
        `--nodes=2 --ntasks=16` starts 15 tasks on the first node and 1 on the second. With
        8 GPUs per node, the first node runs more ranks than it has GPUs ("invalid device
        ordinal", or ranks sharing a GPU until it runs out of memory) while the second idles.
    """
    fix_safety = """
        Safe when the total divides evenly by the node count: `--ntasks=N` is replaced, where it
        is written, by `--ntasks-per-node=N/nodes`, which asks for the same number of tasks placed
        the way the author expected. When it does not divide there is no fix.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks=16
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
            contains="8 tasks per node",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gres=gpu:8
                srun --kill-on-bad-exit=1 --ntasks=16 uv run python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gres=gpu:8
                srun --kill-on-bad-exit=1 --ntasks-per-node=8 uv run python train.py
                """
            ),
            title="the total on the step",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=3
                #SBATCH --ntasks=16
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            ),
            title="16 tasks do not divide over 3 nodes: no fix",
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
                #SBATCH --ntasks=16
                #SBATCH --distribution=block:block
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --nodes=1 --ntasks=1 uv sync
                srun --kill-on-bad-exit=1 uv run python train.py
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        job = job_geometry(script)
        seen: Set[Tuple[int, int]] = set()
        candidates: List[Tuple[Geometry, Optional[Step]]] = [(job, None)]
        candidates += [(geometry(script, step), step) for step in script.steps]
        for g, step in candidates:
            if step is not None and step.options_incomplete:
                continue
            origin = g.ntasks.origin
            if origin is None or origin.where not in ("header", "step"):
                continue
            if not (g.multi_node and g.gpu_requested):
                continue
            if self._pinned(script, step, g):
                continue
            ntasks, nodes = g.ntasks.value, g.nodes.value
            if ntasks is not None and nodes is not None and ntasks <= nodes:
                continue
            key = (origin.span.start, origin.span.end) if origin.span is not None else (id(origin), -1)
            if key in seen:
                continue
            seen.add(key)
            yield self._diagnostic(script, step, g, origin)

    @staticmethod
    def _pinned(script, step: Optional[Step], g: Geometry) -> bool:
        if g.tasks_per_node.origin is not None and g.tasks_per_node.origin.where in ("header", "step"):
            return True
        for name in PLACEMENT_PINS:
            if script.header.get(name) is not None:
                return True
            if step is not None and step.has(name):
                return True
        return False

    def _diagnostic(self, script, step: Optional[Step], g: Geometry, origin: Origin) -> Diagnostic:
        ntasks, nodes = g.ntasks.value, g.nodes.value
        written = origin.written + ("=" + str(ntasks) if ntasks is not None else "")
        if ntasks is not None and nodes is not None:
            example = f"e.g. {ntasks - nodes + 1} + 1" + (" + 1" * (nodes - 2))
            message = (
                f"`{written}` over {nodes} nodes does not place {ntasks // nodes if ntasks % nodes == 0 else 'the same number of'} "
                "tasks per node"
            )
            note = f"Slurm packs them by free CPUs ({example}), so one node runs more ranks than it has GPUs"
        else:
            message = f"`{written}` on several GPU nodes without `--ntasks-per-node`"
            note = ("Slurm packs the tasks by free CPUs (--nodes=2 --ntasks=16 gives 15 + 1), so one node runs more "
                    "ranks than it has GPUs")
        exclusive = script.header.get(option_table.EXCLUSIVE) is not None or (step is not None and step.has(option_table.EXCLUSIVE))
        if exclusive:
            # measured: with whole nodes, identical idle nodes got an even split; only nodes that
            # differ in CPUs make it uneven, and nothing in the script rules that out
            message = f"`{written}` without `--ntasks-per-node`: Slurm places the tasks by CPUs, not GPUs"
            note = ("with --exclusive on identical nodes the split is usually even, but on nodes with more CPUs "
                    "than others one node runs more ranks than it has GPUs")
        fix = None
        span = origin.span
        if ntasks is not None and nodes and ntasks % nodes == 0 and span is not None:
            per_node = ntasks // nodes
            fix = Fix.safe(
                f"ask for {per_node} tasks per node instead of {ntasks} in total",
                Edit(span, f"--ntasks-per-node={per_node}"),
            )
        report_span = span if span is not None else (_report_span(step) if step is not None else Span(0, 0))
        return self.report(script, report_span, message, fix, label="placed by free CPUs, not evenly",
                           help="use --ntasks-per-node", notes=(note,))


# -- SBL111 -------------------------------------------------------------------------------------------
def _gpu_bind_per_task(value: Optional[str]) -> bool:
    if not value:
        return False
    body = value.split(",")[-1] if "," in value else value
    return body.startswith("single:") or body.startswith("map_gpu:") or value.startswith(("single:", "map_gpu:"))


@register
class GpuPerTaskBinding(Rule):
    code = "SBL111"
    name = "gpu-per-task-binding"
    severity = Severity.WARNING
    summary = "`--gpus-per-task`/`--gpu-bind=single:…` on a distributed step: each task sees one GPU."
    what = """
        Finds distributed training steps (several tasks per node, a training launch) whose GPUs
        are bound per task: `--gpus-per-task` in the header or on the step, or
        `--gpu-bind=single:…` / `--gpu-bind=map_gpu:…`. `--gpu-bind=none` turns the binding off
        and is accepted.
    """
    why = """
        With a per-task binding, Slurm sets each task's `CUDA_VISIBLE_DEVICES` to exactly one GPU,
        always numbered 0 inside the task. Training code that picks its device as
        `cuda:$LOCAL_RANK` then fails with "invalid device ordinal" on every local rank but 0,
        and since no process sees its neighbours' GPUs, NCCL cannot use peer-to-peer copies or
        NVLink between them and falls back to slower paths.
    """
    fix_safety = """
        Unsafe: `--gpus-per-task=<k>` becomes `--gpus-per-node=<k × tasks per node>` and a
        per-task `--gpu-bind` is removed, so every task sees all the node's GPUs. That is what
        `LOCAL_RANK`-based code expects, but code written for the one-GPU view (always
        `cuda:0`) would then put every rank on the first GPU.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-task=1
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
            contains="exactly one GPU",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=4
                #SBATCH --gpus-per-node=4
                srun --kill-on-bad-exit=1 --gpu-bind=single:1 python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=4
                #SBATCH --gpus-per-node=4
                srun --kill-on-bad-exit=1 python train.py
                """
            ),
            unsafe=True,
            title="a per-task --gpu-bind",
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
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-task=8
                srun python train.py
                """
            ),
            title="one task per node sees all its GPUs",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        seen: Set[Tuple[int, int]] = set()
        for step in script.steps:
            if step.options_incomplete or training_launch(script, step) is None:
                continue
            g = geometry(script, step)
            if g.tasks_per_node.value is not None and g.tasks_per_node.value < 2:
                continue
            if g.tasks_per_node.value is None and _min_tasks(g) < 2:
                continue
            bind = self._gpu_bind(script, step)
            if bind is not None and bind[0] == "none":
                continue
            per_task = g.gpus_per_task.origin if g.gpus_per_task.origin is not None else None
            per_task_bind = bind[1] if bind is not None and _gpu_bind_per_task(bind[0]) else None
            if per_task is None and per_task_bind is None:
                continue
            target = per_task or per_task_bind
            assert target is not None
            key = (target.span.start, target.span.end) if target.span is not None else (id(step), -2)
            if key in seen:
                continue
            seen.add(key)
            yield self._diagnostic(script, step, g, per_task, per_task_bind)

    @staticmethod
    def _gpu_bind(script, step: Step) -> Optional[Tuple[str, Origin]]:
        opt = step.option(option_table.GPU_BIND)
        if opt is not None:
            return (opt.value or "", Origin("step", option_table.GPU_BIND, step_option=opt))
        directive = script.header.get(option_table.GPU_BIND)
        if directive is not None:
            return (directive.value or "", Origin("header", option_table.GPU_BIND, directive=directive))
        return None

    def _diagnostic(self, script, step: Step, g: Geometry, per_task: Optional[Origin], bind: Optional[Origin]) -> Diagnostic:
        per_node = g.tasks_per_node.value
        tasks = f"{per_node} tasks per node" if per_node else "the tasks of a node"
        target = per_task or bind
        assert target is not None
        if per_task is not None:
            written = script.text(per_task.span) if per_task.span is not None else "--" + option_table.GPUS_PER_TASK
        else:
            written = script.text(bind.span) if bind is not None and bind.span is not None else "--" + option_table.GPU_BIND
        message = f"`{written}` gives each of {tasks} exactly one GPU"
        note = ("code that selects `cuda:$LOCAL_RANK` fails with \"invalid device ordinal\" on every local rank "
                "but 0, and NCCL loses peer-to-peer between the node's GPUs")
        edits: List[Edit] = []
        ok = True
        if per_task is not None:
            k = g.gpus_per_task.value
            if per_task.span is None:
                ok = False
            elif self._has_node_request(script, step, per_task):
                # the GPUs per node are requested already: only the per-task binding goes
                edit = _delete_directive(script, per_task)
                ok = edit is not None
                if edit is not None:
                    edits.append(edit)
            elif k is None or per_node is None:
                ok = False
            else:
                edits.append(Edit(per_task.span, f"--gpus-per-node={k * per_node}"))
        if bind is not None and ok:
            edit = _delete_directive(script, bind) if bind.span is not None else None
            if edit is None:
                ok = False
            else:
                edits.append(edit)
        fix = None
        if ok and edits:
            fix = Fix.unsafe("request GPUs per node and drop the per-task binding", *edits)
        span = target.span if target.span is not None else _report_span(step)
        return self.report(script, span, message, fix, label="one GPU per task",
                           help="request --gpus-per-node and let each rank pick cuda:$LOCAL_RANK", notes=(note,))

    @staticmethod
    def _has_node_request(script, step: Step, per_task: Origin) -> bool:
        """Another GPU request at the same level as --gpus-per-task (then it is just dropped)."""
        if per_task.where == "step":
            return step.has(option_table.GPUS_PER_NODE, option_table.GRES)
        return script.header.get(option_table.GPUS_PER_NODE) is not None or script.header.get(option_table.GRES) is not None

"""Task geometry of every step: how many nodes, tasks, GPUs and CPUs it really gets, and from where.

A step's geometry combines its own flags with the job's header. Inside a job, ``srun`` reads the
allocation's environment (``SLURM_NNODES``, ``SLURM_NTASKS``, ``SLURM_NTASKS_PER_NODE``,
``SLURM_GPUS_PER_NODE``…), so a step inherits the header's node, task and GPU counts unless it
gives its own. From Slurm 22.05 up to 23.11 it does NOT inherit ``--cpus-per-task``: a step
without ``-c`` gets one CPU per task unless ``SRUN_CPUS_PER_TASK`` is exported before it; other
releases inherit it. The target release is the ``slurm-version`` setting (default 24.05); the
table below was measured on 22.05.

Every quantity carries its ``Origin``: the header ``Directive`` or the ``StepOption`` that sets it,
with source spans so a fix can edit it where it is written. A value the script computes at run
time, or that differs between the alternatives the model sees (a loop over node counts), is
unknown: ``value is None``. Slurm's own job variables (``$SLURM_JOB_NUM_NODES`` …) used in a step
flag resolve to the header's value.

Entry point: ``geometry(script, step)`` (memoised per script), ``job_geometry(script)`` for the
job as the header requests it, and ``task_layout(script, step)``: the tasks per node a step
really runs, as the launch rules ask for it. Nodes, tasks and tasks per node of the job and of
every step come from one function, ``task_counts``, which follows the measurements below.

How srun settles a step's tasks (TASK_LAYOUT). Measured on Slurm 22.05.8, two nodes of 16 CPUs
and 8 GPUs each (``tests/slurm/test_step_inheritance.py`` asserts these rows); "tasks per node"
is the step's ``SLURM_STEP_TASKS_PER_NODE``:

======================================  =================================  ==========================================
header (``#SBATCH``)                    step (``srun …``)                  what runs
======================================  =================================  ==========================================
``--nodes=2 --ntasks-per-node=8``       (nothing)                          8(x2): 16 tasks
same                                    ``--ntasks-per-node=1``,           8(x2); srun: "can't honor --ntasks-per-node
                                        ``-N2 --ntasks-per-node=1``,       set to 1 which doesn't match the requested
                                        ``--ntasks-per-node=4``            tasks 16 … Ignoring --ntasks-per-node"
same                                    ``--ntasks=2 --ntasks-per-node=1`` 1(x2)
same                                    ``-n2`` / ``-n3`` / ``-n4``        1(x2) / 2,1 / 2(x2): spread in blocks, the
                                                                           job's SLURM_NTASKS_PER_NODE=8 dropped silently
same                                    ``-n8 --ntasks-per-node=2``        4(x2), "can't honor … Ignoring"
same                                    ``-n1``, ``-N2 -n1``               1 task on 1 node ("can't run 1 processes on
                                                                           2 nodes, setting nnodes to 1")
same                                    ``-N1``,                           16 tasks asked on 1 node ("can't honor");
                                        ``-N1 --ntasks-per-node=1``        with 8 CPUs there: "More processors requested
                                                                           than permitted", the step does not start
same                                    ``-N1 -n8``                        8 on 1 node
``--nodes=2 --ntasks-per-node=1``       ``--ntasks-per-node=2``            1(x2), ignored without a warning
``--nodes=2 --ntasks=4``                (nothing)                          2(x2)
``--ntasks-per-node=8``
``--nodes=2 --ntasks=16``               (nothing)                          by free CPUs: 15,1 on idle nodes, 6,10 with
                                                                           ten CPUs of n1 busy, 8(x2) while other jobs
                                                                           held CPUs of both nodes
same                                    ``--ntasks-per-node=1``            as the allocation (15,1), "can't honor"
same                                    ``-N2 --ntasks-per-node=8``        kept (16 = 2 × 8), yet 12,4 in a 15,1 and
                                                                           7,9 in a 6,10 allocation: it cannot even out
                                                                           the CPUs the job got
same                                    ``-n2`` / ``-n4``                  1(x2) / 2(x2) (in a 6,10 allocation)
``--nodes=2 --ntasks=15``               ``--ntasks-per-node=7``            kept (7 = 15 // 2): 11,4 in a 14,1 allocation
``--ntasks=16``                         (nothing)                          by free CPUs too: 15,1 on idle nodes, one
                                                                           node (16) when only one was wholly free
same, on one node                       ``-N2 --ntasks-per-node=8``        "Only allocated 1 nodes asked for 2": fails
``--nodes=2`` (no task count:           (nothing)                          1(x2)
SLURM_NTASKS unset, 1 CPU per node)     ``--ntasks-per-node=2``            kept; fails here: "More processors requested
                                                                           than permitted" (1 CPU per node)
``--nodes=2 --cpus-per-task=2``         ``--ntasks-per-node=2``            2(x2): kept (the job gives no count)
same                                    ``--ntasks=2 --ntasks-per-node=1`` 1(x2)
``--nodes=1 --ntasks=2                  ``-n8``                            runs 8 tasks in the job's 8 CPUs: each task
--cpus-per-task=4``                                                        gets 1 CPU, ``-c`` is not inherited
same                                    ``-c4 -n8``                        "More processors requested than permitted"
same, after ``export                    ``-n8``                            "More processors requested than permitted":
SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK``                                  the export gives every task 4 CPUs
``--nodes=2 --ntasks-per-node=2         (nothing) / ``--ntasks=2           each task sees the node's 4 GPUs
--gpus-per-node=4``                     --ntasks-per-node=1``
same                                    ``--gpus-per-node=2`` /            2 / 1 GPU per task
                                        ``--gres=gpu:1``
``--nodes=2 --ntasks=8                  (nothing)                          6,2 with CPUs of n1 busy: a per-task GPU
--gpus-per-task=1``                                                        count does not even out the placement
======================================  =================================  ==========================================

The rules ``task_counts`` draws from them:

- nodes: the step's ``-N``, else the job's (``SLURM_NNODES``); a task count below the node
  count shrinks the nodes to it;
- total: the step's ``-n``; else ``SLURM_NTASKS`` when the header gives ``--ntasks`` or
  ``--ntasks-per-node``; else nodes × (the step's ``--ntasks-per-node``, or 1);
- a ``--ntasks-per-node`` (the step's, else the header's ``SLURM_NTASKS_PER_NODE`` for a step
  without its own ``-n``) is kept only when it equals total // nodes; otherwise srun ignores it
  (``Geometry.ignored`` lists a step's own) and spreads the tasks in blocks;
- an allocation made from ``--ntasks`` without ``--ntasks-per-node`` places the job's tasks by
  free CPUs: a step with more tasks than nodes follows those CPUs, so its tasks per node are
  unknown (``--nodes=2 --ntasks=16`` may be 8 + 8, 15 + 1 or 6 + 10).
"""
from __future__ import annotations

from .. import options as option_table
from ..lazyclass import dataclass, field
from ..source import Span
from ..lazyre import lazy
from .slurm import target_version  # (read for most steps: an import statement per call cost more)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Tuple
    from .header import Directive
    from .script import Script
    from .steps import Step, StepOption

# Variables Slurm sets in every job, mapped to the job quantity they hold.
JOB_VARIABLES = {
    "SLURM_JOB_NUM_NODES": "nodes",
    "SLURM_NNODES": "nodes",
    "SLURM_NTASKS": "ntasks",
    "SLURM_NPROCS": "ntasks",
    "SLURM_NTASKS_PER_NODE": "tasks_per_node",
    "SLURM_GPUS_PER_NODE": "gpus_per_node",
    "SLURM_CPUS_PER_TASK": "cpus_per_task",
}
# Of those, the ones set in every job (a `${X:-default}` never uses its default).
ALWAYS_SET = frozenset({"SLURM_JOB_NUM_NODES", "SLURM_NNODES"})
# Options that request GPUs, in the order they are consulted.
GPU_OPTIONS = (option_table.GPUS_PER_NODE, option_table.GRES, option_table.GPUS, option_table.GPUS_PER_TASK)

_COUNT = lazy(r"^\s*(\d+)\s*$")
_RANGE = lazy(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
_VARIABLE = lazy(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_PARENTHESISED_TAIL = lazy(r"\(.*\)$")
_SPACE = lazy(r"\s")


@dataclass(frozen=True)
class Origin:
    """Where a quantity is set.

    ``where`` is "step" (a flag of the srun itself), "header" (an ``#SBATCH`` directive the step
    inherits), "environment" (an exported variable such as ``SRUN_CPUS_PER_TASK``), "derived"
    (computed from other quantities, e.g. tasks per node from ``--ntasks``/``--nodes``) or
    "default" (Slurm's default). ``option`` is the canonical long option name that sets it.
    """

    where: str
    option: str
    directive: Optional["Directive"] = None
    step_option: Optional["StepOption"] = None
    variable_span: Optional[Span] = None  # for "environment": the assignment
    sources: Tuple["Origin", ...] = ()  # for "derived": what it was computed from

    def __repr__(self) -> str:
        return f"Origin({self.where}, {self.written}, span={self.span})"

    @property
    def span(self) -> Optional[Span]:
        """The source bytes of the option and its value, or None when they cannot be edited
        in one place (a value that comes from another variable, or is unknown)."""
        if self.directive is not None:
            return self.directive.span
        if self.step_option is not None:
            return _step_option_span(self.step_option)
        return self.variable_span

    @property
    def value_span(self) -> Optional[Span]:
        """The source bytes of just the value (None when not editable in one place)."""
        if self.directive is not None:
            return self.directive.value_span
        if self.step_option is not None:
            return _step_value_span(self.step_option)
        return None

    @property
    def editable(self) -> bool:
        return self.span is not None

    @property
    def written(self) -> str:
        """The option as written (``--ntasks``, ``-n``), or the option name."""
        if self.directive is not None:
            return self.directive.written
        if self.step_option is not None:
            return self.step_option.written
        return "--" + self.option

    @property
    def in_header(self) -> bool:
        return self.where == "header"

    @property
    def in_step(self) -> bool:
        return self.where == "step"


@dataclass(frozen=True)
class Quantity:
    """A count and where it comes from. ``value`` None = unknown (or a range, for nodes)."""

    value: Optional[int]
    origin: Optional[Origin] = None  # None: set nowhere
    low: Optional[int] = None  # for node ranges N-M
    high: Optional[int] = None

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def is_set(self) -> bool:
        """Set explicitly somewhere (step, header or environment), not derived or defaulted."""
        return self.origin is not None and self.origin.where in ("step", "header", "environment")


UNKNOWN = Quantity(None)


@dataclass
class Geometry:
    """What one step (or the job) runs on."""

    nodes: Quantity = UNKNOWN  # value = exact node count; low/high for N-M
    ntasks: Quantity = UNKNOWN  # total tasks of the step
    tasks_per_node: Quantity = UNKNOWN
    gpus_per_node: Quantity = UNKNOWN
    gpus_per_task: Quantity = UNKNOWN
    cpus_per_task: Quantity = UNKNOWN  # what each task of the step gets
    job_cpus_per_task: Quantity = UNKNOWN  # the header's --cpus-per-task (not inherited)
    gpu_requests: List[Origin] = field(default_factory=list)  # every GPU request that applies
    # step options srun ignores: a --ntasks-per-node other than total // nodes (the total being the
    # step's own --ntasks, or the job's SLURM_NTASKS)
    ignored: List["StepOption"] = field(default_factory=list)
    # the step has words among its options the model cannot read (``srun $ARGS …``): it may
    # set anything, so quantities it would inherit are unknown
    options_incomplete: bool = False

    @property
    def multi_node(self) -> bool:
        """More than one node is known, or a node range (``--nodes=1-4``) is requested."""
        if self.nodes.value is not None:
            return self.nodes.value > 1
        if self.nodes.low is not None and self.nodes.high is not None:
            return self.nodes.high > 1
        return False

    @property
    def nodes_at_submission(self) -> bool:
        """No node count in the script: Slurm's default of one node, which ``sbatch -N`` (or
        ``SBATCH_NNODES``) replaces when the job is submitted. The script may be written for
        several nodes, so rules treat the count as unknown rather than as one node."""
        return self.nodes.origin is not None and self.nodes.origin.where == "default"

    @property
    def gpu_requested(self) -> bool:
        """Any GPU request applies to this step (even one whose count is unknown)."""
        return bool(self.gpu_requests)

    @property
    def world_size(self) -> Optional[int]:
        """nodes × GPUs per node, when both are known."""
        if self.nodes.value is None or self.gpus_per_node.value is None:
            return None
        return self.nodes.value * self.gpus_per_node.value


# -- value parsing -------------------------------------------------------------------------------
def parse_count(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    match = _COUNT.match(text)
    return int(match.group(1)) if match else None


def parse_nodes(text: Optional[str]) -> Tuple[Optional[int], Optional[int]]:
    """``N`` → (N, N); ``N-M`` → (N, M); anything else → (None, None)."""
    if text is None:
        return None, None
    count = parse_count(text)
    if count is not None:
        return count, count
    match = _RANGE.match(text)
    if match:
        return int(match.group(1)), int(match.group(2))
    return None, None


def gres_gpus(text: Optional[str]) -> Optional[int]:
    """GPUs in a ``--gres`` value: ``gpu:8``, ``gpu:a100:8``, ``gres/gpu:8``, ``gpu`` (1);
    0 for ``none`` or a list without a gpu; None when unknown."""
    if text is None:
        return None
    if text.strip() == "none":
        return 0
    for item in text.split(","):
        item = item.strip()
        if item.startswith("gres/"):
            item = item[5:]
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        if len(parts) == 1:
            return 1
        last = parts[-1]
        if "$" in last:
            return None
        count = parse_count(_PARENTHESISED_TAIL.sub("", last))
        if count is not None:
            return count
        return 1 if len(parts) == 2 else None  # gpu:a100 → one GPU of that type
    return 0


def gpu_total(text: Optional[str]) -> Optional[int]:
    """``--gpus=8`` / ``--gpus=a100:8`` / ``--gpus-per-node=h100:8`` → 8."""
    if text is None:
        return None
    return parse_count(text.split(":")[-1])


def is_gres_gpu(text: Optional[str]) -> bool:
    """Whether a ``--gres`` value asks for GPUs at all."""
    if not text:
        return False
    return any(item.strip().split(":")[0] in ("gpu", "gres/gpu") for item in text.split(","))


# -- step option values --------------------------------------------------------------------------
def _pieces(opt: "StepOption", value_only: bool):
    word = opt.words[-1]
    value = word.value
    if value_only:
        if len(opt.words) == 1:
            if opt.value is None:
                return None
            total = len(word.text.encode("utf-8"))
            start = total - len(opt.value.encode("utf-8"))
            value = value.slice(start, total)
        return list(value.pieces)
    return [p for w in opt.words for p in w.pieces]


def _contiguous(pieces) -> Optional[Span]:
    if not pieces or any(not p.known or p.span is None for p in pieces):
        return None
    vias = {p.via for p in pieces}
    if len(vias) != 1:
        return None  # part of it comes through another variable
    position = pieces[0].span.start
    for piece in pieces:
        if piece.span.start < position:
            return None
        position = piece.span.end
    return Span(pieces[0].span.start, pieces[-1].span.end)


def _step_option_span(opt: "StepOption") -> Optional[Span]:
    # "-n 16" too: flag and value words must come from the same place, in order.
    return _contiguous(_pieces(opt, False))


def _step_value_span(opt: "StepOption") -> Optional[Span]:
    pieces = _pieces(opt, True)
    if pieces is None:
        return None
    pieces = [p for p in pieces if p.text or p.span is not None]
    flag = opt.words[0].pieces
    if flag and pieces and flag[0].via != pieces[0].via:
        return None  # the value comes from another variable: editing it there changes other uses
    return _contiguous(pieces)


def step_option_text(opt: "StepOption", job: Optional["Geometry"] = None) -> Optional[str]:
    """The value of a step option once every alternative the model sees is considered.

    None when the alternatives disagree or the value is filled in at run time; a Slurm job
    variable (``$SLURM_JOB_NUM_NODES``) resolves to the job's value when ``job`` is given.
    """
    if opt.value is None:
        return None
    word = opt.words[-1]
    if len(opt.words) == 1:
        prefix = len(word.text) - len(opt.value)
    else:
        prefix = 0
    candidates: List[str] = []
    if word.alternatives:
        for alternative in word.alternatives:
            text = alternative.text
            if len(opt.words) == 1 and text[:prefix] != word.text[:prefix]:
                return _resolve([opt.value], job) if all(
                    a.text == word.text for a in word.alternatives
                ) else None
            candidates.append(text[prefix:])
        if any(_SPACE.search(c) for c in candidates):
            # The alternatives are of a larger string split into several words.
            return _resolve([opt.value], job) if len({a.text for a in word.alternatives}) == 1 else None
    else:
        candidates.append(opt.value)
    return _resolve(candidates, job)


def _resolve(candidates: List[str], job: Optional["Geometry"]) -> Optional[str]:
    resolved: List[Optional[str]] = []
    for text in candidates:
        match = _VARIABLE.match(text)
        if match:
            name = match.group(1)
            quantity = _job_variable(name, job)
            if name in ALWAYS_SET and job is not None:
                return str(quantity) if quantity is not None else None
            resolved.append(str(quantity) if quantity is not None else None)
            continue
        if "${" in text:
            return None
        resolved.append(text)
    if not resolved or any(r is None for r in resolved) or len(set(resolved)) != 1:
        return None
    return resolved[0]


def _job_variable(name: str, job: Optional["Geometry"]) -> Optional[int]:
    if job is None or name not in JOB_VARIABLES:
        return None
    quantity: Quantity = getattr(job, JOB_VARIABLES[name])
    return quantity.value


# -- building ------------------------------------------------------------------------------------
def _header_origin(directive: "Directive") -> Origin:
    return Origin("header", option_table.canonical(directive.name or directive.option), directive=directive)


def _step_origin(opt: "StepOption") -> Origin:
    return Origin("step", option_table.canonical(opt.name), step_option=opt)


def header_directive(script: "Script", name: str) -> Optional["Directive"]:
    """The header directive that wins for an option, by canonical name (``--tasks-per-node`` is
    ``ntasks-per-node``)."""
    return script.header.winning(name)


def step_option(step: "Step", name: str) -> Optional["StepOption"]:
    """The step's last option of that canonical name (``--tasks-per-node`` is ``ntasks-per-node``)."""
    found = None
    for opt in step.options:
        if option_table.canonical(opt.name) == name:
            found = opt
    return found


def last_options(step: "Step") -> Dict[str, "StepOption"]:
    """The step's last option of each canonical name: ``step_option`` for every name at once."""
    canonical = option_table.canonical
    return {canonical(opt.name): opt for opt in step.options}


def job_geometry(script: "Script") -> Geometry:
    """The job as the header requests it (what ``SLURM_*`` variables hold in the batch shell)."""
    return script.job_geometry


def _header_count(script: "Script", name: str) -> Quantity:
    """``#SBATCH --<name>=N`` as a quantity (value None when not a count); UNKNOWN when absent."""
    directive = header_directive(script, name)
    if directive is None:
        return UNKNOWN
    return Quantity(parse_count(directive.value), _header_origin(directive))


def _header_per_node(script: "Script") -> Quantity:
    """``_header_count`` of ``--ntasks-per-node``, read once per script: the job's geometry reads
    it, and so does every step that takes the job's task count (frozen: shared)."""
    kept = script.__dict__.get("_header_per_node")
    if kept is None:
        kept = script.__dict__["_header_per_node"] = _header_count(script, option_table.NTASKS_PER_NODE)
    return kept


def _by_free_cpus(script: "Script") -> bool:
    """The allocation places the job's tasks by free CPUs: ``--ntasks`` without ``--ntasks-per-node``."""
    return header_directive(script, option_table.NTASKS) is not None and header_directive(script, option_table.NTASKS_PER_NODE) is None


def build_job_geometry(script: "Script") -> Geometry:
    total = _header_count(script, option_table.NTASKS)
    per_node = _header_per_node(script)
    nodes_directive = header_directive(script, option_table.NODES)
    if nodes_directive is not None:
        low, high = parse_nodes(nodes_directive.value)
        nodes = Quantity(low if low == high else None, _header_origin(nodes_directive), low, high)
    else:
        nodes = _implicit_nodes(total, per_node)
    geometry = Geometry()
    geometry.nodes, geometry.ntasks, geometry.tasks_per_node, _ = task_counts(
        nodes, total, per_node, by_free_cpus=_by_free_cpus(script)
    )
    gpus_per_task = _header_count(script, option_table.GPUS_PER_TASK)
    if gpus_per_task.origin is not None:
        gpus_per_task = Quantity(gpu_total(gpus_per_task.origin.directive.value), gpus_per_task.origin)  # type: ignore[union-attr]
    geometry.gpus_per_task = gpus_per_task
    geometry.cpus_per_task = geometry.job_cpus_per_task = _header_count(script, option_table.CPUS_PER_TASK)
    requests = {}
    for name in GPU_OPTIONS:
        directive = header_directive(script, name)
        if directive is not None and (name != option_table.GRES or is_gres_gpu(directive.value)):
            requests[name] = (directive.value, _header_origin(directive))
    geometry.gpu_requests = [origin for _, origin in requests.values()]
    geometry.gpus_per_node = _gpus_per_node(requests, geometry)
    return geometry


def _implicit_nodes(total: Quantity, per_node: Quantity) -> Quantity:
    """sbatch's node count when the header gives no ``--nodes``."""
    if total.origin is not None and per_node.origin is not None:
        if total.value is not None and per_node.value:
            count = -(-total.value // per_node.value)
            return Quantity(count, Origin("derived", option_table.NODES, sources=(total.origin, per_node.origin)), count, count)
        return UNKNOWN
    if total.origin is None:
        return Quantity(1, Origin("default", option_table.NODES), 1, 1)  # nothing, or --ntasks-per-node alone: one node
    return UNKNOWN  # --ntasks alone: as many nodes as the free CPUs take (one task: one node, below)


def task_counts(
    nodes: Quantity,
    total: Quantity,
    per_node: Quantity,
    inherited: Optional[Quantity] = None,
    by_free_cpus: bool = False,
) -> Tuple[Quantity, Quantity, Quantity, bool]:
    """Nodes, tasks and tasks per node the way sbatch and srun settle them (see TASK_LAYOUT).

    ``nodes``: the node count asked for (the step's ``-N``, else the job's). ``total``: the task
    count srun reads (the step's ``-n``, else ``SLURM_NTASKS`` when the header gives a count);
    origin None when there is none. ``per_node``: the ``--ntasks-per-node`` srun reads (the
    step's, else ``SLURM_NTASKS_PER_NODE``); origin None when there is none. ``inherited``: the
    job's tasks per node, for a step that takes both its total and its node count from the job.
    ``by_free_cpus``: the allocation placed the job's tasks by free CPUs. Returns nodes, total,
    tasks per node, and whether srun ignores ``per_node``.
    """
    count = total.value
    if total.origin is not None and count is not None:
        if nodes.value is not None and count < nodes.value or count == 1 and nodes.value is None:
            # srun: "can't run 1 processes on 2 nodes, setting nnodes to 1"
            origin = nodes.origin if nodes.origin is not None else Origin("derived", option_table.NODES, sources=(total.origin,))
            nodes = Quantity(count, origin, count, count)
    n = nodes.value
    if total.origin is None:
        # no task count anywhere: --ntasks-per-node on every node, else one task per node
        tasks_per_node = per_node if per_node.origin is not None else Quantity(1, Origin("default", option_table.NTASKS_PER_NODE))
        value = n * tasks_per_node.value if n is not None and tasks_per_node.value is not None else None
        return nodes, _derive(value, option_table.NTASKS, nodes.origin, tasks_per_node.origin), tasks_per_node, False
    ignored = False
    chosen: Optional[Quantity] = None
    if per_node.origin is not None:
        asked = per_node.value
        if count is None or not n:
            chosen = per_node  # the usual total = nodes × per node; nothing to check it against
        elif asked is None:
            chosen = Quantity(None, per_node.origin)  # srun may keep it or not
        elif asked == count // n:
            chosen = per_node if asked * n == count else Quantity(None, per_node.origin)
        else:
            ignored = True  # "can't honor --ntasks-per-node … Ignoring --ntasks-per-node"
    if chosen is None:
        if inherited is not None:
            chosen = inherited  # the allocation's own layout
        elif count is not None and n and count % n == 0:
            chosen = _derive(count // n, option_table.NTASKS_PER_NODE, total.origin, nodes.origin)
        else:
            chosen = _derive(None, option_table.NTASKS_PER_NODE, total.origin, nodes.origin)
    if by_free_cpus and chosen.value is not None and chosen.value > 1 and n != 1:
        # within an allocation placed by free CPUs the tasks follow its CPUs, not the count
        chosen = Quantity(None, chosen.origin)
    return nodes, total, chosen, ignored


def _derive(value: Optional[int], option: str, *sources: Optional[Origin]) -> Quantity:
    return Quantity(value, Origin("derived", option, sources=tuple(s for s in sources if s is not None)))


def _gpus_per_node(requests: Dict[str, Tuple[Optional[str], Origin]], geometry: Geometry) -> Quantity:
    if option_table.GPUS_PER_NODE in requests:
        text, origin = requests[option_table.GPUS_PER_NODE]
        return Quantity(gpu_total(text), origin)
    if option_table.GRES in requests:
        text, origin = requests[option_table.GRES]
        return Quantity(gres_gpus(text), origin)
    if option_table.GPUS in requests:
        text, origin = requests[option_table.GPUS]
        total = gpu_total(text)
        nodes = geometry.nodes.value
        if total is not None and nodes:
            return Quantity(total // nodes if total % nodes == 0 else None, origin)
        return Quantity(None, origin)
    if option_table.GPUS_PER_TASK in requests:
        text, origin = requests[option_table.GPUS_PER_TASK]
        per_task = gpu_total(text)
        per_node = geometry.tasks_per_node.value
        if per_task is not None and per_node is not None:
            return Quantity(per_task * per_node, origin)
        return Quantity(None, origin)
    return Quantity(None, None)


def geometry(script: "Script", step: "Step") -> Geometry:
    """The geometry of one step (memoised)."""
    table = script.step_geometries
    key = id(step)
    if key not in table:
        table[key] = _build_step(script, step)
    return table[key]


def _header_facts(script: "Script") -> Tuple[bool, bool, Tuple[Tuple[str, "Directive"], ...]]:
    """What every step's geometry reads of the header alone, read once per script: whether it
    gives a task count (``job_task_count_set``), whether the allocation places the tasks by free
    CPUs (``_by_free_cpus``), and its GPU requests by option, in ``GPU_OPTIONS`` order."""
    kept = script.__dict__.get("_step_header_facts")
    if kept is None:
        gpus = []
        for name in GPU_OPTIONS:
            directive = header_directive(script, name)
            if directive is not None and (name != option_table.GRES or is_gres_gpu(directive.value)):
                gpus.append((name, directive))
        kept = script.__dict__["_step_header_facts"] = (job_task_count_set(script), _by_free_cpus(script), tuple(gpus))
    return kept


def _build_step(script: "Script", step: "Step") -> Geometry:
    job = job_geometry(script)
    step_option = last_options(step).get  # (``step_option`` for each name, in one pass)

    def flag(name: str) -> Tuple[Optional["StepOption"], Optional[str]]:
        opt = step_option(name)
        if opt is None:
            return None, None
        return opt, step_option_text(opt, job)

    nodes_opt, nodes_text = flag(option_table.NODES)
    ntasks_opt, ntasks_text = flag(option_table.NTASKS)
    per_node_opt, per_node_text = flag(option_table.NTASKS_PER_NODE)
    if nodes_opt is not None:
        low, high = parse_nodes(nodes_text)
        nodes = Quantity(low if low == high else None, _step_origin(nodes_opt), low, high)
    else:
        nodes = job.nodes  # SLURM_NNODES: the allocation's node count, however the header arrived at it
    own_per_node = Quantity(parse_count(per_node_text), _step_origin(per_node_opt)) if per_node_opt is not None else UNKNOWN
    inherited: Optional[Quantity] = None
    count_set, by_free_cpus, header_gpus = _header_facts(script)
    if ntasks_opt is not None:
        total = Quantity(parse_count(ntasks_text), _step_origin(ntasks_opt))
        per_node = own_per_node
    elif count_set:
        # the header gives a task count: srun reads SLURM_NTASKS (and SLURM_NTASKS_PER_NODE) as its own
        total = job.ntasks
        per_node = own_per_node if per_node_opt is not None else _header_per_node(script)
        if nodes_opt is None or (nodes.value is not None and nodes.value == job.nodes.value):
            inherited = job.tasks_per_node
    else:
        total, per_node = UNKNOWN, own_per_node
    geometry = Geometry()
    geometry.nodes, geometry.ntasks, geometry.tasks_per_node, ignored = task_counts(
        nodes, total, per_node, inherited, by_free_cpus=by_free_cpus
    )
    geometry.ignored = [per_node_opt] if ignored and per_node_opt is not None else []

    # GPUs: step flags override the header's.
    requests: Dict[str, Tuple[Optional[str], Origin]] = {}
    for name in GPU_OPTIONS:
        opt = step_option(name)
        if opt is None:
            continue
        text = step_option_text(opt, job)
        # an unknown --gres may well be a GPU request: count it (no false alarms on unknowns)
        if name != "gres" or text is None or is_gres_gpu(text) or text == "none":
            requests[name] = (text, _step_origin(opt))
    if not requests:
        for name, directive in header_gpus:
            requests[name] = (directive.value, _header_origin(directive))
    geometry.gpu_requests = [origin for text, origin in requests.values() if not (origin.option == option_table.GRES and text == "none")]
    geometry.gpus_per_node = _gpus_per_node(requests, geometry)
    if option_table.GPUS_PER_TASK in requests:
        text, origin = requests[option_table.GPUS_PER_TASK]
        geometry.gpus_per_task = Quantity(gpu_total(text), origin)

    # CPUs: the step's own -c, else SRUN_CPUS_PER_TASK exported before it, else the header's
    # --cpus-per-task where the target Slurm release lets steps inherit it (not 22.05 to 23.11).
    geometry.job_cpus_per_task = job.job_cpus_per_task
    cpus_opt, cpus_text = flag(option_table.CPUS_PER_TASK)
    if cpus_opt is not None:
        geometry.cpus_per_task = Quantity(parse_count(cpus_text), _step_origin(cpus_opt))
    else:
        geometry.cpus_per_task = (
            _srun_cpus_from_environment(script, step, job)
            or _inherited_cpus(script, job)
            or Quantity(1, Origin("default", option_table.CPUS_PER_TASK))
        )
    het_group = step_option(option_table.HET_GROUP)
    other_component = het_group is not None and (het_group.value or "").strip() not in ("", "0")
    if step.options_incomplete or other_component:
        # (a step of another component of a heterogeneous job inherits that component's
        # options, which the header's first component does not describe)
        # Words the model cannot read stand among the options (``srun $ARGS …``): they may set
        # anything, so only what the step visibly sets itself is known.
        geometry.options_incomplete = True
        geometry.ignored = []  # an unread word may be the --ntasks that makes it count
        for name in ("nodes", "ntasks", "tasks_per_node", "gpus_per_node", "gpus_per_task", "cpus_per_task"):
            quantity: Quantity = getattr(geometry, name)
            if quantity.origin is None or quantity.origin.where != "step":
                setattr(geometry, name, Quantity(None))
    return geometry


def _inherited_cpus(script, job: "Geometry") -> Optional[Quantity]:
    """The header's ``--cpus-per-task`` for a step without ``-c``, when the target release's steps
    inherit it (``slurm-version``; Slurm 23.11 restored what 22.05 had dropped)."""
    if job.job_cpus_per_task.value is None:
        return None
    spec = option_table.SBATCH[option_table.CPUS_PER_TASK]
    if not option_table.steps_inherit(spec, target_version(getattr(script, "settings", None))):
        return None
    return job.job_cpus_per_task


def _srun_cpus_from_environment(script: "Script", step: "Step", job: Geometry) -> Optional[Quantity]:
    values = script.values
    at = step.command.node.start_byte
    if step.command.in_function:
        at = len(script.data)  # a function may run after any export
    if not values.is_exported("SRUN_CPUS_PER_TASK", at):
        return None
    assignments = [a for a in values.assignments_before("SRUN_CPUS_PER_TASK", at) if a.kind == "assign"]
    span = assignments[-1].span if assignments else None
    found = values.lookup("SRUN_CPUS_PER_TASK", at, step.command.node)
    texts = [v.text for v in found] if found else []
    text = _resolve(texts, job) if texts else None
    return Quantity(parse_count(text), Origin("environment", option_table.CPUS_PER_TASK, variable_span=span))


# -- the launch rules' view ----------------------------------------------------------------------
@dataclass
class TaskLayout:
    """Tasks per node a step really runs, and where that count comes from (see TASK_LAYOUT).

    A view of the step's ``Geometry``: ``per_node`` is its tasks per node when known, else, when
    the total and the node count are, the tasks on the busiest node at least (ceil(total /
    nodes)); ``more_than_one`` says some node certainly runs more than one task.
    """

    per_node: Optional[int]  # tasks per node (on the busiest node, at least, when uneven), None when unknown
    more_than_one: bool  # some node certainly runs more than one task
    origin: Optional[Origin]  # where the count that wins is set
    ignored: Optional["StepOption"] = None  # the step's --ntasks-per-node that srun ignores
    nodes: Optional[int] = None
    total: Optional[int] = None


def task_layout(script: "Script", step: "Step") -> TaskLayout:
    geo = geometry(script, step)
    nodes, total, per_node = geo.nodes.value, geo.ntasks.value, geo.tasks_per_node.value
    ignored = geo.ignored[-1] if geo.ignored else None
    if per_node is not None:
        return TaskLayout(per_node, per_node > 1, geo.tasks_per_node.origin, ignored, nodes, total)
    if total is not None and nodes:
        return TaskLayout(-(-total // nodes), total > nodes, geo.tasks_per_node.origin, ignored, nodes, total)
    return TaskLayout(None, False, geo.tasks_per_node.origin, ignored, nodes, total)


def job_task_count_set(script: "Script") -> bool:
    """Whether the batch environment has ``SLURM_NTASKS`` (the header gives a task count), so a
    step without its own ``--ntasks`` runs that many tasks."""
    return header_directive(script, option_table.NTASKS) is not None or header_directive(script, option_table.NTASKS_PER_NODE) is not None


def gives_per_node(script: "Script", step: "Step", count: int) -> Optional[bool]:
    """Whether ``--ntasks-per-node=<count>`` on this step would run exactly ``count`` tasks on each
    of its nodes (None when the step's total or node count is not known). A step whose total
    follows the per-node count (no ``--ntasks`` of its own, none from the job) always would; else
    srun keeps it only when total = nodes × count."""
    if step_option(step, option_table.NTASKS) is None and not job_task_count_set(script):
        return True
    geo = geometry(script, step)
    total, nodes = geo.ntasks.value, geo.nodes.value
    if total is None or not nodes:
        return None
    return count * nodes == total

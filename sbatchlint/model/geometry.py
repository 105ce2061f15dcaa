"""Task geometry of every step: how many nodes, tasks, GPUs and CPUs it really gets, and from where.

A step's geometry combines its own flags with the job's header. Inside a job, ``srun`` reads the
allocation's environment (``SLURM_NNODES``, ``SLURM_NTASKS``, ``SLURM_NTASKS_PER_NODE``,
``SLURM_GPUS_PER_NODE``…), so a step inherits the header's node, task and GPU counts unless it
gives its own. It does NOT inherit ``--cpus-per-task`` (Slurm 22.05 and later): a step without
``-c`` gets one CPU per task unless ``SRUN_CPUS_PER_TASK`` is exported before it.

Every quantity carries its ``Origin``: the header ``Directive`` or the ``StepOption`` that sets it,
with source spans so a fix can edit it where it is written. A value the script computes at run
time, or that differs between the alternatives the model sees (a loop over node counts), is
unknown: ``value is None``. Slurm's own job variables (``$SLURM_JOB_NUM_NODES`` …) used in a step
flag resolve to the header's value.

Entry point: ``geometry(script, step)`` (memoised per script), ``job_geometry(script)`` for the
job as the header requests it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from .. import options as option_table
from ..source import Span

if TYPE_CHECKING:  # pragma: no cover
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
GPU_OPTIONS = ("gpus-per-node", "gres", "gpus", "gpus-per-task")

_COUNT = re.compile(r"^\s*(\d+)\s*$")
_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
_VARIABLE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


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
    # step options srun overrides: a --ntasks-per-node that disagrees with the job's task count
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
        count = parse_count(re.sub(r"\(.*\)$", "", last))
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
        if any(re.search(r"\s", c) for c in candidates):
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


def _header(script: "Script", name: str) -> Optional["Directive"]:
    found = None
    for directive in script.header.effective:
        if directive.name is not None and option_table.canonical(directive.name) == name:
            found = directive
    return found


def _step_option(step: "Step", name: str) -> Optional["StepOption"]:
    found = None
    for opt in step.options:
        if option_table.canonical(opt.name) == name:
            found = opt
    return found


def _derive(value: Optional[int], option: str, *sources: Optional[Origin]) -> Quantity:
    return Quantity(value, Origin("derived", option, sources=tuple(s for s in sources if s is not None)))


def job_geometry(script: "Script") -> Geometry:
    """The job as the header requests it (what ``SLURM_*`` variables hold in the batch shell)."""
    return script.derived("geometry.job", _build_job)


def _build_job(script: "Script") -> Geometry:
    def count(name: str) -> Tuple[Optional[int], Optional[Origin]]:
        directive = _header(script, name)
        if directive is None:
            return None, None
        return parse_count(directive.value), _header_origin(directive)

    nodes_directive = _header(script, "nodes")
    if nodes_directive is not None:
        low, high = parse_nodes(nodes_directive.value)
        nodes_origin: Optional[Origin] = _header_origin(nodes_directive)
    else:
        low = high = None
        nodes_origin = None
    ntasks, ntasks_origin = count("ntasks")
    per_node, per_node_origin = count("ntasks-per-node")
    cpus, cpus_origin = count("cpus-per-task")
    gpus_per_task, gpt_origin = count("gpus-per-task")
    if gpt_origin is not None:
        gpus_per_task = gpu_total(gpt_origin.directive.value)  # type: ignore[union-attr]
    geometry = _combine(
        low, high, nodes_origin, ntasks, ntasks_origin, per_node, per_node_origin, explicit_nodes=nodes_origin is not None
    )
    geometry.gpus_per_task = Quantity(gpus_per_task, gpt_origin)
    geometry.cpus_per_task = Quantity(cpus, cpus_origin)
    geometry.job_cpus_per_task = Quantity(cpus, cpus_origin)
    requests = {}
    for name in GPU_OPTIONS:
        directive = _header(script, name)
        if directive is not None and (name != "gres" or is_gres_gpu(directive.value)):
            requests[name] = (directive.value, _header_origin(directive))
    geometry.gpu_requests = [origin for _, origin in requests.values()]
    geometry.gpus_per_node = _gpus_per_node(requests, geometry)
    return geometry


def _combine(
    low: Optional[int],
    high: Optional[int],
    nodes_origin: Optional[Origin],
    ntasks: Optional[int],
    ntasks_origin: Optional[Origin],
    per_node: Optional[int],
    per_node_origin: Optional[Origin],
    explicit_nodes: bool,
) -> Geometry:
    """Nodes, tasks and tasks per node from what is given, the way Slurm fills in the rest."""
    geometry = Geometry()
    nodes = low if low is not None and low == high else None
    if nodes_origin is None and low is None:
        if ntasks is not None and per_node is not None and per_node > 0:
            nodes = -(-ntasks // per_node)
            low = high = nodes
            nodes_origin = Origin("derived", "nodes", sources=tuple(o for o in (ntasks_origin, per_node_origin) if o))
        elif ntasks_origin is None and per_node_origin is None:
            nodes, low, high = 1, 1, 1  # nothing requested: one node
            nodes_origin = Origin("default", "nodes")
        elif ntasks == 1:
            nodes, low, high = 1, 1, 1
            nodes_origin = Origin("derived", "nodes", sources=(ntasks_origin,) if ntasks_origin else ())
        elif per_node_origin is not None and ntasks_origin is None:
            nodes, low, high = 1, 1, 1  # --ntasks-per-node alone: one node
            nodes_origin = Origin("default", "nodes")
    if ntasks is not None and nodes is not None and ntasks < nodes:
        # srun: "can't run 1 processes on 2 nodes, setting nnodes to 1"
        nodes, low, high = ntasks, ntasks, ntasks
    geometry.nodes = Quantity(nodes, nodes_origin, low, high)
    if per_node_origin is not None and (ntasks_origin is None or ntasks_origin.where != "step" or per_node_origin.where == "step"):
        tasks_per_node = Quantity(per_node, per_node_origin)
        if ntasks is not None and nodes is not None and per_node is not None and ntasks < nodes * per_node:
            # --ntasks-per-node is a maximum when --ntasks is given too
            tasks_per_node = _derive(ntasks // nodes if ntasks % nodes == 0 else None, "ntasks-per-node", ntasks_origin, nodes_origin)
    elif ntasks_origin is not None:
        if ntasks is not None and nodes is not None and nodes > 0 and ntasks % nodes == 0:
            tasks_per_node = _derive(ntasks // nodes, "ntasks-per-node", ntasks_origin, nodes_origin)
        else:
            tasks_per_node = _derive(None, "ntasks-per-node", ntasks_origin, nodes_origin)
    else:
        tasks_per_node = Quantity(1, Origin("default", "ntasks-per-node"))
    geometry.tasks_per_node = tasks_per_node
    if ntasks_origin is not None:
        geometry.ntasks = Quantity(ntasks, ntasks_origin)
    elif nodes is not None and tasks_per_node.value is not None:
        geometry.ntasks = _derive(nodes * tasks_per_node.value, "ntasks", nodes_origin, tasks_per_node.origin)
    else:
        geometry.ntasks = _derive(None, "ntasks", nodes_origin, tasks_per_node.origin)
    return geometry


def _gpus_per_node(requests: Dict[str, Tuple[Optional[str], Origin]], geometry: Geometry) -> Quantity:
    if "gpus-per-node" in requests:
        text, origin = requests["gpus-per-node"]
        return Quantity(gpu_total(text), origin)
    if "gres" in requests:
        text, origin = requests["gres"]
        return Quantity(gres_gpus(text), origin)
    if "gpus" in requests:
        text, origin = requests["gpus"]
        total = gpu_total(text)
        nodes = geometry.nodes.value
        if total is not None and nodes:
            return Quantity(total // nodes if total % nodes == 0 else None, origin)
        return Quantity(None, origin)
    if "gpus-per-task" in requests:
        text, origin = requests["gpus-per-task"]
        per_task = gpu_total(text)
        per_node = geometry.tasks_per_node.value
        if per_task is not None and per_node is not None:
            return Quantity(per_task * per_node, origin)
        return Quantity(None, origin)
    return Quantity(None, None)


def geometry(script: "Script", step: "Step") -> Geometry:
    """The geometry of one step (memoised)."""
    table = script.derived("geometry.steps", lambda s: {})
    key = id(step)
    if key not in table:
        table[key] = _build_step(script, step)
    return table[key]


def _build_step(script: "Script", step: "Step") -> Geometry:
    job = job_geometry(script)

    def flag(name: str) -> Tuple[Optional["StepOption"], Optional[str]]:
        opt = _step_option(step, name)
        if opt is None:
            return None, None
        return opt, step_option_text(opt, job)

    nodes_opt, nodes_text = flag("nodes")
    ntasks_opt, ntasks_text = flag("ntasks")
    per_node_opt, per_node_text = flag("ntasks-per-node")
    if nodes_opt is not None:
        low, high = parse_nodes(nodes_text)
        nodes_origin: Optional[Origin] = _step_origin(nodes_opt)
    else:
        # SLURM_NNODES: the allocation's node count, however the header arrived at it
        low, high, nodes_origin = job.nodes.low, job.nodes.high, job.nodes.origin
    # Inside a job whose header gives a task count, srun reads SLURM_NTASKS as its own --ntasks.
    job_count_set = job.ntasks.is_set or job.tasks_per_node.is_set
    ignored: List["StepOption"] = []
    if ntasks_opt is not None or not job_count_set:
        if ntasks_opt is not None:
            ntasks, ntasks_origin = parse_count(ntasks_text), _step_origin(ntasks_opt)
        else:
            ntasks, ntasks_origin = None, None
        if per_node_opt is not None:
            per_node, per_node_origin = parse_count(per_node_text), _step_origin(per_node_opt)
        elif job.tasks_per_node.is_set:
            # SLURM_NTASKS_PER_NODE: a maximum next to the step's own --ntasks
            per_node, per_node_origin = job.tasks_per_node.value, job.tasks_per_node.origin
        else:
            per_node, per_node_origin = None, None
        geometry = _combine(low, high, nodes_origin, ntasks, ntasks_origin, per_node, per_node_origin, nodes_origin is not None)
    else:
        same_nodes = nodes_opt is None or (low is not None and low == high == job.nodes.value)
        geometry = Geometry(nodes=Quantity(low if low == high else None, nodes_origin, low, high))
        if not same_nodes:
            # The job's task count over another node count: how srun spreads it is not known.
            geometry.ntasks = Quantity(None)
            geometry.tasks_per_node = Quantity(None)
        else:
            geometry.nodes = job.nodes if nodes_opt is None else geometry.nodes
            geometry.ntasks = job.ntasks
            geometry.tasks_per_node = job.tasks_per_node
            if per_node_opt is not None:
                asked = parse_count(per_node_text)
                total, nodes = job.ntasks.value, job.nodes.value
                if asked is None or total is None or not nodes:
                    geometry.tasks_per_node = Quantity(None, _step_origin(per_node_opt))
                elif asked * nodes == total:
                    geometry.tasks_per_node = Quantity(asked, _step_origin(per_node_opt))
                else:
                    # "can't honor --ntasks-per-node … Ignoring --ntasks-per-node": the job's
                    # count wins (measured on Slurm 22.05).
                    ignored.append(per_node_opt)
    geometry.ignored = ignored

    # GPUs: step flags override the header's.
    requests: Dict[str, Tuple[Optional[str], Origin]] = {}
    for name in GPU_OPTIONS:
        opt = _step_option(step, name)
        if opt is None:
            continue
        text = step_option_text(opt, job)
        # an unknown --gres may well be a GPU request: count it (no false alarms on unknowns)
        if name != "gres" or text is None or is_gres_gpu(text) or text == "none":
            requests[name] = (text, _step_origin(opt))
    if not requests:
        for name in GPU_OPTIONS:
            directive = _header(script, name)
            if directive is not None and (name != "gres" or is_gres_gpu(directive.value)):
                requests[name] = (directive.value, _header_origin(directive))
    geometry.gpu_requests = [origin for text, origin in requests.values() if not (origin.option == "gres" and text == "none")]
    geometry.gpus_per_node = _gpus_per_node(requests, geometry)
    if "gpus-per-task" in requests:
        text, origin = requests["gpus-per-task"]
        geometry.gpus_per_task = Quantity(gpu_total(text), origin)

    # CPUs: only the step's own -c, or SRUN_CPUS_PER_TASK exported before it.
    geometry.job_cpus_per_task = job.job_cpus_per_task
    cpus_opt, cpus_text = flag("cpus-per-task")
    if cpus_opt is not None:
        geometry.cpus_per_task = Quantity(parse_count(cpus_text), _step_origin(cpus_opt))
    else:
        geometry.cpus_per_task = _srun_cpus_from_environment(script, step, job) or Quantity(1, Origin("default", "cpus-per-task"))
    if step.options_incomplete:
        # Words the model cannot read stand among the options (``srun $ARGS …``): they may set
        # anything, so only what the step visibly sets itself is known.
        geometry.options_incomplete = True
        for name in ("nodes", "ntasks", "tasks_per_node", "gpus_per_node", "gpus_per_task", "cpus_per_task"):
            quantity: Quantity = getattr(geometry, name)
            if quantity.origin is None or quantity.origin.where != "step":
                setattr(geometry, name, Quantity(None))
    return geometry


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
    return Quantity(parse_count(text), Origin("environment", "cpus-per-task", variable_span=span))

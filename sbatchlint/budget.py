"""The job's CPUs, memory and GPUs per node, kept when a fix changes its tasks per node.

SBL101's fix (8 tasks → 1 per node), SBL102's migration (1 → 8 per node) and SBL104's fix change
how many tasks run on each node. Every per-task request scales with that count: left alone,
``--cpus-per-task=12`` gives a node 96 CPUs before SBL101's fix and 12 after, and
``--cpus-per-task=64`` asks 512 CPUs of a node after the migration, which sbatch refuses. The
functions here return the edits that keep each node's budget:

- CPUs: ``--cpus-per-task`` becomes ``old CPUs per node / new tasks per node`` (in the header, on
  each step whose count changes, and in a literal ``SRUN_CPUS_PER_TASK`` export). A job that
  writes no CPU count has Slurm's one CPU per task: going down, the tasks get the CPUs the old
  tasks had (``--cpus-per-task=8`` for 8 → 1); going up, each new task takes the one CPU Slurm
  gives it at least, which the node must hold (the cluster profile's CPUs per node, when there
  is one). A whole-node ``--exclusive`` job that writes no CPU count has all the node's CPUs:
  with a cluster profile they are shared out (``--cpus-per-task=<node CPUs / tasks>``).
- Memory: ``--mem`` and ``--mem-per-gpu`` are per node and per GPU, unchanged. ``--mem-per-cpu``
  follows the CPUs, so it is unchanged when they are; when the CPUs per node must grow, it is
  written as the ``--mem`` per node the job had.
- GPUs: ``--gpus-per-node``, ``--gres=gpu:N`` and ``--gpus`` stay. ``--gpus-per-task=G`` is
  rewritten as ``--gpus-per-node=<G × old tasks per node>``.
- GPU binding (header, steps, or a step inheriting the header's): ``--gpu-bind=none`` binds
  nothing and stays. ``per_task:G`` (G GPUs per task) becomes ``per_task:<G × old / new>`` and
  ``single:N`` (N tasks per GPU) ``single:<N × new / old>``, so the tasks of a node are bound to
  the GPUs they were bound to before. ``--ntasks-per-gpu=N`` cannot stand next to the
  ``--ntasks-per-node`` the fix writes (sbatch refuses the pair): it becomes the binding it
  implied, ``--gpu-bind=single:<N × new / old>`` (or goes, next to an explicit ``--gpu-bind``),
  when the job asks its GPUs by a count of its own. ``closest`` (the GPUs near a task's CPUs,
  which move with the task count), ``map_gpu``/``mask_gpu`` (lists written task by task) and a
  count that does not scale to a whole number have no exact equivalent: no fix.

When a budget cannot be kept exactly (12 CPUs shared by 8 tasks, a count only known at run
time), :class:`Unkept` says why and the caller offers no fix.
"""
from __future__ import annotations


from . import options as option_table
from .diagnostics import Edit
from .lazyclass import dataclass, field
from .model.geometry import geometry, gpu_total, parse_count, step_option
from .model.steps import Step
from .source import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional, Sequence

SRUN_CPUS = "SRUN_CPUS_PER_TASK"
_UNITS = ("K", "M", "G", "T")


class Unkept(Exception):
    """The budget cannot be kept exactly; the message says why."""


@dataclass
class Kept:
    """What keeps the budget: edits elsewhere, and srun options to add next to the step's new
    count (``words``), in one insertion with them."""

    edits: List[Edit] = field(default_factory=list)
    words: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    @property
    def description(self) -> str:
        return f" ({'; '.join(self.notes)})" if self.notes else ""


# -- the header's count changes --------------------------------------------------------------------
def header_change(script, old: int, new: int, steps: Sequence[Step], after_line: Optional[int] = None) -> Kept:
    """The header's tasks per node go from ``old`` to ``new``; ``steps`` take their count from it.
    ``after_line``: the header line a new directive follows (the count's own line)."""
    kept = Kept()
    if old == new:
        return kept
    header = script.header
    _keep_gpu_binding(script, steps, old, new, kept, header_side=True)
    cpus = header.winning(option_table.CPUS_PER_TASK)
    node_cpus = _profile_cpus(script)
    per_task = _count(cpus.value, f"the header's `{cpus.written}`") if cpus is not None else 1
    total = per_task * old
    if cpus is None and _exclusive(script) and node_cpus is not None:
        total = node_cpus  # a whole-node job's CPUs are the node's
    grows = False
    if total % new == 0:
        wanted = total // new
        if cpus is not None and wanted != per_task:
            if cpus.value_span is None:
                raise Unkept(f"the header's `{cpus.written}` cannot be edited in place")
            line = _own_line(script, cpus) if wanted == 1 else None
            if line is not None:
                # one CPU per task is Slurm's default: the directive goes (a fix that added it
                # and one that takes it back leave the script as it was)
                kept.edits.append(Edit.delete(line))
            else:
                kept.edits.append(Edit(cpus.value_span, str(wanted)))
            kept.notes.append(f"`--cpus-per-task={wanted}` keeps {total} CPUs per node")
        elif cpus is None and wanted != 1:
            kept.edits.append(_new_directive(script, f"--cpus-per-task={wanted}", after_line))
            kept.notes.append(f"`--cpus-per-task={wanted}` keeps {total} CPUs per node")
    elif per_task == 1 and new > old:
        # one CPU per task is the least a task takes: the node's CPUs grow from old to new
        grows = True
        if node_cpus is not None and new > node_cpus:
            raise Unkept(f"{new} tasks need {new} CPUs per node, more than the nodes' {node_cpus}")
    else:
        written = f"`{_spelled(cpus.written, per_task)}`" if cpus is not None else "one CPU each"
        raise Unkept(f"{total} CPUs per node ({_tasks(old)} × {written}) do not divide among {_tasks(new)}")
    _rescale_srun_cpus(script, old, new, kept)
    for step in steps:
        _rescale_step_cpus(script, step, old, new, kept, own_only=True)
    mem_per_cpu = header.winning(option_table.MEM_PER_CPU)
    if grows and mem_per_cpu is not None and not _exclusive(script):
        per_cpu = _memory_mb(mem_per_cpu.value, f"the header's `{mem_per_cpu.written}`")
        if header.winning(option_table.MEM) is not None:
            raise Unkept("the header sets both `--mem` and `--mem-per-cpu`")
        kept.edits.append(Edit(mem_per_cpu.span, f"--mem={_size(per_cpu * old)}"))
        kept.notes.append(f"`--mem={_size(per_cpu * old)}` keeps each node's memory")
    gpus = header.winning(option_table.GPUS_PER_TASK)
    if gpus is not None:
        kept.edits.append(Edit(gpus.span, _per_node_gpus(script, gpus.value, gpus.written, old, header_side=True)))
        kept.notes.append("GPUs asked per node instead of per task")
    for step in steps:
        own = step_option(step, option_table.GPUS_PER_TASK)
        if own is not None:
            kept.edits.append(_rewrite_step_gpus(script, step, own, old))
    return kept


# -- one step's own count changes ------------------------------------------------------------------
def step_change(script, step: Step, old: int, new: int) -> Kept:
    """The step alone goes from ``old`` to ``new`` tasks per node; the job's allocation stays."""
    kept = Kept()
    if old == new:
        return kept
    _keep_gpu_binding(script, [step], old, new, kept, header_side=False)
    geo = geometry(script, step)
    if geo.gpus_per_task.value is not None or geo.gpus_per_task.origin is not None:
        origin = geo.gpus_per_task.origin
        if origin is None or origin.where != "step":
            raise Unkept("the step inherits the header's `--gpus-per-task`: GPUs per node would change with the task count")
        own = step_option(step, option_table.GPUS_PER_TASK)
        kept.edits.append(_rewrite_step_gpus(script, step, own, old))
    _rescale_step_cpus(script, step, old, new, kept, own_only=False)
    return kept


# -- CPUs ------------------------------------------------------------------------------------------
def _rescale_step_cpus(script, step: Step, old: int, new: int, kept: Kept, own_only: bool) -> None:
    """The step's CPUs per node stay: its own ``-c`` is rescaled in place; without one (and when
    ``own_only`` is false) a ``--cpus-per-task`` joins the step's new options."""
    own = step_option(step, option_table.CPUS_PER_TASK)
    if own is None and own_only:
        return
    cpus = geometry(script, step).cpus_per_task
    if cpus.value is None:
        raise Unkept("the step's CPUs per task are not known")
    total = cpus.value * old
    whole = _profile_cpus(script) if _exclusive(script) else None
    if own is None and cpus.origin is not None and cpus.origin.where == "default" and whole is not None:
        total = whole  # a whole-node job's CPUs are the node's
    if total % new == 0:
        per_task = total // new
    elif cpus.value == 1 and new > old:
        per_task = 1  # one CPU per task is the least a task takes
    else:
        raise Unkept(f"the step's {total} CPUs per node ({_tasks(old)} × {cpus.value}) do not divide among {_tasks(new)}")
    allocation = _job_cpus_per_node(script)
    if not own_only and allocation is not None and new * per_task > allocation:
        raise Unkept(f"{new} tasks × {per_task} CPU{'s' * (per_task != 1)} need {new * per_task} CPUs per node; the job holds {allocation}")
    if per_task == cpus.value:
        return
    if own is not None:
        span = _step_value_span(script, own)
        kept.edits.append(Edit(span, str(per_task)))
        kept.notes.append(f"`{_spelled(own.written, per_task)}` keeps the step's {total} CPUs per node")
        return
    kept.words.append(f"--cpus-per-task={per_task}")
    kept.notes.append(f"`--cpus-per-task={per_task}` keeps the step's {total} CPUs per node")


def node_cpus(script) -> Optional[int]:
    """The CPUs each node of the job holds, when the header (or, for an ``--exclusive`` job, the
    cluster profile) says: what a launcher that ran in the batch step had on its node."""
    return _job_cpus_per_node(script)


def _job_cpus_per_node(script) -> Optional[int]:
    """The CPUs each node of the job holds, when the header says (None: not known, or the
    whole node of an ``--exclusive`` job without a profile)."""
    if _exclusive(script):
        return _profile_cpus(script)
    job = script.job_geometry
    per_node = job.tasks_per_node.value if job.tasks_per_node.origin is not None else None
    if per_node is None:
        return None
    cpus = job.job_cpus_per_task
    per_task = cpus.value if cpus.origin is not None else 1
    if per_task is None:
        return None
    return per_node * per_task


def _srun_cpus_assignments(script):
    return [a for a in script.values.assignments.get(SRUN_CPUS, []) if a.kind == "assign"]


def _rescale_srun_cpus(script, old: int, new: int, kept: Kept) -> None:
    """A literal ``SRUN_CPUS_PER_TASK=N`` follows the header's count; one that reads
    ``$SLURM_CPUS_PER_TASK`` follows it by itself."""
    for assignment in _srun_cpus_assignments(script):
        node = assignment.value_node
        if node is None:
            continue
        text = script.data[node.start_byte : node.end_byte].decode("utf-8", "replace").strip("\"'")
        if "SLURM_CPUS_PER_TASK" in text:
            continue
        value = parse_count(text)
        if value is None:
            raise Unkept(f"`{SRUN_CPUS}` is set to a value only known at run time")
        if (value * old) % new:
            raise Unkept(f"`{SRUN_CPUS}={value}` × {_tasks(old)} do not divide among {_tasks(new)}")
        start = script.data.find(str(value).encode(), node.start_byte, node.end_byte)
        kept.edits.append(Edit(Span(start, start + len(str(value))), str(value * old // new)))


def _exclusive(script) -> bool:
    return script.header.winning(option_table.EXCLUSIVE) is not None


def _profile_cpus(script) -> Optional[int]:
    """The CPUs per node of the job's partition in the cluster profile (None without one)."""
    from .cluster.profile import in_settings

    profile = in_settings(script.settings)
    if profile is None:
        return None
    directive = script.header.winning(option_table.PARTITION)
    if directive is None:
        facts = [profile.default_partition]
    else:
        value = (directive.value or "").strip()
        if not value or "$" in value:
            return None
        facts = [profile.partition(name.strip()) for name in value.split(",")]
    counts = [f.cpus_per_node for f in facts if f is not None]
    if not counts or len(counts) != len(facts) or any(c is None for c in counts):
        return None
    return min(c for c in counts if c is not None)


# -- GPUs ------------------------------------------------------------------------------------------
def _keep_gpu_binding(script, steps: Sequence[Step], old: int, new: int, kept: Kept, header_side: bool) -> None:
    """Each node's tasks stay bound to the GPUs they were bound to (module docstring): the
    header's binding when its count changes (``header_side``), each step's own, and for a step
    that changes alone, the header's binding it would inherit, written on the step."""
    header = script.header
    bind = header.winning(option_table.GPU_BIND)
    per_gpu = header.winning(option_table.NTASKS_PER_GPU)
    if header_side:
        if bind is not None:
            value = _rebind(bind.value, bind.text or f"--{bind.option}", old, new)
            if value != bind.value:
                if bind.value_span is None:
                    raise Unkept(f"the header's `{bind.text}` cannot be edited in place")
                for other in script.steps:
                    if other not in steps and step_option(other, option_table.GPU_BIND) is None:
                        raise Unkept(f"the step on line {script.source.line_of(other.span.start)} keeps its task count and inherits `{bind.text}`")
                kept.edits.append(Edit(bind.value_span, value))
                kept.notes.append(f"`--{option_table.GPU_BIND}={value}` keeps each node's GPUs bound to its tasks")
        if per_gpu is not None:
            text = _unpaired(script, per_gpu.value, per_gpu.text, old, new, bind is not None, None)
            line = _own_line(script, per_gpu) if not text else None
            kept.edits.append(Edit.delete(line) if line is not None else Edit(per_gpu.span, text))
            kept.notes.append(_unpaired_note(per_gpu.text, text))
    elif per_gpu is not None:
        raise Unkept(f"the step inherits the header's `{per_gpu.text}`, which srun refuses next to `--ntasks-per-node`")
    for step in steps:
        own = step_option(step, option_table.GPU_BIND)
        own_per_gpu = step_option(step, option_table.NTASKS_PER_GPU)
        if own is not None:
            value = _rebind(own.value, _as_written(own), old, new)
            if value != own.value:
                kept.edits.append(Edit(_step_option_value_span(own), value))
                kept.notes.append(f"`--{option_table.GPU_BIND}={value}` keeps each node's GPUs bound to its tasks")
        elif bind is not None and not header_side:
            value = _rebind(bind.value, bind.text or f"--{bind.option}", old, new)
            if value != bind.value:
                kept.words.append(f"--{option_table.GPU_BIND}={value}")
                kept.notes.append(f"`--{option_table.GPU_BIND}={value}` keeps each node's GPUs bound to its tasks")
        if own_per_gpu is not None:
            text = _unpaired(script, own_per_gpu.value, _as_written(own_per_gpu), old, new,
                             own is not None or bind is not None, step)
            span = _step_option_span(script, own_per_gpu)
            kept.edits.append(Edit(span, text) if text else Edit.delete_word(script.data, span))
            kept.notes.append(_unpaired_note(_as_written(own_per_gpu), text))


def _as_written(option) -> str:
    return _spelled(option.written, option.value) if option.value is not None else option.written


def _spelled(written: str, value) -> str:
    """An option with a value as a user writes it: `--cpus-per-task=8`, but `-c 8` (a short
    option takes its value as the next word or glued, never after `=`)."""
    return f"{written}={value}" if written.startswith("--") else f"{written} {value}"


def _rebind(value: Optional[str], written: str, old: int, new: int) -> str:
    """The ``--gpu-bind`` value that binds ``new`` tasks per node to the GPUs ``old`` were bound
    to (the value itself when the task count does not matter to it)."""
    text = (value or "").strip()
    if not text or "$" in text:
        raise Unkept(f"`{written}` is only known at run time")
    verbose, _, body = text.partition(",") if text.startswith("verbose,") else ("", "", text)
    prefix = verbose + "," if verbose else ""
    if body in ("none", "verbose"):
        return value or ""
    kind, _, count_text = body.partition(":")
    if kind in ("single", "per_task"):
        count = parse_count(count_text)
        if count is None or count < 1:
            raise Unkept(f"`{written}` is not a count")
        if kind == "single":  # ``count`` tasks share each GPU
            if (count * new) % old:
                raise Unkept(f"`{written}` binds {_tasks(count)} to each GPU; {_tasks(new)} per node cannot "
                             f"share the GPUs {old} tasks were bound to that way")
            return f"{prefix}single:{count * new // old}"
        if (count * old) % new:  # ``count`` GPUs for each task
            raise Unkept(f"`{written}` binds {count * old} GPUs per node; they do not divide among {_tasks(new)}")
        return f"{prefix}per_task:{count * old // new}"
    if kind == "closest":
        raise Unkept(f"`{written}` gives each task the GPUs near its CPUs, which move with the task count")
    if kind in ("map_gpu", "mask_gpu"):
        raise Unkept(f"`{written}` lists GPUs task by task for {_tasks(old)} per node")
    raise Unkept(f"`{written}` is not a binding that can be rescaled")


def _unpaired(script, value: Optional[str], written: str, old: int, new: int, bound: bool,
              step: Optional[Step]) -> str:
    """What ``--ntasks-per-gpu`` becomes next to the ``--ntasks-per-node`` a fix writes (sbatch
    and srun refuse the pair): the ``--gpu-bind=single:`` it implied, rescaled, or nothing when
    an explicit ``--gpu-bind`` overrides it. The job's GPUs must not depend on it."""
    count = _count(value, f"`{written}`")
    names = (option_table.GPUS_PER_NODE, option_table.GPUS, option_table.GRES)
    asked = any(script.header.winning(name) is not None for name in names)
    if step is not None:
        asked = asked or any(step_option(step, name) is not None for name in names)
    if not asked:
        raise Unkept(f"the job's GPUs follow from `{written}` and the task count, which the fix changes")
    if (count * new) % old:
        raise Unkept(f"`{written}` would have to put {count * new}/{old} tasks on each GPU for {_tasks(new)} per node")
    return "" if bound else f"--{option_table.GPU_BIND}=single:{count * new // old}"


def _unpaired_note(written: str, text: str) -> str:
    if not text:
        return f"`{written}` goes: sbatch refuses it next to `--ntasks-per-node`, and `--gpu-bind` is written"
    return f"`{text}` in place of `{written}`, which sbatch refuses next to `--ntasks-per-node`"


def _per_node_gpus(script, value: Optional[str], written: str, old: int, header_side: bool) -> str:
    count = gpu_total(value)
    if count is None or value is None or "$" in value:
        raise Unkept(f"`{written}` is not a GPU count")
    if script.header.winning(option_table.GPUS_PER_NODE) is not None:
        raise Unkept(f"the header sets both `{written}` and `--gpus-per-node`")
    kind = value.rsplit(":", 1)[0] + ":" if ":" in value else ""
    return f"--gpus-per-node={kind}{count * old}"


def _rewrite_step_gpus(script, step: Step, own, old: int) -> Edit:
    span = _step_option_span(script, own)
    if step_option(step, option_table.GPUS_PER_NODE) is not None:
        raise Unkept("the step sets both `--gpus-per-task` and `--gpus-per-node`")
    return Edit(span, _per_node_gpus(script, own.value, own.written, old, header_side=False))


# -- bytes -----------------------------------------------------------------------------------------
def _step_option_span(script, option) -> Span:
    from .model.geometry import Origin

    span = Origin("step", option.name, step_option=option).span
    if span is None:
        raise Unkept(f"the step's `{option.written}` is not written in one place")
    return span


def _step_option_value_span(option) -> Span:
    from .model.geometry import Origin

    span = Origin("step", option.name, step_option=option).value_span
    if span is None:
        raise Unkept(f"the step's `{option.written}` cannot be edited in place")
    return span


def _step_value_span(script, option) -> Span:
    from .model.geometry import Origin

    span = Origin("step", option.name, step_option=option).value_span
    if span is None or not (option.value or "").strip().isdigit():
        raise Unkept(f"the step's `{option.written}` cannot be edited in place")
    return span


def _own_line(script, directive) -> Optional[Span]:
    """The whole line of a directive that stands alone on its ``#SBATCH`` line."""
    span = script.source.line_span(directive.line, with_newline=True)
    text = script.data[span.start : span.end].decode("utf-8", "replace").strip()
    if text.split(None, 1) != ["#SBATCH", directive.text]:
        return None
    return span


def _new_directive(script, text: str, after_line: Optional[int]) -> Edit:
    from .model import placement

    if after_line is None:
        return placement.after_header(script, f"#SBATCH {text}")
    return placement.after_line(script, after_line, f"#SBATCH {text}")


def _tasks(count: int) -> str:
    return f"{count} task{'s' * (count != 1)}"


def _count(text: Optional[str], what: str) -> int:
    value = parse_count(text)
    if value is None or value < 1:
        raise Unkept(f"{what} is not a count")
    return value


def _memory_mb(text: Optional[str], what: str) -> int:
    from .cluster.parse import memory_mb

    value = memory_mb(text)
    if not value:
        raise Unkept(f"{what} is not a memory size")
    return value


def _size(mb: int) -> str:
    if mb % (1024 * 1024) == 0:
        return f"{mb // (1024 * 1024)}T"
    if mb % 1024 == 0:
        return f"{mb // 1024}G"
    return f"{mb}M"

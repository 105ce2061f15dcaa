"""torchrun → srun-native: the migration behind SBL102's unsafe fix.

A Megatron-Bridge entry point derives ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and
``MASTER_PORT`` from Slurm's own variables, so Slurm can start one process per GPU itself. For one
torchrun launch of such an entry point, ``plan(script, launch)`` builds the byte edits that:

- make the step run one task per GPU (``--ntasks-per-node=<GPUs per node>`` where the count comes
  from: the header directive, a new header directive, or the step's own flags), each node keeping
  its CPUs and memory (``budget.py``: ``--cpus-per-task`` divided among the new tasks);
- start the entry point directly: ``uv run python -m torch.distributed.run OPTS script.py ARGS``
  becomes ``uv run python script.py ARGS`` (``torchrun OPTS`` becomes ``python``), wherever the
  words are written (on srun's command line, in a ``TRAIN_CMD`` string run by ``bash -c``, in a
  single-quoted string), so the per-node escapes passed to torchrun go with it;
- remove the batch shell's ``MASTER_ADDR``/``MASTER_PORT``/``RANK``… assignments when nothing but
  the removed options read them (torchrun overwrote them in its workers anyway; under srun they
  would override what Bridge derives).

Every other byte stays. When the migration cannot be done with certainty, ``plan`` says why and
gives no fix: torchrun options without an srun equivalent (``--max_restarts=3``), a process count
that differs from the GPUs (the world size would change), CPUs per node that do not divide among
the new tasks, options hidden in a run-time value, a
command string assembled in a way a byte edit cannot follow, a task count other steps rely on.
Before a fix is offered, the edited script is parsed again and every step is compared with what
the migration promises: the migrated command is exactly the old one without the launcher, and
every other step runs what it ran before.
"""
from __future__ import annotations

import posixpath
import re

from . import options as option_table
from .diagnostics import Edit, Fix
from .lazyclass import dataclass
from .model.containers import command_pieces, site_span
from . import budget
from .budget import Unkept
from .model.geometry import geometry, job_geometry, parse_count
from .model.launch import (
    ELASTIC,
    PYTHON,
    SRUN_NATIVE,
    TORCH_LAUNCH,
    TORCHRUN,
    Launch,
    as_int,
    job_task_count_set,
    launches,
    launches_of,
    task_layout,
)
from .model import variables
from .model.steps import Step
from .model.tasks import tasks_running
from .model.workload import Workload, classify
from .shell import quoted_interior, walk
from .source import Source, Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional, Sequence, Set, Tuple

# torchrun options that only describe the rendezvous or the per-node process count: srun and
# Bridge's initialization take their place.
DROPPED = frozenset(
    {
        "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend",
        "rdzv_endpoint", "rdzv_id", "rdzv_conf", "standalone", "module", "use_env",
    }
)
# Batch-shell variables that fed torchrun's rendezvous or that torchrun overwrote in its workers.
RENDEZVOUS_VARIABLES = ("MASTER_ADDR", "MASTER_PORT") + variables.HAND_SET_RANKS + (variables.WORLD_SIZE,)
_SPACE = b" \t"


@dataclass
class Migration:
    """The fix for one launch, or why there is none."""

    fix: Optional[Fix] = None
    reason: Optional[str] = None


class Refused(Exception):
    """The migration cannot be done with certainty; the message says why."""


def plan(script, launch: Launch) -> Migration:
    """The srun-native migration of a torchrun launch of a Megatron-Bridge entry point."""
    try:
        return Migration(fix=_plan(script, launch))
    except Refused as refused:
        return Migration(reason=str(refused))


# -- the plan ------------------------------------------------------------------------------------
def _plan(script, launch: Launch) -> Fix:
    step = launch.step
    if not launch.elastic or launch.entry is None or not launch.entry.known:
        raise Refused("the entry point is not known")
    if launch.options_incomplete:
        raise Refused("some of torchrun's options come from a value only known at run time")
    if step.options_incomplete:
        raise Refused("some of srun's options come from a value only known at run time")
    if launch.in_string and tasks_running(script, launch.command).tested:
        raise Refused("the launch runs only in some tasks (a per-task condition in its command string)")
    if launch.kind == TORCH_LAUNCH and not launch.has("use_env"):
        raise Refused("torch.distributed.launch passes `--local_rank` to the script, which srun cannot do")
    for variant in launch.variants or [launch]:
        for option in variant.options:
            _check_option(option)
    geo = geometry(script, step)
    gpus = geo.gpus_per_node.value
    if not gpus:
        raise Refused("the step's GPUs per node are not known, so the task count to set is not either")
    if geo.gpus_per_task.value is not None or step.has(option_table.GPUS_PER_TASK):
        raise Refused("the step binds GPUs per task (`--gpus-per-task`); ask for `--gpus-per-node` first (SBL111)")
    _check_process_count(launch, gpus)

    edits: List[Edit] = []
    edits.extend(_count_edits(script, launch, gpus))
    launcher_edits, removed = _launcher_edit(script, launch)
    edits.extend(launcher_edits)
    edits.extend(_variable_edits(script, removed))
    entry = launch.entry.name
    fix = Fix.unsafe(
        f"migrate to srun-native: {gpus} tasks per node, run `{entry}` directly, drop torchrun and its rendezvous",
        *edits,
    )
    _verify(script, launch, fix, gpus, removed)
    return fix


def _check_option(option) -> None:
    name = option.name
    if name == "max_restarts" and option.known and option.text == "0":
        return
    if name == "nnodes" and option.known and ":" in (option.text or ""):
        low, _, high = (option.text or "").partition(":")
        if low != high:
            raise Refused(f"`{option.written}={option.text}` asks for an elastic node range, which srun cannot start")
    if name not in DROPPED:
        value = f"={option.text}" if option.value is not None else ""
        raise Refused(f"torchrun's `{option.written}{value}` has no srun-native equivalent")


def _check_process_count(launch: Launch, gpus: int) -> None:
    values = launch.option_values("nproc_per_node")
    for value in values:
        if value is None:
            count: Optional[int] = 1
        elif value.known and value.text in ("gpu", "auto", "cuda"):
            continue
        else:
            count = as_int(value)
        if count is None:
            raise Refused("torchrun's `--nproc_per_node` is not known, so the world size after the migration is not either")
        if count != gpus:
            raise Refused(
                f"torchrun starts {count} process{'es' if count != 1 else ''} per node for {gpus} GPUs per node: "
                "one task per GPU would change the world size (make them equal first, SBL104)"
            )


# -- tasks per node --------------------------------------------------------------------------------
def _count_edits(script, launch: Launch, gpus: int) -> List[Edit]:
    """The edits that make the step run one task per GPU, each node keeping its CPUs and memory
    (``budget.py``)."""
    try:
        return _counts(script, launch, gpus)
    except Unkept as unkept:
        raise Refused(f"the node's CPUs cannot be kept: {unkept}")


def _counts(script, launch: Launch, gpus: int) -> List[Edit]:
    step = launch.step
    header = script.header
    own_ntasks = step.option(option_table.NTASKS)
    own_per_node = step.option(option_table.NTASKS_PER_NODE)
    job = job_geometry(script)
    if own_ntasks is None and own_per_node is None:
        _check_no_other_step_inherits(script, step)
        inheriting = [s for s in script.steps if s.option(option_table.NTASKS) is None]
        per_node = header.get(option_table.NTASKS_PER_NODE)
        ntasks = header.get(option_table.NTASKS)
        if per_node is not None and ntasks is not None:
            raise Refused("the header sets both `--ntasks` and `--ntasks-per-node`; set one task per GPU by hand")
        if per_node is not None:
            if per_node.value_span is None:
                raise Refused("the header's `--ntasks-per-node` cannot be edited in place")
            if per_node.value is not None and per_node.value.strip() == str(gpus):
                return [_claim(script, per_node.value_span)]
            old = parse_count(per_node.value)
            if old is None:
                raise Refused("the header's `--ntasks-per-node` is not a count")
            kept = budget.header_change(script, old, gpus, inheriting, after_line=per_node.line)
            return [Edit(per_node.value_span, str(gpus))] + kept.edits
        if ntasks is not None:
            nodes = job.nodes.value
            if nodes is None or ntasks.value is None or ntasks.value.strip() != str(nodes) or ntasks.value_span is None:
                raise Refused("the header's `--ntasks` does not give one task per node; set one task per GPU by hand")
            kept = budget.header_change(script, 1, gpus, inheriting, after_line=ntasks.line)
            return [Edit(ntasks.span, f"--ntasks-per-node={gpus}")] + kept.edits
        kept = budget.header_change(script, 1, gpus, inheriting)
        return [_new_directive(script, f"--ntasks-per-node={gpus}")] + kept.edits
    # the step sets its own count
    old = task_layout(script, step).per_node
    if old is None:
        raise Refused("the step's tasks per node are not known")
    nodes_opt = step.option(option_table.NODES)
    same_nodes = nodes_opt is None or (geometry(script, step).nodes.value is not None and geometry(script, step).nodes.value == job.nodes.value)
    if job_task_count_set(script):
        if job.tasks_per_node.value == gpus and same_nodes and job.nodes.value is not None:
            # the job already runs one task per GPU: the step's own count goes
            edits = [_delete_option(script, step, opt) for opt in (own_ntasks, own_per_node) if opt is not None]
            directive = header.get(option_table.NTASKS_PER_NODE)
            if directive is not None and directive.value_span is not None:
                edits.append(_claim(script, directive.value_span))
            return edits + _step_budget(script, step, old, gpus)
        raise Refused("the step sets its own task count next to the header's; set one task per GPU by hand")
    if own_ntasks is not None:
        raise Refused("the step sets `--ntasks`; set one task per GPU by hand")
    span = _option_value_span(script, step, own_per_node)
    try:
        return [Edit(span, str(gpus))] + _step_budget(script, step, old, gpus)
    except Unkept:
        if old != 1 or nodes_opt is not None:
            raise
    # The job's allocation (one task per node, no count in the header) cannot hold the new tasks:
    # they are asked for in the header instead, where the step takes them from.
    _check_no_other_step_inherits(script, step)
    kept = budget.header_change(script, 1, gpus, [step])
    return [_delete_option(script, step, own_per_node), _new_directive(script, f"--ntasks-per-node={gpus}")] + kept.edits


def _step_budget(script, step: Step, old: int, new: int) -> List[Edit]:
    kept = budget.step_change(script, step, old, new)
    if not kept.words:
        return kept.edits
    from .model import placement

    edit = placement.add_step_options(script, step, kept.words)
    if edit is None:
        raise Refused("the step's `srun` is not written in one place, so its CPUs cannot be set")
    return kept.edits + [edit]


def _claim(script, span: Span) -> Edit:
    """An edit that leaves the bytes as they are: the migration relies on them, so a fix of another
    rule that changes them in the same pass (SBL101's one task per node) waits for the next one."""
    return Edit(span, script.text(span))


def _check_no_other_step_inherits(script, step: Step) -> None:
    """Changing the header's count changes every step that takes it; only other torchrun launches
    of Bridge entry points (migrated the same way) may."""
    for other in script.steps:
        if other is step or other.option(option_table.NTASKS) is not None:
            continue
        found = launches_of(script, other)
        if found and all(l.elastic and classify(l, script.settings) is Workload.BRIDGE for l in found):
            continue
        line = script.source.line_of(other.command.node.start_byte)
        raise Refused(f"the step on line {line} also takes its task count from the header and would change with it")


def _new_directive(script, text: str) -> Edit:
    header = script.header
    source = script.source
    newline = source.preferred_newline()
    nodes = header.get(option_table.NODES)
    line = nodes.line if nodes is not None else header.last_header_line
    if line <= 0:
        line = 1
    span = source.line_span(line, with_newline=True)
    if span.end == len(script.data) and not script.data.endswith(b"\n"):
        return Edit.insert(span.end, f"{newline}#SBATCH {text}")
    return Edit.insert(span.end, f"#SBATCH {text}{newline}")


def _option_span(script, step: Step, option) -> Span:
    context = command_pieces(step.command)
    span = site_span([p for w in option.words for p in w.pieces], context)
    if span is None:
        raise Refused(f"the step's `{option.written}` is not written in one place")
    return span


def _option_value_span(script, step: Step, option) -> Span:
    span = _option_span(script, step, option)
    text = script.data[span.start : span.end]
    value = (option.value or "").encode("utf-8")
    if not value or not text.endswith(value) or not option.value.isdigit():
        raise Refused(f"the step's `{option.written}` cannot be edited in place")
    return Span(span.end - len(value), span.end)


def _delete_option(script, step: Step, option) -> Edit:
    return Edit.delete_word(script.data, _option_span(script, step, option))



# -- the launcher ----------------------------------------------------------------------------------
STATEMENT_LISTS = frozenset({"program", "do_group", "compound_statement"})
ARGUMENT_NODES = frozenset({"word", "string", "raw_string", "concatenation", "number", "ansi_c_string"})


def _launcher_edit(script, launch: Launch) -> Tuple[List[Edit], List[Span]]:
    """Replace ``torchrun OPTS`` / ``-m torch.distributed.run OPTS`` by what starts Python directly.

    The removed words may be written in several places (``CMD="$CMD --nnodes=…"``): each run of
    them is deleted where it is written. Returns the edits and the source spans removed."""
    words = launch.launcher
    first = _first_removed(launch)
    kept = words[:first]
    context = command_pieces(launch.step.command)
    runs = _runs(script, launch, _removed_words(launch), context)
    for variant in launch.variants or [launch]:
        # every path to the step (if/else, loop iterations) must run the same launcher words,
        # written in the same place: the edit removes them for all of them at once
        if variant is not launch and _runs(script, variant, _removed_words(variant), context) != runs:
            raise Refused("the launcher is written differently on different paths to the step (if/else, loops)")
    module = launch.entry is not None and launch.entry.kind == "module"
    has_python = any(PYTHON.match(posixpath.basename(w.text)) for w in kept if w.known)
    extra = ([] if has_python else ["python"]) + (["-m"] if module else [])
    data = script.data
    edits: List[Edit] = []
    head = runs[0]
    if kept:
        previous = site_span(kept[-1].pieces, context)
        if previous is None or previous.end > head.start or not _blank(data[previous.end : head.start]):
            raise Refused("the launcher's words are not written in one place of the script")
        span = Span(previous.end, head.end)
        text = "".join(" " + e for e in extra)
    else:
        span = head
        text = " ".join(extra)
    _check_local(script, span)
    edits.append(Edit(span, text))
    for run in runs[1:]:
        _check_local(script, run)
        edits.append(Edit.delete(_run_deletion(script, run)))
    return edits, runs


def _removed_words(launch: Launch) -> List:
    words = launch.launcher
    return list(words[_first_removed(launch):]) + [w for option in launch.options for w in option.words]


def _first_removed(launch: Launch) -> int:
    words = launch.launcher
    if launch.kind == TORCHRUN and _is_torchrun(words[-1].text):
        return len(words) - 1
    if len(words) >= 2 and words[-2].text in ("-m", "--module"):
        return len(words) - 2
    raise Refused("the launcher is written in a form the migration does not know")


def _blank(gap: bytes) -> bool:
    """Only blanks and line continuations."""
    return not gap.replace(b"\\\r\n", b"").replace(b"\\\n", b"").strip(b" \t\r\n")


def _runs(script, launch: Launch, removed, context) -> List[Span]:
    """The source spans that hold the removed words: one per place they are written, in order."""
    spans: List[Span] = []
    for word in removed:
        span = site_span(word.pieces, context)
        if span is None:
            raise Refused("torchrun's options are not written in one place of the script")
        node = word.node
        if not launch.in_string and node is not None and node.type in ARGUMENT_NODES and node.parent is not None \
                and node.parent.type == "command":
            # a quoted part of a word on srun's command line (``--rdzv-endpoint="$HOST:29500"``)
            span = Span(min(span.start, node.start_byte), max(span.end, node.end_byte))
        elif launch.in_string:
            span = _with_escaped_quotes(script.data, span)
        spans.append(span)
    data = script.data
    runs: List[Span] = [spans[0]]
    for span in spans[1:]:
        last = runs[-1]
        if span.start >= last.end and _blank(data[last.end : span.start]):
            runs[-1] = Span(last.start, span.end)
        elif span.start >= last.end:
            runs.append(span)
        else:
            raise Refused("torchrun's options are not written in order in the script")
    return runs


def _with_escaped_quotes(data: bytes, span: Span) -> Span:
    """A word of a double-quoted command string keeps its task-level quotes (``--x=\\"$V\\"``)."""
    start, end = span.start, span.end
    while data[end : end + 2] == b'\\"':
        end += 2
    while start >= 2 and data[start - 2 : start] == b'\\"':
        start -= 2
    return Span(start, end)


def _run_deletion(script, run: Span) -> Span:
    """A run of words after the first: delete it with the blank before it; when that leaves an
    assignment that only repeats itself (``CMD="$CMD"``), the whole line goes."""
    data = script.data
    start = run.start
    while start > 0 and data[start - 1] in _SPACE:
        start -= 1
    node = script.root.descendant_for_byte_range(run.start, run.end)
    while node is not None and node.type != "variable_assignment":
        node = node.parent
    if node is not None and node.parent is not None and node.parent.type in STATEMENT_LISTS:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None and value is not None:
            rest = data[value.start_byte : start] + data[run.end : value.end_byte]
            variable = data[name.start_byte : name.end_byte]
            if rest in (b'"$' + variable + b'"', b'"${' + variable + b'}"', b"$" + variable):
                line = _line_of_statement(data, node)
                if line is not None:
                    return line
    return Span(start, run.end)


def _is_torchrun(text: str) -> bool:
    return posixpath.basename(text) == "torchrun"


def _check_local(script, span: Span) -> None:
    """The bytes to replace lie inside one string (or one command line) and cut no expansion,
    no quote and no word in half: the edit cannot change anything but those words."""
    root = script.root
    node = root.descendant_for_byte_range(span.start, max(span.start, span.end - 1))
    while node is not None and not (node.start_byte <= span.start and node.end_byte >= span.end):
        node = node.parent
    while node is not None and node.type not in ("string", "raw_string", "heredoc_body", "command", "ansi_c_string"):
        node = node.parent
    if node is None:
        raise Refused("the launcher is not written inside one string or command")
    if node.type in ("string", "raw_string", "ansi_c_string"):
        interior = quoted_interior(node, script.data)
        if span.start < interior.start or span.end > interior.end:
            raise Refused("the launcher's words cross a quote")
    for child in node.children:
        if node.type in ("string", "heredoc_body") and child.type in ("string_content", "heredoc_content", '"'):
            if child.type == '"' and child.start_byte < span.end and child.end_byte > span.start:
                raise Refused("the launcher's words cross a quote")
            continue
        inside = span.start <= child.start_byte and child.end_byte <= span.end
        outside = child.end_byte <= span.start or child.start_byte >= span.end
        if not (inside or outside):
            raise Refused("an expansion or word straddles the launcher's words")


# -- rendezvous variables --------------------------------------------------------------------------
def _variable_edits(script, removed: List[Span]) -> List[Edit]:
    """Delete the statements that set rendezvous variables nothing else reads."""
    data = script.data
    comments = [(n.start_byte, n.end_byte) for n in walk(script.root) if n.type == "comment"]
    spans: List[Span] = []
    for name in RENDEZVOUS_VARIABLES:
        statements = _statements(script, name)
        if not statements:
            continue
        deletions = []
        for statement in statements:
            span = _line_of_statement(data, statement)
            if span is None:
                deletions = []
                break
            deletions.append(span)
        if not deletions:
            continue
        allowed = [(s.start, s.end) for s in deletions] + [(r.start, r.end) for r in removed] + comments
        used = False
        for match in re.finditer(rb"\b" + name.encode() + rb"\b", data):
            if not any(a <= match.start() and match.end() <= b for a, b in allowed):
                used = True
                break
        if used:
            continue
        spans.extend(deletions)
    return [Edit.delete(span) for span in _tidy(data, spans)]


def _tidy(data: bytes, spans: List[Span]) -> List[Span]:
    """Merge deletions of adjacent lines; when the lines removed stood between two blank lines,
    one of those goes too, so no double gap is left behind."""
    merged: List[Span] = []
    for span in sorted(set(spans), key=lambda s: s.start):
        if merged and merged[-1].end >= span.start:
            merged[-1] = Span(merged[-1].start, max(merged[-1].end, span.end))
        else:
            merged.append(span)
    out: List[Span] = []
    for span in merged:
        before_start = data.rfind(b"\n", 0, max(0, span.start - 1)) + 1
        blank_before = span.start > 0 and not data[before_start : span.start].strip()
        after_end = data.find(b"\n", span.end)
        blank_after = after_end >= 0 and not data[span.end : after_end].strip()
        if blank_before and blank_after:
            span = Span(span.start, after_end + 1)
        out.append(span)
    return out


def _statements(script, name: str) -> Optional[list]:
    """The top-level statements that set or export ``name`` (None: one of them is not a plain
    ``NAME=…`` / ``export NAME=…`` / ``export NAME`` statement of its own)."""
    values = script.values
    found = []
    for assignment in values.assignments.get(name, []):
        if assignment.kind != "assign" or assignment.declared_by not in (None, "export") or assignment.sourced is not None:
            return None
        node = assignment.node
        statement = node.parent if node.parent is not None and node.parent.type == "declaration_command" else node
        if statement.type == "declaration_command" and len([c for c in statement.named_children]) != 1:
            return None
        found.append(statement)
    for export in values.exports.get(name, []):
        node = script.root.descendant_for_byte_range(export.span.start, export.span.end)
        while node is not None and node.type != "declaration_command":
            node = node.parent
        if node is None or len(node.named_children) != 1:
            return None
        found.append(node)
    for statement in found:
        if statement.parent is None or statement.parent.type != "program":
            return None
    unique = {(s.start_byte, s.end_byte): s for s in found}
    return list(unique.values())


def _line_of_statement(data: bytes, node) -> Optional[Span]:
    """The whole line(s) of a statement that stands alone on them (a trailing comment goes too)."""
    start, end = node.start_byte, node.end_byte
    line_start = data.rfind(b"\n", 0, start) + 1
    if data[line_start:start].strip(_SPACE):
        return None
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    rest = data[end:line_end].rstrip(b"\r").strip(_SPACE)
    if rest and not rest.startswith(b"#"):
        return None
    return Span(line_start, min(len(data), line_end + 1))


# -- verification ----------------------------------------------------------------------------------
def _verify(script, launch: Launch, fix: Fix, gpus: int, removed: List[Span]) -> None:
    """Parse the migrated script and check it runs what the migration promises."""
    from .model.script import Script

    try:
        data = script.source.edited(fix.edits)
    except ValueError:
        raise Refused("the edits of the migration overlap")
    after = Script(Source(data, script.path), script.settings)
    if len(after.errors) > len(script.errors):
        raise Refused("the migrated script would not parse")
    if len(after.steps) != len(script.steps):
        raise Refused("the command string is built in a way the migration cannot rewrite safely")
    unsafe = "the command string is built in a way the migration cannot rewrite safely"
    for old, new in zip(script.steps, after.steps):
        if old is launch.step:
            _verify_step(script, after, launch, old, new, gpus, removed)
            continue
        if _step_texts(old) != _step_texts(new):
            raise Refused(unsafe + " (another step would change too)")
    # the batch shell runs the same commands, but for those of the removed statements
    deleted = [e.span for e in fix.edits]
    old_batch = [
        c.program for c in script.commands
        if c.step is None and not any(d.start <= c.node.start_byte and c.node.end_byte <= d.end for d in deleted)
    ]
    new_batch = [c.program for c in after.commands if c.step is None]
    if old_batch != new_batch:
        raise Refused(unsafe)


def _step_texts(step: Step) -> Tuple:
    return (
        tuple((o.name, o.value) for o in step.options),
        tuple(tuple(c.texts()) for c in step.task_commands),
    )


def _verify_step(script, after, launch: Launch, old: Step, new: Step, gpus: int, removed: List[Span]) -> None:
    unsafe = "the command string is built in a way the migration cannot rewrite safely"
    # the task count and what keeps each node's budget with it (budget.py)
    dropped = {option_table.NTASKS, option_table.NTASKS_PER_NODE, option_table.CPUS_PER_TASK, option_table.GPUS_PER_TASK, option_table.GPUS_PER_NODE}
    old_options = [(o.name, o.value) for o in old.options if o.name not in dropped]
    new_options = [(o.name, o.value) for o in new.options if o.name not in dropped]
    if old_options != new_options:
        raise Refused(unsafe)
    # commands inside the removed options (``--master_addr=$(scontrol …)``) go with them
    kept = [
        c for c in old.task_commands
        if c is launch.command or not any(r.start <= c.span.start and c.span.end <= r.end for r in removed)
    ]
    if len(kept) != len(new.task_commands):
        raise Refused(unsafe)
    index = kept.index(launch.command)
    for i, (a, b) in enumerate(zip(kept, new.task_commands)):
        if i != index and a.texts() != b.texts():
            raise Refused(unsafe)
    expected = _expected_argv(launch)
    command = new.task_commands[index]
    if command.texts() != expected:
        raise Refused(unsafe)
    migrated = [l for l in launches_of(after, new) if l.command is command]
    if not migrated or migrated[0].kind != SRUN_NATIVE:
        raise Refused(unsafe)
    if _any_elastic(after, new):
        raise Refused("the launcher is written differently on different paths to the step (if/else, loops)")
    layout = task_layout(after, new)
    if layout.per_node != gpus:
        raise Refused("the migrated step would not run one task per GPU")


def _any_elastic(after, step: Step) -> bool:
    """Some path to the migrated step still starts torchrun (every alternative of its string)."""
    from .model.launch import recognise
    from .model.steps import parse_task_string

    if any(v.elastic for l in launches_of(after, step) for v in l.variants or [l]):
        return True
    word = step.string_word
    for alternative in (word.alternatives or []) if word is not None else []:
        for command in parse_task_string(after.values, alternative, None):
            found = recognise(step, command)
            if found is not None and found.elastic:
                return True
    return False


def _expected_argv(launch: Launch) -> List[str]:
    argv = launch.command.argv
    kept = [w.text for w in launch.launcher[: _first_removed(launch)]]
    has_python = any(PYTHON.match(posixpath.basename(t)) for t in kept)
    module = launch.entry is not None and launch.entry.kind == "module"
    extra = ([] if has_python else ["python"]) + (["-m"] if module else [])
    assert launch.entry is not None
    return (
        [w.text for w in argv[: launch.index]]
        + kept
        + extra
        + [w.text for w in launch.entry.words]
        + [w.text for w in launch.args]
    )

"""Which tasks run a command: every task of its step, one per node, one per job, node k, a het-job
group, some other part of the tasks, or unknown.

A command of the batch shell runs once (the batch step's one process on the first node). A step's
own command runs in each of its tasks: one task when the step has one (``srun --ntasks=1``), one per
node when it places one task on each node. A command inside a task string (``srun bash -c '…'``)
runs where the task's shell reaches it: ``if [ "$SLURM_LOCALID" -eq 0 ]; then uv sync; fi`` lets one
task per node through, ``[ "$SLURM_PROCID" = 0 ] && …`` one task in all. Only what decides whether
the command runs counts: an ``if``/``elif``/``while`` condition, a ``case`` subject and pattern, the
left side of an ``&&``/``||`` list; never the body of the block (``echo "$SLURM_PROCID"`` next to the
command) nor the command's own arguments.

A test reads the variable as the task's shell has it. One the batch shell expanded while building
the string (``bash -c "[ $SLURM_PROCID = 0 ] && …"``) holds the batch shell's single value, the same
in every task: it limits nothing. A launcher's variable (``$RANK``) is unset in srun's tasks unless
the task string sets it: a test of it says nothing about which tasks run the command (UNKNOWN).
"""
from __future__ import annotations



from .. import options as option_table
from ..lazyclass import dataclass, replace
from ..source import Span
from . import variables
from .geometry import geometry
from .steps import Command, Step

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from tree_sitter import Node
    from typing import List, Optional, Tuple

EVERY, PER_NODE, ONE, NODE, GROUP, SOME, UNKNOWN = "every", "per-node", "one", "node", "group", "some", "unknown"

PHRASES = {
    EVERY: "every task",
    PER_NODE: "one task per node",
    ONE: "one task",
    NODE: "the tasks of one node",
    GROUP: "the tasks of one het-job component",
    SOME: "some of the tasks",
    UNKNOWN: "tasks that cannot be known",
}


@dataclass(frozen=True)
class TaskSet:
    """The tasks that run a command.

    ``kind``: EVERY, PER_NODE, ONE, NODE (``node``: its index when known), GROUP (``group``: the
    het-job component as written), SOME (a part of the tasks that is none of these, such as all
    but task 0) or UNKNOWN. ``variable`` and ``test`` name the per-task test that limits the
    command, when one does (``test``: its span in the batch script).
    """

    kind: str
    node: Optional[int] = None
    group: Optional[str] = None
    variable: Optional[str] = None
    test: Optional[Span] = None
    batch: bool = False  # the batch shell's own command
    tested: bool = False  # a per-task test in the task's shell decides whether the command runs

    @property
    def every(self) -> bool:
        return self.kind == EVERY

    @property
    def phrase(self) -> str:
        if self.kind == NODE and self.node is not None:
            return f"the tasks of node {self.node}"
        if self.kind == GROUP and self.group:
            return f"the tasks of het-job component {self.group}"
        if self.batch:
            return "the batch shell"
        return PHRASES[self.kind]


def tasks_running(script, command: Command) -> TaskSet:
    """Which tasks run ``command``: a command of the batch shell, a step's command, or a command
    of a step's task string."""
    step = command.step
    if step is None:
        step = next((s for s in script.steps if s.command is command), None)
        if step is None:
            return TaskSet(ONE, batch=True)
        return step_tasks(script, step)
    whole = step_tasks(script, step)
    if not command.in_string or step.task_string is None:
        return whole
    return _within(script, step, whole, _guard(step, command))


def step_tasks(script, step: Step) -> TaskSet:
    """The tasks of a step, before any test inside them."""
    group = step.option(option_table.HET_GROUP)
    if group is not None:
        return TaskSet(GROUP, group=group.value if group.value_known else None)
    shape = geometry(script, step)
    if shape.ntasks.value == 1:
        return TaskSet(ONE)
    if shape.tasks_per_node.value == 1 and shape.multi_node:
        return TaskSet(PER_NODE)
    return TaskSet(EVERY)


# -- tests a task's shell evaluates ------------------------------------------------------------------
EQUAL, UNEQUAL, RANGE = "==", "!=", "<>"
_EQUAL_OPS = frozenset({"=", "==", "-eq"})
_UNEQUAL_OPS = frozenset({"!=", "-ne"})
_RANGE_OPS = frozenset({"-lt", "-le", "-gt", "-ge", "<", ">", "<=", ">="})
_TRANSPARENT = frozenset(
    {
        "program", "compound_statement", "subshell", "redirected_statement", "do_group", "pipeline",
        "for_statement", "c_style_for_statement", "case_item", "else_clause", "negated_command",
        "function_definition", "command",
    }
)


@dataclass(frozen=True)
class _Term:
    """``variable op value`` holds (or, with ``holds`` False, fails) where the command runs; a term
    with no variable stands for a test that cannot be read."""

    variable: Optional[variables.Variable]
    op: str = EQUAL
    value: Optional[int] = None
    holds: bool = True
    span: Optional[Tuple[int, int]] = None


_UNREADABLE = _Term(None)


class _Reader:
    """Reads the tests of one task string."""

    def __init__(self, step: Step) -> None:
        self.step = step
        string = step.task_string
        assert string is not None
        self.string = string

    # which variable a node reads, as the task's shell sees it
    def _task_expands(self, node: Node) -> bool:
        """The task's shell expands this variable: it reached the string as text (escaped or
        single-quoted), not as the batch shell's value."""
        pieces = self.string.slice(node.start_byte, node.end_byte).pieces
        return bool(pieces) and all(p.known for p in pieces)

    def _variable(self, name: str, depth: int) -> Optional[variables.Variable]:
        """The table entry a variable of the task's shell stands for: Slurm's own index variables;
        a variable the task string sets from one of them (``R=$SLURM_PROCID``); _SET_UNREADABLY for
        a launcher's variable the task string does not set (unset in srun's tasks) or one set from
        something else per task; None for a variable that does not tell tasks apart."""
        values = self.step.task_values
        if values is not None and values.defined(name):
            return self._assigned(values, name, depth)
        found = variables.lookup(name)
        if found is None or found.index is None:
            return None
        if found.scope == variables.LAUNCHER:
            return _SET_UNREADABLY
        return found

    def _assigned(self, values, name: str, depth: int) -> Optional[variables.Variable]:
        if depth > 4:
            return _SET_UNREADABLY
        seen: List[variables.Variable] = []
        for assignment in values.assignments.get(name, []):
            if assignment.value_node is None:
                continue
            read = self.reads(assignment.value_node, depth + 1)
            if not read:
                continue
            if len(read) != 1 or not _only_expansion(assignment.value_node, read[0][0]):
                return _SET_UNREADABLY
            seen.append(read[0][1])
        if not seen:
            return None
        if any(v is _SET_UNREADABLY or v != seen[0] for v in seen):
            return _SET_UNREADABLY
        return seen[0]

    def reads(self, node: Node, depth: int = 0) -> List[Tuple[Node, variables.Variable]]:
        """The per-task variables a node reads (task-expanded ones only), with their entries."""
        out: List[Tuple[Node, variables.Variable]] = []
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "variable_name" and self._task_expands(current):
                name = (current.text or b"").decode("utf-8", "replace")
                found = self._variable(name, depth)
                if found is not None:
                    out.append((current, found))
            stack.extend(reversed(current.children))
        return out

    # a deciding node as terms
    def terms(self, node: Node, holds: bool) -> List[_Term]:
        """What ``node`` succeeding (``holds``) or failing says about the running task."""
        kind = node.type
        if kind == "negated_command":
            inner = [c for c in node.named_children]
            return self.terms(inner[0], not holds) if len(inner) == 1 else self._opaque(node)
        if kind in ("test_command", "compound_statement", "parenthesized_expression", "subshell"):
            inner = [c for c in node.named_children if c.type != "comment"]
            if len(inner) == 1:
                return self.terms(inner[0], holds)
            return self._opaque(node)
        if kind in ("list", "binary_expression") and self._logical(node) is not None:
            op, left, right = self._logical(node)  # type: ignore[misc]
            both = self.terms(left, holds) + self.terms(right, holds)
            if (op == "&&") == holds:
                return both  # every side holds (or, failing an ||, every side fails)
            return [_UNREADABLE] if both else []
        if kind == "binary_expression":
            return self._comparison(node, holds)
        return self._opaque(node)

    def _opaque(self, node: Node) -> List[_Term]:
        """A test this reader does not follow: unreadable when it reads a per-task variable."""
        return [_UNREADABLE] if self.reads(node) else []

    @staticmethod
    def _logical(node: Node) -> Optional[Tuple[str, Node, Node]]:
        children = node.children
        if len(children) != 3:
            return None
        op = children[1].type
        if op not in ("&&", "||", "-a", "-o"):
            return None
        return ("&&" if op in ("&&", "-a") else "||"), children[0], children[2]

    def _comparison(self, node: Node, holds: bool) -> List[_Term]:
        children = node.children
        if len(children) != 3:
            return self._opaque(node)
        left, op_node, right = children
        op = (op_node.text or b"").decode("utf-8", "replace")
        sides = [(left, right), (right, left)]
        for side, other in sides:
            read = self.reads(side)
            if not read:
                continue
            if self.reads(other) or len(read) != 1 or not _only_expansion(side, read[0][0]):
                return [_UNREADABLE]
            entry = read[0][1]
            if entry is _SET_UNREADABLY:
                return [_UNREADABLE]
            number = _number(other)
            span = (node.start_byte, node.end_byte)
            if op in _EQUAL_OPS:
                return [_Term(entry, EQUAL, number, holds, span)]
            if op in _UNEQUAL_OPS:
                return [_Term(entry, EQUAL, number, not holds, span)]
            if op in _RANGE_OPS:
                return [_Term(entry, RANGE, number, holds, span)]
            return [_UNREADABLE]
        return []


class _SetUnreadably(variables.Variable):
    pass


_SET_UNREADABLY = _SetUnreadably("", variables.LAUNCHER)


def _only_expansion(side: Node, variable: Node) -> bool:
    """The operand is the variable and nothing else (``"$SLURM_LOCALID"``, ``${SLURM_PROCID}``)."""
    node = side
    while node.type in ("string", "simple_expansion", "expansion") and len(node.named_children) == 1:
        node = node.named_children[0]
    return node.id == variable.id


def _number(node: Node) -> Optional[int]:
    while node.type in ("string", "raw_string") and len(node.named_children) <= 1:
        if not node.named_children:
            text = (node.text or b"").decode("utf-8", "replace").strip("'\"")
            return int(text) if text.isdigit() else None
        node = node.named_children[0]
    text = (node.text or b"").decode("utf-8", "replace").strip("'\"")
    return int(text) if text.isdigit() else None


def _condition_and_body(node: Node) -> Tuple[List[Node], List[Node]]:
    """The condition nodes (before ``then``/``do``) and the rest of an if/elif/while."""
    condition: List[Node] = []
    rest: List[Node] = []
    seen_then = False
    for child in node.children:
        if not child.is_named:
            if child.type in ("then", "do"):
                seen_then = True
            continue
        if child.type == "do_group":
            seen_then = True
        (rest if seen_then else condition).append(child)
    return condition, rest


def _inside(outer: Node, inner: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _guard(step: Step, command: Command) -> List[_Term]:
    """The terms that hold where the task's shell reaches ``command``."""
    reader = _Reader(step)
    terms: List[_Term] = []
    child = command.node
    parent = child.parent
    while parent is not None:
        kind = parent.type
        if kind in ("if_statement", "elif_clause", "while_statement"):
            condition, rest = _condition_and_body(parent)
            if not any(_inside(c, child) for c in condition) and condition:
                last = condition[-1]
                if kind == "if_statement" and child.type in ("elif_clause", "else_clause"):
                    terms += reader.terms(last, False)
                    for other in rest:
                        if other.type == "elif_clause" and other.start_byte < child.start_byte:
                            earlier, _ = _condition_and_body(other)
                            if earlier:
                                terms += reader.terms(earlier[-1], False)
                else:
                    terms += reader.terms(last, True)
        elif kind == "case_statement":
            terms += _case_terms(reader, parent, child)
        elif kind == "list":
            children = parent.children
            if len(children) == 3 and child.start_byte >= children[2].start_byte:
                op = children[1].type
                if op in ("&&", "||"):
                    terms += reader.terms(children[0], op == "&&")
        child, parent = parent, parent.parent
    return terms


def _case_terms(reader: _Reader, case: Node, child: Node) -> List[_Term]:
    subject = case.child_by_field_name("value")
    if subject is None or child.type != "case_item" or not reader.reads(subject):
        return []
    read = reader.reads(subject)
    entry = read[0][1]
    if len(read) != 1 or entry is _SET_UNREADABLY:
        return [_UNREADABLE]
    patterns = child.children_by_field_name("value")
    numbers = [_number(p) for p in patterns]
    if len(numbers) == 1 and numbers[0] is not None:
        return [_Term(entry, EQUAL, numbers[0], True, (child.start_byte, child.end_byte))]
    return [_Term(entry, RANGE, None, True, (child.start_byte, child.end_byte))]


def _within(script, step: Step, whole: TaskSet, terms: List[_Term]) -> TaskSet:
    """The tasks of ``whole`` where every term holds."""
    if not terms:
        return whole
    whole = replace(whole, tested=True)
    string = step.task_string
    assert string is not None

    def found(kind: str, term: _Term, node: Optional[int] = None) -> TaskSet:
        span = string.source_bounds(*term.span) if term.span is not None else None
        name = term.variable.name if term.variable is not None else None
        return TaskSet(kind, node=node, group=whole.group, variable=name, test=span, tested=True)

    if any(t.variable is None for t in terms):
        return TaskSet(UNKNOWN, tested=True)
    if whole.kind == ONE:
        return whole
    equal = [t for t in terms if t.op == EQUAL and t.holds]
    by_index = {t.variable.index: t for t in equal if t.variable is not None}
    rank = by_index.get(variables.RANK)
    local = by_index.get(variables.LOCAL)
    node = by_index.get(variables.NODE_INDEX) or by_index.get(variables.HOST)
    if rank is not None:
        return found(ONE, rank)
    if local is not None and (node is not None or whole.kind == PER_NODE):
        return found(ONE, local)
    if local is not None:
        single_node = geometry(script, step).nodes.value == 1
        return found(ONE if single_node else PER_NODE, local)
    if node is not None:
        if whole.kind == PER_NODE:
            return found(ONE, node)
        return found(NODE, node, node.value if node.variable and node.variable.index == variables.NODE_INDEX else None)
    return found(SOME, terms[0])

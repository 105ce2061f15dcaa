"""The batch/task boundary: which shell expands each ``$NAME`` that ends up in a step's task.

A step's task command is expanded twice when it is a string run by the task's shell
(``srun … bash -c "$CMD"``, ``srun bash <<EOF``): first by the batch shell, which runs once on the
job's first node, then by every task's shell. This module answers, for every step:

- ``early_expansions(script)``: the ``$NAME`` the *batch* shell expands into a task command, with
  the source bytes of that ``$NAME`` (even when it sits in an assignment several ``CMD="$CMD …"``
  links away), whether it lands in a string the task's shell runs or directly on the step's
  command line, and whether escaping exactly that ``$`` (``\\$NAME``) would hand the expansion to
  the task's shell without changing anything else (``escapable``).
- ``late_expansions(script)``: the ``$NAME`` the *task's* shell expands itself (escaped ``\\$NAME``
  or single-quoted in the batch script), minus the names the string assigns itself.
- ``reaching_assignments`` and ``export_edit``: where a variable the task needs gets its value,
  and the edit that exports it there.

Both lists are memoised per script; rules (per-task variables, job variables, secrets, exports)
pick the names they care about.
"""
from __future__ import annotations



from .. import options as option_table
from .. import shell
from ..diagnostics import Edit
from ..lazyclass import dataclass, field
from ..shell import ancestors, node_span
from ..source import Span
from .steps import parsed_task_string, task_tree
from .swaps import kept_swapped_words, shifted_words
from .values import CONDITIONAL_TYPES, Assignment, Piece, Value, Values, Word
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node
    from typing import Dict, Iterable, List, Optional, Set, Tuple
    from .script import Script
    from .steps import Command, Step

IDENTIFIER = lazy(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Commands that only print their arguments: a command string shown in the log may change text.
PRINTERS = frozenset({"echo", "printf"})
# Quoting contexts (``Piece.quote``) in which a backslash before ``$`` makes it literal.
BACKSLASH_QUOTES = frozenset({"", '"', "<<"})


class _Judged:
    """An ``EarlyExpansion``'s ``escapable``, ``reason`` or ``blocker``: all three worked out when
    one is first asked, then held by the instance (whose attribute then wins over this).

    Judging an entry may parse each alternative of the task strings it lands in (whether the
    task's shell expands it there), and the rules ask only of some entries (Slurm's and the
    launchers' variables): a long string with a dozen alternatives took most of building the
    list to judge entries nobody asked about."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, entry, owner=None):
        if entry is None:
            return self
        entry._judge()
        return entry.__dict__[self.name]


class _Judgement:
    """What the entries of one script share to judge themselves: the script, where variables
    flow (traced when an entry first asks) and the tree of each task text read (see
    ``_escapable``). Dropped by each entry once judged (it refers back to the script)."""

    __slots__ = ("script", "flows", "contexts")

    def __init__(self, script: "Script") -> None:
        self.script = script
        self.flows: List[_Flows] = []
        self.contexts: Dict[str, object] = {}  # per text: its tree, or the step's read as it (_ShiftedTree)


@dataclass
class Occurrence:
    """One place a batch-shell expansion lands in a step's task."""

    step: "Step"
    in_string: bool  # in a string the task's shell runs (else a word of the step's command line)
    value: Value  # the string (or word) alternative it was found in
    offset: int  # byte offset of its rendering ``${NAME}`` in ``value.text``
    word: Word  # the word it lands in (``NAME=…`` for an environment prefix of the step)


@dataclass
class EarlyExpansion:
    """A ``$NAME`` that the batch shell expands into a step's task command."""

    name: str
    site: Span  # the ``$NAME`` / ``${NAME…}`` bytes in the batch script
    quote: str  # quoting context of the site (``Piece.quote``)
    via: Tuple[Span, ...]  # expansion sites the value went through (``$CMD`` …), innermost last
    holder: Optional[str]  # the variable whose assignment contains the site (``CMD``), if any
    occurrences: List[Occurrence] = field(default_factory=list)
    # Judged when first asked (``_Judged``): whether ``\\$`` at the site hands the expansion to
    # every task's shell, and nothing else (``escapable``); why not (``reason``); what stands in
    # the way (``blocker``): "quote", "command-line", "task-quoting", "elsewhere" (the text also
    # reaches the batch shell's own commands, another step's argv, or the environment), "" if none.

    def _judge(self) -> None:
        """Work out ``blocker``, ``reason`` and ``escapable`` (see ``_Judgement``)."""
        state = self.__dict__
        judgement = state.pop("_judgement", None)
        if judgement is None:  # made by hand, not by ``build_early``: not judged
            state["blocker"], state["reason"], state["escapable"] = "", "", False
            return
        blocker, reason = _escapable(judgement.script, self, judgement.flows, judgement.contexts)
        state["blocker"], state["reason"], state["escapable"] = blocker, reason, not blocker

    escapable = _Judged()
    reason = _Judged()
    blocker = _Judged()

    @property
    def steps(self) -> List["Step"]:
        out: List["Step"] = []
        for occurrence in self.occurrences:
            if not any(step is occurrence.step for step in out):
                out.append(occurrence.step)
        return out

    @property
    def in_string(self) -> bool:
        """Every occurrence is in a string the task's shell runs."""
        return all(o.in_string for o in self.occurrences)

    @property
    def direct(self) -> List[Occurrence]:
        return [o for o in self.occurrences if not o.in_string]

    def escape(self) -> Edit:
        """Insert a backslash before the ``$``."""
        return Edit.insert(self.site.start, "\\")


@dataclass
class LateExpansion:
    """A ``$NAME`` the task's shell expands itself (escaped or single-quoted in the batch script)."""

    name: str
    site: Span  # the ``\\$NAME`` / ``$NAME`` bytes in the batch script
    step: "Step"
    command: "Command"


# -- early expansions ---------------------------------------------------------------------------
def early_expansions(script: "Script") -> List[EarlyExpansion]:
    """Every named batch-shell expansion in a task command, one per source site, in source order."""
    return script.early_expansions


def build_early(script: "Script") -> List[EarlyExpansion]:
    found: Dict[Tuple[int, int], EarlyExpansion] = {}
    # (site, step, value, offset) of every occurrence recorded: its value is held by the
    # occurrence, so the id stays its own (one set instead of a scan of the site's occurrences)
    recorded: Set[Tuple[int, int, int, int, int]] = set()
    data = script.data
    for step in script.steps:
        for word, in_string in _task_words(step):
            for value in _alternatives(word):
                for offset, piece in _named_unknowns(value):
                    if not _is_expansion_of(data, piece):
                        continue
                    assert piece.span is not None and piece.name is not None
                    key = (piece.span.start, piece.span.end)
                    entry = found.get(key)
                    if entry is None:
                        entry = EarlyExpansion(
                            piece.name, piece.span, piece.quote, piece.via, _holder(script, piece.span)
                        )
                        found[key] = entry
                    mark = (key[0], key[1], id(step), id(value), offset)
                    if mark not in recorded:
                        recorded.add(mark)
                        entry.occurrences.append(Occurrence(step, in_string, value, offset, word))
    out = sorted(found.values(), key=lambda e: (e.site.start, e.site.end))
    if not out:
        return out  # nothing to judge: no need to trace where variables flow
    judgement = _Judgement(script)  # (each entry judged when first asked: ``_Judged``)
    for entry in out:
        entry.__dict__["_judgement"] = judgement
    return out


def _task_words(step: "Step") -> Iterable[Tuple[Word, bool]]:
    """The words of the step's task (the string's word first), and env values given to the task."""
    if step.string_word is not None:
        yield step.string_word, True
    for word in step.task_argv:
        if word is not step.string_word:
            yield word, False
    for env in step.command.env:  # NAME=$X srun …: the batch shell fills it in for every task
        yield _env_word(env.name, env.value, env.span), False
    option = step.option(option_table.EXPORT)
    if option is not None:
        for word in option.words:
            yield word, False


def _env_word(name: str, value: Value, span: Span) -> Word:
    return Word(Value((Piece(name + "=", None),) + value.pieces), None, span, None)


def _alternatives(word: Word) -> List[Value]:
    return list(word.alternatives) if word.alternatives else [word.value]


def _named_unknowns(value: Value) -> Iterable[Tuple[int, Piece]]:
    """Each unknown piece the batch shell fills in from a named variable, with its offset in the
    value's rendered bytes (``Value.offsets``, computed once per value; a known value has none)."""
    if value.known:
        return ()
    pieces = value.pieces
    found = [i for i, p in enumerate(pieces) if not p.known and not p.task and p.name and p.span is not None]
    if not found:
        return ()
    offsets = value.offsets
    return [(offsets[i], pieces[i]) for i in found]


def _is_expansion_of(data: bytes, piece: Piece) -> bool:
    """The piece's source bytes are ``$NAME`` or ``${NAME…}`` (not ``$(…)`` reached through NAME)."""
    assert piece.span is not None and piece.name is not None
    text = data[piece.span.start : piece.span.end]
    name = piece.name.encode("utf-8")
    if text.startswith(b"${"):
        rest = text[2:]
    elif text.startswith(b"$"):
        rest = text[1:]
    else:
        return False
    if not rest.startswith(name):
        return False
    following = rest[len(name) : len(name) + 1]
    return not (following.isalnum() or following == b"_")


def _holder(script: "Script", site: Span) -> Optional[str]:
    assignment = _enclosing_assignment(script, site)
    if assignment is None:
        return None
    name_node = assignment.child_by_field_name("name")
    return shell.text(name_node, script.data) if name_node is not None else None


def _enclosing_assignment(script: "Script", site: Span) -> Optional[Node]:
    # from the site's first byte (its ``$``): a ``$NAME`` of a word the grammar cut at a bare
    # ``$`` (shell.word_chain) spans two nodes, and only the ``$`` is in the assignment
    node = script.root.descendant_for_byte_range(site.start, site.start + 1)
    while node is not None:
        if node.type == "variable_assignment":
            return node
        if node.type in ("command", "declaration_command", "program", "heredoc_body", "for_statement"):
            return None
        node = node.parent
    return None


# -- can the batch shell's expansion be handed to the task? ---------------------------------------
def _escapable(script: "Script", entry: EarlyExpansion, traced: "List[_Flows]", contexts: Dict[str, object]) -> Tuple[str, str]:
    """(blocker, reason): what prevents handing the expansion to the task's shell, if anything
    (``traced``: the script's ``_Flows`` once built, shared by its entries)."""
    if entry.quote not in BACKSLASH_QUOTES:
        return "quote", "it is not in a double-quoted or unquoted text where `\\$` works"
    if entry.direct:
        return "command-line", "it is on the step's command line, where no shell runs in the task"
    for occurrence in entry.occurrences:
        if not _task_expands_at(occurrence, entry.name, contexts, script.values):
            return "task-quoting", "the task's shell would not expand it there (it is quoted or escaped in the command string)"
    if not traced:
        traced.append(_Flows(script))
    flows = traced[0]
    assignment = _enclosing_assignment(script, entry.site)
    if assignment is None:
        if any(_within(entry.site, node) for node in flows.string_nodes):
            return "", ""
        return "elsewhere", "it is not in an assignment or a task string"
    problem = flows.obstacle(assignment)
    if problem:
        return "elsewhere", problem
    return "", ""


def _task_expands_at(occurrence: Occurrence, name: str, contexts: Dict[str, object], values: Values) -> bool:
    """Whether the task's shell would expand ``${NAME}`` at this place of the string."""
    text = occurrence.value.text
    root = contexts.get(text)
    if root is None:
        root = _own_tree(occurrence, values) or _shifted_tree(occurrence, values) or task_tree(values, text.encode("utf-8")).root_node
        contexts[text] = root
    start = occurrence.offset
    end = start + len(("${" + name + "}").encode("utf-8"))
    if root.__class__ is _ShiftedTree:
        return root.expands_at(start, end)  # type: ignore[attr-defined]
    return _expands_at(root, start, end)


def _expands_at(root: Node, start: int, end: int) -> bool:
    """Whether bytes [start, end) of the tree's text are an expansion the task's shell makes."""
    node = root.descendant_for_byte_range(start, end - 1)
    while node is not None and not (node.start_byte <= start and node.end_byte >= end):
        node = node.parent
    if node is None or node.type != "expansion" or (node.start_byte, node.end_byte) != (start, end):
        return False
    return not any(a.type in ("raw_string", "comment", "heredoc_body", "ERROR") for a in ancestors(node))


def _own_tree(occurrence: Occurrence, values: Values) -> Optional[Node]:
    """The tree of the step's own task string (parsed with the steps) when this alternative of
    it parses the same (``model/swaps.py``: a loop's ``--tp 1`` against ``--tp 4``), else None."""
    string = occurrence.step.task_string
    value = occurrence.value
    if not occurrence.in_string or string is None or value is string:
        return None
    root = task_tree(values, string.text.encode("utf-8")).root_node
    return root if kept_swapped_words(values, root, string, value) is not None else None


class _ShiftedTree:
    """The tree of an alternative task string that rewrites argument words of the step's own
    string with text of another length (``swaps.shifted_words``), read off the step's own tree:
    each rewritten word reads as one argument of one node per part, each ``${NAME}`` part an
    expansion of its own (a single-quoted one, literal text); every other byte is where the
    step's string has it, shifted by what the words before it gained or lost."""

    __slots__ = ("root", "words")

    def __init__(self, root: Node, words: List[Tuple[Node, int, int, bool, Node]]) -> None:
        self.root = root
        # (the word's node in the step's tree, its start and end in the alternative, single-quoted)
        self.words = words

    def expands_at(self, start: int, end: int) -> bool:
        shift = 0
        for node, word_start, word_end, quoted, _command in self.words:
            if word_end <= start:
                shift = word_end - node.end_byte
                continue
            if word_start <= start and end <= word_end:
                # an unknown piece of the rewritten word, written ``${NAME}``: literal text in
                # single quotes, else one of its parts
                return not quoted and not any(a.type in ("raw_string", "comment", "heredoc_body", "ERROR") for a in ancestors(node))
            if start < word_end and word_start < end:
                return False  # (no unknown piece straddles a rewritten word: not reached)
            break
        return _expands_at(self.root, start - shift, end - shift)


def _shifted_tree(occurrence: Occurrence, values: Values) -> Optional[_ShiftedTree]:
    """The step's own tree read as the tree of this alternative of its string when it rewrites
    only argument words (see ``_ShiftedTree``), else None."""
    string = occurrence.step.task_string
    value = occurrence.value
    if not occurrence.in_string or string is None or value is string:
        return None
    parse = parsed_task_string(values, string)
    root = parse.local[0].root_node
    found = shifted_words(root, parse.inner, string, value)
    if found is None:
        return None
    return _ShiftedTree(root, found[0])


def _within(span: Span, node: Node) -> bool:
    return node.start_byte <= span.start and span.end <= node.end_byte


class _Flows:
    """Where a variable's value goes: only into task strings (and printed copies), or elsewhere."""

    def __init__(self, script: "Script") -> None:
        self.script = script
        # the uses of each name asked (``uses_of``): the judged entries of most scripts ask of a
        # name or two, and reading the variable of every expansion of the script cost more than
        # the rest; past ``_ALONE`` names, those of every name at once (``every``: then a name
        # not in ``uses`` has none), which keeps the cost linear in the script's size
        self.uses: Dict[str, List[Node]] = {}
        self.every = False
        self.string_nodes = [
            step.string_word.node
            for step in script.steps
            if step.string_word is not None and step.string_word.node is not None
        ]
        self.memo: Dict[str, Optional[str]] = {}

    def uses_of(self, name: str) -> List[Node]:
        """The expansions of ``name`` in the script, in source order: each ``simple_expansion`` or
        ``expansion`` node whose variable it is, and the ``$`` token of each ``$NAME`` in no
        expansion node (a word the grammar cut at a bare ``$``). Found when first asked."""
        found = self.uses.get(name)
        if found is not None:
            return found
        if self.every:
            return []
        if len(self.uses) < _ALONE:
            found = self.uses[name] = _uses_of(self.script, name)
            return found
        self.uses = _every_use(self.script)
        self.every = True
        return self.uses.get(name, [])

    def obstacle(self, assignment: Node) -> Optional[str]:
        """None when the value assigned here reaches nothing but task strings of steps (and
        ``echo``); else why not, in words."""
        name_node = assignment.child_by_field_name("name")
        if name_node is None or name_node.type != "variable_name":
            return "it is assigned to an array element"
        name = shell.text(name_node, self.script.data)
        problem = _declaration_problem(assignment, name, self.script.data)
        if problem:
            return problem
        return self._variable(name, set())

    def _variable(self, name: str, visiting: Set[str]) -> Optional[str]:
        if name in self.memo:
            return self.memo[name]
        if name in visiting:
            return None
        visiting.add(name)
        result: Optional[str] = None
        if self.script.values.is_exported(name):
            result = f"`{name}` is exported, so every task's environment would hold the escaped text"
        else:
            for use in self.uses_of(name):
                result = self._use(name, use, visiting)
                if result:
                    break
        visiting.discard(name)
        if not visiting:
            self.memo[name] = result
        return result

    def _use(self, name: str, use: Node, visiting: Set[str]) -> Optional[str]:
        span = Span(use.start_byte, use.end_byte)
        if any(_within(span, node) for node in self.string_nodes):
            return None
        line = self.script.source.line_of(use.start_byte)
        elsewhere = f"`{name}` is also used outside task command strings (line {line})"
        node = use.parent
        while node is not None:
            kind = node.type
            if kind == "variable_assignment":
                name_node = node.child_by_field_name("name")
                if name_node is None or name_node.type != "variable_name":
                    return elsewhere
                target = shell.text(name_node, self.script.data)
                problem = _declaration_problem(node, target, self.script.data)
                if problem:
                    return problem
                return self._variable(target, visiting)
            if kind == "command":
                name_node = node.child_by_field_name("name")
                program = shell.text(name_node, self.script.data).strip() if name_node is not None else ""
                if program in PRINTERS and not _in_redirect(use, node):
                    return None
                return elsewhere
            if kind in ("string", "concatenation", "expansion", "simple_expansion", "command_name", "array"):
                node = node.parent
                continue
            return elsewhere
        return elsewhere


def _start_byte(node: Node) -> int:
    return node.start_byte


# How many names ``_Flows.uses_of`` looks for one by one (a pass over the expansion nodes each,
# cheaper than reading every node's variable) before it reads them all at once.
_ALONE = 2


def _every_use(script: "Script") -> Dict[str, List[Node]]:
    """``_Flows.uses_of`` of every name at once."""
    data = script.data
    uses: Dict[str, List[Node]] = {}
    for node in script.nodes_of_type("simple_expansion", "expansion"):
        for child in node.named_children:
            if child.type == "variable_name":
                uses.setdefault(shell.text(child, data), []).append(node)
                break
    # ``$NAME`` in no expansion node (a word the grammar cut at a bare ``$``): its ``$`` token
    hidden = shell.hidden_expansions(script.node_index, data)
    for expansion in hidden:
        uses.setdefault(expansion.name, []).append(expansion.dollar)
    for name in {expansion.name for expansion in hidden}:
        uses[name].sort(key=_start_byte)
    return uses


def _uses_of(script: "Script", name: str) -> List[Node]:
    """See ``_Flows.uses_of``. An expansion node's variable is read only when the node's bytes
    hold the name's: a variable's text is its bytes decoded, so they hold it whenever the name
    decodes from valid bytes (it has no U+FFFD, which ``shell.text`` puts for invalid ones)."""
    data = script.data
    needle = name.encode("utf-8") if "\ufffd" not in name else b""
    found: List[Node] = []
    # (each type's nodes as the index groups them, then sorted: merging the two groups in walk
    # order cost a pass over every node the index keeps, and no two of them start at one byte)
    for kind in ("simple_expansion", "expansion"):
        for node in script.nodes_of_type(kind):
            if needle not in data[node.start_byte : node.end_byte]:
                continue
            for child in node.named_children:
                if child.type == "variable_name":
                    if shell.text(child, data) == name:
                        found.append(node)
                    break
    found.extend(expansion.dollar for expansion in shell.hidden_expansions(script.node_index, data) if expansion.name == name)
    found.sort(key=_start_byte)
    return found


def _declaration_problem(assignment: Node, name: str, data: bytes) -> Optional[str]:
    parent = assignment.parent
    if parent is not None and parent.type in ("command", "variable_assignments"):
        if parent.type == "command" and shell.only_assignments(parent, data):
            return None  # ``X=$A/b_$C.d``: a plain assignment the grammar cut (shell.word_chain)
        return f"`{name}` is set in a command's environment"
    if parent is not None and parent.type == "declaration_command":
        keyword = parent.children[0].type if parent.children else ""
        if keyword == "export":
            return f"`{name}` is exported, so every task's environment would hold the escaped text"
        if keyword not in ("local", "declare", "typeset"):
            return f"`{name}` is declared `{keyword}`"
    return None


def _in_redirect(use: Node, command: Node) -> bool:
    node = use.parent
    while node is not None and node is not command and node != command:
        if node.type.endswith("redirect"):
            return True
        node = node.parent
    return False


# -- late expansions ----------------------------------------------------------------------------
def late_expansions(script: "Script") -> List[LateExpansion]:
    """Every ``$NAME`` a step's task shell expands itself and does not assign itself."""
    return script.late_expansions


def build_late(script: "Script") -> List[LateExpansion]:
    out: List[LateExpansion] = []
    seen: Set[Tuple[str, int, int, int]] = set()
    for step in script.steps:
        if step.task_string is None:
            continue
        own = step.task_values
        for command in step.task_commands:
            values: List[Value] = []
            for word in command.argv:
                values.extend(_alternatives(word))
            values.extend(env.value for env in command.env)
            for value in values:
                for piece in value.pieces:
                    if piece.known or not piece.task or not piece.name or piece.span is None:
                        continue
                    if not IDENTIFIER.match(piece.name):
                        continue
                    if own is not None and own.defined(piece.name):
                        continue
                    key = (piece.name, piece.span.start, piece.span.end, id(step))
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(LateExpansion(piece.name, piece.span, step, command))
    return out


# -- where a variable gets its value, and exporting it there --------------------------------------
def reaching_assignments(script: "Script", name: str, step: "Step") -> List[Assignment]:
    """The assignments of ``name`` whose value the step may see, most recent last (as ``lookup``)."""
    values = script.values
    at = step.command.node.start_byte
    candidates = values.assignments_before(name, at)
    scopes = {(n.start_byte, n.end_byte, n.type) for n in ancestors(step.command.node)}
    chosen: List[Assignment] = []
    for assignment in reversed(candidates):
        chosen.append(assignment)
        if not _conditional(assignment, scopes):
            break
    return list(reversed(chosen))


def _conditional(assignment: Assignment, scopes: set) -> bool:
    for node in ancestors(assignment.node):
        if node.type in CONDITIONAL_TYPES and (node.start_byte, node.end_byte, node.type) not in scopes:
            return True
    return False


def _sole_assignment(command: Node, data: bytes) -> bool:
    """``X=$A/b_$C.d`` alone: one plain assignment the grammar parsed as a command (shell.word_chain)."""
    assignments = [c for c in command.children if c.type == "variable_assignment"]
    return len(assignments) == 1 and shell.only_assignments(command, data)


def export_edit(script: "Script", assignment: Assignment) -> Optional[Edit]:
    """The edit that exports the variable at this assignment, or None when there is no clean one.

    ``X=1`` → ``export X=1``; ``local X=1`` / ``declare X=1`` → ``local -x X=1``. Arrays cannot be
    exported; ``readonly``, loop and ``read`` variables and several assignments on one line are
    left to the author.
    """
    if assignment.kind not in ("assign", "append") or assignment.sourced is not None:
        return None  # a sourced file's variable is exported in that file, not here
    node = assignment.node
    parent = node.parent
    if parent is None:
        return None
    if assignment.declared_by is None:
        if parent.type == "command" and _sole_assignment(parent, script.data):
            return Edit.insert(node_span(node, script.data).start, "export ")
        if parent.type in ("command", "variable_assignments", "declaration_command"):
            return None
        return Edit.insert(node_span(node, script.data).start, "export ")
    if assignment.declared_by in ("local", "declare", "typeset") and parent.type == "declaration_command":
        declared = [c for c in parent.named_children if c.type in ("variable_assignment", "variable_name")]
        if len(declared) != 1 or not parent.children:
            return None
        keyword = parent.children[0]
        return Edit.insert(keyword.end_byte, " -x")
    return None

"""Variable assignments and what a shell word evaluates to, with every character's origin.

A word evaluates to a ``Value``: a tuple of ``Piece`` objects. A literal piece carries the source
span that produces it (one source byte per value byte, or one escape sequence such as ``\\$``
for one character), so a fix can edit the exact bytes a character came from, even when the
value was assembled across several assignments (``CMD="$CMD --tp $TP"``). A piece the batch shell
fills in at run time and we cannot know (``$SLURM_NODEID``, ``$(date)``) is an unknown piece
that remembers the variable name and the expansion's span.

Assignments made in ``if``/``case`` branches, loops or functions that do not enclose the use are
kept as alternatives: ``lookup`` returns every value the variable may have, the most recent
assignment last ("primary").

An unquoted expansion in a command's argv is split as bash splits it: on the IFS the script sets
before the use (``IFS=,``; ``ifs_at``), into one unknown word when that IFS cannot be followed;
a field holding a pattern (``data/*.json``) names files found at run time and is unknown, unless
the script turns globbing off (``set -f``).
"""
from __future__ import annotations

import bisect

from itertools import accumulate, chain
from _operator import attrgetter  # (operator's own: its Python module is not imported)


from ..lazyclass import dataclass, field
from ..shell import (
    ancestors, inner, may_cut_words, node_span, only_assignments, parameter_length, quoted_interior, word_chain,
)
from ..source import Span
from ..lazyre import lazy
from .variables import ALWAYS_SET

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node
    from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple
    from .sourced import SourceContext, SourcedFile

MAX_ALTERNATIVES = 16
# ``set -f`` / ``set -o noglob``, less the word boundary before ``set`` (``noglob`` checks it): a
# pattern that starts with its literal is searched for that literal, far faster than one that
# starts with ``\b`` (tried at every byte).
NOGLOB = lazy(rb"set\s+(?:-[a-zA-Z]*f|-o\s+noglob)\b")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
MAX_DEPTH = 12
MAX_CHAIN = 64  # assignments evaluated inside one another (``A=$B``, ``B=$C``…)
MAX_PIECES = 4096  # a value assembled from more pieces than this is treated as unknown

# Constructs whose body may run zero, one or several times, or only on some paths.
CONDITIONAL_TYPES = frozenset(
    {
        "if_statement",
        "elif_clause",
        "else_clause",
        "case_statement",
        "case_item",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "function_definition",
        "list",  # a && b, a || b
        "subshell",
    }
)


class cached_property:  # noqa: N801 - functools.cached_property without its per-access lock (3.8-3.11)
    """Computed on first access and stored in the instance's ``__dict__`` (frozen or not)."""

    def __init__(self, func) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


_FIELDS = ("text", "span", "quote", "known", "name", "escaped", "via", "split", "task", "loop")


class Piece:
    """One run of a value's characters and where they come from. Immutable (nothing sets a field
    after ``__init__``), hashable, equal when every field is equal.

    Slotted rather than a frozen dataclass: pieces are the most numerous objects of the model.

    - ``text``; ``span``: the source bytes that produce it (None for text made up here);
    - ``quote`` at the source: '' unquoted, '"' double-quoted, "'" single-quoted (or a quoted
      here-document), "$'" ANSI-C, "<<" an unquoted here-document body;
    - ``known``: False when filled in at run time; ``name``: the variable an unknown piece (or a
      substituted one) expands;
    - ``escaped``: a backslash escape in the source (text is one char, span two bytes);
    - ``via``: expansion sites this piece was substituted through, innermost last;
    - ``split``: reached the use site through an unquoted expansion (subject to word splitting);
    - ``task``: expanded by the task's shell (inside a ``bash -c`` string), not the batch shell;
    - ``loop``: loop iterations this piece's text belongs to: (for-statement start byte, iteration
      index). Pieces bound to different iterations of the same loop never occur together (see
      ``consistent``).
    """

    __slots__ = _FIELDS + ("_exact",)

    text: str
    span: Optional[Span]
    quote: str
    known: bool
    name: Optional[str]
    escaped: bool
    via: Tuple[Span, ...]
    split: bool
    task: bool
    loop: Tuple[Tuple[int, int], ...]

    def __init__(
        self,
        text: str,
        span: Optional[Span],
        quote: str = "",
        known: bool = True,
        name: Optional[str] = None,
        escaped: bool = False,
        via: Tuple[Span, ...] = (),
        split: bool = False,
        task: bool = False,
        loop: Tuple[Tuple[int, int], ...] = (),
    ) -> None:
        self.text = text
        self.span = span
        self.quote = quote
        self.known = known
        self.name = name
        self.escaped = escaped
        self.via = via
        self.split = split
        self.task = task
        self.loop = loop
        self._exact: Optional[bool] = None

    def _fields(self) -> tuple:
        return (self.text, self.span, self.quote, self.known, self.name, self.escaped, self.via, self.split, self.task, self.loop)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Piece:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "Piece(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS) + ")"

    def __reduce__(self):
        return (Piece, self._fields())

    def _with(self, text: str, span: Optional[Span], escaped: bool) -> "Piece":
        """A copy with other text, span and escape flag: ``Piece(text, span, self.quote,
        self.known, self.name, escaped, self.via, self.split, self.task, self.loop)``, made
        without the class call (the cut pieces of split words and task-string words)."""
        made = _new(Piece)
        made.text = text
        made.span = span
        made.quote = self.quote
        made.known = self.known
        made.name = self.name
        made.escaped = escaped
        made.via = self.via
        made.split = self.split
        made.task = self.task
        made.loop = self.loop
        made._exact = None
        return made

    @property
    def exact(self) -> bool:
        """True when each byte of ``text`` maps to one byte of ``span`` (computed once)."""
        exact = self._exact
        if exact is None:
            exact = self._exact = (
                self.known
                and self.span is not None
                and not self.escaped
                and len(self.text.encode("utf-8")) == self.span.end - self.span.start  # (len(span))
            )
        return exact

    def render(self) -> str:
        return self.text if self.known else "${" + (self.name or "?") + "}"


_UNSET: object = object()
# The bytes a backslash escapes inside double quotes and in an unquoted here-document, as ints:
# ``byte in b"…"`` with a one-byte ``bytes`` first tries it as an int and builds, then drops, a
# TypeError each time (``bytes.find`` or an int avoids that).
_QUOTED_ESCAPABLE = frozenset(b'$`"\\\n')
_HEREDOC_ESCAPABLE = frozenset(b"$`\\\n")
# a piece's fields read without a Python step per piece (``map`` over a value's pieces)
_KNOWN = attrgetter("known")
_TEXT = attrgetter("text")
_LOOP = attrgetter("loop")
_SPLIT = attrgetter("split")
_PIECES = attrgetter("pieces")


class Value:
    """What a word evaluates to: a tuple of pieces. Immutable, hashable, equal by its pieces;
    ``text``, ``known`` and the byte layout are computed once, when first asked."""

    __slots__ = ("pieces", "_text", "_known", "_layout_cache")

    pieces: Tuple[Piece, ...]

    def __init__(self, pieces: Tuple[Piece, ...]) -> None:
        self.pieces = pieces
        self._text: Optional[str] = None
        self._known: Optional[bool] = None
        self._layout_cache = None

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Value:
            return NotImplemented
        return self.pieces == other.pieces  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.pieces)

    def __repr__(self) -> str:
        return f"Value(pieces={self.pieces!r})"

    def __reduce__(self):
        return (Value, (self.pieces,))

    @property
    def known(self) -> bool:
        known = self._known
        if known is None:
            known = self._known = all(map(_KNOWN, self.pieces))
        return known

    @property
    def text(self) -> str:
        """The value, unknown pieces rendered as ``${NAME}``."""
        text = self._text
        if text is None:
            if self.known:
                text = self._text = "".join(map(_TEXT, self.pieces))
            else:
                text = self._text = "".join([p.text if p.known else p.render() for p in self.pieces])
        return text

    def __str__(self) -> str:  # pragma: no cover - debugging aid
        return self.text

    def unknown_names(self) -> List[str]:
        return [p.name for p in self.pieces if not p.known and p.name]

    @property
    def _layout(self) -> Tuple[List[int], List[int], List[bytes]]:
        """Byte start and end of every piece in ``text.encode()``, and its bytes (computed once)."""
        layout = self._layout_cache
        if layout is None:
            layout = self._layout_cache = self._compute_layout()
        return layout

    def _compute_layout(self) -> Tuple[List[int], List[int], List[bytes]]:
        raws = [(p.text if p.known else p.render()).encode("utf-8") for p in self.pieces]
        ends = list(accumulate(map(len, raws)))
        starts = [0] + ends[:-1] if ends else []
        return starts, ends, raws

    @property
    def offsets(self) -> List[int]:
        """Where each piece starts in ``text.encode()`` (unknowns rendered as ``${NAME}``)."""
        return self._layout[0]

    def slice(self, start: int, end: int) -> "Value":
        """The pieces that make up bytes [start, end) of ``text.encode()``; exact pieces are cut."""
        return _value(tuple(self.slice_pieces(start, end)))

    def slice_pieces(self, start: int, end: int) -> List[Piece]:
        """``slice(start, end).pieces``, as a new list."""
        out: List[Piece] = []
        layout = self._layout_cache  # (the ``_layout`` property, without its call once computed)
        starts, ends, raws = layout if layout is not None else self._layout
        pieces = self.pieces
        count = len(pieces)
        index = bisect.bisect_left(ends, start)
        while index < count:
            p_start = starts[index]
            if p_start > end:
                break
            p_end = ends[index]
            piece = pieces[index]
            if (p_end <= start or p_start >= end) and not (p_start == p_end == start):
                index += 1
                continue
            if p_start >= start and p_end <= end:  # whole
                out.append(piece)
            elif piece.exact:
                lo = start if start > p_start else p_start
                hi = end if end < p_end else p_end
                sub = raws[index][lo - p_start : hi - p_start].decode("utf-8", errors="replace")
                offset = piece.span.start - p_start  # type: ignore[union-attr]
                out.append(piece._with(sub, _span(offset + lo, offset + hi), piece.escaped))
            elif piece.known:
                lo = start if start > p_start else p_start
                hi = end if end < p_end else p_end
                sub = raws[index][lo - p_start : hi - p_start].decode("utf-8", errors="replace")
                out.append(piece._with(sub, piece.span, piece.escaped))
            else:
                out.append(piece)
            index += 1
        return out

    def source_bounds(self, start: int, end: int) -> Optional[Span]:
        """The smallest source span covering the spans of ``slice(start, end)``'s pieces (None when
        none has one), without building the slice."""
        low: Optional[int] = None
        high = 0
        layout = self._layout_cache
        starts, ends, _raws = layout if layout is not None else self._layout
        pieces = self.pieces
        count = len(pieces)
        index = bisect.bisect_left(ends, start)
        while index < count:
            p_start = starts[index]
            if p_start > end:
                break
            p_end = ends[index]
            index += 1
            if (p_end <= start or p_start >= end) and not (p_start == p_end == start):
                continue
            piece = pieces[index - 1]
            span = piece.span
            if span is None:
                continue
            if (p_start >= start and p_end <= end) or not piece.exact:
                s, e = span.start, span.end
            else:  # an exact piece cut like ``slice`` cuts it
                s = span.start + (start if start > p_start else p_start) - p_start
                e = span.start + (end if end < p_end else p_end) - p_start
            if low is None or s < low:
                low = s
            if e > high:
                high = e
        return None if low is None else Span(low, high)

    def source_offset(self, index: int) -> Optional[int]:
        """The source byte offset where value byte ``index`` comes from (insertion point)."""
        position = 0
        for piece in self.pieces:
            length = len(piece.render().encode("utf-8"))
            if position <= index < position + length or (index == position + length and piece is self.pieces[-1]):
                if piece.span is None:
                    return None
                if piece.exact:
                    return piece.span.start + (index - position)
                return piece.span.start if index == position else piece.span.end
            position += length
        return None


@dataclass
class Assignment:
    name: str
    node: Node  # variable_assignment node (or the for/read command for loop variables)
    value_node: Optional[Node]
    span: Span
    kind: str  # "assign", "append", "array", "for", "read", "unset"
    exported: bool = False
    declared_by: Optional[str] = None  # export / declare / local / readonly / typeset
    in_string: bool = False
    # Set by a sourced file (``source env.sh``): node and span are the ``source`` command's,
    # value_node is None, and the values come from the file (``model/sourced.py``).
    sourced: Optional["SourcedFile"] = None

    @property
    def start(self) -> int:
        return self.span.start


@dataclass
class Export:
    """``export NAME`` without a value, or ``declare -x NAME``: marks an existing variable."""

    name: str
    span: Span


@dataclass
class TaskStringMemo:
    """What ``model/steps.py`` parsed of the task strings (``bash -c "$CMD"``) of one script, kept
    with that script's values: each string is parsed once however many analyses ask."""

    trees: Dict[bytes, object] = field(default_factory=dict)  # the tree of each text
    texts: Dict[bytes, list] = field(default_factory=dict)  # [tree, Values, commands, nodes, command nodes] of each text
    strings: Dict[int, tuple] = field(default_factory=dict)  # (string, parse) by id of the string value
    cuts: Dict[tuple, tuple] = field(default_factory=dict)  # what a stretch of a string's pieces maps a word to


class Values:
    """Every assignment in one shell tree, and evaluation of words against them."""

    # The node types ``_collect`` reads (a caller with an index of the tree passes just these).
    COLLECTED = ("variable_assignment", "declaration_command", "for_statement", "command", "unset_command")

    def __init__(self, data: bytes, root: Node, nodes: Optional[Iterable[Node]] = None,
                 context: Optional["SourceContext"] = None, outer: Optional[Tuple["Values", Span, Node]] = None,
                 cwd: Optional[str] = None, allexport: bool = False) -> None:
        self.data = data
        self.root = root
        # Following ``source FILE`` (``model/sourced.py``): only the batch script's own values do.
        self.context = context
        self.sourced: List["SourcedFile"] = []  # every ``source`` command, in source order
        self._cwd: Optional[str] = cwd if cwd is not None or context is None else context.initial_cwd()
        # A sourced file's values: the script that sources it, and where (what the file reads of it).
        self.outer = outer
        self.assignments: Dict[str, List[Assignment]] = {}
        self.exports: Dict[str, List[Export]] = {}
        self._allexport = allexport  # ``set -a`` / ``set -o allexport`` in effect (source order)
        # What each assignment evaluates to does not depend on where it is used: computed once,
        # so ``CMD="$CMD …"`` chains cost one evaluation per link and are never cut short.
        self._assignment_memo: Dict[Tuple[int, int, str, str], List[Value]] = {}
        self._evaluating: set = set()
        self._scopes_memo: Dict[int, Tuple[Tuple[int, int, str], ...]] = {}
        # How many evaluations were cut short by a cycle (or the chain limit): a result computed
        # without any cut does not depend on what was being evaluated around it.
        self._cuts = 0
        self._read_memo: Dict[Tuple[int, int, int], Tuple[Optional[str], Optional[List[Value]]]] = {}
        self._ifs_memo: Dict[Tuple[str, int], object] = {}  # what ifs_at reads of each IFS assignment
        # Whether a word may be cut at a bare ``$`` (shell.word_chain): when not, nothing looks
        # for one. ``command`` nodes that are only assignments (such a cut: see _collect).
        self._cut_words = may_cut_words(root, data)
        self.assignment_commands: set = set()  # (start, end) of each
        self._collect(root, nodes)

    @cached_property
    def task_memo(self) -> TaskStringMemo:
        """Task strings (``bash -c "$CMD"``) parsed against these values (``model/steps.py``;
        made when first asked: the values of a task string itself seldom parse one)."""
        return TaskStringMemo()

    # -- collection -------------------------------------------------------------------------
    def _collect(self, root: Node, nodes: Optional[Iterable[Node]] = None) -> None:
        """Every assignment, from ``nodes`` (the tree's nodes of the ``COLLECTED`` types, in walk
        order) or from a walk of the tree."""
        if nodes is None:
            from ..shell import walk

            nodes = walk(root)
        cuts = self._cut_words
        for node in nodes:
            kind = node.type
            if kind == "variable_assignment":
                self._add_assignment(node)
            elif kind == "declaration_command":
                self._add_declaration(node)
            elif kind == "for_statement":
                variable = node.child_by_field_name("variable")
                if variable is not None:
                    name = self.node_text(variable)
                    self._add(Assignment(name, node, None, node_span(variable, self.data), "for"))
            elif kind == "command":
                # only read/mapfile/readarray assign and only set changes allexport: read the
                # command's name once rather than in each
                name_node = node.child_by_field_name("name")
                if name_node is not None:
                    start = name_node.start_byte
                    if cuts and start and self.data[start - 1] == 36 and only_assignments(node, self.data):
                        # ``X=$A/b_$C.d``: the grammar made ``C.d`` a command name (shell.word_chain);
                        # bash runs no command: the assignments are the shell's own
                        self.assignment_commands.add((node.start_byte, node.end_byte))
                        continue
                    command = self.node_text(name_node)
                    if command in ("read", "mapfile", "readarray"):
                        self._add_command_effects(node)
                    elif command == "set":
                        self._set_allexport(node)
                    elif self.context is not None:
                        if command in ("source", "."):
                            self._add_sourced(node)
                        elif command in ("cd", "pushd", "popd"):
                            self._change_directory(node, command)
            elif kind == "unset_command":
                for child in node.named_children:
                    if child.type in ("variable_name", "word"):
                        name = self.node_text(child)
                        self._add(Assignment(name, node, None, node_span(child, self.data), "unset"))

    def commands_run(self, nodes: Iterable[Node]) -> List[Node]:
        """The ``command`` nodes that run a command: not those bash runs as plain assignments
        (``X=$A/b_$C.d``, a word the grammar cut at a bare ``$``: ``assignment_commands``)."""
        skip = self.assignment_commands
        return [node for node in nodes if (node.start_byte, node.end_byte) not in skip]

    def _add(self, assignment: Assignment) -> None:
        if self._allexport and assignment.kind != "unset":
            assignment.exported = True  # ``set -a``: every variable assigned from now on is exported
        self.assignments.setdefault(assignment.name, []).append(assignment)

    def _source_operand(self, node: Node) -> Optional[Node]:
        arguments = node.children_by_field_name("argument")
        return arguments[0] if arguments else None

    def _add_sourced(self, node: Node) -> None:
        """``source FILE`` / ``. FILE``: the file's variables become the script's at this command."""
        from . import sourced as model

        context = self.context
        assert context is not None
        span = node_span(node, self.data)
        operand = self._source_operand(node)
        if operand is None:
            return
        alternatives = self.evaluate(operand)
        entry = model.SourcedFile(span, self.node_text(operand))
        self.sourced.append(entry)
        if len(alternatives) != 1:
            entry.reason = "run-time"
            return
        path, reason, approximate = model.resolve_word(alternatives[0], self.data, self._cwd, context)
        if path is None:
            entry.reason = reason
            return
        entry.approximate = approximate
        data, reason = model.read(path, context)
        if data is None:
            entry.path, entry.reason = path, reason
            return
        from ..shell import parse

        inner_values = Values(data, parse(data).root_node, None, model.nested_context(path, context),
                              (self, span, node), self._cwd, self._allexport)
        entry.path, entry.values, entry.data, entry.nested = path, inner_values, data, inner_values.sourced
        self._cwd = inner_values._cwd  # a ``cd`` in the sourced file moves the batch shell
        self._allexport = inner_values._allexport
        end = len(data) + 1
        for name, assignments in inner_values.assignments.items():
            last = assignments[-1]
            kind = "unset" if last.kind == "unset" and not inner_values._conditional_scopes(last) else "assign"
            self._add(Assignment(name, node, None, span, kind, inner_values.is_exported(name, end), sourced=entry))
        for name in inner_values.exports:
            if name not in inner_values.assignments:
                self.exports.setdefault(name, []).append(Export(name, span))

    def unresolved_source(self, at: int, after: int = -1) -> Optional["SourcedFile"]:
        """The first ``source`` between offsets ``after`` and ``at`` whose file the model could not
        read (or that itself sources one): anything it may set is unknown, not unset, and a value
        the script gave before it may be replaced."""
        for entry in self.sourced:
            if entry.span.start >= at:
                break
            if entry.span.start <= after:
                continue
            if not entry.resolved or entry.values.unresolved_source(len(entry.data) + 1) is not None:
                return entry
        return None

    def _change_directory(self, node: Node, command: str) -> None:
        """Where a ``cd`` leaves the batch shell: a directory the model resolves, else unknown."""
        from . import sourced as model

        arguments = [a for a in node.children_by_field_name("argument") if not self.node_text(a).startswith("-")]
        target: Optional[str] = None
        if command != "popd" and len(arguments) == 1 and not any(a.type in CONDITIONAL_TYPES for a in ancestors(node)):
            alternatives = self.evaluate(arguments[0])
            if len(alternatives) == 1:
                assert self.context is not None
                path, _reason, approximate = model.resolve_word(alternatives[0], self.data, self._cwd, self.context)
                if path is not None:
                    submit = self.context.submit_dir
                    target = model.SUBMIT if model.SUBMISSION in approximate and path == submit else path
        self._cwd = target

    def outer_values(self, name: str, span: Span, quote: str, depth: int) -> Optional[List[Value]]:
        """A sourced file's ``$NAME`` that the file does not set: the sourcing script's value at
        its ``source`` command (None when this is no sourced file)."""
        if self.outer is None:
            return None
        values, at, node = self.outer
        found = values._substitute(name, at, node, depth + 1, "")
        unquoted = quote == ""
        out = []
        for value in found:
            pieces = []
            for p in value.pieces:
                if p.known:
                    pieces.append(Piece(p.text, None, p.quote, True, p.name, False, (span,), p.split or unquoted))
                else:
                    pieces.append(Piece("", span, quote, False, p.name or name, False, (span,), unquoted))
            out.append(Value(tuple(pieces)))
        return out

    def sourced_values(self, assignment: Assignment) -> List[Value]:
        """What a sourced file leaves in ``assignment.name``, as values of this script: the file's
        bytes are not this script's, so no piece keeps a span (no fix edits through them)."""
        entry = assignment.sourced
        assert entry is not None and entry.values is not None
        found = entry.values.lookup(assignment.name, len(entry.data) + 1)
        out = []
        for value in found:
            out.append(Value(tuple(
                Piece(p.text, None, p.quote, p.known, p.name or (None if p.known else assignment.name))
                for p in value.pieces)))
        return out or [Value((Piece("", None, known=False, name=assignment.name),))]

    def _set_allexport(self, node: Node) -> None:
        """``set -a`` / ``set -o allexport`` (and ``+a`` / ``+o allexport``), also bundled (``set -ae``)."""
        name_node = node.child_by_field_name("name")
        if name_node is None or self.node_text(name_node) != "set":
            return
        arguments = [self.node_text(c) for c in node.children_by_field_name("argument")]
        i = 0
        while i < len(arguments):
            text = arguments[i]
            i += 1
            if text in ("--", "-") or len(text) < 2 or text[0] not in "-+":
                break
            on = text[0] == "-"
            for letter in text[1:]:
                if letter == "a":
                    self._allexport = on
                elif letter == "o" and i < len(arguments):
                    if arguments[i] == "allexport":
                        self._allexport = on
                    i += 1

    def _add_assignment(self, node: Node, declared_by: Optional[str] = None, exported: bool = False) -> None:
        parent = node.parent
        if parent is not None:
            holder = parent.type
            # A prefix assignment (``X=1 cmd``) lives only in that command's environment.
            if holder == "command" and (parent.start_byte, parent.end_byte) not in self.assignment_commands:
                return
            if holder == "declaration_command" and declared_by is None:
                return  # ``export X=1`` / ``local X=1``: recorded once, by ``_add_declaration``
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = self.node_text(name_node)
        if name_node.type == "subscript":
            base = name_node.child_by_field_name("name")
            if base is None:
                return
            name = self.node_text(base)
        value = node.child_by_field_name("value")
        data = self.data
        start, end = node.start_byte, node.end_byte
        if value is not None and value.type == "array":
            kind = "array"
        elif (
            data.find(b"+=", start, end if value is None else value.start_byte) >= 0  # (else no such token)
            and next((c.type for c in node.children if c.type in ("=", "+=")), "=") == "+="
        ):
            kind = "append"
        else:
            kind = "assign"
        if start < end and (data[start] in _LEADING_BLANKS or data[end - 1] in _TRAILING_BLANKS):
            span = node_span(node, data)
        else:
            span = Span(start, end)  # (node_span, without a call when no blank)
        if value is not None and self._cut_words and data[value.end_byte - 1] == 36:
            chain = word_chain(value, self.data)
            if chain:  # a value the grammar cut at a bare ``$``: the assignment spans all of it
                span = Span(span.start, chain[-1].end_byte)
        self._add(Assignment(name, node, value, span, kind, exported, declared_by))

    def _add_declaration(self, node: Node) -> None:
        keyword = node.children[0].type if node.children else ""
        flags = [self.node_text(c) for c in node.named_children if c.type == "word" and self.node_text(c).startswith("-")]
        exported = keyword == "export" or any("x" in f for f in flags)
        for child in node.named_children:
            if child.type == "variable_assignment":
                self._add_assignment(child, keyword, exported)
            elif child.type == "variable_name" and exported:
                name = self.node_text(child)
                self.exports.setdefault(name, []).append(Export(name, node_span(child, self.data)))

    def _add_command_effects(self, node: Node) -> None:
        """``read [-r] [-a] A B …`` and ``mapfile``/``readarray`` assign unknown values."""
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        command = self.node_text(name_node)
        if command not in ("read", "mapfile", "readarray"):
            return
        names: List[Node] = []
        skip_next = False
        for child in node.children_by_field_name("argument"):
            text = self.node_text(child)
            if skip_next:
                skip_next = False
                continue
            if text.startswith("-"):
                if text in ("-d", "-n", "-N", "-p", "-t", "-u", "-i", "-C", "-c", "-O", "-s"):
                    skip_next = True
                continue
            names.append(child)
        for child in names:
            name = self.node_text(child)
            if name.replace("_", "a").isalnum():
                self._add(Assignment(name, node, None, node_span(child, self.data), "read"))

    # -- queries ----------------------------------------------------------------------------
    def node_text(self, node: Node) -> str:
        """The text of a node of this tree."""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def defined(self, name: str) -> bool:
        return name in self.assignments

    def assignments_before(self, name: str, at: int) -> List[Assignment]:
        """The assignments of ``name`` made before offset ``at`` (not one whose span holds it)."""
        found = self.assignments.get(name)
        if not found:
            return []
        # (``a.start < at and not a.span.start <= at < a.span.end``, without the property call)
        return [a for a in found if a.span.start < at and a.span.end <= at]

    def is_exported(self, name: str, at: Optional[int] = None) -> bool:
        """Whether the variable is exported by the batch shell before offset ``at`` (anywhere if None)."""
        limit = len(self.data) + 1 if at is None else at
        if any(a.exported and a.start < limit for a in self.assignments.get(name, [])):
            return True
        return any(e.span.start < limit for e in self.exports.get(name, []))

    def lookup(self, name: str, at: int, use: Optional[Node] = None, depth: int = 0) -> List[Value]:
        """Every value ``$name`` may have at byte offset ``at``; the most recent one last.

        An empty list means the script never assigns it before ``at`` (an environment variable).
        """
        if depth > MAX_DEPTH:
            return []
        candidates = self.assignments_before(name, at)
        if not candidates:
            return []
        use_scopes: Optional[set] = None  # the use's enclosing constructs, built when first needed
        # Walk back from the latest assignment: an unconditional one (relative to the use)
        # ends the search; conditional ones add alternatives.
        chosen: List[Assignment] = []
        for assignment in reversed(candidates):
            chosen.append(assignment)
            scopes = self._conditional_scopes(assignment)
            if not scopes:
                break  # inside no conditional construct at all: unconditional wherever the use is
            if use_scopes is None:
                use_scopes = _use_scopes(use)
            if use_scopes.__class__ is tuple:  # the use's bounds: an enclosing construct holds them
                use_start, use_end = use_scopes
                if all(start <= use_start and use_end <= end for start, end, _kind in scopes):
                    break
            elif not any(key not in use_scopes for key in scopes):
                break
        else:
            chosen.append(None)  # type: ignore[arg-type]  # the variable may be unset (environment)
        alternatives: List[Value] = []
        for assignment in reversed(chosen):
            if assignment is None:
                alternatives.append(_unknown_value(None, "", name))
                continue
            alternatives.extend(self._assignment_values(assignment, depth))
            if len(alternatives) > MAX_ALTERNATIVES:
                # past the cap the oldest values are not followed: one unknown stands for them
                dropped = _unknown_value(None, "", name)
                alternatives = [dropped] + alternatives[-(MAX_ALTERNATIVES - 1) :]
        return alternatives

    def ifs_at(self, node: Node) -> Optional[str]:
        """The IFS the expansions of the command at ``node`` split on: bash's default unless the
        script assigns IFS before it (bash ignores an IFS from the environment; assignments in a
        function count only inside it), None when the alternatives disagree or are not known."""
        assignments = self.assignments.get("IFS")
        if not assignments:
            return DEFAULT_IFS
        at = node.start_byte
        scopes: Optional[tuple] = None  # the functions and constructs around the use, built when first needed
        candidates = []
        for assignment in assignments:
            if assignment.start >= at or assignment.in_string or assignment.sourced is not None:
                continue
            owner = self._function_of(assignment)
            if owner is not None:
                if scopes is None:
                    scopes = _scope_sets(node)
                if owner not in scopes[0]:
                    continue
            candidates.append(assignment)
        texts = set()
        for assignment in reversed(candidates):
            found = self._ifs_texts(assignment)
            if found is None:
                return None
            texts.update(found)
            conditional = self._conditional_scopes(assignment)
            if not conditional:
                break
            if scopes is None:
                scopes = _scope_sets(node)
            if not any(key not in scopes[1] for key in conditional):
                break
        else:
            texts.add(DEFAULT_IFS)  # no assignment runs for certain before the use
        return texts.pop() if len(texts) == 1 else None

    def _function_of(self, assignment: Assignment) -> Optional[Tuple[int, int]]:
        """The bounds of the function an assignment is made in (None: none), computed once."""
        memo = self._ifs_memo
        key = ("function", id(assignment))
        if key in memo:
            return memo[key]
        owner = next((a for a in ancestors(assignment.node) if a.type == "function_definition"), None)
        found = memo[key] = None if owner is None else (owner.start_byte, owner.end_byte)
        return found

    def _ifs_texts(self, assignment: Assignment) -> Optional[Tuple[str, ...]]:
        """The IFS values an assignment of IFS may set, or None when one is not known (computed
        once, unless asked while an assignment is being evaluated: a cycle may cut it short)."""
        memo = self._ifs_memo
        key = ("texts", id(assignment))
        if key in memo:
            return memo[key]
        found: Optional[Tuple[str, ...]]
        if assignment.kind == "unset":
            found = (DEFAULT_IFS,)
        elif assignment.kind != "assign":
            found = None
        elif assignment.value_node is None:
            found = ("",)
        else:
            texts = []
            for value in self._assignment_values(assignment, 0):
                text = "".join(p.text if p.known else DEFAULT_IFS if p.name == "IFS" else "\0" for p in value.pieces)
                if "\0" in text:
                    texts = None
                    break
                texts.append(text)
            found = None if texts is None else tuple(texts)
        if not self._evaluating:
            memo[key] = found
        return found

    @cached_property
    def globbing(self) -> bool:
        """Pathname expansion is on: the script never turns it off (``set -f``, ``set -o noglob``)."""
        return not noglob(self.data)

    def _conditional(self, assignment: Assignment, use_scopes: set) -> bool:
        return any(key not in use_scopes for key in self._conditional_scopes(assignment))

    def _conditional_scopes(self, assignment: Assignment) -> Tuple[Tuple[int, int, str], ...]:
        """The conditional constructs around an assignment (computed once per assignment)."""
        found = self._scopes_memo.get(id(assignment))
        if found is None:
            found = tuple(
                (node.start_byte, node.end_byte, node.type)
                for node in ancestors(assignment.node)
                if node.type in CONDITIONAL_TYPES
            )
            self._scopes_memo[id(assignment)] = found  # assignments live as long as these values
        return found

    def _assignment_values(self, assignment: Assignment, depth: int) -> List[Value]:
        """The values an assignment gives its variable (memoised; a fresh depth budget each, so
        a long chain of assignments is followed to its start)."""
        key = (assignment.span.start, assignment.span.end, assignment.kind, assignment.name)
        found = self._assignment_memo.get(key)
        if found is not None:
            return found
        if key in self._evaluating or len(self._evaluating) > MAX_CHAIN:
            self._cuts += 1
            return [Value((Piece("", None, known=False, name=assignment.name),))]
        self._evaluating.add(key)
        try:
            found = self._compute_assignment_values(assignment, 0)
        finally:
            self._evaluating.discard(key)
        if any(len(value.pieces) > MAX_PIECES for value in found):
            # ``T="$T $T"`` doubles at every link: past this size the value is not worth knowing
            found = [Value((Piece("", None, known=False, name=assignment.name),))]
        self._assignment_memo[key] = found
        return found

    def _compute_assignment_values(self, assignment: Assignment, depth: int) -> List[Value]:
        name = assignment.name
        if assignment.kind in ("for", "read"):
            if assignment.kind == "for":
                values = self._for_values(assignment.node, depth)
            else:
                values = self._read_values(assignment, depth)
            return values or [_unknown_value(None, "", name)]
        if assignment.kind == "unset":
            return [Value(())]
        if assignment.sourced is not None:
            return self.sourced_values(assignment)
        value_node = assignment.value_node
        if value_node is None:
            base = [Value(())]
        elif assignment.kind == "array":
            base = [self._array_text(value_node, depth)]
            if appends(assignment.node):  # ``A+=(…)``: the elements before it, then these
                before = self.lookup(name, assignment.start, assignment.node, depth + 1) or [_unset(name)]
                return _product([before, [Value((Piece(" ", None),))], base])
        else:
            base = self.evaluate(value_node, depth=depth + 1, assignment=True)
        if assignment.kind == "append":
            before = self.lookup(name, assignment.start, assignment.node, depth + 1) or [_unset(name)]
            return _product([before, base])
        return base

    def _array_text(self, node: Node, depth: int) -> Value:
        """An array as its elements joined by spaces (what ``${A[*]}`` gives)."""
        pieces: List[Piece] = []
        for index, element in enumerate(self.words_of(node.named_children)):
            if index:
                pieces.append(Piece(" ", None))
            alternatives = self.evaluate(element, depth=depth + 1)
            pieces.extend(alternatives[-1].pieces if alternatives else ())
        return Value(tuple(pieces))

    def array_elements(self, name: str, at: int) -> Optional[List[Value]]:
        """The elements of the array assigned last before ``at`` (after the elements ``A+=(…)``
        appends to it), or None when unknown."""
        for assignment in reversed(self.assignments_before(name, at)):
            if assignment.kind == "array" and assignment.value_node is not None:
                out = []
                for element in self.words_of(assignment.value_node.named_children):
                    alternatives = self.evaluate(element)
                    if not alternatives:
                        return None
                    out.append(alternatives[-1])
                if appends(assignment.node):
                    before = self.array_elements(name, assignment.start)
                    if before is None:
                        return None
                    out = before + out
                return out
            return None
        return None

    def _read_values(self, assignment: Assignment, depth: int) -> List[Value]:
        """``[IFS=,] read [-r] A B C <<< WORD``: the field of WORD that ``assignment`` receives.

        One alternative per alternative of WORD (so a read of a loop variable keeps the loop's
        iterations, and the fields of one iteration stay together). Anything else read
        (a file, a pipe, ``-a``, an unknown WORD or IFS) is unknown: [].
        """
        node = assignment.node
        if node.type != "command":
            return []
        herestring = next((c for c in node.children if c.type == "herestring_redirect"), None)
        if herestring is None or not herestring.named_children:
            return []
        raw = False
        names: List[str] = []
        for child in node.children_by_field_name("argument"):
            text = self.node_text(child)
            if text.startswith("-"):
                if text != "-r":
                    return []  # -a, -d, -n …: not a plain one-line field split
                raw = True
                continue
            names.append(text)
        if assignment.name not in names:
            return []
        index = names.index(assignment.name)
        # IFS and the word read are the same for every name of the command: read A B C asks for
        # them three times. Computed once when nothing in them was cut short by a cycle.
        key = (node.start_byte, node.end_byte, depth)
        shared = self._read_memo.get(key)
        if shared is None:
            cuts = self._cuts
            ifs: Optional[str] = " \t\n"
            for child in node.children:
                if child.type == "variable_assignment":
                    name_node = child.child_by_field_name("name")
                    value_node = child.child_by_field_name("value")
                    if name_node is not None and self.node_text(name_node) == "IFS":
                        found = self.evaluate(value_node, depth + 1) if value_node is not None else [Value(())]
                        ifs = found[-1].text if len(found) == 1 and found[-1].known else None
                        break
            else:
                found = self.lookup("IFS", node.start_byte, node, depth + 1)
                if found:
                    ifs = found[-1].text if len(found) == 1 and found[-1].known else None
            words = self.evaluate(herestring.named_children[0], depth + 1) if ifs is not None else None
            shared = (ifs, words)
            if self._cuts == cuts:
                self._read_memo[key] = shared
        ifs, words = shared
        if ifs is None or words is None:
            return []
        out: List[Value] = []
        for value in words:
            field = _read_field(value, ifs, index, len(names), raw)
            if field is None:
                return []
            out.append(field)
        return out

    def _for_values(self, node: Node, depth: int) -> List[Value]:
        values: List[Value] = []
        for child in self.words_of(node.children_by_field_name("value")):
            text = self.data[child.start_byte : child.end_byte]
            if text.find(b"[@]") >= 0 or text.find(b"[*]") >= 0:  # (see _QUOTED_ESCAPABLE)
                array_name = _array_name(child, self.data)
                elements = self.array_elements(array_name, node.start_byte) if array_name else None
                if elements is None:
                    return []
                values.extend(elements)
                continue
            alternatives = self.evaluate(child, depth=depth + 1)
            if not alternatives:
                return []
            value = alternatives[-1]
            if child.type in ("word", "number"):
                values.append(value)
            elif value.known and any(p.split for p in value.pieces):
                values.extend(split_value(value))
            else:
                values.append(value)
        key = node.start_byte
        return [
            Value(
                tuple(
                    Piece(p.text, p.span, p.quote, p.known, p.name, p.escaped, p.via, p.split, p.task, p.loop + ((key, index),))
                    for p in value.pieces
                )
            )
            for index, value in enumerate(values[:MAX_ALTERNATIVES])
        ]

    # -- evaluation ----------------------------------------------------------------------------
    def words_of(self, nodes: Sequence[Node]) -> Sequence[Node]:
        """The nodes that start a shell word among sibling word nodes (array elements, a for
        loop's list): a node continuing a word the grammar cut at a bare ``$`` (``$A/b_$`` +
        ``C.d``, see ``shell.word_chain``) is skipped; evaluating the first gives the whole word.
        A comment between the elements of an array literal (``--nnodes=2  # …``) is no word."""
        if any(node.type == "comment" for node in nodes):
            nodes = [node for node in nodes if node.type != "comment"]
        if not self._cut_words:
            return nodes
        return list(self._words_of(nodes))

    def _words_of(self, nodes: Iterable[Node]) -> Iterator[Node]:
        data = self.data
        cut_end = -1
        for node in nodes:
            if node.start_byte < cut_end:
                continue
            yield node
            if data[node.end_byte - 1] == 36 and node.type == "concatenation":
                chain = word_chain(node, data)
                if chain:
                    cut_end = chain[-1].end_byte

    def evaluate(self, node: Node, depth: int = 0, quote: str = "", assignment: bool = False) -> List[Value]:
        """Every value a word node may evaluate to (most likely last), before word splitting."""
        if depth > MAX_DEPTH:
            return [Value((Piece("", node_span(node, self.data), known=False),))]
        how = _EVALUATION.get(node.type)  # (one look-up rather than a test per kind)
        if how is None:  # a plain word, a number, a name…, or anything else: its text as literal
            return [_value(tuple(self._unquoted_literal(node, quote)))]
        return how(self, node, depth, quote)

    def _raw_string(self, node: Node, depth: int, quote: str) -> List[Value]:
        inner = quoted_interior(node, self.data)
        return [Value((Piece(self._slice(inner), inner, "'"),))]

    def _ansi_c_string(self, node: Node, depth: int, quote: str) -> List[Value]:
        inner = quoted_interior(node, self.data)
        raw = self._slice(inner)
        if "\\" in raw:
            try:
                decoded = raw.encode("latin-1", errors="backslashreplace").decode("unicode_escape")
            except UnicodeDecodeError:
                decoded = raw
            return [Value((Piece(decoded, inner, "$'", escaped=True),))]
        return [Value((Piece(raw, inner, "$'"),))]

    def _command_name(self, node: Node, depth: int, quote: str) -> List[Value]:
        return self._sequence(node.children, depth, quote)

    def _concatenation(self, node: Node, depth: int, quote: str) -> List[Value]:
        data = self.data
        if data[node.end_byte - 1] == 36:  # "$": a bare one may end it (see _parts)
            chain = word_chain(node, data)
            if chain:
                return self._cut_word(node, chain, depth, quote)
            return self._parts(node, depth, quote)
        return self._sequence(node.children, depth, quote)

    def _run_time(self, node: Node, depth: int, quote: str) -> List[Value]:
        """``$(…)``, ``$((…))``, ``<(…)``, ``{a,b}``: text only known at run time."""
        return [Value((Piece("", node_span(node, self.data), quote, known=False),))]

    def _array_value(self, node: Node, depth: int, quote: str) -> List[Value]:
        return [self._array_text(node, depth)]

    def _slice(self, span: Span) -> str:
        return self.data[span.start : span.end].decode("utf-8", errors="replace")

    def _unquoted_literal(self, node: Node, quote: str) -> List[Piece]:
        data = self.data
        start, end = node.start_byte, node.end_byte  # (node_span, without a call when no blank)
        if start < end and (data[start] in _LEADING_BLANKS or data[end - 1] in _TRAILING_BLANKS):
            span = node_span(node, data)
            start, end = span.start, span.end
        return self._literal_run(start, end, quote or "")

    def _literal_pieces(self, start: int, end: int, quote: str) -> Tuple[Piece, ...]:
        """``tuple(self._literal_run(start, end, quote))``, for ``start < end``: a literal part of
        a string as ``_product`` takes it (one value, bound to no loop iteration), without the
        value and the list of alternatives around it that ``_product`` would only unwrap."""
        data = self.data
        if data.find(b"\\", start, end) < 0:  # no escape (most runs): one piece
            return (_literal(data[start:end].decode("utf-8", errors="replace"), _span(start, end), quote),)
        return tuple(self._literal_run(start, end, quote))

    def _literal_run(self, start: int, end: int, quote: str) -> List[Piece]:
        """Literal source bytes [start, end) as pieces, resolving backslash escapes.

        Unquoted: a backslash quotes any character; backslash-newline disappears.
        Double-quoted: it quotes only ``$ ` " \\`` and newline; elsewhere it stays.
        """
        data = self.data
        if data.find(b"\\", start, end) < 0:  # no escape (most runs): one piece, or none
            if end > start:
                return [_literal(data[start:end].decode("utf-8", errors="replace"), _span(start, end), quote)]
            return []
        pieces: List[Piece] = []
        run_start = start
        i = start
        if quote == "":
            escapable = None
        elif quote == "<<":  # a here-document body: ``"`` is not special
            escapable = _HEREDOC_ESCAPABLE
        else:
            escapable = _QUOTED_ESCAPABLE

        def flush(upto: int) -> None:
            if upto > run_start:
                pieces.append(_literal(data[run_start:upto].decode("utf-8", errors="replace"), _span(run_start, upto), quote))

        while i < end:
            i = data.find(b"\\", i, end)  # jump to the next backslash: the rest is plain text
            if i < 0:
                break
            if i + 1 < end:
                if escapable is None or data[i + 1] in escapable:
                    nxt = data[i + 1 : i + 2]
                    flush(i)
                    if nxt == b"\n":
                        pieces.append(_literal("", _span(i, i + 2), quote, True))
                    elif nxt == b"\r" and data[i + 2 : i + 3] == b"\n":
                        pieces.append(_literal("", _span(i, i + 3), quote, True))
                        i += 1
                    else:
                        pieces.append(_literal(nxt.decode("latin-1"), _span(i, i + 2), quote, True))
                    i += 2
                    run_start = i
                    continue
            i += 1
        flush(end)
        return pieces

    def _double_quoted(self, node: Node, depth: int, quote: str = "") -> List[Value]:
        """A double-quoted string (``quote``, the quoting around it, changes nothing inside)."""
        interior = quoted_interior(node, self.data)
        inner_start, inner_end = interior.start, interior.end
        parts: List[List[Value]] = []
        position = inner_start
        data = self.data
        for child in node.named_children:
            if child.type == "string_content":
                continue  # (read with the text around the expansions)
            start, end = child.start_byte, child.end_byte  # (node_span, without a call when no blank)
            if start < end and (data[start] in _LEADING_BLANKS or data[end - 1] in _TRAILING_BLANKS):
                child_span = node_span(child, data)
                start, end = child_span.start, child_span.end
            if start > position:
                parts.append(self._literal_pieces(position, start, '"'))
            parts.append(self.evaluate(child, depth + 1, '"'))
            position = end
        if inner_end > position:
            parts.append(self._literal_pieces(position, inner_end, '"'))
        if not parts:
            return [Value(())]
        return _product(parts)

    def _heredoc(self, node: Node, depth: int, quote: str = "") -> List[Value]:
        """A here-document body: literal when its delimiter is quoted (``<<'EOF'``), else expanded
        like a double-quoted string in which a backslash quotes only ``$ ` \\`` and newline.
        Pieces of an unquoted body have quote ``"<<"``; of a quoted one, ``"'"``."""
        start, end = node.start_byte, node.end_byte
        redirect = node.parent
        delimiter = None
        if redirect is not None:
            delimiter = next((c for c in redirect.children if c.type == "heredoc_start"), None)
        if delimiter is not None and any(ch in self.node_text(delimiter) for ch in "'\"\\"):
            span = Span(start, end)
            return [Value((Piece(self._slice(span), span, "'"),) if end > start else ())]
        parts: List[List[Value]] = []
        position = start
        for child in node.named_children:
            if child.type == "heredoc_content":
                continue
            child_span = node_span(child, self.data)
            if child_span.start > position:
                parts.append(self._literal_pieces(position, child_span.start, "<<"))
            parts.append(self.evaluate(child, depth + 1, "<<"))
            position = child_span.end
        if end > position:
            parts.append(self._literal_pieces(position, end, "<<"))
        return _product(parts) if parts else [Value(())]

    def _sequence(self, children: Sequence[Node], depth: int, quote: str) -> List[Value]:
        parts = [self.evaluate(c, depth + 1, quote) for c in children if c.is_named]
        return _product(parts) if parts else [Value(())]

    def _parts(self, node: Node, depth: int, quote: str) -> List[Value]:
        """A concatenation's own parts, and the bare ``$`` token that may end it (an unnamed node
        ``_sequence`` skips): a literal ``$`` (``a$``; ``$A/$.d``, a word the grammar cut before
        ``.d``), except before a name, where the next node of a cut word holds the expansion
        (``_cut_word``). (``$"…"``, a translated string, gives a bare ``$`` inside: no text.)"""
        values = self._sequence(node.children, depth, quote)
        data = self.data
        end = node.end_byte
        if data[end - 1] != 36:
            return values
        last = node.child(node.child_count - 1)
        if last is None or last.type != "$" or (end < len(data) and parameter_length(data, end)):
            return values
        dollar = Piece("$", Span(end - 1, end), quote)
        return [_value(value.pieces + (dollar,)) for value in values]

    def _cut_word(self, node: Node, chain: Sequence[Node], depth: int, quote: str) -> List[Value]:
        """One shell word the grammar cut at bare ``$`` tokens: ``node`` (ending with the ``$``)
        and its continuations (``shell.word_chain``). Each continuation starting with a name
        begins with the expansion of that name, evaluated like ``${NAME}`` (span: the ``$NAME``
        bytes); the rest of it is evaluated as written."""
        data = self.data
        parts = [self._parts(node, depth, quote)]
        for following in chain:
            word = inner(following)
            start = following.start_byte
            length = parameter_length(data, start)
            if length:
                name = data[start : start + length].decode("utf-8", errors="replace")
                parts.append(self._substitute(name, Span(start - 1, start + length), word, depth, quote))
            if word.type == "concatenation":
                rest = self._parts(word, depth, quote)  # its own cut: the next link
            else:
                rest = self.evaluate(word, depth + 1, quote)
            if length:
                rest = [_drop_prefix(value, length) for value in rest]
            parts.append(rest)
        return _product(parts)

    def _expansion(self, node: Node, depth: int, quote: str) -> List[Value]:
        span = _node_span(node, self.data)
        for child in node.named_children:
            if child.type in _NAMES:
                return self._substitute(self.node_text(child), span, node, depth, quote)
        return [_unknown_value(span, quote, None)]

    def _substitute(self, name: str, span: Span, node: Node, depth: int, quote: str) -> List[Value]:
        found = self.lookup(name, span.start, node, depth + 1) if name in self.assignments else None
        if not found:  # (None: never assigned by the script, ``$SLURM_JOB_ID``: lookup finds nothing)
            if self.outer is not None:
                found = self.outer_values(name, span, quote, depth)
                if found:
                    return found
            return [_unknown_value(span, quote, name)]
        unquoted = quote == ""
        site = (span,)
        # Alternatives share most of their pieces (``if …; then X="$X --a"; fi`` gives two values
        # with one prefix, a ``CMD="$CMD …"`` chain in branches many): each piece object is
        # carried to this site once, whatever the number of alternatives holding it, and each
        # value is then mapped piece by piece without a Python step per piece (one of the
        # model's hottest paths).
        if len(found) == 1:  # one value (most): no piece to share with another
            pieces = found[0].pieces
            if len(pieces) < 2 or len(set(map(id, pieces))) == len(pieces):
                return [_value(tuple([
                    _carried_known(p, site, unquoted) if p.known else _carried_unknown(p, span, quote, name, site, unquoted)
                    for p in pieces
                ]))]
        originals: Dict[int, Piece] = {}
        for value in found:
            originals.update(zip(map(id, value.pieces), value.pieces))
        carried: Dict[int, Piece] = {}
        for key, p in originals.items():
            if p.known:
                carried[key] = _carried_known(p, site, unquoted)
            else:
                carried[key] = _carried_unknown(p, span, quote, name, site, unquoted)
        get = carried.__getitem__
        return [_value(tuple(map(get, map(id, value.pieces)))) for value in found]  # (an empty value is known)

    def _braced_expansion(self, node: Node, depth: int, quote: str) -> List[Value]:
        span = _node_span(node, self.data)
        children = [c for c in node.children if c.type not in ("${", "}")]
        if not children:
            return [_unknown_value(span, quote, None)]
        first = children[0]
        if first.type not in ("variable_name", "special_variable_name"):
            if first.type == "subscript":
                base = first.child_by_field_name("name")
                index = first.child_by_field_name("index")
                if base is not None and index is not None and self.node_text(index) in ("@", "*"):
                    name = self.node_text(base)
                    found = self.lookup(name, span.start, node, depth + 1)
                    if found:
                        return self._substitute(name, span, node, depth, quote)
                    return [_unknown_value(span, quote, name)]
            return [_unknown_value(span, quote, None)]  # ${#X}, ${!X}, …
        name = self.node_text(first)
        rest = children[1:]
        if not rest:
            return self._substitute(name, span, node, depth, quote)
        operator = rest[0].type
        operand = [c for c in rest[1:] if c.is_named]
        found = self._substitute(name, span, node, depth, quote)
        is_unknown = len(found) == 1 and not found[0].known and len(found[0].pieces) == 1
        if operator in (":-", "-", ":=", "="):
            default = self._sequence(operand, depth, quote) if operand else [Value(())]
            if is_unknown:
                # Unset in the script: the environment may provide it, else the default.
                unknown_named = _unknown_value(span, quote, name)
                if name in ALWAYS_SET:
                    return [unknown_named]  # ``${SLURM_NNODES:-1}``: Slurm sets it in every job
                return [unknown_named] + default
            return found
        if operator in (":?", "?"):
            if is_unknown:
                return [_unknown_value(span, quote, name)]
            return found
        if operator in (":+", "+"):
            return [_unknown_value(span, quote, None)]
        return [_unknown_value(span, quote, name)]

    # -- words as the shell splits them --------------------------------------------------------
    def plain_first_word(self, nodes: Sequence[Node]) -> Optional[str]:
        """The text of the first word ``command_words(nodes)`` gives, when it comes from a plain
        word node (its fast path: no backslash, not the continuation of a cut word); "" when
        there are no nodes; else None (evaluate the words to know)."""
        if not nodes:
            return ""
        node = nodes[0]
        if node.type not in _PLAIN_WORDS:
            return None
        data = self.data
        start, end = node.start_byte, node.end_byte
        if start < end and (data[start] in _LEADING_BLANKS or data[end - 1] in _TRAILING_BLANKS):
            span = node_span(node, data)
            start, end = span.start, span.end
        if start >= end or (self._cut_words and start and data[start - 1] == 36):
            return None
        if data.find(b"\\", start, end) >= 0:
            return None
        return data[start:end].decode("utf-8", errors="replace")

    def command_words(self, nodes: Iterable[Node]) -> List["Word"]:
        """The argv a list of argument nodes produces (primary alternative, after splitting)."""
        words = Argv()
        data = self.data
        # A node right after a ``$`` may continue a word the grammar cut at a bare ``$``
        # (shell.word_chain): the one before it in ``nodes`` (which then evaluated to the whole
        # word, up to ``cut_end``), or a prefix assignment or a here-string (``X=$A/b_$C.d cmd``).
        # It is no argument of its own.
        cut_end = -1
        cuts = self._cut_words  # else no word of the tree is cut: nothing to look for
        for node in nodes:
            kind = node.type
            if kind in _PLAIN_WORDS:
                # Fast path for the most common argument, a plain word: one literal piece (what
                # evaluate, split_value and the loop below make of it, without the detours).
                start, end = node.start_byte, node.end_byte  # (node_span, without a call when no blank)
                if start < end and (data[start] in _LEADING_BLANKS or data[end - 1] in _TRAILING_BLANKS):
                    span = node_span(node, data)
                    start, end = span.start, span.end
                if cuts and data[start - 1] == 36 and start:
                    cut_end = self._continuation_end(node, start, cut_end)
                    if cut_end > start:
                        continue
                if start < end and data.find(b"\\", start, end) < 0:
                    words.append(_plain_word(data[start:end].decode("utf-8", errors="replace"), node, start, end))
                    continue
            elif cuts:
                start = node.start_byte
                if data[start - 1] == 36 and start:
                    cut_end = self._continuation_end(node, start, cut_end)
                    if cut_end > start:
                        continue
            if kind == "simple_expansion":
                word = self._environment_word(node)
                if word is not None:
                    words.append(word)
                    continue
            elements = self._array_splat(node)
            if elements is not None:
                span = _node_span(node, self.data)
                words.extend(Word(element, node, span, None) for element in elements)
                continue
            alternatives = self.evaluate(node)
            value = alternatives[-1] if alternatives else Value(())
            span = _node_span(node, self.data)
            if cuts and kind == "concatenation" and data[node.end_byte - 1] == 36:
                chain = word_chain(node, data)
                if chain:  # evaluate read them all as this one word
                    cut_end = chain[-1].end_byte
                    span = Span(span.start, cut_end)
            before = len(words)
            ifs = DEFAULT_IFS if "IFS" not in self.assignments else self.ifs_at(node)
            for part in split_value(value, ifs, glob=self.globbing):
                words.append(_word(part, node, span, alternatives if len(alternatives) > 1 else None, ifs))
            if not value.pieces and node.type in ("string", "raw_string", "translated_string", "ansi_c_string"):
                words.append(Word(value, node, span, None))
            elif len(words) == before and len(alternatives) > 1:
                # ``$OPTS`` whose most recent value is empty: no word, but the other values stay
                words.add_gap(Gap(before, node, span, alternatives, ifs))
        return words

    def _continuation_end(self, node: Node, start: int, cut_end: int) -> int:
        """For an argument node starting right after a ``$``: the end of the cut word it continues
        (``cut_end`` when the previous argument began it), or -1."""
        if start < cut_end:
            return cut_end
        return self._continued_from_outside(node) or -1

    def _continued_from_outside(self, node: Node) -> int:
        """When ``node`` (an argument node, or the word of the command name) continues a word the
        grammar cut at a bare ``$`` in the prefix assignment or the here-string right before it:
        the end of that word; else 0."""
        data = self.data
        holder = node.parent if node.parent is not None and node.parent.type == "command_name" else node
        previous = holder.prev_sibling
        if (
            previous is not None
            and previous.end_byte == holder.start_byte
            and previous.type in ("variable_assignment", "herestring_redirect", "file_redirect")
        ):
            chain = word_chain(previous, data)
            if chain and chain[0] == holder:
                return chain[-1].end_byte
        return 0

    def _environment_word(self, node: Node) -> Optional["Word"]:
        """Fast path for ``$NAME`` (a simple_expansion) of a variable the script never assigns
        (``$SLURM_JOB_ID``): the one unknown piece evaluate gives, as its own word; else None."""
        for child in node.named_children:
            if child.type in ("variable_name", "special_variable_name"):
                name = self.node_text(child)
                if name in self.assignments:
                    return None
                span = _node_span(node, self.data)
                return _word(_unknown_value(span, "", name), node, span, None, DEFAULT_IFS)
        return None

    def _array_splat(self, node: Node) -> Optional[List[Value]]:
        """``"${A[@]}"`` (or unquoted ``${A[@]}``) of a known array: one word per element."""
        if self.data.find(b"@", node.start_byte, node.end_byte) < 0:
            return None  # no ``@`` subscript in it (most words: nothing to look at)
        target = node
        if node.type == "string":
            named = [c for c in node.named_children]
            if len(named) != 1:
                return None
            target = named[0]
        if target.type != "expansion":
            return None
        subscript = next((c for c in target.named_children if c.type == "subscript"), None)
        if subscript is None or len(target.named_children) != 1:
            return None
        base = subscript.child_by_field_name("name")
        index = subscript.child_by_field_name("index")
        if base is None or index is None or self.node_text(index) != "@":
            return None
        elements = self.array_elements(self.node_text(base), node.start_byte)
        if elements is None:
            return None
        via = _node_span(node, self.data)
        return [
            Value(
                tuple(
                    Piece(p.text, p.span, p.quote, p.known, p.name, p.escaped, p.via + (via,), p.split, p.task, p.loop)
                    for p in element.pieces
                )
            )
            for element in elements
        ]


_PLAIN_WORDS = frozenset({"word", "number"})
_NAMES = frozenset({"variable_name", "special_variable_name"})
# The bytes ``node_span`` takes off a node's start and end.
_LEADING_BLANKS = frozenset(b" \t\r\n")
_TRAILING_BLANKS = frozenset(b" \t")
# How ``Values.evaluate`` reads each kind of node (any other kind: its text as literal).
_EVALUATION = {
    "raw_string": Values._raw_string,
    "ansi_c_string": Values._ansi_c_string,
    "command_name": Values._command_name,
    "string": Values._double_quoted,
    "translated_string": Values._double_quoted,
    "heredoc_body": Values._heredoc,
    "concatenation": Values._concatenation,
    "simple_expansion": Values._expansion,
    "expansion": Values._braced_expansion,
    "command_substitution": Values._run_time,
    "arithmetic_expansion": Values._run_time,
    "process_substitution": Values._run_time,
    "brace_expression": Values._run_time,
    "array": Values._array_value,
}


@dataclass
class Gap:
    """Where an unquoted expansion gave no word under its primary value (``$OPTS`` last set to
    ``""``) although other values give some: before argv[``index``]."""

    index: int
    node: Node
    span: Span
    alternatives: List["Value"]
    ifs: Optional[str] = " \t\n"  # the IFS its values split on (None: not known)


class Argv(list):
    """The words of a command (a list of ``Word``), and its ``gaps``: the expansions whose
    primary value gave no word, with the alternatives that do (read by ``gaps_of``; set only
    when there is one, so that making an argv calls no Python ``__init__``)."""

    __slots__ = ("gaps",)
    gaps: List[Gap]

    def add_gap(self, gap: Gap) -> None:
        try:
            self.gaps.append(gap)
        except AttributeError:
            self.gaps = [gap]


def gaps_of(argv: Sequence["Word"]) -> List[Gap]:
    """The gaps of a command's argv (none for an argv built any other way)."""
    return getattr(argv, "gaps", None) or []


class Word:
    """One argv element as the batch shell passes it to a command: its (primary) ``value``, the
    argument ``node`` (None inside a task string), its ``span`` at the use site, and every value
    it may have (``alternatives``, primary last) when there are several."""

    __slots__ = ("value", "node", "span", "alternatives", "ifs")

    value: Value
    node: Optional[Node]
    span: Span
    alternatives: Optional[List[Value]]
    ifs: Optional[str]  # the IFS the expansion was split on, for its alternatives (None: not known)

    def __init__(
        self, value: Value, node: Optional[Node], span: Span, alternatives: Optional[List[Value]] = None, ifs: Optional[str] = " \t\n"
    ) -> None:
        self.value = value
        self.node = node
        self.span = span
        self.alternatives = alternatives
        self.ifs = ifs

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Word:
            return NotImplemented
        return (self.value, self.node, self.span, self.alternatives) == (
            other.value,  # type: ignore[attr-defined]
            other.node,  # type: ignore[attr-defined]
            other.span,  # type: ignore[attr-defined]
            other.alternatives,  # type: ignore[attr-defined]
        )

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, as the dataclass was

    def __repr__(self) -> str:
        return f"Word(value={self.value!r}, node={self.node!r}, span={self.span!r}, alternatives={self.alternatives!r})"

    @property
    def text(self) -> str:
        value = self.value
        text = value._text  # (Value.text, when already computed: asked of every word by many rules)
        return text if text is not None else value.text

    @property
    def known(self) -> bool:
        return self.value.known

    @property
    def pieces(self) -> Tuple[Piece, ...]:
        return self.value.pieces

    def literal_span(self) -> Optional[Span]:
        """The source span of the whole word when every piece is literal text of this argument."""
        spans = [p.span for p in self.pieces if p.span is not None]
        if not spans or any(p.via for p in self.pieces):
            return None
        return Span(min(s.start for s in spans), max(s.end for s in spans))


def noglob(data: bytes) -> bool:
    """Whether ``data`` holds ``set -f`` or ``set -o noglob`` (``set`` a word of its own: not the
    end of ``reset``). A match after a word character cannot hide a later one: no match holds
    ``set`` followed by a blank except at its start."""
    for match in NOGLOB.finditer(data):
        start = match.start()
        if not start or data[start - 1] not in _WORD_BYTES:
            return True
    return False


def appends(node: Node) -> bool:
    """An assignment node written with ``+=`` (``A+=(…)``, ``X+=…``)."""
    return any(c.type == "+=" for c in node.children)


DEFAULT_IFS = " \t\n"
GLOB_CHARACTERS = lazy(r"[*?]|\[.*\]")


def split_value(value: Value, ifs: Optional[str] = DEFAULT_IFS, glob: bool = False) -> List[Value]:
    """Word splitting of the pieces that arrived through an unquoted expansion, as bash does it
    with ``ifs`` (None: an IFS the model cannot follow, so a value with such pieces is one
    unknown word). With ``glob``, a field whose expanded text holds a pattern (``*``, ``?``,
    ``[…]``) names the files it matches at run time: unknown, unless it reads as an option
    (``--x=[a]``: no file is assumed to be named like one)."""
    if ifs == DEFAULT_IFS:
        fields = _split_default(value)
    elif not any(p.split and p.known and p.text for p in value.pieces):
        fields = [value] if value.pieces else []
    elif ifs is None:
        return [_unknown_like(value)]
    else:
        fields = _split_ifs(value, ifs)
    if glob:
        fields = [_unknown_like(f) if _globs(f) else f for f in fields]
    return fields


def _globs(field: Value) -> bool:
    """A field pathname expansion may replace: an expanded piece holds a pattern character."""
    if not any(map(_SPLIT, field.pieces)):
        return False  # nothing expanded unquoted
    if not any(p.split and p.known and GLOB_CHARACTERS.search(p.text) for p in field.pieces):
        return False
    return not (field.known and field.text.startswith("-"))


_new = object.__new__


def _plain_word(text: str, node: Node, start: int, end: int) -> "Word":
    """The word of a plain word node (bytes [start, end), ``start < end``, no backslash): one
    literal piece, its text known. ``Word(Value((Piece(text, Span(start, end), ""),)), node,
    Span(start, end), None)`` with the value's text and known computed, made without the class
    calls (an argv's most common word)."""
    span = _new(Span)
    span.start = start
    span.end = end
    piece = _new(Piece)
    piece.text = text
    piece.span = span
    piece.quote = ""
    piece.known = True
    piece.name = None
    piece.escaped = False
    piece.via = ()
    piece.split = False
    piece.task = False
    piece.loop = ()
    piece._exact = None
    value = _new(Value)
    value.pieces = (piece,)
    value._text = text  # what Value.text / .known compute, known here already
    value._known = True
    value._layout_cache = None
    word = _new(Word)
    word.value = value
    word.node = node
    word.span = span
    word.alternatives = None
    word.ifs = DEFAULT_IFS
    return word


def _node_span(node: Node, data: bytes) -> Span:
    """``node_span(node, data)``, made without the class call when no blank is to come off."""
    start, end = node.start_byte, node.end_byte
    if start < end and (data[start] in _LEADING_BLANKS or data[end - 1] in _TRAILING_BLANKS):
        return node_span(node, data)
    return _span(start, end)


def _span(start: int, end: int) -> Span:
    """``Span(start, end)`` for ``start <= end`` (nothing to check), made without the class call."""
    made = _new(Span)
    made.start = start
    made.end = end
    return made


def _literal(text: str, span: Span, quote: str, escaped: bool = False) -> Piece:
    """``Piece(text, span, quote, escaped=escaped)``: literal source text (``Values._literal_run``),
    made without the class call."""
    made = _new(Piece)
    made.text = text
    made.span = span
    made.quote = quote
    made.known = True
    made.name = None
    made.escaped = escaped
    made.via = ()
    made.split = False
    made.task = False
    made.loop = ()
    made._exact = None
    return made


def _unknown_value(span: Optional[Span], quote: str, name: Optional[str]) -> Value:
    """``Value((Piece("", span, quote, known=False, name=name),))``, made without the class calls:
    what an expansion the script does not set gives (``$SLURM_JOB_ID``)."""
    piece = _new(Piece)
    piece.text = ""
    piece.span = span
    piece.quote = quote
    piece.known = False
    piece.name = name
    piece.escaped = False
    piece.via = ()
    piece.split = False
    piece.task = False
    piece.loop = ()
    piece._exact = None
    made = _new(Value)
    made.pieces = (piece,)
    made._text = None
    made._known = False
    made._layout_cache = None
    return made


def _word(value: Value, node: Optional[Node], span: Span, alternatives: Optional[List[Value]], ifs: Optional[str]) -> "Word":
    """``Word(value, node, span, alternatives, ifs)``, made without the class call."""
    made = _new(Word)
    made.value = value
    made.node = node
    made.span = span
    made.alternatives = alternatives
    made.ifs = ifs
    return made


def _value(pieces: Tuple[Piece, ...]) -> Value:
    """``Value(pieces)``, made without the class call (a class call runs ``__init__`` in a fresh
    interpreter frame, dearer than the object it makes): values are made by the ten thousand."""
    made = _new(Value)
    made.pieces = pieces
    made._text = None
    made._known = None
    made._layout_cache = None
    return made


def _carried_known(p: Piece, site: Tuple[Span], unquoted: bool) -> Piece:
    """A known piece of a value as the expansion at ``site`` passes it on: ``Piece(p.text, p.span,
    p.quote, True, p.name, p.escaped, p.via + site, p.split or unquoted, False, p.loop)``, made
    without the class call (the most numerous pieces of the model), ``exact`` kept."""
    made = _new(Piece)
    made.text = p.text
    made.span = p.span
    made.quote = p.quote
    made.known = True
    made.name = p.name
    made.escaped = p.escaped
    made.via = p.via + site
    made.split = p.split or unquoted
    made.task = False
    made.loop = p.loop
    made._exact = p._exact  # (text, span, known and escaped are the original's)
    return made


def _carried_unknown(p: Piece, span: Span, quote: str, name: str, site: Tuple[Span], unquoted: bool) -> Piece:
    """An unknown piece of ``$name``'s value as the expansion at ``span`` passes it on: ``Piece(p.text,
    p.span, p.quote, False, p.name or name, p.escaped, p.via + site, p.split or unquoted, False,
    p.loop)``, or for a piece with no span ``Piece("", span, quote, False, p.name or name, False,
    p.via + site, unquoted, False, p.loop)``, made without the class call."""
    made = _new(Piece)
    if p.span is not None:
        made.text = p.text
        made.span = p.span
        made.quote = p.quote
        made.escaped = p.escaped
        made.split = p.split or unquoted
    else:
        made.text = ""
        made.span = span
        made.quote = quote
        made.escaped = False
        made.split = unquoted
    made.known = False
    made.name = p.name or name
    made.via = p.via + site
    made.task = False
    made.loop = p.loop
    made._exact = None
    return made


def _use_scopes(use: Optional[Node]) -> "set | Tuple[int, int]":
    """What ``Values.lookup`` compares an assignment's conditional constructs with: the use's
    bounds, when it has any (a conditional construct whose bounds hold them is one of its
    ancestors: the nodes of a tree nest, and no construct of ``CONDITIONAL_TYPES`` has the
    bounds of a node a value is looked up at, an expansion, a command or an assignment), rather
    than every ancestor's bounds and type, read from the tree node by node; else the set of
    those (empty without a use: then no construct encloses it)."""
    if use is None:
        return set()
    start, end = use.start_byte, use.end_byte
    if start < end and use.type not in CONDITIONAL_TYPES:
        return (start, end)
    return {(n.start_byte, n.end_byte, n.type) for n in ancestors(use)}


def _scope_sets(node: Node) -> Tuple[set, set]:
    """The functions around ``node`` (their bounds) and every construct around it (bounds and type)."""
    scopes = list(ancestors(node))
    functions = {(n.start_byte, n.end_byte) for n in scopes if n.type == "function_definition"}
    return functions, {(n.start_byte, n.end_byte, n.type) for n in scopes}


def _unset(name: str) -> Value:
    """The value of a variable the script may leave unset: unknown, from the environment."""
    return _unknown_value(None, "", name)


def _unknown_like(value: Value) -> Value:
    """One unknown word in the place of ``value`` (at its first piece's span)."""
    span = next((p.span for p in value.pieces if p.span is not None), None)
    return Value((Piece("", span, "", False),))


def _split_ifs(value: Value, ifs: str) -> List[Value]:
    """Splitting on a non-default IFS (bash's rules): a run of IFS white space separates fields
    and is dropped at both ends; each other IFS character ends a field, with the white space
    around it, so ``a,,b`` gives an empty field and a trailing ``,`` none."""
    white = set(c for c in ifs if c in " \t\n")
    hard = set(c for c in ifs if c not in " \t\n")
    # the characters in order: (piece index, offset in its text or -1 for a whole unsplit piece)
    chars: List[Tuple[int, int]] = []
    for index, piece in enumerate(value.pieces):
        if piece.split and piece.known:
            chars.extend((index, k) for k in range(len(piece.text)))
        else:
            chars.append((index, -1))
    pieces = value.pieces

    def kind(position: int) -> str:
        index, offset = chars[position]
        if offset < 0:
            return "text"
        c = pieces[index].text[offset]
        return "white" if c in white else "hard" if c in hard else "text"

    fields: List[List[Tuple[int, int]]] = []
    current: Optional[List[Tuple[int, int]]] = None
    i, n = 0, len(chars)
    while i < n and kind(i) == "white":
        i += 1
    while i < n:
        k = kind(i)
        if k == "text":
            if current is None:
                current = []
            current.append(chars[i])
            i += 1
            continue
        j = i
        while j < n and kind(j) == "white":
            j += 1
        hard_found = j < n and kind(j) == "hard"
        if hard_found:
            j += 1
            while j < n and kind(j) == "white":
                j += 1
        if j >= n and not hard_found:
            break  # trailing white space
        fields.append(current or [])
        current = None
        i = j
    if current is not None:
        fields.append(current)
    out: List[Value] = []
    for field in fields:
        built: List[Piece] = []
        k = 0
        while k < len(field):
            index, offset = field[k]
            piece = pieces[index]
            if offset < 0:
                built.append(piece)
                k += 1
                continue
            end = k
            while end + 1 < len(field) and field[end + 1][0] == index and field[end + 1][1] == field[end][1] + 1:
                end += 1
            built.append(_sub_piece(piece, offset, field[end][1] + 1))
            k = end + 1
        out.append(_value(tuple(built)))
    return out


def _split_default(value: Value) -> List[Value]:
    """Splitting on bash's default IFS (blank, tab, newline)."""
    if not any(map(_SPLIT, value.pieces)):  # nothing came through an unquoted expansion: one field
        return [_value(value.pieces)] if value.pieces else []
    words: List[List[Piece]] = [[]]
    pending_break = False
    for piece in value.pieces:
        if piece.split and piece.known and not piece.text:
            # no text (a backslash-newline in the string): it starts no field of its own
            if not pending_break:
                words[-1].append(piece)
            continue
        if not (piece.split and piece.known and _IFS.search(piece.text)):
            if pending_break and words[-1]:
                words.append([])
            pending_break = False
            words[-1].append(piece)
            continue
        text = piece.text
        position = 0
        for run in _NOT_IFS.finditer(text):
            start, end = run.span()
            if start > position:
                pending_break = True  # separators before this run
            if pending_break and words[-1]:
                words.append([])
            pending_break = False
            words[-1].append(_sub_piece(piece, start, end))
            position = end
        if position < len(text):
            pending_break = True  # separators after the last run
    return [_value(tuple(w)) for w in words if w]


_IFS = lazy(r"[ \t\n]")
_NOT_IFS = lazy(r"[^ \t\n]+")


def _sub_piece(piece: Piece, start: int, end: int) -> Piece:
    text = piece.text[start:end]
    if piece.exact and piece.span is not None:
        prefix = len(piece.text[:start].encode("utf-8"))
        length = len(text.encode("utf-8"))
        span = _span(piece.span.start + prefix, piece.span.start + prefix + length)
    else:
        span = piece.span
    return piece._with(text, span, piece.escaped and start == 0 and end == len(piece.text))


def _drop_prefix(value: Value, length: int) -> Value:
    """``value`` without its first ``length`` bytes (literal text of the source, such as the name
    of a ``$NAME`` the grammar cut: ``shell.word_chain``)."""
    pieces = value.pieces
    if pieces and pieces[0].exact and len(pieces[0].text.encode("utf-8")) >= length:
        first = pieces[0]
        if len(first.text.encode("utf-8")) == length:
            return Value(pieces[1:])
        assert first.span is not None
        text = first.text.encode("utf-8")[length:].decode("utf-8", errors="replace")
        return Value((first._with(text, Span(first.span.start + length, first.span.end), False),) + pieces[1:])
    total = len(value.text.encode("utf-8"))
    return value.slice(length, total) if total > length else Value(())


def _product(parts: List["List[Value] | Tuple[Piece, ...]"]) -> List[Value]:
    """Every combination of one value of each part, in order (most recent last, at most
    ``MAX_ALTERNATIVES``, only values of one loop iteration together). A part is a list of its
    values, or a tuple of pieces: the pieces of a literal run, one value bound to no iteration."""
    results: List[Tuple[Piece, ...]] = [()]
    # The loop iterations each result is bound to (``_bindings``), kept from the first part that
    # binds one: a combination is checked against them and the new part's own, rather than
    # ``consistent`` reading the whole combination again at every part.
    bound: Optional[List[Dict[int, int]]] = None
    # The pieces of the parts with one value and no loop binding since the last part with
    # several (most parts: the text and expansions of a long string): every result gets them
    # alike, so they are joined to the results once, not one part at a time (which copies the
    # growing results again at each part).
    pending: List[Tuple[Piece, ...]] = []
    for alternatives in parts:
        if alternatives.__class__ is tuple:  # literal pieces (``_literal_pieces``): one value, no loop
            if alternatives:
                pending.append(alternatives)
            continue
        if not alternatives:
            continue
        if len(alternatives) == 1:
            pieces = alternatives[0].pieces
            if not any(map(_LOOP, pieces)):
                if pieces:
                    pending.append(pieces)
                continue
        looped = any(map(_LOOP, chain.from_iterable(map(_PIECES, alternatives))))
        if not looped and len(results) > MAX_ALTERNATIVES // 2 and len(results) * len(alternatives) > MAX_ALTERNATIVES:
            # Past the cap only the most recent value is kept (see below): a part with one value
            pieces = alternatives[-1].pieces
            if pieces:
                pending.append(pieces)
            continue
        if pending:
            results = _joined(results, pending)
            pending = []
        if looped:
            # Values bound to loop iterations: only combine pieces of the same iteration.
            if bound is None:
                bound = [_bindings(r) or {} for r in results]  # (results are always consistent)
            own = [_bindings(a.pieces) for a in alternatives]
            combined: List[Tuple[Piece, ...]] = []
            combined_bound: List[Dict[int, int]] = []
            for r, held in zip(results, bound):
                for a, adds in zip(alternatives, own):
                    if adds is None:
                        continue  # the alternative is inconsistent on its own
                    merged = _merged_bindings(held, adds)
                    if merged is not None:
                        combined.append(r + a.pieces)
                        combined_bound.append(merged)
            if combined:
                results = combined[-MAX_ALTERNATIVES:]
                bound = combined_bound[-MAX_ALTERNATIVES:]
            continue
        if len(results) * len(alternatives) > MAX_ALTERNATIVES:
            alternatives = alternatives[-max(1, MAX_ALTERNATIVES // max(1, len(results))) :]
        if bound is not None:
            bound = [held for held in bound for _ in alternatives]
        results = [r + a.pieces for r in results for a in alternatives]
    if pending:
        results = _joined(results, pending)
    return [_value(r) for r in results]


def _joined(results: List[Tuple[Piece, ...]], pending: List[Tuple[Piece, ...]]) -> List[Tuple[Piece, ...]]:
    """Every result followed by the pieces of ``pending`` in order."""
    suffix = pending[0] if len(pending) == 1 else tuple(chain.from_iterable(pending))
    return [r + suffix for r in results]


def _bindings(pieces: Iterable[Piece]) -> Optional[Dict[int, int]]:
    """The loop iteration each loop the pieces belong to is bound to; None when they belong to
    different iterations of one loop (``consistent`` is False)."""
    seen: Dict[int, int] = {}
    for bound in filter(None, map(_LOOP, pieces)):
        for loop, index in bound:
            if seen.setdefault(loop, index) != index:
                return None
    return seen


def _merged_bindings(held: Dict[int, int], adds: Dict[int, int]) -> Optional[Dict[int, int]]:
    """Both sets of bindings, or None when they bind one loop to different iterations."""
    if not adds:
        return held
    if not held:
        return adds
    for loop, index in adds.items():
        if held.get(loop, index) != index:
            return None
    return {**held, **adds}


def consistent(pieces: Iterable[Piece]) -> bool:
    """Whether the pieces can occur together: none of them belong to different iterations of one loop."""
    return _bindings(pieces) is not None


def _read_field(value: Value, ifs: str, index: int, count: int, raw: bool) -> Optional[Value]:
    """Field ``index`` of ``count`` names that ``read`` assigns from one line of ``value``."""
    if not value.known:
        return None
    text = value.text
    if "\n" in text:
        text = text[: text.index("\n")]
    if not raw and "\\" in text:
        return None
    white = "".join(c for c in ifs if c in " \t\n")
    hard = "".join(c for c in ifs if c not in " \t\n")
    # Field boundaries as character positions, following bash's IFS rules.
    fields: List[Tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n and text[i] in white:
        i += 1
    while i < n and len(fields) < count - 1:
        start = i
        while i < n and text[i] not in ifs:
            i += 1
        fields.append((start, i))
        while i < n and text[i] in white:
            i += 1
        if i < n and text[i] in hard:
            i += 1
            while i < n and text[i] in white:
                i += 1
    if index < len(fields):
        start, end = fields[index]
    elif index == len(fields) and index == count - 1:
        start, end = i, n
        while end > start and text[end - 1] in white:
            end -= 1
        if end > start and text[end - 1] in hard:
            return None  # bash's handling of a trailing delimiter here is subtle: unknown
    else:
        return Value(())
    lo = len(text[:start].encode("utf-8"))
    hi = len(text[:end].encode("utf-8"))
    return value.slice(lo, hi) if hi > lo else Value(())


def _array_name(node: Node, data: bytes) -> Optional[str]:
    text = data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
    text = text.strip('"')
    if text.startswith("${") and "[" in text:
        return text[2 : text.index("[")]
    return None

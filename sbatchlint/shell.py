"""tree-sitter-bash: parse once, error regions, and small queries over nodes.

Known traps of the grammar are guarded here so rules never see them:
- an expansion node's span can begin with the whitespace before it: ``node_span`` trims it;
- a reserved word parsed as a command name (``A=1 B=2 \\`` continued onto an ``elif`` line
  misparses silently) is reported as an error region, like the grammar's own ERROR nodes;
- a word cut at a bare ``$``: after an expansion, a quote or a substitution earlier in the word,
  ``$NAME`` followed by more text is split silently into a concatenation ending with a bare ``$``
  token and a sibling starting with the name: ``echo $A/b_$C.d`` gives ``$A/b_$`` and ``C.d``
  (``$A.b_$C`` and ``$A/b_${C}.d`` parse right). Bash reads ONE word with ``$C`` expanded. The
  sibling may sit one level up: ``X=$A/b_$C.d`` makes ``C.d`` the command name of a "command"
  whose prefix assignment is ``X=$A/b_$``; ``cat <<< $A/b_$C.d`` gives cat an argument ``C.d``.
  ``word_chain`` finds the nodes that continue such a word (the model evaluates it as one word,
  ``$C`` expanded) and ``hidden_expansions`` the ``$NAME`` no ``simple_expansion`` node holds;
- assignments glued to the next line's command: ``A=1 B=2`` (two or more on a line) followed by
  a newline and a command parses as ONE command with prefix assignments (``A=1 B=2 srun …``),
  silently. Bash ends the statement at the newline: the assignments are the shell's own and the
  command gets no such environment. ``parse`` finds such commands and parses again with a ``;``
  in place of the blank after each glued line's last assignment (same length: every offset
  holds), so the tree has the statement bash runs.
"""
from __future__ import annotations

import _weakref as weakref  # its ``ref`` is ``weakref.ref``, without that module's imports
import sys as _sys
from itertools import compress

from .source import Span
from .lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

    from tree_sitter import Node, Parser, Tree

_PARSER: Optional[Parser] = None

RESERVED_WORDS = frozenset(
    "if then else elif fi do done case esac while until for in function select time { } ! [[ ]]".split()
)
# Reserved words the grammar reads as a command name and the model reads right: ``time cmd …``
# times the command it prefixes, which the model treats as a wrapper running ``cmd``.
_READ_AS_COMMANDS = frozenset({"time"})
_WHITESPACE = b" \t\r\n"
# Bytes that end an unquoted shell word: a bare ``$`` before one of them (or at the end) is literal.
_WORD_BREAK = frozenset(b" \t\r\n;&|()<>")
_NAME_START = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset(b"0123456789")
# ``$`` followed by one of these is a one-character special parameter (``$1``, ``$@``, ``$?``…).
_SPECIAL = frozenset(b"0123456789@*#?$!-")


def parser() -> Parser:
    global _PARSER
    if _PARSER is None:
        tree_sitter = _tree_sitter()
        _PARSER = tree_sitter.Parser(tree_sitter.Language(bash_language()))
    return _PARSER


# The parser's two packages are read from their compiled bindings, without running the packages'
# ``__init__``: tree_sitter's imports ``typing`` for one Protocol class, tree_sitter_bash's imports
# ``importlib.resources`` (with ``pathlib``, ``urllib``, ``ipaddress``) for highlighting queries;
# together about a tenth of a cold run, for nothing a run asks. A later import of either package
# reuses the binding; any surprise in a package's layout takes the usual import.

def _tree_sitter():
    """tree_sitter's classes (``Language``, ``Parser``, ``Node``, ``Tree``…)."""
    binding = _binding("tree_sitter._binding", ("Language", "Parser"))
    if binding is None:
        import tree_sitter as binding
    return binding


def bash_language():
    """The bash grammar (``tree_sitter_bash.language()``)."""
    binding = _binding("tree_sitter_bash._binding", ("language",))
    if binding is None:
        import tree_sitter_bash as binding
    return binding.language()


def _binding(name: str, wanted: tuple):
    """The extension module ``name`` if it loads and has the ``wanted`` names, else None."""
    import sys

    binding = sys.modules.get(name)
    if binding is None:
        try:
            binding = _load_binding(name)
        except Exception:  # another layout or loader: import the package as it wants
            binding = None
    if binding is None or not all(hasattr(binding, attribute) for attribute in wanted):
        return None
    return binding


def _load_binding(name: str):
    import os
    import sys
    # ``importlib.machinery``'s names, from the modules it re-exports them from: importing the
    # ``importlib`` package would import ``warnings`` too
    from _frozen_importlib import ModuleSpec
    from _frozen_importlib_external import EXTENSION_SUFFIXES, ExtensionFileLoader, PathFinder

    package_name, _, module_name = name.rpartition(".")
    package = PathFinder.find_spec(package_name)  # finds the package on sys.path without running it
    if package is None or not package.submodule_search_locations:
        return None
    for folder in package.submodule_search_locations:
        for suffix in EXTENSION_SUFFIXES:
            path = os.path.join(folder, module_name + suffix)
            if os.path.isfile(path):
                loader = ExtensionFileLoader(name, path)
                spec = ModuleSpec(name, loader, origin=path)
                # tree_sitter's binding takes ``re.compile`` (for query predicates) and makes an
                # ``enum.IntEnum`` (``LogType``, for a parser's logger) as it loads, neither of
                # which a run uses: it gets stand-ins that import those modules when first used,
                # so a run imports neither (with what ``enum`` imports, a sixth of a cold run)
                stubs = {key: _Deferred(key) for key in ("re", "enum") if key not in sys.modules}
                sys.modules.update(stubs)
                try:
                    module = loader.create_module(spec)
                    loader.exec_module(module)
                finally:
                    for key, stub in stubs.items():
                        if sys.modules.get(key) is stub:
                            del sys.modules[key]
                sys.modules[name] = module  # a later import of the package reuses it
                return module
    return None


class _Deferred(type(_sys)):
    """Stands for ``re`` or ``enum`` while a binding loads: ``re.compile`` is imported when first
    called, an ``IntEnum`` is made when first used (see ``_DeferredEnum``)."""

    @staticmethod
    def compile(pattern, flags=0):
        import re

        return re.compile(pattern, flags)

    @staticmethod
    def IntEnum(name, members):  # noqa: N802 - enum's name
        return _DeferredEnum(name, members)


class _DeferredEnum:
    """``enum.IntEnum(name, members)``, made when first called or asked for an attribute."""

    def __init__(self, name, members) -> None:
        self._arguments = (name, members)
        self._made = None

    def _enum(self):
        if self._made is None:
            from enum import IntEnum

            self._made = IntEnum(*self._arguments)
        return self._made

    def __call__(self, *args, **kwargs):
        return self._enum()(*args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("_") and name.endswith("_") and name != "__members__":
            raise AttributeError(name)
        return getattr(self._enum(), name)

    def __iter__(self):
        return iter(self._enum())

    def __repr__(self) -> str:
        return repr(self._enum())


def parse(data: bytes) -> Tree:
    """The tree of a script or of a string a shell runs, with the glued-assignment trap undone
    (see the module docstring): nodes' offsets are offsets into ``data`` either way."""
    data, tree = _first_tree(data)
    if data.find(b"=") < 0:  # (``bytes in bytes`` builds and drops a TypeError first)
        return tree
    return _reparsed(data, tree, _unglued(data, tree))


def parse_indexed(data: bytes) -> "Tuple[Tree, NodeIndex]":
    """``parse(data)`` and the ``NodeIndex`` of that tree.

    The index's walk also answers whether any command may hold glued assignments: only a command
    whose first child is an assignment (or a comment) has a glue point (``_glue_points``), and
    only the commands that ``_unglued``'s pattern search reaches are looked at there. When no
    command of the tree has one, that search (a pass over every byte of the script, costlier than
    the walk) cannot find one either and is skipped; otherwise it runs as ``parse`` runs it."""
    data, tree = _first_tree(data)
    index = NodeIndex(tree.root_node)
    # (the index holds no command below an ERROR node: with one, the search runs as ``parse``'s)
    if data.find(b"=") < 0 or (not tree.root_node.has_error and not _may_glue(index.of_type("command"), data)):
        return tree, index
    fixed = _reparsed(data, tree, _unglued(data, tree))
    if fixed is tree:
        return tree, index
    return fixed, NodeIndex(fixed.root_node)


def parse_collecting(data: bytes, kinds: "Sequence[str]") -> "Tuple[Tree, List[Node]]":
    """``parse(data)`` and the nodes of its tree of the types ``kinds`` (``INDEXED`` types, among
    them "command"), in walk order: for a short text parsed once (a string a task's shell runs),
    one walk gives them and answers the glued-assignment question as ``parse_indexed`` does (only
    when a command may hold glued assignments is every byte searched), without a ``NodeIndex``."""
    data, tree = _first_tree(data)
    nodes = _nodes_of(tree.root_node, kinds)
    if data.find(b"=") < 0 or not _may_glue([node for node in nodes if node.type == "command"], data):
        return tree, nodes
    fixed = _reparsed(data, tree, _unglued(data, tree))
    if fixed is tree:
        return tree, nodes
    return fixed, _nodes_of(fixed.root_node, kinds)


def _nodes_of(root: Node, kinds: "Sequence[str]") -> "List[Node]":
    """The nodes below ``root`` (inclusive) of the ``INDEXED`` types ``kinds``, in walk order."""
    ids = _index_kinds()[0]
    wanted = frozenset(kind for name in kinds for kind in ids[name])
    found: List[Node] = []
    cursor = root.walk()
    while True:
        node = cursor.node
        if node.kind_id in wanted:
            found.append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():  # a cursor never leaves the node it started at
                return found


def _first_tree(data: bytes) -> "Tuple[bytes, Tree]":
    """The parse of ``data``, or of ``data`` without arithmetic base prefixes when only that one
    parses clean (with the bytes it parsed)."""
    tree = parser().parse(data)
    if tree.root_node.has_error and data.find(b"#") >= 0 and data.find(b"$((") >= 0:
        based = _without_bases(data)
        if based is not None:
            fixed = parser().parse(based)
            if not fixed.root_node.has_error:
                return based, fixed
    return data, tree


def _reparsed(data: bytes, tree: Tree, unglued: Optional[bytes]) -> Tree:
    """The tree of ``unglued`` (``data`` with glued assignments cut) in place of ``tree``."""
    if unglued is None:
        return tree
    fixed = parser().parse(unglued)
    if fixed.root_node.has_error and not tree.root_node.has_error:
        return tree  # never trade a clean tree for a broken one
    return fixed


def _may_glue(commands: "Iterable[Node]", data: bytes) -> bool:
    """Whether any of ``commands`` has a glue point (``_glue_points``): a superset of what
    ``_unglued`` finds, as it looks only at commands its pattern search meets."""
    for command in commands:
        first = command.child(0)
        if first is not None and first.type in _GLUE_FIRST and _glue_points(command, data):
            return True
    return False


# ``_glue_points`` stops at the first child of another type, before it records any point
_GLUE_FIRST = frozenset({"variable_assignment", "comment"})


# ``10#$x`` in arithmetic: bash reads the number in base 10; the grammar cannot read ``#`` there.
_BASE = lazy(rb"(?<=[(\s+*/%,=<>!&|^-])[0-9]{1,2}#(?=[$0-9A-Za-z_{])")


def _without_bases(data: bytes) -> Optional[bytes]:
    """``data`` with each arithmetic base prefix (``10#``) inside ``$(( … ))`` blanked (same
    offsets; a base-10 prefix changes no value); None when there is none."""
    patched = bytearray(data)
    changed = False
    start = data.find(b"$((")
    while start >= 0:
        end = data.find(b"))", start)
        if end < 0:
            break
        for match in _BASE.finditer(data, start + 3, end):
            patched[match.start() : match.end()] = b" " * (match.end() - match.start())
            changed = True
        start = data.find(b"$((", end)
    return bytes(patched) if changed else None


# A second assignment after a first one's value (the blank between them may continue the line):
# a glued group holds at least two. Cheaper than looking for every statement start. The first
# value is ``=`` and what follows it up to a blank, or a closing quote or bracket; written as one
# class of first bytes (the rest of a value only after ``=``), so the search skips every other
# byte at once: the same matches as ``(?:=[^ \t\n=]*|["')}\]])…``, about a quarter cheaper.
#
# From Python 3.11 on the runs are possessive: none of them gives back what it took when the rest
# fails (a value stops only at a blank, or before a backslash that continues the line; a blank
# run, a name, a subscript are followed by bytes they cannot hold), so a failed attempt at each
# first byte costs one pass over the value instead of one try per byte of it: the same matches,
# about a third cheaper. Earlier versions read the pattern above as written.
_SECOND_ASSIGNMENT = lazy(
    rb"[=\"')}\]](?:(?<==)(?:[^ \t\n=\\]|\\(?!\r?\n))*+)?(?:[ \t]|\\\r?\n)++[A-Za-z_][A-Za-z0-9_]*+(?:\[[^\]\n]*+\])?\+?="
    if _sys.version_info >= (3, 11)
    else rb"[=\"')}\]](?:(?<==)[^ \t\n=]*)?(?:[ \t]|\\\r?\n)+[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\n]*\])?\+?="
)


def _unglued(data: bytes, tree: Tree) -> Optional[bytes]:
    """``data`` with ``;`` in place of the blank after the last assignment of each line the
    grammar glued to the next line's command; None when there is none."""
    root = tree.root_node
    points: List[int] = []
    seen = set()
    for match in _SECOND_ASSIGNMENT.finditer(data):
        node: Optional[Node] = root.descendant_for_byte_range(match.end() - 1, match.end())
        while node is not None and node.type != "variable_assignment":
            node = node.parent
        command = node.parent if node is not None else None
        if command is None or command.type != "command" or command.start_byte in seen:
            continue
        seen.add(command.start_byte)
        points.extend(_glue_points(command, data))
    if not points:
        return None
    patched = bytearray(data)
    for point in points:
        patched[point] = 59  # ';'
    return bytes(patched)


def _glue_points(command: Node, data: bytes) -> List[int]:
    """The blank after each leading assignment of ``command`` that an unescaped newline (after
    any comment) separates from what follows it in the node."""
    points: List[int] = []
    last_assignment = -1
    last_end = -1
    for child in command.children:
        kind = child.type
        if last_assignment >= 0 and kind != "comment" and _newline_between(data, last_end, child.start_byte):
            if data[last_assignment : last_assignment + 1] in (b" ", b"\t", b"\r", b"\n"):
                points.append(last_assignment)
        if kind == "variable_assignment":
            last_assignment = child.end_byte
        elif kind != "comment":
            break
        last_end = child.end_byte
    return points


def _newline_between(data: bytes, start: int, end: int) -> bool:
    gap = data[start:end]
    if b"\n" not in gap:
        return False
    return b"\n" in gap.replace(b"\\\r\n", b"").replace(b"\\\n", b"")  # a line continuation is a blank


def node_span(node: Node, data: bytes) -> Span:
    start, end = node.start_byte, node.end_byte
    while start < end and data[start] in _WHITESPACE:
        start += 1
    while end > start and data[end - 1] in b" \t":
        end -= 1
    return Span(start, end)


def walk(node: Node) -> Iterator[Node]:
    """Every node below ``node`` (inclusive), in source order."""
    last = _last_index()
    if last is not None and last.root == node:
        return iter(last.order)  # the whole tree of the script being linted: walked once
    return _walk(node)


def _walk(node: Node) -> Iterator[Node]:
    cursor = node.walk()
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():  # a cursor never leaves the node it started at
                return


def _walk_outside_errors(node: Node) -> Iterator[Node]:
    """``_walk`` that does not enter an ERROR node (it yields the ERROR node itself)."""
    cursor = node.walk()
    while True:
        current = cursor.node
        yield current
        if current.kind_id != ERROR_KIND and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def _no_index() -> "Optional[NodeIndex]":
    return None


_last_index: "Callable[[], Optional[NodeIndex]]" = _no_index  # a weak reference to the newest NodeIndex


# The node types the model and the rules ask ``NodeIndex.of_type`` for. Only these are kept when
# the tree is walked (about a third of its nodes); another type is found by a walk of the tree
# when asked (the same nodes, in the same order, at a walk's cost): list it here if it is asked
# for every script.
#
# Below an ERROR node (a region the parser could not read: SBL001/SBL016 report it as not
# analysed) the nodes are the parser's guesses from its error recovery, not the script's
# structure, so no analysis reads them as code: the index keeps only ``TEXT_IN_ERROR`` there,
# the nodes that mark text as text (comments, here-document bodies and their redirects, which
# the header scan skips and the secrets scan reads as text), and a walk for another type does
# not enter an ERROR node either.
INDEXED = frozenset({
    "variable_assignment", "declaration_command", "for_statement", "command", "unset_command",
    "command_name", "comment", "heredoc_body", "heredoc_redirect", "file_redirect",
    "simple_expansion", "expansion", "concatenation", "variable_name",
    "string", "raw_string", "ansi_c_string", "translated_string", "arithmetic_expansion",
})
TEXT_IN_ERROR = frozenset({"comment", "heredoc_body", "heredoc_redirect"})
ERROR_KIND = 0xFFFF  # the kind id of an ERROR node (tree-sitter's built-in error symbol)
_INDEX_KINDS: "Optional[Tuple[Dict[str, Tuple[int, ...]], frozenset, frozenset]]" = None


def _index_kinds() -> "Tuple[Dict[str, Tuple[int, ...]], frozenset, frozenset]":
    """The kind ids of each ``INDEXED`` type (a type name may stand for several: aliases), all
    of them, and those of the ``TEXT_IN_ERROR`` types."""
    global _INDEX_KINDS
    if _INDEX_KINDS is None:
        language = parser().language
        ids: Dict[str, List[int]] = {name: [] for name in INDEXED}
        for kind in range(language.node_kind_count):
            group = ids.get(language.node_kind_for_id(kind))
            if group is not None:
                group.append(kind)
        _INDEX_KINDS = ({name: tuple(group) for name, group in ids.items()},
                        frozenset(kind for group in ids.values() for kind in group),
                        frozenset(kind for name in TEXT_IN_ERROR for kind in ids[name]))
    return _INDEX_KINDS


class NodeIndex:
    """The nodes of a tree of the ``INDEXED`` types, walked once and grouped by type, each group
    in ``walk`` order.

    Several parts of the model and several rules look for a few node types over the whole tree;
    one walk serves them all (``Script.nodes_of_type``).
    """

    def __init__(self, root: Node) -> None:
        global _last_index
        self.root = root
        self._order: Optional[List[Node]] = None  # every node, in walk order (see ``order``)
        ids, wanted, text_kinds = _index_kinds()
        # grouped by kind_id (an int: no string made per node); every kept node also in ``kept``,
        # in walk order, which a question about several kind ids reads
        nodes: Dict[int, List[Node]] = {}
        kept: List[Node] = []
        kinds: List[int] = []  # the kind id of each node of ``kept``
        cursor = root.walk()
        while True:
            node = cursor.node
            kind = node.kind_id
            if kind in wanted:
                kept.append(node)
                kinds.append(kind)
                group = nodes.get(kind)
                if group is None:
                    nodes[kind] = [node]
                else:
                    group.append(node)
            elif kind == ERROR_KIND:  # only its text nodes, then on past it (see ``TEXT_IN_ERROR``)
                inner = node.walk()
                moving = inner.goto_first_child()
                while moving:
                    found = inner.node
                    found_kind = found.kind_id
                    if found_kind in text_kinds:  # (rare: kept as above, without the inlining)
                        kept.append(found)
                        kinds.append(found_kind)
                        nodes.setdefault(found_kind, []).append(found)
                    if inner.goto_first_child():
                        continue
                    while not inner.goto_next_sibling():
                        if not inner.goto_parent():  # back at the ERROR node: done
                            moving = False
                            break
            if kind != ERROR_KIND and cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():  # a cursor never leaves the node it started at
                    self._nodes = nodes
                    self._kept = kept
                    self._kept_kinds = kinds
                    self._ids = ids
                    self._merged: Dict[Tuple[str, ...], Sequence[Node]] = {}
                    self._hidden: "Optional[List[HiddenExpansion]]" = None  # hidden_expansions
                    self._cut: Optional[bool] = None  # may_cut_words
                    # ``walk`` of this tree (other modules still walk it) reads ``order``; weakly,
                    # so a finished script's tree is not kept alive
                    _last_index = weakref.ref(self)
                    return

    @property
    def order(self) -> List[Node]:
        """Every node, in walk order: walked again when first asked (rarely: ``walk`` of the whole
        tree), rather than kept for every script."""
        if self._order is None:
            self._order = list(_walk(self.root))
        return self._order

    def of_type(self, *kinds: str) -> Sequence[Node]:
        """The nodes of these types, in walk (source) order. Shared: do not modify."""
        merged = self._merged.get(kinds)
        if merged is None:
            known = self._ids
            if all(kind in known for kind in kinds):
                nodes = self._nodes
                ids = [i for kind in dict.fromkeys(kinds) for i in known[kind] if i in nodes]
                if not ids:
                    merged = ()
                elif len(ids) == 1:
                    merged = nodes[ids[0]]
                else:  # several groups: the kept nodes of their ids, in walk order
                    merged = list(compress(self._kept, map(frozenset(ids).__contains__, self._kept_kinds)))
            else:  # a type the walk did not keep (none below an ERROR node)
                names = frozenset(kinds)
                merged = [node for node in _walk_outside_errors(self.root) if node.type in names]
            self._merged[kinds] = merged
        return merged


def error_regions(tree: Tree, data: bytes, index: Optional[NodeIndex] = None) -> List[Span]:
    """Spans the parser could not read: ERROR nodes, MISSING tokens, reserved words as commands."""
    regions: List[Span] = []
    nodes: "Iterable[Node]"
    if index is not None:
        # the command names from the index; ERROR nodes and MISSING tokens only below nodes that
        # have an error (a large script with one broken line is not walked whole)
        nodes = index.of_type("command_name")
        if tree.root_node.has_error:
            nodes = [*_broken(tree.root_node), *nodes]
    else:
        nodes = walk(tree.root_node)  # type: ignore[assignment]
    for node in nodes:
        if node.type == "ERROR" or node.is_missing:
            regions.append(_region(node, data))
        elif node.type == "command_name":
            text = data[node.start_byte : node.end_byte].strip()
            word = text.decode("latin-1")
            if word in RESERVED_WORDS and word not in _READ_AS_COMMANDS:
                command = node.parent or node
                regions.append(_region(command, data))
    return _merge(regions)


def first_failure(tree: Tree, region: Span) -> Optional[int]:
    """Where the parser first failed inside an error region (``error_regions``): the start of
    the earliest ERROR node or MISSING token nested in it. Its recovery often takes many valid
    lines before the construct it could not read into one ERROR node, whose start then says
    little; None when nothing is nested (the region's own start is the place)."""
    found: Optional[int] = None
    for node in _broken(tree.root_node):
        start = node.start_byte
        if not (region.start <= start < region.end) or (found is not None and start >= found):
            continue
        if node.is_missing or (node.type == "ERROR" and start > region.start):
            found = start
    return found


def _broken(root: Node) -> Iterator[Node]:
    """Every node that is or holds a syntax error (``has_error``): ERROR nodes, MISSING tokens and
    their ancestors, without entering a subtree that has none."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in reversed(node.children) if child.has_error)


def _region(node: Node, data: bytes) -> Span:
    span = Span(node.start_byte, node.end_byte)
    if len(span) == 0:
        # a MISSING token: point at the character before it (or after, at the start)
        start = max(0, span.start - 1)
        return Span(start, min(len(data), start + 1))
    return span


def _merge(spans: List[Span]) -> List[Span]:
    merged: List[Span] = []
    for span in sorted(spans):
        if merged and span.start <= merged[-1].end:
            last = merged.pop()
            merged.append(Span(last.start, max(last.end, span.end)))
        else:
            merged.append(span)
    return merged


# -- words cut at a bare ``$`` (see the module docstring) ---------------------------------------
def _cut_concatenation(node: Node, data: bytes) -> Optional[Node]:
    """The concatenation ending with a bare ``$`` at which the grammar cut ``node``'s word (``node``
    itself, or its last descendant ending at the same byte: an assignment's value, a command
    name, a here-string), or None."""
    end = node.end_byte
    if end >= len(data) or data[end - 1] != 36 or data[end] in _WORD_BREAK:
        return None
    while node.type != "concatenation":
        count = node.child_count
        if count == 0:
            return None
        node = node.child(count - 1)  # type: ignore[assignment]
        if node is None or node.end_byte != end:
            return None
    count = node.child_count
    last = node.child(count - 1) if count else None
    if last is None or last.type != "$" or last.is_named:
        return None
    return node


def _continuation(node: Node, end: int) -> Optional[Node]:
    """The named node starting at ``end`` right after ``node`` (a sibling of it or of an ancestor
    that ends where it does)."""
    current = node
    while True:
        sibling = current.next_sibling
        if sibling is not None:
            break
        current = current.parent  # type: ignore[assignment]
        if current is None or current.end_byte != end:
            return None
    if sibling.start_byte != end or not sibling.is_named:
        return None
    return sibling


def may_cut_words(root: Node, data: bytes) -> bool:
    """False when no word of the tree is cut at a bare ``$``, so the model can skip looking for
    one: known for the tree of the newest ``NodeIndex`` (one byte comparison per concatenation,
    once); True (maybe) for any other tree."""
    last = _last_index()
    if last is None or last.root != root:
        return True
    found = last._cut
    if found is None:
        found = last._cut = any(
            data[node.end_byte - 1] == 36 and _cut_concatenation(node, data) is not None
            for node in last.of_type("concatenation")
        )
    return found


def word_chain(node: Node, data: bytes) -> List[Node]:
    """The nodes after ``node`` that belong to its shell word, when the grammar cut the word at a
    bare ``$`` (``$A/b_$`` + ``C.d``; a cut continuation may be cut again). Empty otherwise: the
    cost is one byte comparison when the word does not end with ``$``.

    A continuation may be a ``command_name`` wrapper (after a cut assignment): ``inner`` gives the
    word node in it."""
    end = node.end_byte
    if not end or data[end - 1] != 36:
        return []
    chain: List[Node] = []
    current = node
    while True:
        cut = _cut_concatenation(current, data)
        if cut is None:
            return chain
        following = _continuation(cut, cut.end_byte)
        if following is None:
            return chain
        chain.append(following)
        current = following


def quoted_interior(node: Node, data: bytes) -> Span:
    """The bytes between the quotes of a quoted string node (``"…"``, ``$"…"``, ``'…'``,
    ``$'…'``). A string the file leaves open has no closing quote to take off: tree-sitter closes
    it with a zero-width missing ``"`` at the end of the file (``X="`` as the last line), so its
    text runs to the node's end. Never a span that ends before it starts."""
    span = node_span(node, data)
    opener = 2 if data[span.start : span.start + 1] == b"$" else 1
    start = min(span.start + opener, span.end)
    last = node.child(node.child_count - 1) if node.child_count else None
    while last is not None and last.type == "string":  # $"…": the quotes belong to the inner string
        last = last.child(last.child_count - 1) if last.child_count else None
    closed = span.end - span.start > opener and (last is None or not last.is_missing)
    end = span.end - 1 if closed else span.end
    return Span(start, max(start, end))


def inner(node: Node) -> Node:
    """The word node of a ``command_name`` (the node itself otherwise)."""
    if node.type == "command_name" and node.named_child_count == 1:
        return node.named_child(0) or node
    return node


def parameter_length(data: bytes, at: int) -> int:
    """How many bytes at ``at`` (right after a ``$``) name a parameter: an identifier, or one
    digit or special character; 0 when none does (the ``$`` is literal)."""
    if at >= len(data):
        return 0
    first = data[at]
    if first in _NAME_START:
        end = at + 1
        while end < len(data) and data[end] in _NAME_CHARS:
            end += 1
        return end - at
    return 1 if first in _SPECIAL else 0


def only_assignments(command: Node, data: bytes) -> bool:
    """A ``command`` node that bash runs as plain assignments: its last assignment's value was cut
    at a bare ``$`` and the rest of the word became the command name (``X=$A/b_$C.d``), and no
    other word follows."""
    name = command.child_by_field_name("name")
    if name is None or name.start_byte == 0 or data[name.start_byte - 1] != 36:
        return False
    previous = name.prev_sibling
    if previous is None or previous.type != "variable_assignment" or previous.end_byte != name.start_byte:
        return False
    chain = word_chain(previous, data)
    if not chain or chain[0] != name:
        return False
    end = chain[-1].end_byte
    for child in command.children:
        if child.start_byte >= end and child.is_named and not child.type.endswith("redirect") and child.type != "comment":
            return False
    return True


class HiddenExpansion:
    """A ``$NAME`` the grammar left in no ``simple_expansion`` node (a word cut at a bare ``$``)."""

    __slots__ = ("dollar", "name", "span", "name_span")

    def __init__(self, dollar: Node, name: str, span: Span, name_span: Span) -> None:
        self.dollar = dollar  # the bare ``$`` token (its parent is the cut concatenation)
        self.name = name
        self.span = span  # the ``$NAME`` bytes
        self.name_span = name_span  # the ``NAME`` bytes

    def __repr__(self) -> str:
        return f"HiddenExpansion({self.name!r}, {self.span!r})"


def hidden_expansions(nodes: "Union[NodeIndex, Node]", data: bytes) -> List[HiddenExpansion]:
    """Every ``$NAME`` hidden by a cut word, in source order: what a search of ``simple_expansion``
    nodes misses. ``nodes``: the tree's index (the answer is kept on it: shared, do not modify),
    or a root to walk. Costs one byte comparison per concatenation when there is none."""
    if isinstance(nodes, NodeIndex):
        if nodes._cut is False:  # may_cut_words found none
            return []
        if nodes._hidden is None:
            nodes._hidden = _hidden_expansions(nodes.of_type("concatenation"), data)
        return nodes._hidden
    return _hidden_expansions((n for n in walk(nodes) if n.type == "concatenation"), data)


def _hidden_expansions(concatenations: Iterable[Node], data: bytes) -> List[HiddenExpansion]:
    found: List[HiddenExpansion] = []
    for node in concatenations:
        end = node.end_byte
        if data[end - 1] != 36:
            continue
        cut = _cut_concatenation(node, data)
        if cut is None or _continuation(cut, end) is None:
            continue
        length = parameter_length(data, end)
        if not length:
            continue
        dollar = node.child(node.child_count - 1)
        assert dollar is not None
        name = data[end : end + length].decode("utf-8", errors="replace")
        found.append(HiddenExpansion(dollar, name, Span(end - 1, end + length), Span(end, end + length)))
    return found


def text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def ancestors(node: Node) -> Iterator[Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent

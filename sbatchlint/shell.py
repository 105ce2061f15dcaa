"""tree-sitter-bash: parse once, error regions, and small queries over nodes.

Known traps of the grammar are guarded here so rules never see them:
- an expansion node's span can begin with the whitespace before it: ``node_span`` trims it;
- a reserved word parsed as a command name (``A=1 B=2`` followed by ``elif`` misparses
  silently) is reported as an error region, like the grammar's own ERROR nodes.
"""
from __future__ import annotations

import weakref
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from tree_sitter import Language, Node, Parser, Tree
import tree_sitter_bash

from .source import Span

_PARSER: Optional[Parser] = None

RESERVED_WORDS = frozenset(
    "if then else elif fi do done case esac while until for in function select time { } ! [[ ]]".split()
)
_WHITESPACE = b" \t\r\n"


def parser() -> Parser:
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


def parse(data: bytes) -> Tree:
    return parser().parse(data)


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
        return iter(last.order)  # the whole tree of the script being linted: walked already
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


def _no_index() -> "Optional[NodeIndex]":
    return None


_last_index: "Callable[[], Optional[NodeIndex]]" = _no_index  # a weak reference to the newest NodeIndex


class NodeIndex:
    """Every node of a tree, walked once and grouped by type, each group in ``walk`` order.

    Several parts of the model and several rules look for a few node types over the whole tree;
    one walk serves them all (``Script.nodes_of_type``).
    """

    def __init__(self, root: Node) -> None:
        global _last_index
        self.root = root
        self.order: List[Node] = []  # every node, in walk order
        order = self.order.append
        # grouped by kind_id (an int: no string made per node); named once per kind at the end
        nodes: Dict[int, List[Node]] = {}
        positions: Dict[int, List[int]] = {}
        cursor = root.walk()
        index = 0
        while True:
            node = cursor.node
            order(node)
            kind = node.kind_id
            group = nodes.get(kind)
            if group is None:
                nodes[kind] = [node]
                positions[kind] = [index]
            else:
                group.append(node)
                positions[kind].append(index)
            index += 1
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():  # a cursor never leaves the node it started at
                    self._nodes = nodes
                    self._positions = positions
                    self._merged: Dict[Tuple[str, ...], Sequence[Node]] = {}
                    # a type name may stand for several kind ids (aliases): all of them
                    self._kinds: Dict[str, List[int]] = {}
                    for kind, group in nodes.items():
                        self._kinds.setdefault(group[0].type, []).append(kind)
                    # ``walk`` of this tree (other modules still walk it) reads ``order``; weakly,
                    # so a finished script's tree is not kept alive
                    _last_index = weakref.ref(self)
                    return

    def of_type(self, *kinds: str) -> Sequence[Node]:
        """The nodes of these types, in walk (source) order. Shared: do not modify."""
        merged = self._merged.get(kinds)
        if merged is None:
            ids = [i for kind in dict.fromkeys(kinds) for i in self._kinds.get(kind, ())]
            if not ids:
                merged = ()
            elif len(ids) == 1:
                merged = self._nodes[ids[0]]
            else:
                pairs: List[Tuple[int, Node]] = []
                for i in ids:
                    pairs.extend(zip(self._positions[i], self._nodes[i]))
                pairs.sort(key=_first)
                merged = [node for _position, node in pairs]
            self._merged[kinds] = merged
        return merged


def _first(pair: Tuple[int, Node]) -> int:
    return pair[0]


def error_regions(tree: Tree, data: bytes, index: Optional[NodeIndex] = None) -> List[Span]:
    """Spans the parser could not read: ERROR nodes, MISSING tokens, reserved words as commands."""
    regions: List[Span] = []
    nodes: Sequence[Node]
    if index is not None and not tree.root_node.has_error:
        nodes = index.of_type("command_name")  # no ERROR node and no MISSING token anywhere
    else:
        nodes = walk(tree.root_node)  # type: ignore[assignment]
    for node in nodes:
        if node.type == "ERROR" or node.is_missing:
            regions.append(_region(node, data))
        elif node.type == "command_name":
            text = data[node.start_byte : node.end_byte].strip()
            if text.decode("latin-1") in RESERVED_WORDS:
                command = node.parent or node
                regions.append(_region(command, data))
    return _merge(regions)


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


def text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def ancestors(node: Node) -> Iterator[Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent

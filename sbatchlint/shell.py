"""tree-sitter-bash: parse once, error regions, and small queries over nodes.

Known traps of the grammar are guarded here so rules never see them:
- an expansion node's span can begin with the whitespace before it: ``node_span`` trims it;
- a reserved word parsed as a command name (``A=1 B=2`` followed by ``elif`` misparses
  silently) is reported as an error region, like the grammar's own ERROR nodes.
"""
from __future__ import annotations

from typing import Iterator, List, Optional

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
    cursor = node.walk()
    visited_children = False
    while True:
        if not visited_children:
            yield cursor.node
            if cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited_children = False
            continue
        if not cursor.goto_parent() or cursor.node == node:
            return
        visited_children = True


def error_regions(tree: Tree, data: bytes) -> List[Span]:
    """Spans the parser could not read: ERROR nodes, MISSING tokens, reserved words as commands."""
    regions: List[Span] = []
    for node in walk(tree.root_node):
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

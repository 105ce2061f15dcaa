"""The parsed batch script that rules query: built once per file."""
from __future__ import annotations

from functools import cached_property
from typing import Any, Callable, Dict, List, Optional, Sequence

from tree_sitter import Node

from .. import shell
from ..source import Source, Span
from .header import Header, parse_header
from .steps import Command, Step, build_commands, build_steps
from .values import Values


class Script:
    def __init__(self, source: Source, settings: Optional[Dict[str, Any]] = None) -> None:
        self.source = source
        self.data = source.data
        self.tree = shell.parse(source.data)
        self.root = self.tree.root_node
        self.settings: Dict[str, Any] = dict(settings or {})
        self._derived: Dict[str, Any] = {}

    @property
    def path(self) -> str:
        return self.source.path

    @cached_property
    def node_index(self) -> shell.NodeIndex:
        return shell.NodeIndex(self.root)

    def nodes_of_type(self, *kinds: str) -> Sequence[Node]:
        """Every node of these types in the tree, in source order (one shared walk; do not modify)."""
        return self.node_index.of_type(*kinds)

    @cached_property
    def errors(self) -> List[Span]:
        """Regions the parser could not read."""
        return shell.error_regions(self.tree, self.data, self.node_index)

    @cached_property
    def header(self) -> Header:
        from .heredocs import bodies

        return parse_header(self.source, bodies(self))

    @cached_property
    def values(self) -> Values:
        return Values(self.data, self.root, self.nodes_of_type(*Values.COLLECTED))

    @cached_property
    def commands(self) -> List[Command]:
        """Every command the batch shell runs, in source order, argv evaluated."""
        return build_commands(self.values, self.root, self.data, self.nodes_of_type("command"))

    @cached_property
    def steps(self) -> List[Step]:
        """Every ``srun`` step, in source order."""
        return build_steps(self.values, self.commands)

    def derived(self, key: str, build: Callable[["Script"], Any]) -> Any:
        """An analysis shared by several rules, computed once per script."""
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]

    def text(self, span: Span) -> str:
        return self.source.text(span)

    def is_comment(self, offset: int) -> bool:
        node = self.root.descendant_for_byte_range(offset, offset + 1)
        return node is not None and node.type == "comment"

    def in_error(self, span: Span) -> bool:
        return any(region.overlaps(span) or region.start == span.start for region in self.errors)

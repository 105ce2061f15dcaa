"""What the names of a Python file refer to: imports, functions, and names assigned once.

Flow-insensitive on purpose: ``import torch.distributed as dist`` inside ``main()`` still makes
``dist.init_process_group`` mean ``torch.distributed.init_process_group`` everywhere, which is what
training scripts mean by it. A name bound by several imports resolves to all of them.
"""
from __future__ import annotations


import libcst as cst

from .nodes import SCOPES, children, dotted, walk

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Set


class Names:
    def __init__(self, tree: cst.Module) -> None:
        self.bindings: Dict[str, Set[str]] = {}
        self.module_bindings: Dict[str, Set[str]] = {}  # imports outside any def/class
        self.functions: Dict[str, List[cst.FunctionDef]] = {}
        self._values: Dict[str, List[Optional[cst.BaseExpression]]] = {}
        stack = [(tree, True)]
        while stack:
            node, top = stack.pop()
            self._collect(node, top)
            inner = top and not isinstance(node, SCOPES)
            stack.extend((child, inner) for child in reversed(list(children(node))))
        self.assigned: Dict[str, cst.BaseExpression] = {
            name: values[0] for name, values in self._values.items() if len(values) == 1 and values[0] is not None
        }

    # -- collection -----------------------------------------------------------------------
    def _bind(self, name: str, target: str, top: bool) -> None:
        self.bindings.setdefault(name, set()).add(target)
        if top:
            self.module_bindings.setdefault(name, set()).add(target)

    def _assign(self, name: str, value: Optional[cst.BaseExpression]) -> None:
        self._values.setdefault(name, []).append(value)

    def _collect(self, node: cst.CSTNode, top: bool) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self._bind(alias.asname.name.value, full, top)
                else:
                    self._bind(full.split(".")[0], full.split(".")[0], top)
        elif isinstance(node, cst.ImportFrom):
            module = dotted(node.module)
            if node.relative or isinstance(node.names, cst.ImportStar) or module is None:
                return
            for alias in node.names:
                name = dotted(alias.name)
                if name is None:
                    continue
                asname = alias.asname.name if alias.asname is not None else None
                self._bind(asname.value if isinstance(asname, cst.Name) else name, f"{module}.{name}", top)
        elif isinstance(node, cst.FunctionDef):
            self.functions.setdefault(node.name.value, []).append(node)
            self._assign(node.name.value, None)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self._assign(target.target.value, node.value)
                else:
                    for sub in walk(target.target):
                        if isinstance(sub, cst.Name):
                            self._assign(sub.value, None)  # unpacking: no single value
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            self._assign(node.target.value, node.value)
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            self._assign(node.target.value, None)
        elif isinstance(node, (cst.For, cst.CompFor)) and isinstance(node.target, cst.Name):
            self._assign(node.target.value, None)
        elif isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
            self._assign(node.target.value, node.value)

    # -- queries --------------------------------------------------------------------------
    def qualified(self, node: cst.CSTNode) -> Set[str]:
        """Every dotted name an expression may refer to; a name no import binds stands for itself."""
        if isinstance(node, cst.Name):
            return set(self.bindings.get(node.value, {node.value}))
        if isinstance(node, cst.Attribute):
            return {f"{base}.{node.attr.value}" for base in self.qualified(node.value)}
        return set()

    def refers_to(self, node: cst.CSTNode, targets: Iterable[str]) -> bool:
        return not self.qualified(node).isdisjoint(targets)

    def module_name_for(self, qualified: str) -> Optional[str]:
        """The name a module-level import gives to exactly ``qualified`` (e.g. ``datetime``), if any."""
        for name, targets in sorted(self.module_bindings.items()):
            if targets == {qualified} and self.bindings.get(name) == {qualified} and name not in self._values:
                return name
        return None

    def is_free(self, name: str) -> bool:
        """Nothing in the file binds ``name`` (so a new import of it shadows nothing)."""
        return name not in self.bindings and name not in self._values

    def value_of(self, node: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """The value of a name assigned exactly once in the file (``world = os.environ.get(…)``)."""
        if isinstance(node, cst.Name) and node.value not in self.bindings:
            return self.assigned.get(node.value)
        return None

    def called_functions(self, call: cst.Call) -> List[cst.FunctionDef]:
        """The functions of this file a call may run: ``f()``, ``self.f()``, ``cls.f()``."""
        func = call.func
        if isinstance(func, cst.Name) and func.value not in self.bindings:
            return self.functions.get(func.value, [])
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
            return self.functions.get(func.attr.value, [])
        return []

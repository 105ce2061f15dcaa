"""The environment variables a Python file reads: ``os.environ["X"]``, ``os.environ.get("X")``,
``os.getenv("X")``, ``"X" in os.environ`` (through any import spelling the names model follows).

``sbatchlint convert`` asks it which launcher an entry point expects: one that reads Slurm's
rank variables joins a world srun started; one that reads only torchrun's needs torchrun.
"""
from __future__ import annotations


from .module import cst  # imported there with libcst's own deprecation warnings silenced
from .nodes import argument, string_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Set

ENVIRON = ("os.environ",)
ENV_GETTERS = ("os.environ.get", "os.getenv", "os.environ.setdefault")


def variables_read(module) -> Set[str]:
    """Every variable name the file reads from the environment (empty when it cannot be parsed)."""
    tree = module.tree
    if tree is None:
        return set()
    names = module.names
    found: Set[str] = set()

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if names.refers_to(node.func, ENV_GETTERS):
                key = argument(node, 0, "key")
                value = string_value(key.value) if key is not None else None
                if value:
                    found.add(value)

        def visit_Subscript(self, node: cst.Subscript) -> None:
            if names.refers_to(node.value, ENVIRON) and len(node.slice) == 1:
                index = node.slice[0].slice
                if isinstance(index, cst.Index):
                    value = string_value(index.value)
                    if value:
                        found.add(value)

        def visit_Comparison(self, node: cst.Comparison) -> None:
            for target in node.comparisons:
                if isinstance(target.operator, (cst.In, cst.NotIn)) and names.refers_to(target.comparator, ENVIRON):
                    value = string_value(node.left)
                    if value:
                        found.add(value)

    tree.visit(Visitor())
    return found

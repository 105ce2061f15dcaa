"""SBL501's analysis: guards that exit unless torchrun's variables are set.

A guard is an ``if`` whose branch exits (``sys.exit``, ``raise``, ``exit()``, ``parser.error``) or an
``assert``. Its condition is evaluated, not matched as text, in two environments: an srun-native
task (torchrun's ``WORLD_SIZE``/``RANK``/``LOCAL_RANK`` unset, ``SLURM_NTASKS``/``SLURM_PROCID``/
``SLURM_LOCALID`` set) and a torchrun worker. The evaluation follows ``os.environ.get``,
``os.getenv``, ``"X" in os.environ``, ``is None``, ``not``, ``and``/``or``, defaults, ``int()``,
aliases of ``os`` and names assigned once from such a read. A guard that exits in the first
environment but not (surely) in the second refuses srun-native launches.

The fix pairs every torchrun variable test with the same test on its Slurm counterpart:
``"WORLD_SIZE" not in os.environ`` becomes ``"WORLD_SIZE" not in os.environ and "SLURM_NTASKS" not
in os.environ`` (``and`` where the test means "missing", ``or`` where it means "set").
"""
from __future__ import annotations


import libcst as cst

from ..lazyclass import dataclass
from ..model import variables as env_table
from .module import PythonModule, deep_recursion
from .nodes import argument, last_name, string_value, walk

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Set, Tuple

# torchrun's per-worker variables; an srun-native task has none of them.
TORCHRUN_VARIABLES = env_table.TORCHRUN_SET
# What srun sets in every task that means the same thing.
SLURM_COUNTERPART = {v.name: v.slurm for v in env_table.TABLE if v.set_by == env_table.TORCHRUN and v.slurm}
SLURM_TASK_VARIABLES = env_table.SRUN_TASK
ENVIRON = ("os.environ",)
ENV_GETTERS = ("os.environ.get", "os.getenv")
EXITS = ("sys.exit", "exit", "quit", "os._exit", "builtins.exit", "builtins.quit")

SRUN, TORCHRUN = "srun", "torchrun"


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


class _Present:
    """A variable that is set, to a value not known here."""

    def __repr__(self) -> str:
        return "PRESENT"


UNKNOWN = _Unknown()
PRESENT = _Present()


@dataclass
class Guard:
    node: cst.CSTNode  # the If or Assert
    test: cst.BaseExpression
    exits_when: bool  # the guard exits when ``test`` is this
    variables: Tuple[str, ...]  # torchrun variables the test reads
    fixed_test: Optional[cst.BaseExpression]  # the test that also accepts the Slurm variables

    @property
    def counterparts(self) -> Tuple[str, ...]:
        return tuple(SLURM_COUNTERPART[v] for v in self.variables if v in SLURM_COUNTERPART)


def find_guards(module: PythonModule) -> List[Guard]:
    return module.derived("python.launch-guards", _find)


def _find(module: PythonModule) -> List[Guard]:
    with deep_recursion():
        return _guards(module)


def _guards(module: PythonModule) -> List[Guard]:
    assert module.tree is not None
    evaluator = Evaluator(module)
    found: List[Guard] = []
    for node in walk(module.tree):
        for test, exits_when in _guard_tests(module, node):
            variables = evaluator.variables(test)
            torchrun = sorted(v for v in variables if v in TORCHRUN_VARIABLES)
            if not torchrun:
                continue
            if evaluator.truth(test, SRUN) is not exits_when:
                continue
            if evaluator.truth(test, TORCHRUN) is exits_when:
                continue  # exits under torchrun too: not a launch guard
            found.append(Guard(node, test, exits_when, tuple(torchrun), _fixed_test(evaluator, test, exits_when)))
    return found


def _guard_tests(module: PythonModule, node: cst.CSTNode) -> Iterator[Tuple[cst.BaseExpression, bool]]:
    if isinstance(node, cst.If):
        if _exits(module, node.body):
            yield node.test, True
        elif isinstance(node.orelse, cst.Else) and _exits(module, node.orelse.body):
            yield node.test, False
    elif isinstance(node, cst.SimpleStatementLine):
        for statement in node.body:
            if isinstance(statement, cst.Assert):
                yield statement.test, False


def _exits(module: PythonModule, block: cst.BaseSuite) -> bool:
    """Whether a block ends the program: a top-level raise, sys.exit(), exit(), parser.error()…"""
    statements = block.body
    for statement in statements:
        lines = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
        if isinstance(block, cst.SimpleStatementSuite):
            lines = (statement,)
        for small in lines:
            if isinstance(small, cst.Raise):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                func = small.value.func
                if module.names.refers_to(func, EXITS):
                    return True
                if isinstance(func, cst.Attribute) and func.attr.value == "error" and "parser" in (
                        last_name(func.value) or "").lower():
                    return True  # argparse's parser.error() exits with status 2
    return False


class Evaluator:
    """Three-valued evaluation of a condition in an srun-native task or a torchrun worker."""

    def __init__(self, module: PythonModule) -> None:
        self.module = module
        self.names = module.names

    # -- environment ----------------------------------------------------------------------
    @staticmethod
    def state(variable: str, where: str) -> str:
        if where == SRUN:
            if variable in TORCHRUN_VARIABLES:
                return "missing"
            if variable in SLURM_TASK_VARIABLES:
                return "present"
            return "unknown"
        return "present" if variable in TORCHRUN_VARIABLES else "unknown"

    def env_read(self, node: cst.CSTNode) -> Optional[Tuple[str, Optional[cst.BaseExpression]]]:
        """(variable, default expression) for ``os.environ.get("X"[, d])`` / ``os.getenv("X"[, d])``."""
        if not isinstance(node, cst.Call) or not self.names.refers_to(node.func, ENV_GETTERS):
            return None
        key = argument(node, 0, "key")
        if key is None or (variable := string_value(key.value)) is None:
            return None
        default = argument(node, 1, "default")
        return variable, (default.value if default is not None else None)

    def is_environ(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "keys" \
                and not node.args:
            node = node.func.value
        return self.names.refers_to(node, ENVIRON)

    def bound_read(self, node: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """The value of a name assigned exactly once in the file."""
        return self.names.value_of(node)

    # -- what a condition reads -------------------------------------------------------------
    def variables(self, node: cst.CSTNode, depth: int = 0) -> Set[str]:
        found: Set[str] = set()
        if depth > 8:
            return found
        not_variables: Set[int] = set()  # ``x.name`` and ``f(name=…)``: names that are no variable
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.Attribute):
                not_variables.add(id(sub.attr))
            elif isinstance(sub, cst.Arg) and sub.keyword is not None:
                not_variables.add(id(sub.keyword))
            if id(sub) in not_variables:
                continue
            read = self.env_read(sub)
            if read is not None:
                found.add(read[0])
            elif isinstance(sub, cst.Comparison) and len(sub.comparisons) == 1 and isinstance(
                    sub.comparisons[0].operator, (cst.In, cst.NotIn)) and self.is_environ(sub.comparisons[0].comparator):
                value = string_value(sub.left)
                if value is not None:
                    found.add(value)
            else:
                bound = self.bound_read(sub)
                if bound is not None:
                    found |= self.variables(bound, depth + 1)
        return found

    # -- values ---------------------------------------------------------------------------
    def truth(self, node: cst.CSTNode, where: str) -> Optional[bool]:
        return _truthy(self.value(node, where))

    def value(self, node: cst.CSTNode, where: str, depth: int = 0):
        if depth > 8:
            return UNKNOWN
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.value]
            bound = self.bound_read(node)
            return self.value(bound, where, depth + 1) if bound is not None else UNKNOWN
        if isinstance(node, (cst.SimpleString, cst.Integer)):
            try:
                return node.evaluated_value
            except Exception:
                return UNKNOWN
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = _truthy(self.value(node.expression, where, depth + 1))
            return UNKNOWN if inner is None else not inner
        if isinstance(node, cst.BooleanOperation):
            left = _truthy(self.value(node.left, where, depth + 1))
            right = _truthy(self.value(node.right, where, depth + 1))
            if isinstance(node.operator, cst.And):
                if left is False or right is False:
                    return False
                return True if left and right else UNKNOWN
            if left is True or right is True:
                return True
            return False if left is False and right is False else UNKNOWN
        if isinstance(node, cst.Call):
            read = self.env_read(node)
            if read is not None:
                variable, default = read
                state = self.state(variable, where)
                if state == "missing":
                    return None if default is None else self.value(default, where, depth + 1)
                return PRESENT if state == "present" else UNKNOWN
            if isinstance(node.func, cst.Name) and node.func.value in ("int", "str", "bool") and len(node.args) == 1:
                inner = self.value(node.args[0].value, where, depth + 1)
                if inner is UNKNOWN or inner is PRESENT:
                    return UNKNOWN
                try:
                    return {"int": int, "str": str, "bool": bool}[node.func.value](inner)
                except (TypeError, ValueError):
                    return UNKNOWN
            return UNKNOWN
        if isinstance(node, cst.Subscript) and self.is_environ(node.value) and len(node.slice) == 1 and isinstance(
                node.slice[0].slice, cst.Index):
            variable = string_value(node.slice[0].slice.value)
            state = self.state(variable, where) if variable is not None else "unknown"
            return PRESENT if state == "present" else UNKNOWN  # a missing one raises KeyError
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            operator = target.operator
            if isinstance(operator, (cst.In, cst.NotIn)):
                if not self.is_environ(target.comparator):
                    return UNKNOWN
                variable = string_value(node.left)
                state = self.state(variable, where) if variable is not None else "unknown"
                if state == "unknown":
                    return UNKNOWN
                return (state == "present") is isinstance(operator, cst.In)
            return _compare(self.value(node.left, where, depth + 1), operator,
                            self.value(target.comparator, where, depth + 1))
        return UNKNOWN


def _truthy(value) -> Optional[bool]:
    if value is UNKNOWN:
        return None
    if value is PRESENT:
        return True  # srun and torchrun never set these to ""
    return bool(value)


def _compare(left, operator: cst.BaseCompOp, right):
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    if left is PRESENT or right is PRESENT:
        other = right if left is PRESENT else left
        if other is PRESENT or other is not None:
            return UNKNOWN
        if isinstance(operator, (cst.Is, cst.Equal)):
            return False
        if isinstance(operator, (cst.IsNot, cst.NotEqual)):
            return True
        return UNKNOWN
    try:
        if isinstance(operator, cst.Is):
            return left is right if left is None or right is None else left == right
        if isinstance(operator, cst.IsNot):
            return left is not right if left is None or right is None else left != right
        if isinstance(operator, cst.Equal):
            return left == right
        if isinstance(operator, cst.NotEqual):
            return left != right
        if isinstance(operator, cst.LessThan):
            return left < right
        if isinstance(operator, cst.LessThanEqual):
            return left <= right
        if isinstance(operator, cst.GreaterThan):
            return left > right
        if isinstance(operator, cst.GreaterThanEqual):
            return left >= right
    except TypeError:
        return UNKNOWN
    return UNKNOWN


# -- the fix ------------------------------------------------------------------------------------
def _atoms(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of the condition's and/or/not structure."""
    if isinstance(node, cst.BooleanOperation):
        yield from _atoms(node.left)
        yield from _atoms(node.right)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not) and isinstance(
            node.expression, cst.BooleanOperation):
        yield from _atoms(node.expression)
    else:
        yield node


class _Swap(cst.CSTTransformer):
    """Replace the variable name in a copy of a test (following names bound to environment reads)."""

    def __init__(self, evaluator: Evaluator, variable: str, replacement: str) -> None:
        super().__init__()
        self.evaluator, self.variable, self.replacement = evaluator, variable, replacement
        self.not_variables: Set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_variables.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_variables.add(id(node.keyword))

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.BaseExpression:
        if string_value(original_node) != self.variable:
            return updated_node
        quote = original_node.quote
        return updated_node.with_changes(value=f"{original_node.prefix}{quote}{self.replacement}{quote}")

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if id(original_node) in self.not_variables:
            return updated_node
        bound = self.evaluator.bound_read(original_node)
        if bound is None or self.variable not in self.evaluator.variables(bound):
            return updated_node
        swapped = bound.visit(_Swap(self.evaluator, self.variable, self.replacement))
        if isinstance(swapped, (cst.Call, cst.Name, cst.Attribute, cst.Subscript, cst.SimpleString)) or swapped.lpar:
            return swapped  # binds tighter than any operator around the name
        return swapped.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _fixed_test(evaluator: Evaluator, test: cst.BaseExpression, exits_when: bool) -> Optional[cst.BaseExpression]:
    replacements: Dict[int, cst.BaseExpression] = {}
    for atom in _atoms(test):
        variables = evaluator.variables(atom)
        torchrun = [v for v in variables if v in TORCHRUN_VARIABLES]
        if not torchrun:
            continue
        if len(variables) != 1 or torchrun[0] not in SLURM_COUNTERPART:
            return None
        variable = torchrun[0]
        value = evaluator.truth(atom, SRUN)
        if value is None:
            return None
        clone = atom.visit(_Swap(evaluator, variable, SLURM_COUNTERPART[variable]))
        if evaluator.truth(clone, SRUN) is not (not value):
            return None
        operator = cst.And() if value else cst.Or()
        replacements[id(atom)] = cst.BooleanOperation(left=atom, operator=operator, right=clone)
    if not replacements:
        return None
    fixed = test.visit(_Combine(replacements, test))
    if evaluator.truth(fixed, SRUN) is exits_when:
        return None
    return fixed


class _Combine(cst.CSTTransformer):
    """Put each new ``a and b``/``a or b`` in place of its atom, parenthesized where precedence needs it."""

    def __init__(self, replacements: Dict[int, cst.BaseExpression], root: cst.CSTNode) -> None:
        super().__init__()
        self.replacements, self.root = replacements, root
        self.parents: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.parents.append(node)
        return id(node) not in self.replacements

    def on_leave(self, original_node, updated_node):
        self.parents.pop()
        replacement = self.replacements.get(id(original_node))
        if replacement is None:
            return updated_node
        parent = self.parents[-1] if self.parents else None
        operator = replacement.operator
        bare = original_node is self.root or (
            isinstance(parent, cst.BooleanOperation) and type(parent.operator) is type(operator))
        if bare:
            return replacement
        return replacement.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

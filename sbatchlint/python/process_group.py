"""SBL502's analysis: rank 0 doing long work while the other ranks wait in a collective.

The statements of the module and of every function are read in order as a list of events, each
tagged with who runs it: every rank, rank 0 only (inside ``if rank == 0:``, ``if
dist.get_rank() == 0:``, ``if is_rank_0():``, after ``if rank != 0: return``…) or the other ranks
only (the ``else`` of such a test). Calls to the file's own functions are followed, a loop body
counts twice (the next iteration's barrier waits too). Long work is saving or exporting weights,
``save_artifacts``, Hugging Face downloads and ``from_pretrained``; a wait is ``dist.barrier()``,
another torch.distributed collective, or a ``.barrier()``/``wait_for_everyone()`` method. The hazard
is long work on rank 0 followed by a wait that every rank (or the other ranks) reach, or the other
ranks waiting before rank 0 starts it: they give up at the process-group timeout.
"""
from __future__ import annotations


import libcst as cst

from ..lazyclass import dataclass
from ..model import variables
from .module import PythonModule, deep_recursion
from .nodes import argument, last_name, string_value, walk

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

INIT_PROCESS_GROUP = ("torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group")
COLLECTIVES = tuple(f"torch.distributed.{name}" for name in (
    "barrier", "monitored_barrier", "all_reduce", "all_gather", "all_gather_object", "all_gather_into_tensor",
    "broadcast", "broadcast_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor", "gather",
    "gather_object", "scatter", "scatter_object_list", "all_to_all", "all_to_all_single",
))
WAIT_METHODS = frozenset({"barrier", "wait_for_everyone", "monitored_barrier"})
LONG_WORK = frozenset({
    "save_artifacts", "save_pretrained", "save_hf_weights", "export", "export_ckpt", "import_ckpt",
    "snapshot_download", "hf_hub_download", "from_pretrained", "push_to_hub", "load_dataset", "save_to_disk",
})
LONG_WORK_QUALIFIED = ("torch.save", "huggingface_hub.snapshot_download", "huggingface_hub.hf_hub_download",
                       "datasets.load_dataset")
# A function name made of one word of each list (save_checkpoint, download_model, export_to_hf…).
_ACTIONS = frozenset({"save", "export", "download", "convert", "upload", "push", "merge"})
_OBJECTS = frozenset({"checkpoint", "checkpoints", "ckpt", "weights", "model", "artifacts", "pretrained", "hf",
                      "hub", "snapshot", "state", "dataset", "safetensors"})
RANK_ZERO_PREDICATES = frozenset({
    "is_rank_0", "is_rank0", "is_rank_zero", "is_main_process", "is_main_rank", "is_global_rank_zero",
    "is_global_zero", "is_master", "is_main", "is_first_rank", "is_local_main_process", "is_local_rank_0",
    "is_world_process_zero", "is_local_process_zero", "is_rank_zero_process",
})
RANK_VARIABLES = variables.RANK_OR_LOCAL
EXITS = ("sys.exit", "exit", "quit", "os._exit")
MAX_EVENTS = 400
MAX_CALL_DEPTH = 6

ALL, RANK0, OTHERS, NOBODY = "all", "rank 0", "others", "nobody"


@dataclass(frozen=True)
class Event:
    kind: str  # "work" or "wait"
    who: str  # ALL, RANK0 or OTHERS
    call: cst.Call  # the call as written where it happens (maybe inside a called function)


@dataclass(frozen=True)
class Hazard:
    work: Event
    wait: Event


def init_calls_without_timeout(module: PythonModule) -> List[cst.Call]:
    """``init_process_group`` calls that leave the timeout at its default."""
    assert module.tree is not None
    found = []
    for node in walk(module.tree):
        if not isinstance(node, cst.Call) or not module.names.refers_to(node.func, INIT_PROCESS_GROUP):
            continue
        if any(arg.star for arg in node.args):
            continue  # **kwargs or *args may carry a timeout
        if argument(node, 2, "timeout") is not None:
            continue
        found.append(node)
    return found


def find_hazard(module: PythonModule) -> Optional[Hazard]:
    return module.derived("python.rank0-hazard", _find_hazard)


def _find_hazard(module: PythonModule) -> Optional[Hazard]:
    with deep_recursion():
        return _first_hazard(module)


def _first_hazard(module: PythonModule) -> Optional[Hazard]:
    assert module.tree is not None
    scanner = _Scanner(module)
    scopes: List[Sequence[cst.CSTNode]] = [module.tree.body]
    for functions in module.names.functions.values():
        scopes.extend(f.body.body for f in functions if isinstance(f.body, cst.IndentedBlock))
    for statements in scopes:
        hazard = _hazard(scanner.block(statements, ALL, ()))
        if hazard is not None:
            return hazard
    return None


def _hazard(events: List[Event]) -> Optional[Hazard]:
    first_work: Optional[Event] = None
    others_waiting: Optional[Event] = None
    for event in events:
        if event.kind == "work" and others_waiting is not None and event.who in (ALL, RANK0):
            return Hazard(event, others_waiting)  # rank 0 skipped the others' barrier and works
        if event.kind == "work" and event.who == RANK0:
            first_work = first_work or event
        elif event.kind == "wait":
            if event.who == OTHERS:
                others_waiting = others_waiting or event
            if first_work is not None and event.who in (ALL, OTHERS):
                return Hazard(first_work, event)
    return None


def _narrow(who: str, only: Optional[str]) -> str:
    if only is None or who == only:
        return who
    if who == ALL:
        return only
    return NOBODY


def _opposite(who: Optional[str]) -> Optional[str]:
    return {RANK0: OTHERS, OTHERS: RANK0}.get(who) if who is not None else None


class _Scanner:
    def __init__(self, module: PythonModule) -> None:
        self.module = module
        self.names = module.names
        self._functions: Dict[int, List[Event]] = {}

    # -- statements -----------------------------------------------------------------------
    def block(self, statements: Sequence[cst.CSTNode], who: str, stack: Tuple[int, ...]) -> List[Event]:
        events: List[Event] = []
        for statement in statements:
            if who == NOBODY or len(events) > MAX_EVENTS:
                break
            events.extend(self.statement(statement, who, stack))
            if isinstance(statement, cst.If) and statement.orelse is None and _leaves(self.module, statement.body):
                # ``if rank != 0: return`` — what follows runs on rank 0 only
                who = _narrow(who, _opposite(rank_zero(self.module, statement.test)))
        return events

    def statement(self, node: cst.CSTNode, who: str, stack: Tuple[int, ...]) -> List[Event]:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return []
        if isinstance(node, cst.If):
            polarity = rank_zero(self.module, node.test)
            events = self.calls(node.test, who, stack)
            events += self.block(_body(node.body), _narrow(who, polarity), stack)
            orelse = node.orelse
            if isinstance(orelse, cst.If):
                events += self.statement(orelse, _narrow(who, _opposite(polarity)), stack)
            elif isinstance(orelse, cst.Else):
                events += self.block(_body(orelse.body), _narrow(who, _opposite(polarity)), stack)
            return events
        if isinstance(node, (cst.For, cst.While)):
            head = self.calls(node.iter if isinstance(node, cst.For) else node.test, who, stack)
            body = self.block(_body(node.body), who, stack)
            rest = self.block(_body(node.orelse.body), who, stack) if node.orelse is not None else []
            return head + body + body + rest
        if isinstance(node, cst.Try):
            events = self.block(_body(node.body), who, stack)
            for handler in node.handlers:
                events += self.block(_body(handler.body), who, stack)
            for part in (node.orelse, node.finalbody):
                if part is not None:
                    events += self.block(_body(part.body), who, stack)
            return events
        if isinstance(node, cst.With):
            events = []
            for item in node.items:
                events += self.calls(item.item, who, stack)
            return events + self.block(_body(node.body), who, stack)
        return self.calls(node, who, stack)

    # -- expressions ----------------------------------------------------------------------
    def calls(self, node: cst.CSTNode, who: str, stack: Tuple[int, ...]) -> List[Event]:
        events: List[Event] = []
        for sub in walk(node, into_scopes=False):
            if not isinstance(sub, cst.Call):
                continue
            local = self.names.called_functions(sub)
            if self.is_wait(sub) and not local:
                events.append(Event("wait", who, sub))
            elif local:  # the file's own function: what it does, not what it is called
                for function in local:
                    for event in self.function(function, stack):
                        narrowed = _narrow(who, None if event.who == ALL else event.who)
                        if narrowed != NOBODY:
                            events.append(Event(event.kind, narrowed, event.call))
            elif self.is_long_work(sub):
                events.append(Event("work", who, sub))
        return events

    def function(self, function: cst.FunctionDef, stack: Tuple[int, ...]) -> List[Event]:
        key = id(function)
        if key in stack or len(stack) >= MAX_CALL_DEPTH or not isinstance(function.body, cst.IndentedBlock):
            return []
        if key not in self._functions:
            self._functions[key] = self.block(function.body.body, ALL, stack + (key,))[:MAX_EVENTS]
        return self._functions[key]

    def is_wait(self, call: cst.Call) -> bool:
        if self.names.refers_to(call.func, COLLECTIVES):
            return True
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in WAIT_METHODS

    def is_long_work(self, call: cst.Call) -> bool:
        if self.names.refers_to(call.func, LONG_WORK_QUALIFIED):
            return True
        name = last_name(call.func)
        if name is None:
            return False
        if name in LONG_WORK:
            return True
        words = set(name.lower().split("_"))
        return bool(words & _ACTIONS) and bool(words & _OBJECTS)


def _body(suite: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return suite.body


def _leaves(module: PythonModule, suite: cst.BaseSuite) -> bool:
    """The block always ends with return/raise/continue/exit, so code after the ``if`` skips it."""
    body = list(suite.body)
    if not body:
        return False
    last = body[-1]
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else ([last] if isinstance(suite, cst.SimpleStatementSuite) else [])
    if not smalls:
        return False
    final = smalls[-1]
    if isinstance(final, (cst.Return, cst.Raise, cst.Continue)):
        return True
    return isinstance(final, cst.Expr) and isinstance(final.value, cst.Call) and module.names.refers_to(
        final.value.func, EXITS)


# -- which ranks a test selects ---------------------------------------------------------------------
def rank_zero(module: PythonModule, test: cst.BaseExpression, depth: int = 0) -> Optional[str]:
    """RANK0 when ``test`` holds on rank 0 only, OTHERS when on every rank but 0, else None."""
    if depth > 6:
        return None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        if _is_rank(module, test.expression):
            return RANK0  # not rank
        return _opposite(rank_zero(module, test.expression, depth + 1))
    if isinstance(test, cst.BooleanOperation):
        left = rank_zero(module, test.left, depth + 1)
        right = rank_zero(module, test.right, depth + 1)
        if isinstance(test.operator, cst.And):
            if RANK0 in (left, right) and OTHERS in (left, right):
                return None
            return left or right
        return left if left is not None and left == right else None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        left, right, operator = test.left, target.comparator, target.operator
        if _is_zero(left) and _is_rank(module, right):
            left, right = right, left
            operator = {cst.GreaterThan: cst.LessThan(), cst.LessThan: cst.GreaterThan()}.get(type(operator), operator)
        if not _is_rank(module, left):
            return None
        if _is_zero(right):
            if isinstance(operator, (cst.Equal, cst.Is, cst.LessThanEqual)):
                return RANK0
            if isinstance(operator, (cst.NotEqual, cst.IsNot, cst.GreaterThan)):
                return OTHERS
        if _is_one(right):
            if isinstance(operator, cst.LessThan):
                return RANK0
            if isinstance(operator, cst.GreaterThanEqual):
                return OTHERS
        return None
    if _is_rank(module, test):
        return OTHERS  # ``if rank:`` holds on every rank but 0
    if isinstance(test, cst.Call):
        name = last_name(test.func)
        if name in RANK_ZERO_PREDICATES:
            return RANK0
        for function in module.names.called_functions(test):
            returned = _single_return(function)
            if returned is not None:
                return rank_zero(module, returned, depth + 1)
        return None
    if isinstance(test, (cst.Name, cst.Attribute)):
        if last_name(test) in RANK_ZERO_PREDICATES:
            return RANK0
        bound = module.names.value_of(test)
        if bound is not None:
            return rank_zero(module, bound, depth + 1)
    return None


def _single_return(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    body = function.body.body
    if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        small = body[0].body[0]
        if isinstance(small, cst.Return) and small.value is not None:
            return small.value
    if isinstance(function.body, cst.SimpleStatementSuite) and len(body) == 1 and isinstance(body[0], cst.Return):
        return body[0].value
    return None


def _is_zero(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Integer) and node.value == "0"


def _is_one(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Integer) and node.value == "1"


def _is_rank(module: PythonModule, node: cst.CSTNode) -> bool:
    """A global or local rank: ``rank``, ``args.rank``, ``dist.get_rank()``, ``int(os.environ["RANK"])``."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        name = (last_name(node) or "").lower()
        return name.endswith("rank") or name in ("rank_id", "procid", "proc_id")
    if isinstance(node, cst.Call):
        name = (last_name(node.func) or "").lower()
        if name.endswith("rank"):
            return True
        if name == "int" and len(node.args) == 1:
            return _is_rank(module, node.args[0].value)
        if module.names.refers_to(node.func, ("os.environ.get", "os.getenv")) and node.args:
            return string_value(node.args[0].value) in RANK_VARIABLES
        return False
    if isinstance(node, cst.Subscript) and module.names.refers_to(node.value, ("os.environ",)) and len(node.slice) == 1:
        index = node.slice[0].slice
        return isinstance(index, cst.Index) and string_value(index.value) in RANK_VARIABLES
    return False


def timeout_fix(module: PythonModule, call: cst.Call) -> Optional[cst.Module]:
    """The tree with ``timeout=timedelta(minutes=60)`` added to ``call`` (and the import it needs)."""
    from .rewrite import add_import, add_keyword, replace

    assert module.tree is not None
    names = module.names
    importing = None
    timedelta = names.module_name_for("datetime.timedelta")
    if timedelta is not None:
        value = cst.parse_expression(f"{timedelta}(minutes=60)")
    elif names.module_name_for("datetime") is not None:
        value = cst.parse_expression(f"{names.module_name_for('datetime')}.timedelta(minutes=60)")
    elif names.is_free("timedelta"):
        value = cst.parse_expression("timedelta(minutes=60)")
        importing = "from datetime import timedelta\n"
    else:
        return None  # ``timedelta`` means something else here
    tree = replace(module.tree, {id(call): add_keyword(call, "timeout", value)})
    if importing is not None:
        tree = add_import(tree, importing)
    return tree

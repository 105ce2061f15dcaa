"""SBL503's analysis: an ``except OSError`` around artifact or remote-code loading.

``save_artifacts`` and any loader called with ``trust_remote_code=True`` import code at run time (a
model's own ``modeling_*.py``), so besides ``OSError`` (missing file, no network) they raise
``ImportError`` when that code needs a package the container lacks. A ``try`` that catches the
first but not the second lets the import error kill rank 0, and the other ranks wait at the next
barrier until the timeout. Calls into the file's own functions are followed.
"""
from __future__ import annotations


import libcst as cst

from ..lazyclass import dataclass
from .module import PythonModule
from .nodes import last_name, walk

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

ARTIFACT_LOADERS = frozenset({"save_artifacts"})
OS_ERRORS = frozenset({"OSError", "IOError", "EnvironmentError", "FileNotFoundError", "PermissionError",
                       "FileExistsError", "IsADirectoryError", "NotADirectoryError", "ConnectionError", "TimeoutError"})
CATCHES_IMPORT = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
MAX_CALL_DEPTH = 4


@dataclass(frozen=True)
class NarrowExcept:
    handler: cst.ExceptHandler
    caught: str  # the OSError-like class as written
    call: cst.Call  # the artifact / remote-code call the try protects
    what: str  # "save_artifacts" or "trust_remote_code=True"


def find_narrow_excepts(module: PythonModule) -> List[NarrowExcept]:
    return module.derived("python.narrow-excepts", _find)


def _find(module: PythonModule) -> List[NarrowExcept]:
    assert module.tree is not None
    memo: Dict[int, Optional[Tuple[cst.Call, str]]] = {}
    found: List[NarrowExcept] = []
    for node in walk(module.tree):
        if not isinstance(node, cst.Try) or not node.handlers:
            continue
        classes = [_classes(handler) for handler in node.handlers]
        if any(names is None or not CATCHES_IMPORT.isdisjoint(names) or any("Import" in n for n in names)
               for names in classes):
            continue  # a bare except, or something that catches ImportError already
        narrow = [(h, names) for h, names in zip(node.handlers, classes) if names and not OS_ERRORS.isdisjoint(names)]
        if not narrow:
            continue
        loading = _loading(module, node.body, memo, ())
        if loading is None:
            continue
        for handler, names in narrow:
            caught = next(n for n in names if n in OS_ERRORS)
            found.append(NarrowExcept(handler, caught, loading[0], loading[1]))
    return found


def _classes(handler: cst.ExceptHandler) -> Optional[List[str]]:
    """The exception classes a handler names (last identifier); None for a bare ``except:``."""
    kind = handler.type
    if kind is None:
        return None
    elements = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
    return [last_name(e) or "?" for e in elements]


def _loading(module: PythonModule, block: cst.CSTNode, memo: Dict[int, Optional[Tuple[cst.Call, str]]],
             stack: Tuple[int, ...]) -> Optional[Tuple[cst.Call, str]]:
    for node in walk(block, into_scopes=False):
        if not isinstance(node, cst.Call):
            continue
        if last_name(node.func) in ARTIFACT_LOADERS:
            return node, last_name(node.func) or ""
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "trust_remote_code" and not (
                    isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None")):
                return node, "trust_remote_code=" + (arg.value.value if isinstance(arg.value, cst.Name) else "…")
        for function in module.names.called_functions(node):
            key = id(function)
            if key in stack or len(stack) >= MAX_CALL_DEPTH:
                continue
            if key not in memo:
                memo[key] = _loading(module, function.body, memo, stack + (key,))
            if memo[key] is not None:
                return memo[key]
    return None


def widened(handler: cst.ExceptHandler) -> cst.ExceptHandler:
    """``except OSError:`` → ``except (OSError, ImportError):`` (appended to an existing tuple)."""
    new = cst.Element(cst.Name("ImportError"))
    kind = handler.type
    if isinstance(kind, cst.Tuple) and kind.elements:
        elements = list(kind.elements)
        last = elements[-1]
        comma = last.comma if isinstance(last.comma, cst.Comma) else cst.Comma()
        if isinstance(comma.whitespace_after, cst.SimpleWhitespace) and not comma.whitespace_after.value:
            comma = comma.with_changes(whitespace_after=cst.SimpleWhitespace(" "))
        elements[-1] = last.with_changes(comma=comma)
        if isinstance(last.comma, cst.Comma) and isinstance(last.comma.whitespace_after, cst.ParenthesizedWhitespace):
            new = new.with_changes(comma=cst.Comma())  # one per line: keep the trailing comma style
        return handler.with_changes(type=kind.with_changes(elements=elements + [new]))
    assert kind is not None
    tuple_ = cst.Tuple(
        elements=[cst.Element(kind.with_changes(lpar=[], rpar=[]), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), new],
        lpar=[cst.LeftParen()],
        rpar=[cst.RightParen()],
    )
    return handler.with_changes(type=tuple_)

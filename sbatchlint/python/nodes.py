"""Small queries over libcst nodes: dotted names, string literals, and a fast subtree walk."""
from __future__ import annotations


import libcst as cst

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Iterator, Optional, Tuple

# Nodes that hold no code a rule looks at: skipping them makes a walk several times cheaper.
_LAYOUT = (
    cst.BaseParenthesizableWhitespace,
    cst.Comment,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.Comma,
    cst.Dot,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Colon,
    cst.AssignEqual,
    cst.Semicolon,
)
SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_FIELDS: Dict[type, Tuple[str, ...]] = {}
# type → "code" (a node worth visiting), "layout" (a node to skip) or "" (not a node). The node
# classes are ABCs, whose isinstance() is slow: asking once per type keeps a walk cheap.
_KINDS: Dict[type, str] = {}


def _kind(kind: type) -> str:
    found = _KINDS.get(kind)
    if found is None:
        if not issubclass(kind, cst.CSTNode):
            found = ""
        else:
            found = "layout" if issubclass(kind, _LAYOUT) else "code"
        _KINDS[kind] = found
    return found


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The child nodes that carry code, without whitespace and punctuation."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(node.__dataclass_fields__)
    for name in names:
        value = getattr(node, name)
        kind = _kind(type(value))
        if kind == "code":
            yield value
        elif not kind and isinstance(value, (tuple, list)):
            for item in value:
                if _kind(type(item)) == "code":
                    yield item


def walk(node: cst.CSTNode, into_scopes: bool = True) -> Iterator[cst.CSTNode]:
    """``node`` and everything under it; with ``into_scopes=False`` nested defs, classes and lambdas
    are not entered (their code does not run where they are written)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and not into_scopes and type(current) in SCOPES:
            continue
        stack.extend(reversed(list(children(current))))


def dotted(node: Optional[cst.CSTNode]) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def last_name(node: cst.CSTNode) -> Optional[str]:
    """The final identifier of ``f``, ``a.b.f`` or ``a().f``: what a call is named as written."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def string_value(node: cst.CSTNode) -> Optional[str]:
    """The value of a plain string literal (no f-string, no implicit concatenation)."""
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:
            return None
        return value if isinstance(value, str) else None
    return None


def argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.Arg]:
    """The argument passed at ``position`` or as ``keyword=`` (None when absent or behind ``*``)."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
            continue
        if positional == position:
            return arg
        positional += 1
    return None

"""libcst transformations the Python fixes share. Each returns a new tree; ``PythonModule.edits``
turns it into byte edits, so everything a transformation does not touch stays byte-identical."""
from __future__ import annotations


import libcst as cst

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Optional


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: Dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def replace(tree: cst.Module, replacements: Dict[int, cst.CSTNode]) -> cst.Module:
    """``tree`` with the nodes whose id is a key replaced (by identity, never by equality)."""
    from .module import deep_recursion

    with deep_recursion():
        result = tree.visit(_Replace(replacements))
    assert isinstance(result, cst.Module)
    return result


def add_keyword(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``keyword=value`` appended, laid out like its other arguments: on its own line
    when they are one per line, after ``, `` otherwise, keeping a trailing comma."""
    new = cst.Arg(
        value=value,
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    separator = _separator(call)
    if isinstance(last.comma, cst.Comma):
        comma = last.comma
        new = new.with_changes(comma=cst.Comma(whitespace_before=comma.whitespace_before,
                                               whitespace_after=comma.whitespace_after))
        last = last.with_changes(comma=comma.with_changes(whitespace_after=separator))
    else:
        new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(
            comma=cst.Comma(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=separator),
            whitespace_after_arg=cst.SimpleWhitespace(""),
        )
    return call.with_changes(args=args[:-1] + [last, new])


def _separator(call: cst.Call) -> cst.BaseParenthesizableWhitespace:
    """The whitespace between two arguments of this call: a line break and the arguments' indent
    when they are one per line (without any comment that follows a comma), else one space."""
    args = call.args
    candidates = [a.comma.whitespace_after for a in args[:-1] if isinstance(a.comma, cst.Comma)]
    candidates.append(call.whitespace_before_args)
    for whitespace in candidates:
        if isinstance(whitespace, cst.ParenthesizedWhitespace):
            return cst.ParenthesizedWhitespace(
                first_line=cst.TrailingWhitespace(),
                empty_lines=[],
                indent=whitespace.indent,
                last_line=whitespace.last_line,
            )
    return cst.SimpleWhitespace(" ")


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def add_import(tree: cst.Module, statement: str) -> Optional[cst.Module]:
    """``tree`` with an import line added after the leading imports (after the docstring and any
    ``from __future__`` when there are none)."""
    try:
        line = cst.parse_statement(statement, config=tree.config_for_parsing)
    except cst.ParserSyntaxError:  # pragma: no cover - our own statements parse
        return None
    body = list(tree.body)
    index = 0
    for position, item in enumerate(body):
        if position == 0 and _is_docstring(item):
            index = 1
        elif _is_import_line(item):
            index = position + 1
        else:
            break
    body.insert(index, line)
    return tree.with_changes(body=body)

"""One line per finding: ``path:line:col: CODE message``."""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List



def render(results, out, color: bool = False, **_: object) -> None:
    for result in results:
        if result.source is None:
            continue
        for d in result.diagnostics:
            line, column = result.source.position(d.span.start)
            message = result.redact(d.message).replace("\n", " ")
            out.write(f"{result.path}:{line}:{column}: {d.code} {message}\n")

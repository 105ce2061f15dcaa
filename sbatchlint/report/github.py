"""GitHub Actions workflow commands: one annotation per finding."""
from __future__ import annotations

from . import with_notes

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(results, out, **_: object) -> None:
    for result in results:
        if result.source is None:
            continue
        for d in result.diagnostics:
            line, column = result.source.position(d.span.start)
            end_line, end_column = result.source.position(d.span.end)
            properties = ",".join(
                [
                    f"file={_escape_property(result.path)}",
                    f"line={line}",
                    f"col={column}",
                    f"endLine={end_line}",
                    f"endColumn={end_column}",
                    f"title={_escape_property(d.code + ' ' + d.name)}",
                ]
            )
            out.write(f"::{LEVEL[d.severity.value]} {properties}::{_escape_data(with_notes(result, d))}\n")

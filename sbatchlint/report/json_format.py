"""A JSON list of findings, one object each, for tools."""
from __future__ import annotations

import json

from .links import rule_url


def diagnostic_object(result, d) -> dict:
    source = result.source
    line, column = source.position(d.span.start)
    end_line, end_column = source.position(d.span.end)
    fix = None
    if d.fix is not None:
        edits = []
        for edit in d.fix.edits:
            e_line, e_col = source.position(edit.span.start)
            e_end_line, e_end_col = source.position(edit.span.end)
            edits.append(
                {
                    "content": result.redact(edit.text),
                    "line": e_line,
                    "column": e_col,
                    "end_line": e_end_line,
                    "end_column": e_end_col,
                }
            )
        fix = {
            "applicability": d.fix.applicability.value,
            "message": result.redact(d.fix.description),
            "edits": edits,
        }
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "path": result.path,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "message": result.redact(d.message),
        "help": result.redact(d.help) if d.help else None,
        "notes": [result.redact(note) for note in d.notes],
        "fix": fix,
        "url": rule_url(d.code),
    }


def render(results, out, **_: object) -> None:
    objects = [diagnostic_object(r, d) for r in results if r.source is not None for d in r.diagnostics]
    json.dump(objects, out, indent=2, ensure_ascii=False)
    out.write("\n")

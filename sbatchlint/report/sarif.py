"""SARIF 2.1.0, for GitHub code scanning and other SARIF consumers."""
from __future__ import annotations

import json

from .. import __version__
from . import with_notes

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _region(source, span) -> dict:
    line, column = source.position(span.start)
    end_line, end_column = source.position(span.end)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _rules(results) -> list:
    from .. import registry
    from .links import rule_url

    used = sorted({d.code for r in results for d in r.diagnostics})
    out = []
    for code in used:
        try:
            rule = registry.get(code)
        except KeyError:
            out.append({"id": code})
            continue
        out.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": " ".join(rule.what.split())},
                "help": {"text": " ".join(rule.why.split()), "markdown": " ".join(rule.why.split())},
                "helpUri": rule_url(rule.code),
                "defaultConfiguration": {"level": LEVEL[rule.severity.value]},
                "properties": {"fix": rule.fix_availability()},
            }
        )
    return out


def document(results) -> dict:
    rules = _rules(results)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    sarif_results = []
    for result in results:
        if result.source is None:
            continue
        source = result.source
        for d in result.diagnostics:
            item = {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": LEVEL[d.severity.value],
                "message": {"text": with_notes(result, d)},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": result.path.replace("\\", "/")},
                            "region": _region(source, d.span),
                        }
                    }
                ],
            }
            if d.fix is not None and d.fix.edits:
                item["fixes"] = [
                    {
                        "description": {"text": result.redact(d.fix.description)},
                        "artifactChanges": [
                            {
                                "artifactLocation": {"uri": result.path.replace("\\", "/")},
                                "replacements": [
                                    {
                                        "deletedRegion": _region(source, edit.span),
                                        "insertedContent": {"text": result.redact(edit.text)},
                                    }
                                    for edit in d.fix.edits
                                ],
                            }
                        ],
                    }
                ]
                item["properties"] = {"applicability": d.fix.applicability.value}
            sarif_results.append(item)
    invocation = {"executionSuccessful": not any(r.error for r in results)}
    notifications = [
        {"level": "error", "message": {"text": r.error}} for r in results if r.error
    ]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "sbatchlint",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "results": sarif_results,
            }
        ],
    }


def render(results, out, **_: object) -> None:
    json.dump(document(results), out, indent=2, ensure_ascii=False)
    out.write("\n")

"""GitLab Code Quality report (a JSON list of issues with fingerprints)."""
from __future__ import annotations

import hashlib
import json

from . import explanation

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def render(results, out, **_: object) -> None:
    issues = []
    for result in results:
        if result.source is None:
            continue
        seen = {}
        for d in result.diagnostics:
            line, column = result.source.position(d.span.start)
            end_line, _ = result.source.position(d.span.end)
            # stable across unrelated edits: code, path, the flagged text, its occurrence number
            flagged = result.redact(result.source.text(d.span))
            key = f"{d.code}\0{result.path}\0{flagged}"
            seen[key] = seen.get(key, 0) + 1
            fingerprint = hashlib.sha256(f"{key}\0{seen[key]}".encode("utf-8")).hexdigest()
            issue = {
                "type": "issue",
                "check_name": d.code,
                "description": f"{d.code} {result.redact(d.message)}",
                "categories": ["Bug Risk"] if d.severity.value == "error" else ["Style"],
                "severity": SEVERITY[d.severity.value],
                "fingerprint": fingerprint,
                "location": {"path": result.path, "lines": {"begin": line, "end": end_line}},
            }
            details = explanation(result, d)
            if details:  # the Code Climate issue's markdown body: notes and help
                issue["content"] = {"body": details}
            issues.append(issue)
    json.dump(issues, out, indent=2, ensure_ascii=False)
    out.write("\n")

"""ShellCheck alongside: run it on a script and report its findings as ``SC####`` diagnostics.

Used when ``--shellcheck`` (or ``shellcheck = true`` in the configuration) asks for it. The
findings go through the same selection (``--select SC``, ``--ignore SC2086``), suppression
comments and output formats as sbatchlint's own.
"""
from __future__ import annotations


from .diagnostics import Diagnostic, Severity
from .source import Source, Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional

LEVELS = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO, "style": Severity.INFO}
NOT_INSTALLED = "shellcheck is not installed (pip install 'sbatchlint[shellcheck]'); its checks were skipped"


def executable() -> Optional[str]:
    import shutil

    return shutil.which("shellcheck")


def is_code(code: str) -> bool:
    return code.upper().startswith("SC") and code[2:].isdigit()


def _offset(source: Source, line: int, column: int) -> int:
    """ShellCheck's json1 columns count characters (a tab is one) from 1."""
    line = max(1, min(line, max(1, source.line_count)))
    span = source.line_span(line)
    text = source.decode(source.data[span.start : span.end])
    prefix = text[: max(0, column - 1)]
    return min(span.end, span.start + len(source.encode(prefix)))


def run(source: Source, timeout: float = 60.0) -> List[Diagnostic]:
    import json
    import subprocess

    program = executable()
    if program is None:
        return []
    try:
        done = subprocess.run(
            [program, "--format=json1", "--shell=bash", "-"],
            input=source.data, capture_output=True, timeout=timeout,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    try:
        comments = json.loads(done.stdout.decode("utf-8", errors="replace") or "{}").get("comments", [])
    except ValueError:
        return []
    out = []
    for comment in comments:
        start = _offset(source, comment.get("line", 1), comment.get("column", 1))
        end = _offset(source, comment.get("endLine", comment.get("line", 1)), comment.get("endColumn", 1))
        code = f"SC{comment.get('code')}"
        out.append(
            Diagnostic(
                code=code,
                name="shellcheck",
                severity=LEVELS.get(comment.get("level"), Severity.INFO),
                span=Span(start, max(start, end)),
                message=str(comment.get("message", "")),
                path=source.path,
                help=f"https://www.shellcheck.net/wiki/{code}",
            )
        )
    return out

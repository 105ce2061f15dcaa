"""The command line of ``sbatchlint diagnose``: inputs, exit codes, output."""
from __future__ import annotations

import sys
from typing import List, Optional, Tuple

EXIT_CAUSE, EXIT_NO_CAUSE, EXIT_BAD_INPUT = 0, 1, 2


def job_script_findings(path: str, codes) -> Tuple[List[dict], List[str], Optional[str]]:
    """The findings of ``path`` whose rules the diagnoses name (the ones that explain the
    failure), the secret values the output must hide, and an error for a file that cannot be read."""
    from ..linter import Options
    from ..runner import Job, run_job

    result = run_job(Job(path, path, Options()))
    if result.error:
        return [], list(result.secrets or ()), result.error
    wanted = set(codes)
    out = []
    for d in result.diagnostics:
        if d.code in wanted:
            line, column = result.source.position(d.span.start)
            out.append({"path": path, "line": line, "column": column, "code": d.code, "name": d.name,
                        "message": d.message})
    return out, list(result.secrets or ()), None


def command_line(logs: List[str], job_script: Optional[str], output_format: str, color: bool = False) -> int:
    import click

    from . import InputError, diagnose, render
    from ..redaction import RedactingStream

    out = RedactingStream(sys.stdout)
    if not logs:
        click.echo("sbatchlint: error: no log given: try `sbatchlint diagnose slurm-1234.out` ('-' reads stdin)", err=True)
        return EXIT_BAD_INPUT
    if logs.count("-") > 1:
        click.echo("sbatchlint: error: '-' (stdin) can be given only once", err=True)
        return EXIT_BAD_INPUT
    try:
        result = diagnose(logs, stdin=getattr(sys.stdin, "buffer", sys.stdin) if "-" in logs else None)
    except InputError as err:
        click.echo(f"sbatchlint: error: {render.mask(str(err))}", err=True)
        return EXIT_BAD_INPUT
    if job_script:
        codes = {code for f in result.verdict.findings for code in f.kind.rules}
        result.lint, secrets, error = job_script_findings(job_script, codes)
        out.remember(secrets)
        if error:
            click.echo(f"sbatchlint: error: {render.mask(error)}", err=True)
            return EXIT_BAD_INPUT
    if output_format == "json":
        out.write(render.json_text(result, logs))
    else:
        out.write(render.text(result, logs, color=color))
    sys.stdout.flush()
    return EXIT_CAUSE if result.verdict.found else EXIT_NO_CAUSE

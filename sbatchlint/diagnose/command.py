"""The command line of ``sbatchlint diagnose``: inputs, exit codes, output."""
from __future__ import annotations

import sys
from typing import List, Optional

EXIT_CAUSE, EXIT_NO_CAUSE, EXIT_BAD_INPUT = 0, 1, 2


def job_script_findings(path: str, codes) -> List[dict]:
    """The findings of ``path`` whose rules the diagnoses name (the ones that explain the failure)."""
    from ..linter import lint
    from ..source import Source

    source = Source.read(path)
    wanted = set(codes)
    out = []
    for d in lint(source):
        if d.code in wanted:
            line, column = source.position(d.span.start)
            out.append({"path": path, "line": line, "column": column, "code": d.code, "name": d.name,
                        "message": d.message})
    return out


def command_line(logs: List[str], job_script: Optional[str], output_format: str, color: bool = False) -> int:
    import click

    from . import InputError, diagnose, render
    from ..redaction import RedactingStream

    out = RedactingStream(click.get_text_stream("stdout"))
    if not logs:
        click.echo("sbatchlint: error: no log given: try `sbatchlint diagnose slurm-1234.out` ('-' reads stdin)", err=True)
        return EXIT_BAD_INPUT
    if logs.count("-") > 1:
        click.echo("sbatchlint: error: '-' (stdin) can be given only once", err=True)
        return EXIT_BAD_INPUT
    try:
        result = diagnose(logs, stdin=click.get_binary_stream("stdin") if "-" in logs else None)
    except InputError as err:
        click.echo(f"sbatchlint: error: {render.mask(str(err))}", err=True)
        return EXIT_BAD_INPUT
    if job_script:
        from ..source import InputError as SourceError

        codes = {code for f in result.verdict.findings for code in f.kind.rules}
        try:
            result.lint = job_script_findings(job_script, codes)
        except (OSError, SourceError) as err:
            message = getattr(err, "strerror", None) or str(err)
            click.echo(f"sbatchlint: error: {job_script}: {render.mask(message)}", err=True)
            return EXIT_BAD_INPUT
    if output_format == "json":
        out.write(render.json_text(result, logs))
    else:
        out.write(render.text(result, logs, color=color))
    sys.stdout.flush()
    return EXIT_CAUSE if result.verdict.found else EXIT_NO_CAUSE

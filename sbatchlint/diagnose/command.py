"""The command line of ``sbatchlint diagnose``: inputs, exit codes, output."""
from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

EXIT_CAUSE, EXIT_NO_CAUSE, EXIT_BAD_INPUT = 0, 1, 2


def job_script_findings(path: str, codes, display: Optional[str] = None,
                        data: Optional[bytes] = None) -> Tuple[List[dict], List[str], Optional[str]]:
    """The findings of ``path`` (or of ``data``, a script Slurm kept, shown as ``display``) whose
    rules the diagnoses name (the ones that explain the failure), the secret values the output
    must hide, and an error for a file that cannot be read."""
    from ..linter import Options
    from ..runner import Job, run_job

    display = display or path
    if data is not None:
        result = run_job(Job("-", display, Options(), stdin_data=data))
    else:
        result = run_job(Job(path, display, Options()))
    if result.error:
        return [], list(result.secrets or ()), result.error
    wanted = set(codes)
    out = []
    for d in result.diagnostics:
        if d.code in wanted:
            where, source = display, result.source
            if d.path != result.path:  # reported in a file the script sources, at its own lines
                from ..source import InputError, Source

                try:
                    where, source = d.path, Source.read(d.path)
                except InputError:
                    continue
            line, column = source.position(d.span.start)
            out.append({"path": where, "line": line, "column": column, "code": d.code, "name": d.name,
                        "message": d.message})
    return out, list(result.secrets or ()), None


def command_line(logs: List[str], job_script: Optional[str], output_format: str, color: bool = False,
                 job_id: Optional[str] = None) -> int:
    import click

    from . import InputError, diagnose, render
    from ..redaction import RedactingStream

    def fail(message: str) -> int:
        click.echo(f"sbatchlint: error: {render.mask(message)}", err=True)
        return EXIT_BAD_INPUT

    out = RedactingStream(sys.stdout)
    if not logs and job_id is None:
        return fail("no log given: try `sbatchlint diagnose slurm-1234.out` ('-' reads stdin) or "
                    "`sbatchlint diagnose --job 1234`")
    if logs.count("-") > 1:
        return fail("'-' (stdin) can be given only once")
    record, kept_script, script_from, notes = None, None, None, []
    if job_id is not None:
        from .job import JobRecord
        from .slurm import JobError, look_up

        try:
            lookup = look_up(job_id, want_script=not job_script)
        except JobError as err:
            return fail(str(err))
        if lookup.record is None and not logs:
            return fail(f"job {job_id.strip()}: " + "; ".join(lookup.notes) +
                        f": give its output file with `sbatchlint diagnose --job {job_id.strip()} --log FILE`")
        record = lookup.record or JobRecord(job_id=job_id.strip(), source="log")
        notes = lookup.notes
        if (record.state or "").split(" ")[0] in ("PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING",
                                                  "CONFIGURING", "COMPLETING"):
            notes.append(f"job {record.job_id} is {record.state.split(' ')[0]}: its log may not hold its end yet")
        if lookup.record is None:
            notes.append("the verdict comes from the log alone")
        logs = logs or lookup.logs
        kept_script, script_from = lookup.script, lookup.script_from
    try:
        result = diagnose(logs, stdin=getattr(sys.stdin, "buffer", sys.stdin) if "-" in logs else None, job=record)
    except InputError as err:
        return fail(str(err))
    result.verdict.notes.extend(notes)
    codes = {code for f in result.verdict.findings for code in f.kind.rules}
    if job_script:
        result.lint, secrets, error = job_script_findings(job_script, codes)
        out.remember(secrets)
        if error:
            return fail(error)
    elif kept_script is not None:
        display = f"job {record.job_id} batch script ({script_from})"
        result.lint, secrets, error = job_script_findings("-", codes, display=display, data=kept_script)
        out.remember(secrets)
        if error:
            result.verdict.notes.append(f"the job's batch script could not be linted: {error}")
    if output_format == "json":
        out.write(render.json_text(result, logs))
    else:
        out.write(render.text(result, logs, color=color))
    sys.stdout.flush()
    return EXIT_CAUSE if result.verdict.found else EXIT_NO_CAUSE

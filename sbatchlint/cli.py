"""The ``sbatchlint`` command: ``check`` (the default), ``rules``, ``explain``."""
from __future__ import annotations

import difflib
import os
import sys
from typing import List, Optional

import click

from . import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a command, goes to ``check``."""

    default_command = "check"

    def parse_args(self, ctx, args):
        if not args or args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command] + list(args)
        return super().parse_args(ctx, args)


def use_color(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="sbatchlint")
def main() -> None:
    """Lint and fix Slurm batch scripts for multi-node PyTorch / Megatron-Bridge jobs.

    `sbatchlint job.sh` checks a script (check is the default command); `sbatchlint --fix job.sh`
    applies the safe fixes in place.
    """


def _codes(values) -> List[str]:
    out: List[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply unsafe fixes (implies --fix unless --diff).")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--select", multiple=True, metavar="CODES", help="Only these codes or prefixes (comma-separated).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes (comma-separated).")
@click.option(
    "--output-format",
    type=click.Choice(["text", "concise", "json"]),
    default="text",
    show_default=True,
    help="How findings are printed.",
)
@click.option("--stdin-filename", metavar="PATH", help="The name of the file read from '-' (stdin).")
@click.option("--python", "python_files", is_flag=True, help="Also lint .py files found in directories.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary line.")
def check(paths, fix, unsafe_fixes, diff, select, ignore, output_format, stdin_filename, python_files, quiet) -> None:
    """Check batch scripts (files or directories; '-' reads stdin)."""
    from .files import discover, write_atomic
    from .linter import Options, Selection, fix as run_fix, lint
    from .report import FileResult, formatter
    from .report.text import summary_line
    from .secrets import values as secret_values
    from .source import InputError, Source

    if not paths:
        raise click.UsageError("no files given: try `sbatchlint examples/` or `sbatchlint job.sh`")
    try:
        selection = Selection(select=_codes(select) or ["ALL"], ignore=_codes(ignore))
        _validate_codes(selection)
    except ValueError as err:
        raise click.UsageError(str(err))
    options = Options(selection=selection)
    apply = fix or unsafe_fixes
    results: List[FileResult] = []
    changed = 0
    out = click.get_text_stream("stdout")
    for path, explicit in discover(list(paths), python=python_files):
        display = stdin_filename if path == "-" and stdin_filename else path
        try:
            if path == "-":
                source = Source.checked(click.get_binary_stream("stdin").read(), display)
            else:
                source = Source.read(path)
        except InputError as err:
            results.append(FileResult(display, error=str(err)))
            click.echo(f"sbatchlint: error: {err}", err=True)
            continue
        result = FileResult(display, source)
        try:
            result.secrets = secret_values(source)
            if apply or diff:
                outcome = run_fix(source, options, unsafe=unsafe_fixes)
                if outcome.data != source.data:
                    changed += 1
                    if diff:
                        out.write(_diff(source, outcome.data, result))
                    elif path == "-":
                        click.get_binary_stream("stdout").write(outcome.data)
                    else:
                        write_atomic(path, outcome.data)
                    if not diff:
                        result.fixed = outcome.applied
                        source = Source(outcome.data, display)
                        result.source = source
                        result.secrets = secret_values(source)
            result.diagnostics = lint(source, options)
        except OSError as err:
            result.error = f"{display}: cannot write: {err.strerror or err}"
            click.echo(f"sbatchlint: error: {result.error}", err=True)
        except RecursionError:
            result.error = f"{display}: too deeply nested to analyse"
            click.echo(f"sbatchlint: error: {result.error}", err=True)
        results.append(result)
    if diff:
        stream = click.get_text_stream("stderr")
        if not quiet:
            stream.write(f"{changed} file{'s' * (changed != 1)} would be changed.\n")
        code = EXIT_ERROR if any(r.error for r in results) else (EXIT_FINDINGS if changed else EXIT_CLEAN)
        sys.exit(code)
    stream = click.get_text_stream("stderr") if (apply and "-" in paths) else out
    render = formatter(output_format)
    render(results, stream, color=use_color(stream) and output_format == "text", show_summary=False)
    if output_format == "text" and not quiet:
        stream.write(summary_line(results, use_color(stream)) + "\n")
    if any(r.error for r in results):
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if any(r.diagnostics for r in results) else EXIT_CLEAN)


def _validate_codes(selection) -> None:
    from . import registry

    known = [rule.code for rule in registry.all_rules()]
    for pattern in list(selection.select) + list(selection.ignore):
        p = pattern.upper()
        if p == "ALL":
            continue
        if not any(code.startswith(p) for code in known):
            raise ValueError(f"unknown rule code or prefix: {pattern}")


def _diff(source, new: bytes, result) -> str:
    from .source import Source

    before = source.text().splitlines(keepends=True)
    after = Source(new, source.path).text().splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, source.path, source.path)
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return result.redact(text)


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(output_format) -> None:
    """List every rule: code, name, severity, fix availability, summary."""
    import json

    from . import registry

    rules = registry.all_rules()
    if output_format == "json":
        click.echo(json.dumps([
            {"code": r.code, "name": r.name, "severity": r.severity.value, "fix": r.fix_availability(), "summary": r.summary}
            for r in rules
        ], indent=2))
        return
    for rule in rules:
        fix = {"safe": "fix", "unsafe": "unsafe fix", "none": ""}[rule.fix_availability()]
        click.echo(f"{rule.code}  {rule.severity.letter}  {rule.name:<40} {fix:<10} {rule.summary}")


@main.command()
@click.argument("code")
def explain(code) -> None:
    """Print a rule's documentation (by code or name)."""
    from . import registry
    from .docs import rule_page

    try:
        rule = registry.get(code)
    except KeyError:
        raise click.UsageError(f"unknown rule: {code} (see `sbatchlint rules`)")
    click.echo(rule_page(rule), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()

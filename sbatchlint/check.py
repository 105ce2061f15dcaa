"""The check (the default command) without its command-line parsing: ``cli`` reads the options
into these arguments, and ``start`` calls it directly for a command line of paths alone, so the
commonest run imports no option-parsing library."""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List

STREAMING = ("text", "concise", "github")  # formats printed file by file as results arrive

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


class UsageProblem(Exception):
    """A command line that cannot run; the command-line interface reports it with its usage line."""


def echo(message: str = "", err: bool = False) -> None:
    """Print a line as the command-line interface prints its messages (errors and warnings: rare,
    so the library is imported only when one is printed)."""
    import click

    click.echo(message, err=err)


def use_color(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def codes(values) -> List[str]:
    out: List[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def run(paths, fix=False, unsafe_fixes=False, diff=False, select=(), extend_select=(), ignore=(),
        output_format="text", config_path=None, isolated=False, stdin_filename=None, python_files=False,
        force_exclude=None, respect_gitignore=None, show_files=False, jobs=0, use_shellcheck=False,
        slurm_version=None, statistics=False, show_fixes=False, add_noqa=False, show_settings=None,
        output_file=None, color="auto", fail_level="info", exit_zero=False, quiet=False, no_cache=False,
        cache_dir=None) -> None:
    """Check ``paths`` (files or directories; '-' reads stdin) and exit with the run's status.
    Raises ``UsageProblem`` before doing anything when the arguments cannot go together."""
    from .codes import CODES
    from .config import ConfigError
    from .files import discover
    from .report import formatter
    from .report.text import more_information, summary_line
    from .redaction import RedactingStream, redacting_excepthook
    from .runner import CommandLine, Job, Resolver, SourcedFindings, once_each, run_all

    if show_settings is not None:
        paths = paths or (show_settings,)
    if not paths:
        raise UsageProblem("no files given: try `sbatchlint examples/` or `sbatchlint job.sh`")
    if add_noqa and (fix or unsafe_fixes or diff):
        raise UsageProblem("--add-noqa cannot be combined with --fix, --unsafe-fixes or --diff")
    if add_noqa and "-" in paths:
        raise UsageProblem("--add-noqa writes the files it changes: it cannot read '-' (stdin)")
    from . import shellcheck

    known = list(CODES)  # the static table: checking the selection imports no rule
    cli = CommandLine(codes(select), codes(ignore), codes(extend_select), config_path, isolated,
                      force_exclude=force_exclude, respect_gitignore=respect_gitignore, cache=not no_cache,
                      cache_dir=cache_dir)
    if use_shellcheck:
        cli.settings["shellcheck"] = True
    if slurm_version is not None:
        from .options import parse_slurm_version

        if slurm_version.strip().lower() != "auto" and parse_slurm_version(slurm_version) is None:
            raise UsageProblem(f"--slurm-version: expected a Slurm release such as 24.05, or auto, got {slurm_version!r}")
        cli.settings["slurm_version"] = slurm_version
    for pattern in list(cli.select) + list(cli.ignore) + list(cli.extend_select):
        if pattern.upper() in ("SC", "ALL") or shellcheck.is_code(pattern):
            continue
        if not any(code.startswith(pattern.upper()) for code in known):
            raise UsageProblem(f"unknown rule code or prefix: {pattern}")
    try:
        resolver = Resolver(cli, known)
        if show_settings is not None:
            _show_settings(resolver, show_settings, output_format)
            sys.exit(EXIT_CLEAN)
        work: List[Job] = []
        stdin_data = _binary_stream("stdin").read() if "-" in paths else None
        for candidate in discover(list(paths), python=python_files, rules=resolver):
            path = candidate.path
            display = stdin_filename if path == "-" and stdin_filename else path
            options = resolver.options_for(display if path == "-" else path) if not candidate.error else None
            work.append(Job(path, display, options, fix or unsafe_fixes, unsafe_fixes, diff,
                            stdin_data if path == "-" else None, candidate.found_by, candidate.error, add_noqa,
                            resolver.cache_for(path) if path != "-" and not candidate.error else None))
    except ConfigError as err:
        echo(f"sbatchlint: error: {err}", err=True)
        sys.exit(EXIT_ERROR)
    if show_files:
        for job in work:
            if job.error:
                echo(f"sbatchlint: error: {job.error}", err=True)
            else:
                echo(job.display)
        sys.exit(EXIT_ERROR if any(job.error for job in work) else EXIT_CLEAN)
    if not work:
        # an empty or mistyped directory, or everything excluded: say so rather than "passed"
        echo("sbatchlint: warning: no files found to lint under the given paths", err=True)
        sys.exit(EXIT_CLEAN)
    if any(job.options and job.options.settings.get("shellcheck") for job in work) and shellcheck.executable() is None:
        echo(f"sbatchlint: warning: {shellcheck.NOT_INSTALLED}", err=True)
    if fix or unsafe_fixes or add_noqa:
        work = once_each(work)  # a file reached by several links is fixed (and reported) once
    workers = jobs
    results = []
    target = sys.stdout
    if output_file not in (None, "-"):
        try:
            target = open(output_file, "w", encoding="utf-8")
        except OSError as err:
            echo(f"sbatchlint: error: {output_file}: cannot write: {err.strerror or err}", err=True)
            sys.exit(EXIT_ERROR)
    out = RedactingStream(target)
    sys.excepthook = redacting_excepthook(out)  # a crash's traceback must not show a secret either
    stream = RedactingStream(sys.stderr) if ((fix or unsafe_fixes) and "-" in paths and target is sys.stdout) else out
    color = {"always": True, "never": False}.get(color, use_color(stream))
    render = formatter(output_format)
    streaming = output_format in STREAMING and not statistics and not diff
    from .python.entry import follow_launched

    skipped = []
    sourced = SourcedFindings()

    def _report(result) -> None:
        if result.skipped:
            skipped.append(result.path)
            return
        others = sourced.split(result)  # findings in a file the script sources: that file's own, after it
        _report_one(result)
        for other in others:
            _report_one(other)

    def _report_one(result) -> None:
        out.remember(result.secrets)
        stream.remember(result.secrets)
        if result.error:
            echo(f"sbatchlint: error: {result.redact(result.error)}", err=True)
        if result.diff:
            out.write(result.diff)
        if result.fixed_data is not None and result.path == (stdin_filename or "-") and "-" in paths:
            _binary_stream("stdout").write(result.fixed_data)
        if streaming:
            # print as results arrive and keep only what the summary needs: memory stays bounded
            render([result], stream, color=color and output_format == "text", show_summary=False)
            result.source = None
            result.secrets = []
        results.append(result)

    def launched(paths: List[str]):  # Python files the scripts launch, linted (and fixed) like the rest
        jobs = []
        for p in paths:
            try:
                if not resolver.excluded(p):
                    jobs.append(Job(p, p, resolver.options_for(p), fix or unsafe_fixes, unsafe_fixes, diff,
                                    add_noqa=add_noqa, cache=resolver.cache_for(p)))
            except ConfigError as err:
                echo(f"sbatchlint: error: {err}", err=True)
        return run_all(jobs, workers)

    every = follow_launched(run_all(work, workers), [job.path for job in work], launched)
    try:
        for result in every:
            _report(result)
    except KeyboardInterrupt:
        # Ctrl-C: no file is left half written (writes finish first) and none is started after it
        every.close()
        sys.stdout.flush()
        echo("sbatchlint: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if skipped and not results:
        echo(f"sbatchlint: warning: no batch scripts found under the given paths ({len(skipped)} other "
                   f"shell file{'s' * (len(skipped) != 1)} skipped; name a file to lint it anyway)", err=True)
        sys.exit(EXIT_CLEAN)
    if diff:
        changed = sum(1 for r in results if r.diff)
        if not quiet:
            echo(f"{changed} file{'s' * (changed != 1)} would be changed.", err=True)
        code = EXIT_ERROR if any(r.error for r in results) else (EXIT_FINDINGS if changed else EXIT_CLEAN)
        sys.exit(code)
    if statistics:
        _statistics(results, stream, output_format)
    elif not streaming:
        render(results, stream, color=color and output_format == "text", show_summary=False)
    if show_fixes and any(r.fixed_codes for r in results):
        _show_fixes(results, stream if output_format in ("text", "concise") else RedactingStream(sys.stderr))
    if add_noqa and not quiet:
        added = sum(r.suppressed for r in results)
        echo(f"Added suppression comments for {added} finding{'s' * (added != 1)}.", err=True)
    if output_format == "text" and not quiet and not (statistics and output_format == "json"):
        if not statistics:
            stream.write(more_information(results, color))
        stream.write(summary_line(results, color) + "\n")
    stream.flush()
    if target is not sys.stdout:
        target.close()
    if any(r.error for r in results):
        sys.exit(EXIT_ERROR)
    failing = FAIL_LEVELS[fail_level]
    found = any(d.severity.value in failing for r in results for d in r.diagnostics)
    sys.exit(EXIT_FINDINGS if found and not exit_zero else EXIT_CLEAN)


# --fail-level: the severities that make the run exit 1
FAIL_LEVELS = {"error": ("error",), "warning": ("error", "warning"), "info": ("error", "warning", "info")}


def _binary_stream(name: str):
    """The byte stream under ``sys.stdin``/``sys.stdout`` (the ones click's test runner swaps in)."""
    stream = getattr(sys, name)
    return getattr(stream, "buffer", stream)


def _statistics(results, stream, output_format: str = "text") -> None:
    from collections import Counter

    counts = Counter()
    names = {}
    fixable = Counter()
    for result in results:
        for d in result.diagnostics:
            counts[d.code] += 1
            names[d.code] = d.name
            if d.fix is not None and d.fix.applicability.value == "safe":
                fixable[d.code] += 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if output_format == "json":
        import json

        stream.write(json.dumps([{"code": code, "name": names[code], "count": count, "fixable": fixable[code]}
                                 for code, count in ordered], indent=2) + "\n")
        return
    for code, count in ordered:
        mark = "[*]" if fixable[code] else "   "
        stream.write(f"{count:>5}  {code}  {mark} {names[code]}\n")


def _show_fixes(results, stream) -> None:
    """What ``--fix`` changed: per file, how many fixes of each code."""
    from .codes import RULES

    names = {row[0]: row[1] for row in RULES}
    total = sum(sum(r.fixed_codes.values()) for r in results)
    stream.write(f"Fixed {total} problem{'s' * (total != 1)}:\n")
    for result in results:
        if not result.fixed_codes:
            continue
        stream.write(f"- {result.path}:\n")
        for code, count in sorted(result.fixed_codes.items()):
            name = f" ({names[code]})" if code in names else ""
            stream.write(f"    {count} × {code}{name}\n")


def _show_settings(resolver, path: str, output_format: str) -> None:
    """``--show-settings``: the settings for ``path``, each with where it came from."""
    import json

    from .runner import settings_report

    rows = settings_report(resolver, path)
    if output_format == "json":
        echo(json.dumps({"path": path, "settings": [{"key": k, "value": v, "from": w} for k, v, w in rows]},
                              indent=2))
        return
    echo(f"# settings for {path}")
    for key, value, where in rows:
        if key in ("configuration", "cluster"):
            echo(f"# {key}: {where if value is None or key == 'configuration' else f'{value} ({where})'}")
            continue
        if value is None:
            echo(f"# {key} is not set")
            continue
        echo(f"{key} = {_toml(value)}".ljust(48) + f"  # {where}")


def _toml(value) -> str:
    import json

    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)

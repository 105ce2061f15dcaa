"""The ``sbatchlint`` command: ``check`` (the default), ``plan``, ``rules``, ``explain``, ``diagnose``,
``convert``, ``profile``, ``server``."""
from __future__ import annotations

import os
import sys
from typing import List, Optional

import click

from . import __version__
from .formats import FORMATS

STREAMING = ("text", "concise", "github")  # formats printed file by file as results arrive

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a command, goes to ``check``."""

    default_command = "check"

    def parse_args(self, ctx, args):
        if not args or args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command] + list(args)
        return super().parse_args(ctx, args)

    def format_options(self, ctx, formatter) -> None:
        """The group's options, then those of ``check`` (what ``sbatchlint job.sh`` takes), then the commands."""
        click.Command.format_options(self, ctx, formatter)
        command = self.commands.get(self.default_command)
        if command is not None:
            with click.Context(command, info_name=self.default_command, parent=ctx) as sub:
                rows = [record for param in command.get_params(sub)
                        if (record := param.get_help_record(sub)) is not None and param.name != "help"]
            with formatter.section(f"Options of {self.default_command} (the default command)"):
                formatter.write_dl(rows)
        self.format_commands(ctx, formatter)


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
@click.option("--extend-select", multiple=True, metavar="CODES", help="Add codes or prefixes to the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes (comma-separated).")
@click.option(
    "--output-format",
    type=click.Choice(list(FORMATS)),
    default="text",
    show_default=True,
    help="How findings are printed.",
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Use this configuration file for every path.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--stdin-filename", metavar="PATH", help="The name of the file read from '-' (stdin).")
@click.option("--python", "python_files", is_flag=True, help="Also lint .py files found in directories.")
@click.option("--force-exclude/--no-force-exclude", default=None,
              help="Apply the configuration's exclude to files named on the command line too (as pre-commit names them).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None,
              help="Leave out of directory searches what git ignores (default: on).")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, one per line, and lint nothing.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0,
              help="Parallel processes (default 0: one per CPU from 16 files up, else one).")
@click.option("--shellcheck", "use_shellcheck", is_flag=True, help="Also run ShellCheck and report its findings as SC####.")
@click.option("--slurm-version", metavar="VERSION", help="The Slurm release to check against (e.g. 23.11; 'auto' asks sbatch; default 24.05).")
@click.option("--statistics", is_flag=True, help="Print the number of findings per code instead of the findings (text or json).")
@click.option("--show-fixes", is_flag=True, help="With --fix: list what was fixed, per file and code.")
@click.option("--add-noqa", is_flag=True, help="Add a '# sbatchlint: disable=CODE' comment for every finding.")
@click.option("--show-settings", "show_settings", metavar="FILE", type=click.Path(),
              help="Print the settings that apply to FILE and where each comes from; lint nothing.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the findings to this file instead of stdout.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the text output (auto: on a terminal, following NO_COLOR and FORCE_COLOR).")
@click.option("--fail-level", type=click.Choice(["error", "warning", "info"]), default="info", show_default=True,
              help="Exit 1 only for findings of this severity or worse.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain (errors reading files still exit 2).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary line.")
@click.option("--no-cache", is_flag=True, help="Lint every file again; read and write no cached result.")
@click.option("--cache-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Where results are cached (default: .sbatchlint_cache beside the configuration).")
def check(paths, fix, unsafe_fixes, diff, select, extend_select, ignore, output_format, config_path, isolated,
          stdin_filename, python_files, force_exclude, respect_gitignore, show_files, jobs, use_shellcheck,
          slurm_version, statistics, show_fixes, add_noqa, show_settings, output_file, color, fail_level,
          exit_zero, quiet, no_cache, cache_dir) -> None:
    """Check batch scripts (files or directories; '-' reads stdin)."""
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
        raise click.UsageError("no files given: try `sbatchlint examples/` or `sbatchlint job.sh`")
    if add_noqa and (fix or unsafe_fixes or diff):
        raise click.UsageError("--add-noqa cannot be combined with --fix, --unsafe-fixes or --diff")
    if add_noqa and "-" in paths:
        raise click.UsageError("--add-noqa writes the files it changes: it cannot read '-' (stdin)")
    from . import shellcheck

    known = list(CODES)  # the static table: checking the selection imports no rule
    cli = CommandLine(_codes(select), _codes(ignore), _codes(extend_select), config_path, isolated,
                      force_exclude=force_exclude, respect_gitignore=respect_gitignore, cache=not no_cache,
                      cache_dir=cache_dir)
    if use_shellcheck:
        cli.settings["shellcheck"] = True
    if slurm_version is not None:
        from .options import parse_slurm_version

        if slurm_version.strip().lower() != "auto" and parse_slurm_version(slurm_version) is None:
            raise click.UsageError(f"--slurm-version: expected a Slurm release such as 24.05, or auto, got {slurm_version!r}")
        cli.settings["slurm_version"] = slurm_version
    for pattern in list(cli.select) + list(cli.ignore) + list(cli.extend_select):
        if pattern.upper() in ("SC", "ALL") or shellcheck.is_code(pattern):
            continue
        if not any(code.startswith(pattern.upper()) for code in known):
            raise click.UsageError(f"unknown rule code or prefix: {pattern}")
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
        click.echo(f"sbatchlint: error: {err}", err=True)
        sys.exit(EXIT_ERROR)
    if show_files:
        for job in work:
            if job.error:
                click.echo(f"sbatchlint: error: {job.error}", err=True)
            else:
                click.echo(job.display)
        sys.exit(EXIT_ERROR if any(job.error for job in work) else EXIT_CLEAN)
    if not work:
        # an empty or mistyped directory, or everything excluded: say so rather than "passed"
        click.echo("sbatchlint: warning: no files found to lint under the given paths", err=True)
        sys.exit(EXIT_CLEAN)
    if any(job.options and job.options.settings.get("shellcheck") for job in work) and shellcheck.executable() is None:
        click.echo(f"sbatchlint: warning: {shellcheck.NOT_INSTALLED}", err=True)
    if fix or unsafe_fixes or add_noqa:
        work = once_each(work)  # a file reached by several links is fixed (and reported) once
    workers = jobs
    results = []
    target = sys.stdout
    if output_file not in (None, "-"):
        try:
            target = open(output_file, "w", encoding="utf-8")
        except OSError as err:
            click.echo(f"sbatchlint: error: {output_file}: cannot write: {err.strerror or err}", err=True)
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
            click.echo(f"sbatchlint: error: {result.redact(result.error)}", err=True)
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
                click.echo(f"sbatchlint: error: {err}", err=True)
        return run_all(jobs, workers)

    every = follow_launched(run_all(work, workers), [job.path for job in work], launched)
    try:
        for result in every:
            _report(result)
    except KeyboardInterrupt:
        # Ctrl-C: no file is left half written (writes finish first) and none is started after it
        every.close()
        sys.stdout.flush()
        click.echo("sbatchlint: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if skipped and not results:
        click.echo(f"sbatchlint: warning: no batch scripts found under the given paths ({len(skipped)} other "
                   f"shell file{'s' * (len(skipped) != 1)} skipped; name a file to lint it anyway)", err=True)
        sys.exit(EXIT_CLEAN)
    if diff:
        changed = sum(1 for r in results if r.diff)
        if not quiet:
            click.echo(f"{changed} file{'s' * (changed != 1)} would be changed.", err=True)
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
        click.echo(f"Added suppression comments for {added} finding{'s' * (added != 1)}.", err=True)
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
        click.echo(json.dumps({"path": path, "settings": [{"key": k, "value": v, "from": w} for k, v, w in rows]},
                              indent=2))
        return
    click.echo(f"# settings for {path}")
    for key, value, where in rows:
        if key in ("configuration", "cluster"):
            click.echo(f"# {key}: {where if value is None or key == 'configuration' else f'{value} ({where})'}")
            continue
        if value is None:
            click.echo(f"# {key} is not set")
            continue
        click.echo(f"{key} = {_toml(value)}".ljust(48) + f"  # {where}")


def _toml(value) -> str:
    import json

    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


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
        from .redaction import redact

        raise click.UsageError(f"unknown rule: {redact(code)} (see `sbatchlint rules`)")
    click.echo(rule_page(rule), nl=False)


@main.command("diagnose")
@click.argument("logs", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--job", "job_id", metavar="ID",
              help="Read the job from Slurm (sacct, else scontrol): its state, steps, logs and batch script. "
                   "12345, 12345_7 (array element), 12345+1 (het component).")
@click.option("--log", "extra_logs", multiple=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="The job's output file, where Slurm does not say it (same as giving it as an argument).")
@click.option("--job-script", type=click.Path(dir_okay=False), help="Also show this script's findings that explain the failure.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def diagnose_command(logs, job_id, extra_logs, job_script, output_format) -> None:
    """Explain a failed job from its log(s) or its id: the first failing task, its cause, the fix ('-' reads stdin)."""
    from .diagnose.command import command_line

    sys.exit(command_line(list(logs) + list(extra_logs), job_script, output_format, color=use_color(sys.stdout),
                          job_id=job_id))


@main.command("profile")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write here (default .sbatchlint-cluster.toml; a pyproject.toml gets a [tool.sbatchlint.cluster] table).")
@click.option("--print", "print_only", is_flag=True, help="Print the profile; write nothing.")
def profile_command(output, print_only) -> None:
    """Read the cluster's facts (run on a login node) into a profile the checks use."""
    from .cluster.command import CommandError, run

    try:
        sys.exit(run(output, print_only, sys.stdout, sys.stderr))
    except CommandError as err:
        click.echo(f"sbatchlint: error: {err}", err=True)
        sys.exit(EXIT_ERROR)


@main.command("plan")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--sbatch-args", metavar="ARGS", default="", help='Options given to sbatch at submission ("-N 4 -p debug"): they override the header.')
@click.option("--env", "use_env", is_flag=True, help="Apply the SBATCH_* variables of this environment, as sbatch does.")
@click.option("--no-findings", is_flag=True, help="Leave out the findings of `check`.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Use this configuration file.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--stdin-filename", metavar="PATH", help="The name of the file read from '-' (stdin).")
@click.option("--slurm-version", metavar="VERSION", help="The Slurm release the job runs on (e.g. 23.11; 'auto' asks sbatch; default 24.05).")
def plan_command(path, output_format, sbatch_args, use_env, no_findings, config_path, isolated, stdin_filename,
                 slurm_version) -> None:
    """Show what the job will run: the effective header, and per step the nodes, tasks,
    processes, world size, GPUs, environment crossing into the tasks and containers."""
    import shlex

    from . import registry
    from .config import ConfigError
    from .plan import Planner, render_json, render_text
    from .redaction import RedactingStream, text_scan, values
    from .runner import CommandLine, Resolver
    from .secrets import found_in
    from .source import InputError, Source

    try:
        words = shlex.split(sbatch_args)
    except ValueError as err:
        raise click.UsageError(f"--sbatch-args: {err}")
    cli = CommandLine([], [], [], config_path, isolated)
    if slurm_version is not None:
        from .options import parse_slurm_version

        if slurm_version.strip().lower() != "auto" and parse_slurm_version(slurm_version) is None:
            raise click.UsageError(f"--slurm-version: expected a Slurm release such as 24.05, or auto, got {slurm_version!r}")
        cli.settings["slurm_version"] = slurm_version
    try:
        if path == "-":
            source = Source.checked(sys.stdin.buffer.read(), stdin_filename or "-")
        else:
            source = Source.read(path)
        known = [rule.code for rule in registry.all_rules()]
        options = Resolver(cli, known).options_for(
            stdin_filename or path if path == "-" else path)
    except (InputError, ConfigError) as err:
        click.echo(f"sbatchlint: error: {err}", err=True)
        sys.exit(EXIT_ERROR)
    env = {k: v for k, v in os.environ.items() if k.startswith("SBATCH_")} if use_env else {}
    planner = Planner(source, options.settings, words, env, findings=not no_findings, options=options)
    out = RedactingStream(sys.stdout)
    out.remember(values(source, text_scan(source)))
    out.remember(values(planner.source, found_in(planner.script)))
    for sourced in planner.sourced_sources():  # a credential a sourced settings file holds
        out.remember(values(sourced, text_scan(sourced)))
    document = planner.build()
    out.write(render_json(document) if output_format == "json" else render_text(document))
    out.flush()


@main.command("server")
def server_command() -> None:
    """Run the language server over stdio, for editors (needs `pip install "sbatchlint[server]"`)."""
    try:
        from .server import main as serve
    except ImportError as err:
        click.echo(f"sbatchlint: error: the language server needs pygls ({err.name or err}): "
                   "pip install \"sbatchlint[server]\"", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(serve())


@main.command("convert")
@click.argument("command", required=False)
@click.option("--from-file", type=click.Path(dir_okay=False, allow_dash=True), help="Read the command from FILE ('-': stdin).")
@click.option("--job-name", help="Job name (default: the entry point's name).")
@click.option("--nodes", type=click.IntRange(min=1), help="Number of nodes.")
@click.option("--gpus-per-node", type=click.IntRange(min=1), help="GPUs per node (default: the command's --nproc_per_node, else 8).")
@click.option("--time", help="Time limit (default 01:00:00).")
@click.option("--account", help="Slurm account.")
@click.option("--partition", help="Partition (default batch).")
@click.option("--container-image", help="Enroot/Pyxis image for the steps.")
@click.option("--container-mounts", help="Mounts SRC:DST[,…]; paths the job uses are added at the same path.")
@click.option("--shared-fs", help="Shared-filesystem root (caches, logs).")
@click.option("--workdir", help="Repository on the shared filesystem (default: the current directory, if under --shared-fs).")
@click.option("--log-dir", help="Log directory (default: <shared-fs>/logs).")
@click.option("--launcher", type=click.Choice(["auto", "srun", "torchrun"]), default="auto", show_default=True,
              help="auto: srun-native for Megatron-Bridge and scripts that read SLURM_PROCID; torchrun for Megatron-LM and scripts that read only torchrun's variables.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the script to FILE instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite the --output file.")
@click.option("--allow-placeholders", is_flag=True, help="Print <ACCOUNT>-style placeholders for unknown values instead of refusing.")
def convert_command(command, from_file, output, force, **options) -> None:
    """Turn a single-node launch command into a multi-node sbatch script ('-' reads it from stdin)."""
    from .convert import command_line

    sys.exit(command_line(command, from_file, output, force, **options))


if __name__ == "__main__":  # pragma: no cover
    main()

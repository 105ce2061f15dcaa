"""The ``sbatchlint`` command: ``check`` (the default), ``plan``, ``rules``, ``explain``, ``diagnose``,
``convert``, ``profile``, ``server``."""
from __future__ import annotations

import os
import sys

import click

from . import __version__
from .check import EXIT_ERROR, use_color
from .formats import FORMATS


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


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="sbatchlint")
def main() -> None:
    """Lint and fix Slurm batch scripts for multi-node PyTorch / Megatron-Bridge jobs.

    `sbatchlint job.sh` checks a script (check is the default command); `sbatchlint --fix job.sh`
    applies the safe fixes in place.
    """


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
    from .check import UsageProblem, run

    try:
        run(paths, fix, unsafe_fixes, diff, select, extend_select, ignore, output_format, config_path, isolated,
            stdin_filename, python_files, force_exclude, respect_gitignore, show_files, jobs, use_shellcheck,
            slurm_version, statistics, show_fixes, add_noqa, show_settings, output_file, color, fail_level,
            exit_zero, quiet, no_cache, cache_dir)
    except UsageProblem as err:
        raise click.UsageError(str(err))


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

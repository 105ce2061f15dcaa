"""The ``sbatchlint`` command's entry point.

``sbatchlint FILE…`` (paths and nothing else, the commonest command line, as editors, hooks and
``sbatchlint examples/`` give it) runs the check without building the option parser: loading it
costs more at start-up than linting a small script. ``--version`` is answered the same way. Every
other command line goes to ``cli.main``, which reads it exactly as before; for these two the
output, exit status and messages are the same either way (tested).
"""
from __future__ import annotations

import os
import sys

# the commands of ``cli.main``: a first argument naming one is no path (a test holds them equal)
COMMANDS = frozenset({"check", "rules", "explain", "diagnose", "profile", "plan", "server", "convert"})


def plain_check(args) -> bool:
    """Whether the command line only names paths for the default command: no option, no '-'
    (stdin), no command name first, and no shell-completion request in the environment."""
    if not args or args[0] in COMMANDS or any(arg.startswith("-") for arg in args):
        return False
    return not any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"] and plain_check(["."]):
        from . import __version__

        sys.stdout.write(f"sbatchlint, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    if plain_check(args):
        _check(args)
    from .cli import main as command

    command(argv)


def _check(paths) -> None:
    """The check on ``paths`` with the default options, handling what the option parser's runner
    would: Ctrl-C outside the run's own handling, and a closed output pipe."""
    import errno

    from .check import UsageProblem, run

    try:
        run(tuple(paths))
    except UsageProblem:
        return  # nothing was done: the full command line reports it, with its usage line
    except (EOFError, KeyboardInterrupt):
        from .check import echo

        echo(err=True)
        echo("Aborted!", err=True)
        sys.exit(1)
    except OSError as err:
        if err.errno != errno.EPIPE:
            raise
        sys.stdout = _QuietFlush(sys.stdout)  # the reader went away (`| head`): exit 1, no traceback
        sys.stderr = _QuietFlush(sys.stderr)
        sys.exit(1)
    sys.exit(0)


class _QuietFlush:
    """A stream whose flush ignores a closed pipe (the interpreter flushes again on exit)."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def flush(self) -> None:
        import errno

        try:
            self.stream.flush()
        except OSError as err:
            if err.errno != errno.EPIPE:
                raise

    def __getattr__(self, name):
        return getattr(self.stream, name)

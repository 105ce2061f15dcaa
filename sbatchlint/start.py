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
    # Importing the package allocates tens of thousands of objects and none of them is garbage:
    # the cyclic collector waits until the imports are done (linting pauses it again per file,
    # ``runner``). When the command is over it is off again: the interpreter's exit would
    # otherwise walk every object left for cycles, about 3% of a cold run, to free memory the
    # process is about to give back anyway.
    import gc

    gc.disable()
    try:
        _main(argv)
    finally:
        gc.disable()


def _main(argv) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"] and plain_check(["."]):
        from . import __version__

        sys.stdout.write(f"sbatchlint, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    if plain_check(args):
        _check(args)
    import gc

    from .cli import main as command

    gc.enable()
    command(argv)


def _check(paths) -> None:
    """The check on ``paths`` with the default options, handling what the option parser's runner
    would: Ctrl-C outside the run's own handling, and a closed output pipe."""
    import errno

    import gc

    from .check import UsageProblem, run

    gc.enable()
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

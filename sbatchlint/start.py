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


def command() -> None:
    """The console script (and ``python -m sbatchlint``): ``main`` on the process's own command
    line, and then the process ends. After a plain check (or ``--version``) it ends without the
    interpreter's teardown: every module's objects freed one by one and a last full collection,
    about a tenth of a cold run, for memory the process is giving back anyway. Only when nothing
    else is waiting for the exit: no ``atexit`` handler (coverage, a profiler's report), no
    thread, no tracing or profiling hook, and the output streams flushed; otherwise, and for every
    other command (which may hold files of its own open), the interpreter exits as usual."""
    global _PLAIN
    _PLAIN = False
    try:
        main()
    except SystemExit as done:
        if _PLAIN:
            _leave(done.code)
        raise


_PLAIN = False  # set when ``main`` answered a plain check or ``--version`` itself


def _leave(code) -> None:
    """``os._exit(code)`` when the interpreter's exit would do nothing more than flush the output
    streams (see ``command``); returns otherwise."""
    if not (code is None or type(code) is int) or "threading" in sys.modules:
        return
    if sys.gettrace() is not None or sys.getprofile() is not None or sys.flags.interactive:
        return
    import atexit

    pending = getattr(atexit, "_ncallbacks", None)
    if pending is None or pending():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # no stream, a closed one, a closed pipe
        return  # the interpreter's exit reports it as it always does
    os._exit(code or 0)


def main(argv=None) -> None:
    # Importing the package allocates tens of thousands of objects and none of them is garbage:
    # the cyclic collector waits until the imports are done (linting pauses it again per file,
    # ``runner``). When the command is over it is off again: the interpreter's exit would
    # otherwise walk every object left for cycles, about 3% of a cold run, to free memory the
    # process is about to give back anyway.
    import gc

    gc.disable()
    if not any(type(finder) is PackageFinder for finder in sys.meta_path):
        sys.meta_path.insert(0, PackageFinder())
    try:
        _main(argv)
    finally:
        gc.disable()
        patterns = sys.modules.get("sbatchlint.lazyre")
        if patterns is not None:
            patterns.save()  # the patterns this command compiled, for the next one's start


def _main(argv) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    global _PLAIN
    if args == ["--version"] and plain_check(["."]):
        from . import __version__

        _PLAIN = True
        sys.stdout.write(f"sbatchlint, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    if plain_check(args):
        _PLAIN = True
        _check(args)
        _PLAIN = False  # nothing was checked: the option parser reports the command line
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

    if len(paths) > 1 or os.path.isdir(paths[0]):
        # many files: the collector frees what each file's analysis leaves between files; what
        # the imports so far made lives as long as the process, and is not walked again
        gc.freeze()
        gc.enable()
    # one file: its analysis runs with the collector paused anyway (``runner``), and nothing is
    # freed before the process ends: it stays off
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


SEP = os.sep


class PackageFinder:
    """Finds the package's own modules (``sbatchlint.*``) for a run of the command, in fewer steps
    than the general import system takes for any module on ``sys.path``.

    Importing an empty module costs about 0.3 M instructions in the general import system, more
    than many of the package's modules cost to run; a plain check imports about 65 of them. This
    finder reads each package folder (and its ``__pycache__``) once, and gives a module the
    standard source loader (``SourceFileLoader``: tracebacks, ``get_source``, resources and
    coverage see what they always see) whose ``get_code`` reads a compiled file that is current
    (the same check as the standard one: the source's modification time and size in the header)
    in one step. Anything else is left to the general import system, which then does exactly
    what it does without this finder: a module with no compiled file or a stale one (it compiles
    and writes it), hash-based compiled files, optimised runs (``-O``), an extension module, a
    name that is not a plain file in the package's single folder."""

    def __init__(self) -> None:
        self.listings: dict = {}  # folder -> (the names in it, the stems of its files other than .py)

    def _listing(self, folder: str) -> tuple:
        listing = self.listings.get(folder)
        if listing is None:
            try:
                names = frozenset(os.listdir(folder))
            except OSError:
                names = frozenset()
            listing = names, frozenset(name.partition(".")[0] for name in names if not name.endswith(".py"))
            self.listings[folder] = listing
        return listing

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("sbatchlint.") or not path or len(path) != 1 or sys.flags.optimize:
            return None
        folder = path[0]
        if not isinstance(folder, str):
            return None
        tail = name.rpartition(".")[2]
        names, others = self._listing(folder)
        if tail in names:  # a package (a folder comes first, as for the general import system)
            inner = folder + SEP + tail
            inner_names, inner_others = self._listing(inner)
            if "__init__.py" not in inner_names or "__init__" in inner_others:
                return None
            return self._spec(name, inner, "__init__", [inner])
        if tail + ".py" not in names or tail in others:
            return None  # no source, or a compiled file or an extension module beside it
        return self._spec(name, folder, tail, None)

    def _spec(self, name: str, folder: str, stem: str, locations):
        import _frozen_importlib as bootstrap

        origin = folder + SEP + stem + ".py"
        prefix = sys.pycache_prefix
        tag = sys.implementation.cache_tag
        if tag is None:
            return None
        if prefix is None:
            compiled = f"{stem}.{tag}.pyc"
            cache = folder + SEP + "__pycache__"
            if compiled not in self._listing(cache)[0]:
                return None  # the general import system compiles it (and writes it where allowed)
            cached = cache + SEP + compiled
        else:
            import _frozen_importlib_external as external

            cached = external.cache_from_source(origin)
        loader = CompiledLoader(name, origin)
        loader.cached = cached
        spec = bootstrap.ModuleSpec(name, loader, origin=origin, is_package=locations is not None)
        spec.has_location = True
        spec.cached = cached
        if locations is not None:
            spec.submodule_search_locations = locations
        return spec


def _source_loader():
    import _frozen_importlib_external as external

    return external.SourceFileLoader


_CODE = type(_source_loader.__code__)


class CompiledLoader(_source_loader()):
    """The standard source loader, reading a current compiled file in one step (``PackageFinder``)."""

    def get_code(self, fullname):
        import _frozen_importlib_external as external
        import _imp
        import _io
        import marshal

        try:
            info = os.stat(self.path)
            with _io.open_code(self.cached) as handle:
                data = handle.read()
        except OSError:
            return super().get_code(fullname)
        if (data[:4] == external.MAGIC_NUMBER and data[4:8] == b"\0\0\0\0" and len(data) > 16
                and int.from_bytes(data[8:12], "little") == int(info.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(data[12:16], "little") == info.st_size & 0xFFFFFFFF):
            code = marshal.loads(memoryview(data)[16:])
            if type(code) is _CODE:
                _imp._fix_co_filename(code, self.path)
                return code
        return super().get_code(fullname)

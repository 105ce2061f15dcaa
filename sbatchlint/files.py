"""Finding the files to lint, and writing fixed files back without losing anything."""
from __future__ import annotations

import os
import stat

from .lazyclass import dataclass
from .lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Protocol

SCRIPT_SUFFIXES = (".sh", ".sbatch", ".slurm", ".sub", ".bash")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", "build", "dist", ".eggs"})
_DIRECTIVE = lazy(rb"(?m)^#SBATCH")
SNIFF_BYTES = 256 * 1024


def has_directive(path: str) -> bool:
    """A text file with an ``#SBATCH`` line at the start of a line within its first 256 KiB."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    return b"\0" not in head and bool(_DIRECTIVE.search(head))


if TYPE_CHECKING:
    class FileRules(Protocol):
        """What the configuration says about a path (``runner.Resolver`` answers it)."""

        def excluded(self, path: str, is_dir: bool = False) -> bool: ...

        def force_exclude(self, path: str) -> bool: ...

        def respect_gitignore(self, directory: str) -> bool: ...


class _NoRules:
    def excluded(self, path: str, is_dir: bool = False) -> bool:
        return False

    def force_exclude(self, path: str) -> bool:
        return False

    def respect_gitignore(self, directory: str) -> bool:
        return True


@dataclass(frozen=True)
class Candidate:
    """A file to lint, and how it was found.

    ``found_by`` is ``argument`` (named on the command line: always linted, unless
    ``--force-exclude`` and the configuration's ``exclude`` match it), ``suffix`` (a shell-script
    name in a directory search), ``directive`` (no such name, but an ``#SBATCH`` line) or
    ``python`` (a ``*.py`` file, with ``--python``). A later decision that a searched file is not a
    batch script at all belongs to the linting of that file, which knows its model: it can skip a
    ``suffix`` candidate without reporting it, never an ``argument`` one.
    ``error`` is a reason the path cannot be linted, reported like an unreadable file.
    """

    path: str
    found_by: str = "argument"
    error: Optional[str] = None

    @property
    def explicit(self) -> bool:
        return self.found_by == "argument"


def discover(paths: List[str], python: bool = False, rules: Optional[FileRules] = None) -> Iterator[Candidate]:
    """Every file to lint, in a stable order (each path once): the files named, and what a search
    of the directories named finds that neither the configuration's ``exclude`` nor git's ignore
    rules leave out."""
    rules = rules or _NoRules()
    seen = set()
    for path in paths:
        if path == "-":
            yield Candidate(path)
            continue
        if not os.path.isdir(path):
            key = os.path.normpath(path)
            if key in seen:
                continue
            seen.add(key)
            if not os.path.lexists(path):
                yield Candidate(path, error=f"{path}: no such file or directory")
            elif not (rules.force_exclude(path) and rules.excluded(path)):
                yield Candidate(path)
            continue
        for candidate in _search(path, python, rules):
            key = os.path.normpath(candidate.path)
            if key not in seen:
                seen.add(key)
                yield candidate


def _search(top: str, python: bool, rules: FileRules) -> Iterator[Candidate]:
    ignore = None
    if rules.respect_gitignore(top):
        from .gitignore import IgnoreRules

        ignore = IgnoreRules(top)
    unreadable: List[OSError] = []
    for root, dirs, names in os.walk(top, onerror=unreadable.append):
        while unreadable:
            err = unreadable.pop()
            yield Candidate(err.filename or root, "suffix", f"{err.filename or root}: cannot read directory: "
                            f"{err.strerror or err}")
        kept = []
        for d in sorted(dirs):
            full = os.path.join(root, d)
            if d in SKIP_DIRS or d.startswith(".") or rules.excluded(full, is_dir=True):
                continue
            if ignore is not None and ignore.ignored(full, True):
                continue
            kept.append(d)
        dirs[:] = kept
        for name in sorted(names):
            full = os.path.join(root, name)
            if os.path.islink(full) and not os.path.exists(full):
                continue
            if name.endswith(SCRIPT_SUFFIXES):
                found_by = "suffix"
            elif name.endswith(".py"):
                if not python:
                    continue
                found_by = "python"
            elif has_directive(full):
                found_by = "directive"
            else:
                continue
            if rules.excluded(full) or (ignore is not None and ignore.ignored(full, False)):
                continue
            yield Candidate(full, found_by)
    while unreadable:  # the last directory entered, or the searched directory itself
        err = unreadable.pop()
        yield Candidate(err.filename or top, "suffix", f"{err.filename or top}: cannot read directory: "
                        f"{err.strerror or err}")


def create_temporary(folder: str, prefix: str, suffix: str = "") -> "tuple[int, str]":
    """A new file in ``folder`` only this process can have made, open for writing (mode 0600), and
    its path: what ``tempfile.mkstemp`` gives, without importing ``tempfile`` (with ``shutil``,
    ``random`` and the compression modules it brings, about 6 ms of a cold run)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _attempt in range(100):
        path = os.path.join(folder, f"{prefix}{os.getpid()}-{os.urandom(8).hex()}{suffix}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: no unused temporary file name")


class NotWritten(OSError):
    """A fixed file that was deliberately not written; the message says why, in one line."""


class signals_deferred:
    """Hold Ctrl-C (and a polite kill) until a write is complete: the file is then either the old
    one or the new one, never half of each. The signal arrives as soon as the block ends.
    (A class rather than a ``contextlib`` generator: a run that writes nothing imports no
    ``contextlib``.)"""

    def __enter__(self) -> None:
        import signal  # here: importing it costs a run that writes nothing a millisecond

        held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        try:
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        except (AttributeError, OSError, ValueError):  # pragma: no cover - a platform without it
            self.previous = None

    def __exit__(self, *exception) -> None:
        if self.previous is not None:
            import signal

            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)


def write_fixed(path: str, data: bytes, original: Optional[bytes] = None) -> str:
    """Write fixed ``data`` to the file ``path`` names and return the path written.

    A symbolic link (or a chain of them) is written through to its target and stays a link. A
    file with several hard links is written in place so that every link sees the fix; any other
    file is replaced atomically, with its permission bits and, where the user may set it, its
    owner. A file without write permission, or one that changed since it was read (``original``),
    is left untouched: ``NotWritten`` says why.
    """
    target = os.path.realpath(path)
    info = os.stat(target)
    if not stat.S_ISREG(info.st_mode):
        raise NotWritten(f"{path}: not a regular file: not fixed")
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise NotWritten(f"{path}: read-only file (mode {stat.S_IMODE(info.st_mode):04o}): not fixed")
    if original is not None:
        with open(target, "rb") as handle:
            if handle.read(len(original) + 1) != original:
                raise NotWritten(f"{path}: changed while it was being linted: not fixed")
    with signals_deferred():
        if info.st_nlink > 1 or not _replace(target, data, info):
            _write_in_place(target, data)
    return target


def _write_in_place(target: str, data: bytes) -> None:
    with open(target, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def _replace(target: str, data: bytes, info: os.stat_result) -> bool:
    """Replace ``target`` atomically; False (nothing changed) when its owner could not be kept."""
    try:
        fd, temporary = create_temporary(os.path.dirname(target), ".sbatchlint-")
    except PermissionError:  # a file we may write in a directory we may not: write in place
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.chown(temporary, info.st_uid, info.st_gid)
            except OSError:  # someone else's file we may write but not give away: write in place
                os.unlink(temporary)
                return False
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        os.replace(temporary, target)
        return True
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_atomic(path: str, data: bytes) -> None:
    """Replace the existing file ``path`` with ``data``, as ``write_fixed`` does (through links,
    keeping hard links, mode and owner); ``NotWritten`` (an ``OSError``) when it must not be."""
    write_fixed(path, data)

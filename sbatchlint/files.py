"""Finding the files to lint, and writing fixed files back without losing anything."""
from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Iterator, List, Optional, Protocol

from .lazyre import lazy

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


def write_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits."""
    directory = os.path.dirname(os.path.abspath(path))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    fd, temporary = tempfile.mkstemp(prefix=".sbatchlint-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise

"""Finding the files to lint, and writing fixed files back without losing anything."""
from __future__ import annotations

import os
import stat
import tempfile
from typing import Iterator, List, Tuple
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


def discover(paths: List[str], python: bool = False) -> Iterator[Tuple[str, bool]]:
    """(path, explicit) for every file to lint, in a stable order. Explicit files are always linted."""
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path, True
            continue
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for name in sorted(names):
                full = os.path.join(root, name)
                if os.path.islink(full) and not os.path.exists(full):
                    continue
                if name.endswith(SCRIPT_SUFFIXES):
                    yield full, False
                elif name.endswith(".py"):
                    if python:
                        yield full, False
                elif has_directive(full):
                    yield full, False


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

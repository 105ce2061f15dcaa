"""Settings files a script reads with ``source FILE`` or ``. FILE``.

bash runs a sourced file in the batch shell itself, so every variable it assigns or exports is
the script's own from that line on. ``Values`` asks this module, for each ``source`` command
of a job script, which file bash would read; when the file resolves, its assignments enter the
script's values at the ``source`` line (``Values._add_sourced``), so rules and ``plan`` see them.

Where bash looks, at run time:

- an absolute path is that file;
- a relative one (``./env.sh``, ``conf/env.sh``, a bare name) is read against the batch shell's
  working directory: ``--chdir`` when the header gives one, else the directory the job was
  submitted from. The submission directory is not in the script: the script's own directory
  stands for it (``approximate`` holds ``SUBMISSION``: true when the job is submitted from there, as is usual);
- ``$SLURM_SUBMIT_DIR`` is the submission directory, ``$PWD`` and ``$(pwd)`` the working
  directory, both only until a ``cd`` the model cannot follow;
- ``$0`` and ``${BASH_SOURCE[0]}`` of a batch script name slurmd's spooled copy
  (``…/job00155/slurm_script``), not the submitted file: a path built from them does not
  resolve (``spool-directory``);
- a bare name is looked up in ``PATH`` first; the ``PATH`` of the job is not known, so a bare name
  is read against the working directory like a relative one (``approximate`` holds ``PATH_SEARCH``).

A source that does not resolve (a path set at run time, a missing file, the home directory, a
file over ``MAX_BYTES``, a cycle, more than ``MAX_NESTING`` files deep) sets nothing the model
knows: ``SourcedFile.resolved`` is False and the variables it may set are unknown, never unset.
"""
from __future__ import annotations

import os

from ..cache import probe  # what is read for a script is part of its cached result
from ..lazyclass import dataclass, field
from ..lazyre import lazy
from ..source import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional, Tuple
    from .values import Values

MAX_BYTES = 256 * 1024  # a settings file; anything larger is not read
MAX_NESTING = 4  # files sourced from sourced files, at most this deep
MAX_TOTAL = 4 * MAX_BYTES  # all the files one script sources, together

# Why a sourced file was not read.
REASONS = {
    "run-time": "its path is set at run time",
    "spool-directory": "$0 / BASH_SOURCE of a batch script name slurmd's spooled copy, not the submitted file",
    "home": "the home directory of the job's user",
    "working-directory": "a `cd` before it that the model cannot follow",
    "no-directory": "the script's own directory is not known (read from stdin)",
    "missing": "no such file",
    "too-large": f"larger than {MAX_BYTES // 1024} KiB, or past {MAX_TOTAL // 1024} KiB of sourced files in all",
    "not-text": "not a text file",
    "cycle": "it sources itself",
    "too-deep": f"more than {MAX_NESTING} files deep",
    "in-image": "a file inside the container image, not on a mounted directory",
}

SUBMIT = "submit"

# How a resolved path may differ from the file bash reads.
SUBMISSION = "submission-directory"  # the script's directory stood for the submission directory
PATH_SEARCH = "path-search"  # a bare name, which bash looks for in PATH first

# ``$(dirname "${BASH_SOURCE[0]}")``, ``$(cd "$(dirname "$0")" && pwd)``: the file's own directory.
OWN_DIRECTORY = lazy(
    r'\$\((?:\s*cd\s+)?"?\$\(\s*dirname\s+"?(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)"?\s*\)"?'
    r'(?:\s*(?:&&|;)\s*pwd(?:\s+-P)?\s*)?\)|\$\(\s*dirname\s+"?(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)"?\s*\)'
)  # the working directory is the submission directory (the script's own, approximately)


@dataclass
class SourcedFile:
    """One ``source``/``.`` command and what it reads."""

    span: Span  # the command, in the file that sources
    operand: str  # the path as written
    path: Optional[str] = None  # the file read, absolute; None when it does not resolve
    reason: Optional[str] = None  # a key of REASONS when it does not resolve
    approximate: Tuple[str, ...] = ()  # SUBMISSION, PATH_SEARCH: why the path may not be the one bash reads
    values: Optional["Values"] = None  # the file's own assignments
    data: bytes = b""
    nested: List["SourcedFile"] = field(default_factory=list)

    @property
    def resolved(self) -> bool:
        return self.values is not None


@dataclass
class SourceContext:
    """What resolving a ``source`` needs: where the script is, the header's ``--chdir``, the files
    being read (a cycle guard), and whether ``$0`` names a spooled copy."""

    path: Optional[str]  # the script's (or sourced file's) absolute path; None for stdin
    submit_dir: Optional[str]  # the directory standing for the submission directory
    chdir: Optional[str] = None  # the header's --chdir, absolute; "" when relative to an unknown directory
    chain: Tuple[str, ...] = ()  # real paths of the files being sourced, outermost first
    batch: bool = True  # the top-level file is a batch job ($0 is the spooled copy)
    budget: List[int] = field(default_factory=lambda: [MAX_TOTAL])  # bytes left to read, shared by nested files

    @classmethod
    def for_script(cls, path: str, data: bytes, header=None) -> "SourceContext":
        """The context of a script read from ``path`` (``-``: stdin). ``header``: the script's
        header when it has been read already with sbatch's own option table (here-documents
        skipped changes no directive of the header itself), else it is read here."""
        absolute = os.path.abspath(path) if path and path != "-" and os.path.isfile(path) else None
        submit_dir = os.path.dirname(absolute) if absolute else None
        chdir = None
        batch = b"#SBATCH" in data
        if batch and (b"-D" in data or b"chdir" in data):
            from ..options import CHDIR

            if header is None:
                from ..source import Source
                from .header import parse_header

                header = parse_header(Source(data, path))
            directive = header.winning(CHDIR)
            value = directive.value if directive is not None else None
            if value:
                if "%" in value or "$" in value or value.startswith("~"):
                    chdir = ""
                elif os.path.isabs(value):
                    chdir = os.path.normpath(value)
                elif submit_dir is not None:
                    chdir = os.path.normpath(os.path.join(submit_dir, value))
                else:
                    chdir = ""  # relative to an unknown directory
        return cls(absolute, submit_dir, chdir, (os.path.realpath(absolute),) if absolute else (), batch)

    def initial_cwd(self) -> Optional[str]:
        if self.chdir == "":
            return None
        return self.chdir if self.chdir is not None else SUBMIT


def directory_of(cwd: Optional[str], context: SourceContext) -> Tuple[Optional[str], bool]:
    """The directory a working-directory state stands for, and whether it is approximate."""
    if cwd == SUBMIT:
        return context.submit_dir, (SUBMISSION,)
    return cwd, ()


def resolve_word(value, data: bytes, cwd: Optional[str], context: SourceContext) -> Tuple[Optional[str], Optional[str], Tuple[str, ...]]:
    """(path, reason, approximate) for a ``source`` operand's value, or a ``cd`` target's.

    The leading unknown piece may be ``$SLURM_SUBMIT_DIR``, ``$PWD`` or ``$(pwd)``; any other
    unknown piece makes the path unknown."""
    pieces = list(value.pieces)
    base: Optional[str] = None
    approximate: Tuple[str, ...] = ()
    if pieces and not pieces[0].known:
        first = pieces.pop(0)
        written = data[first.span.start:first.span.end].decode("utf-8", "replace") if first.span is not None else ""
        if first.name == "SLURM_SUBMIT_DIR":
            base, approximate = context.submit_dir, (SUBMISSION,)
            if base is None:
                return None, "no-directory", ()
        elif first.name == "PWD" or written.replace(" ", "") in ("$(pwd)", "`pwd`", "$(pwd-P)", "`pwd-P`"):
            if cwd is None:
                return None, "working-directory", ()
            base, approximate = directory_of(cwd, context)
            if base is None:
                return None, "no-directory", ()
        elif first.name == "HOME":
            return None, "home", ()
        elif "$0" in written or "BASH_SOURCE" in written or first.name == "0":
            sourced = len(context.chain) > 1 and "BASH_SOURCE" in written
            if (context.batch and not sourced) or context.path is None or not OWN_DIRECTORY.fullmatch(written):
                return None, ("spool-directory" if context.batch and not sourced else "run-time"), ()
            base = os.path.dirname(context.path)  # a sourced file's BASH_SOURCE: its real path
        else:
            return None, "run-time", ()
    if any(not p.known for p in pieces):
        return None, "run-time", ()
    rest = "".join(p.text for p in pieces)
    if base is not None:
        if rest and not rest.startswith("/"):
            return None, "run-time", ()  # ``$PWD-old``: another name
        return os.path.normpath(base + rest) if rest else base, None, approximate
    if not rest:
        return None, "run-time", ()
    if rest.startswith("~"):
        return None, "home", ()
    if rest.startswith("/"):
        return os.path.normpath(rest), None, ()
    if cwd is None:
        return None, "working-directory", ()
    directory, approximate = directory_of(cwd, context)
    if directory is None:
        return None, "no-directory", ()
    return os.path.normpath(os.path.join(directory, rest)), None, approximate + ((PATH_SEARCH,) if "/" not in rest else ())


def read(path: str, context: SourceContext) -> Tuple[Optional[bytes], Optional[str]]:
    """The bytes of a file to source, or the reason it is not read."""
    if len(context.chain) > MAX_NESTING:
        return None, "too-deep"
    try:
        real = probe("realpath", path)
        if real in context.chain:
            return None, "cycle"
        if not probe("isfile", real):
            return None, "missing"
        size = os.path.getsize(real)
        if size > MAX_BYTES or size > context.budget[0]:
            return None, "too-large"
        with open(real, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except (OSError, ValueError):  # unreadable, or a NUL in the path
        return None, "missing"
    if len(data) > MAX_BYTES or len(data) > context.budget[0]:
        return None, "too-large"
    probe("read", real)  # the file's hash joins the script's cache entry
    context.budget[0] -= len(data)
    if b"\0" in data:
        return None, "not-text"
    return data, None


@dataclass(frozen=True)
class Origin:
    """Where a sourced file sets a variable: the file (absolute), its bytes, and the assignment's
    span in them; ``sourced_by`` is the ``source`` command in the job script that reads it."""

    path: str
    data: bytes
    span: Span
    name: str
    sourced_by: Span
    assignment: object = field(default=None, compare=False)  # the file's own ``Assignment``
    values: Optional["Values"] = field(default=None, compare=False)  # the file's values


def origin_of(assignment) -> Optional[Origin]:
    """The line of a sourced file that sets what ``assignment`` (a job script's assignment made by
    ``source FILE``) stands for, following nested sources; None for the script's own assignments
    or when the file leaves the variable to an unread source or a branch it cannot place."""
    entry = assignment.sourced
    if entry is None or entry.values is None or entry.path is None:
        return None
    sourced_by = assignment.span
    while True:
        found = [a for a in entry.values.assignments.get(assignment.name, []) if a.kind != "unset"]
        if not found:
            return None
        last = found[-1]
        if last.sourced is None:
            return Origin(entry.path, entry.data, last.span, assignment.name, sourced_by, last, entry.values)
        entry = last.sourced
        if entry.values is None or entry.path is None:
            return None


def files_read(entries: List[SourcedFile]) -> dict:
    """{absolute path: bytes} of every file read through ``entries`` and the files they source."""
    found: dict = {}
    stack = list(entries)
    while stack:
        entry = stack.pop()
        if entry.resolved and entry.path is not None:
            found.setdefault(entry.path, entry.data)
            stack.extend(entry.nested)
    return found


def nested_context(path: str, context: SourceContext) -> SourceContext:
    """The context inside a sourced file: relative paths still go against the batch shell's
    working directory; ``$0`` is still the batch script's, but ``BASH_SOURCE`` is now this file."""
    return SourceContext(path, context.submit_dir, context.chdir, context.chain + (os.path.realpath(path),),
                         context.batch, context.budget)


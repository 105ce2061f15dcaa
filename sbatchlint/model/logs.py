"""The job's log files: ``--output``/``--error`` paths with Slurm's filename patterns, and the
directories the job itself creates (``mkdir``), resolved the way Slurm and the batch shell see
them."""
from __future__ import annotations

import posixpath

from .. import options as option_table
from .header import Directive
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Tuple

# Slurm's filename patterns and the batch-shell variables that hold the same value.
_PATTERN = lazy(r"%(%|[0-9]*[A-Za-z])")
_PATTERN_TOKENS = {"j": "{jobid}", "x": "{jobname}", "u": "{user}", "A": "{arrayjob}", "a": "{arraytask}"}
_VARIABLE_TOKENS = {
    "SLURM_JOB_ID": "{jobid}",
    "SLURM_JOBID": "{jobid}",
    "SLURM_JOB_NAME": "{jobname}",
    "USER": "{user}",
    "SLURM_JOB_USER": "{user}",
    "SLURM_ARRAY_JOB_ID": "{arrayjob}",
    "SLURM_ARRAY_TASK_ID": "{arraytask}",
}
_SUBMIT = "{submit}"
_MKDIR_VALUE_OPTIONS = ("-m", "--mode", "--context", "-Z")


def _pattern_template(path: str) -> Optional[str]:
    """A log path with Slurm's patterns as tokens; None when it holds a pattern we cannot follow."""
    out: List[str] = []
    position = 0
    for match in _PATTERN.finditer(path):
        out.append(path[position : match.start()])
        code = match.group(1)
        if code == "%":
            out.append("%")
        else:
            token = _PATTERN_TOKENS.get(code[-1])
            if token is None:
                return None
            out.append(token)
        position = match.end()
    out.append(path[position:])
    return "".join(out)


def _resolve(path: str, base: str) -> str:
    if not path.startswith("/"):
        path = base.rstrip("/") + "/" + path
    return posixpath.normpath(path)


def _job_base(script) -> str:
    chdir = script.header.value(option_table.CHDIR)
    if chdir and not option_table.has_expansion(chdir):
        return _resolve(chdir, _SUBMIT)
    return _SUBMIT


def _value_template(value) -> Optional[str]:
    """A path word as the batch shell builds it, run-time variables as tokens."""
    out: List[str] = []
    for index, piece in enumerate(value.pieces):
        if piece.known:
            out.append(piece.text)
            continue
        if piece.name in ("SLURM_SUBMIT_DIR",) and index == 0:
            out.append(_SUBMIT)
            continue
        token = _VARIABLE_TOKENS.get(piece.name or "")
        if token is None:
            return None
        out.append(token)
    return "".join(out)


def made_directories(script) -> List[Tuple[str, bool, object]]:
    """(resolved path, made with -p, command) for every ``mkdir`` the job runs (computed once:
    ``Script.made_directories``)."""
    if b"mkdir" not in script.data.replace(b"\\", b""):
        return []  # no command can be mkdir (a backslash inside the name is still seen)
    base = _job_base(script)
    batch = script.commands
    moves = [c.span.start for c in batch if c.program in ("cd", "pushd", "popd")]
    commands = list(batch) + [c for step in script.steps for c in step.task_commands]
    found = []
    for command in commands:
        if command.program != "mkdir":
            continue
        anchor = command.step.span.start if command.step is not None else command.span.start
        moved = any(start < anchor for start in moves)
        parents = False
        skip = False
        paths = []
        for word in command.args:
            text = word.text
            if skip:
                skip = False
                continue
            if word.known and text.startswith("-") and text != "-":
                if text in _MKDIR_VALUE_OPTIONS:
                    skip = True
                if text == "--parents" or (not text.startswith("--") and "p" in text[1:]):
                    parents = True
                continue
            paths.append(word)
        for word in paths:
            alternatives = word.alternatives or [word.value]
            for value in alternatives:
                template = _value_template(value)
                if template is None or not template or any(c in template for c in " \t\n*?["):
                    continue
                if not template.startswith(("/", _SUBMIT)) and moved:
                    continue  # relative to a directory the script changed into
                if template.startswith(_SUBMIT):
                    resolved = posixpath.normpath(template)
                else:
                    resolved = _resolve(template, base)
                found.append((resolved, parents, command))
    return found


def _created_directories(script) -> List[Tuple[str, bool, object]]:
    return script.made_directories


def log_directives(script) -> Iterator[Directive]:
    for name in (option_table.OUTPUT, option_table.ERROR):
        directive = script.header.get(name)
        if directive is not None and directive.value and directive.value_span is not None:
            yield directive


def _is_below(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def created_log_directories(script) -> Iterator[Tuple[Directive, str, str, object]]:
    """(directive, directory as written, directory with pattern tokens, the ``mkdir`` command)
    for each log file whose directory the job creates itself."""
    created = None
    base = None
    for directive in log_directives(script):
        value = directive.value or ""
        if option_table.has_expansion(value) or value.lower() == "none" or "\\" in value:
            continue
        directory = posixpath.dirname(value)
        if not directory or directory == "/":
            continue
        template = _pattern_template(directory)
        if template is None:
            continue
        if created is None:
            created = _created_directories(script)
            base = _job_base(script)
        assert base is not None
        wanted = _resolve(template, base)
        for path, parents, command in created:
            if path == wanted or (parents and _is_below(path, wanted)):
                yield directive, directory, template, command
                break


def unique_patterns(value: str) -> set:
    """The letters of the Slurm filename patterns in a log path (``%j``, ``%A``, ``%a``…)."""
    return {m.group(1)[-1] for m in _PATTERN.finditer(value) if m.group(1) != "%"}


def pattern_insertion(value: str, codes: set, array: bool) -> Tuple[int, str]:
    """Where to insert which pattern to make a log path unique per job (index into ``value``)."""
    if array and "a" in codes and "A" not in codes:
        match = next(m for m in _PATTERN.finditer(value) if m.group(1)[-1] == "a")
        return match.start(), "%A_"
    if array and "A" in codes:
        match = [m for m in _PATTERN.finditer(value) if m.group(1)[-1] == "A"][-1]
        return match.end(), "_%a"
    slash = value.rfind("/")
    name_start = slash + 1
    dot = value.rfind(".")
    at = dot if dot > name_start else len(value)
    return at, "_%A_%a" if array else "_%j"

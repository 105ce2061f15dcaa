"""The Python files a batch script launches, found on disk so the SBL5xx rules can lint them.

Every step's launch (``model/launch.py``: ``python x.py``, ``uv run python x.py``, ``torchrun … x.py``,
``python -m torch.distributed.run … x.py``, or ``python -m pkg.train`` for ``pkg/train.py``) names its
entry point relative to the directory the task starts in. That directory is tried first when it is a host path that exists (``--chdir``,
``--container-workdir`` or a ``cd``; a container path is mapped back through the step's
``--container-mounts``), then the batch script's own directory, then the repository root (the nearest
parent with ``.git`` or ``pyproject.toml``). A path that resolves to no file is skipped: nothing is
guessed.

No libcst here: this runs for every batch script, also when no Python file is ever linted.
"""
from __future__ import annotations

import os
import posixpath
from ..cache import probe  # each existence test is part of the script's cache entry
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

ROOT_MARKERS = (".git", "pyproject.toml")


_MODULES: "Dict[str, object]" = {}


def _module(name: str):
    """The package's module ``name`` (``options``, ``model.launch``), imported when first asked
    (a run that reuses a cached result needs neither), then kept: an import statement run at
    every call costs more than the lookup."""
    module = _MODULES.get(name)
    if module is None:
        module = _MODULES[name] = __import__(name, globals(), None, ("_",), 2)
    return module


def launched_python_files(script, batch_path: str) -> List[str]:
    """The ``.py`` files the steps of ``script`` (read from ``batch_path``) launch, each once, as paths
    relative to the current directory when ``batch_path`` is relative, else absolute."""
    if batch_path == "-":
        return []
    launches = _module("model.launch").launches
    base = os.path.dirname(os.path.abspath(batch_path))
    root = repository_root(base)
    found: List[str] = []
    seen: Set[str] = set()
    for launch in launches(script):
        for variant in launch.variants or [launch]:
            name = entry_path(variant.entry)
            if name is None:
                continue
            try:
                path = resolve(name, variant.workdir, mounts(variant.step), base, root)
                if path is None and variant.entry.kind == "module":  # a package run with -m
                    path = resolve(name[:-3] + "/__main__.py", variant.workdir, mounts(variant.step), base, root)
            except OSError:  # an unreadable directory: nothing to follow there
                continue
            if path is None:
                continue
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                found.append(path if os.path.isabs(batch_path) else _display(path))
    return found


_DOTTED_NAME = lazy(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def entry_path(entry) -> Optional[str]:
    """The file an entry point names: ``train.py`` as written, ``-m pkg.train`` as ``pkg/train.py``."""
    if entry is None or not entry.known:
        return None
    if entry.kind == "script":
        return entry.name if entry.name.endswith(".py") else None
    if entry.kind == "module" and _DOTTED_NAME.fullmatch(entry.name):
        return entry.name.replace(".", "/") + ".py"
    return None


def repository_root(directory: str) -> Optional[str]:
    """The nearest directory at or above ``directory`` holding ``.git`` or ``pyproject.toml``."""
    current = os.path.abspath(directory)
    while True:
        if any(probe("exists", os.path.join(current, marker)) for marker in ROOT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def mounts(step) -> List[Tuple[str, str]]:
    """(host source, container destination) of the step's ``--container-mounts`` (known values only)."""
    option = step.option(_module("options").CONTAINER_MOUNTS)
    if option is None or not option.value or not option.value_known or "${" in option.value:
        return []
    pairs = []
    for item in option.value.split(","):
        parts = item.strip().split(":")
        if not parts[0]:
            continue
        source = parts[0]
        destination = parts[1] if len(parts) > 1 and parts[1].startswith("/") else source
        pairs.append((source, destination))
    return pairs


def to_host(path: str, pairs: Sequence[Tuple[str, str]]) -> str:
    """A container path mapped to the host through the mount that holds it (longest destination first)."""
    for source, destination in sorted(pairs, key=lambda pair: -len(pair[1])):
        destination = destination.rstrip("/") or "/"
        if path == destination or path.startswith(destination + "/"):
            return source.rstrip("/") + path[len(destination):] if destination != "/" else posixpath.join(source, path[1:])
    return path


def resolve(name: str, workdir: Optional[str], pairs: Sequence[Tuple[str, str]], base: str,
            root: Optional[str]) -> Optional[str]:
    """The host file a launch's script argument names, or None when no candidate exists."""
    if name.startswith("/"):
        candidates = [to_host(name, pairs), name]
    else:
        directories: List[str] = []
        if workdir:
            if workdir.startswith("/"):
                directories += [to_host(workdir, pairs), workdir]
            else:
                directories += [os.path.join(base, workdir)] + ([os.path.join(root, workdir)] if root else [])
        directories.append(base)
        if root:
            directories.append(root)
        candidates = [os.path.join(d, name) for d in directories if probe("isdir", d)]
    for candidate in candidates:
        candidate = os.path.normpath(candidate)
        if candidate.endswith(".py") and probe("isfile", candidate):
            return candidate
    return None


def _display(path: str) -> str:
    """Relative to the current directory when the file is under it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def follow_launched(results: Iterable, linted: Iterable[str], lint_paths: Callable[[List[str]], Iterable]) -> Iterator:
    """``results`` as they come, then the results of linting every Python file they launch that is
    not linted already (each once, however many scripts launch it)."""
    seen = {os.path.realpath(path) for path in linted if path != "-"}
    pending: List[str] = []
    for result in results:
        yield result
        for path in getattr(result, "launched", ()) or ():
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                pending.append(path)
    if pending:
        yield from lint_paths(pending)

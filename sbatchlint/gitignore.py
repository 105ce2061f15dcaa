"""git's ignore rules for a directory search: ``.gitignore`` files (nested ones too),
``.git/info/exclude`` and the user's global excludes file (``core.excludesFile``, by default
``$XDG_CONFIG_HOME/git/ignore``), matched with git's own rules by ``pathspec``.

Precedence is git's: a deeper ``.gitignore`` decides before a shallower one, which decides before
``info/exclude``, which decides before the global file; within one file the last matching pattern
wins. A directory that is ignored is not entered, so nothing below it can be re-included. Outside
a git repository only the ``.gitignore`` files inside the searched directory count.

A directory named on the command line is searched even when the rules above it ignore it (as ruff
does): the patterns that ignore it are set aside for that search, the others still apply.
"""
from __future__ import annotations

import os
import subprocess

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # a type for annotations only
    Layer = Tuple[str, object]  # (the directory the patterns are relative to, a pathspec.GitIgnoreSpec)


def find_repository(directory: str) -> Optional[Tuple[str, str]]:
    """(work tree root, git common directory) of the repository holding ``directory``, or None."""
    current = os.path.abspath(directory)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.isdir(marker):
            return current, _common_dir(marker)
        if os.path.isfile(marker):  # a linked worktree or a submodule: "gitdir: <path>"
            try:
                with open(marker, encoding="utf-8", errors="replace") as handle:
                    line = handle.readline().strip()
            except OSError:
                line = ""
            if line.startswith("gitdir:"):
                git_dir = os.path.join(current, line[len("gitdir:"):].strip())
                return current, _common_dir(git_dir)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _common_dir(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        return git_dir


def global_excludes_file(repository: str) -> Optional[str]:
    """The file named by ``core.excludesFile`` as git reads it for this repository (global,
    system and repository configuration), else git's default ``$XDG_CONFIG_HOME/git/ignore``."""
    try:
        found = subprocess.run(
            ["git", "config", "--path", "--get", "core.excludesFile"],
            cwd=repository, capture_output=True, text=True, timeout=10,
        )
        if found.returncode == 0 and found.stdout.strip():
            return os.path.join(repository, os.path.expanduser(found.stdout.strip()))
    except (OSError, subprocess.SubprocessError):
        pass  # no git here: its default location still applies
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config_home, "git", "ignore")


def load(path: Optional[str]):
    """The patterns of one ignore file, or None when it is missing, unreadable or has none."""
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return _spec(text.splitlines())


def _spec(lines: Sequence[str]):
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    import pathspec  # only when there are patterns to match: it is not free to import

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _without_patterns_ignoring(layer: Layer, directory: str) -> Optional[Layer]:
    """``layer`` less the patterns that ignore ``directory`` (None when nothing is left)."""
    base, spec = layer
    relative = os.path.relpath(directory, base).replace(os.sep, "/") + "/"
    import pathspec

    kept = [pattern for pattern in spec.patterns  # type: ignore[attr-defined]
            if pattern.include is None
            or not pathspec.GitIgnoreSpec([pattern]).check_file(relative).include]
    return (base, pathspec.GitIgnoreSpec(kept)) if kept else None


def _verdict(layers: Sequence[Layer], path: str, is_dir: bool) -> Optional[bool]:
    """True: ignored, False: re-included by a negated pattern, None: no pattern matches."""
    for base, spec in reversed(layers):  # the deepest file decides first
        relative = os.path.relpath(path, base).replace(os.sep, "/")
        if relative == "." or relative.startswith("../"):
            continue
        result = spec.check_file(relative + "/" if is_dir else relative)  # type: ignore[attr-defined]
        if result.include is not None:
            return bool(result.include)
    return None


class IgnoreRules:
    """The ignore rules of one directory search, rooted at ``top`` (the searched directory)."""

    def __init__(self, top: str) -> None:
        self.top = os.path.abspath(top)
        repository = find_repository(self.top)
        layers: List[Layer] = []
        above: List[str] = []  # directories from the repository root down to ``top``'s parent
        if repository is not None:
            root, common = repository
            for name in (global_excludes_file(root), os.path.join(common, "info", "exclude")):
                spec = load(name)
                if spec is not None:
                    layers.append((root, spec))
            relative = os.path.relpath(self.top, root)
            if relative != ".":
                current = root
                above.append(current)
                for part in relative.split(os.sep)[:-1]:
                    current = os.path.join(current, part)
                    above.append(current)
        for directory in above:
            spec = load(os.path.join(directory, ".gitignore"))
            if spec is not None:
                layers.append((directory, spec))
        if layers and _verdict(layers, self.top, True):
            # named on the command line: searched anyway, without the patterns that ignore it
            trimmed = (_without_patterns_ignoring(layer, self.top) for layer in layers)
            layers = [layer for layer in trimmed if layer is not None]
        self._layers: Dict[str, Tuple[Layer, ...]] = {}
        self._layers[self.top] = self._with_own(self.top, tuple(layers))

    @staticmethod
    def _with_own(directory: str, inherited: Tuple[Layer, ...]) -> Tuple[Layer, ...]:
        spec = load(os.path.join(directory, ".gitignore"))
        return inherited + ((directory, spec),) if spec is not None else inherited

    def _layers_of(self, directory: str) -> Tuple[Layer, ...]:
        directory = os.path.abspath(directory)
        found = self._layers.get(directory)
        if found is None:
            parent = os.path.dirname(directory)
            inherited = self._layers_of(parent) if parent != directory and directory != self.top else ()
            found = self._layers[directory] = self._with_own(directory, inherited)
        return found

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether git ignores ``path`` (an entry of a directory already found not ignored)."""
        path = os.path.abspath(path)
        layers = self._layers_of(os.path.dirname(path))
        return bool(layers) and bool(_verdict(layers, path, is_dir))

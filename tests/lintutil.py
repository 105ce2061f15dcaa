"""Small helpers the tests share: lint or fix a text with the real engine."""
from __future__ import annotations

from typing import List, Optional, Sequence

from sbatchlint.diagnostics import Diagnostic
from sbatchlint.linter import Options, Selection, fix, lint
from sbatchlint.source import Source


def options(select: Optional[Sequence[str]] = None, settings=None) -> Options:
    return Options(Selection(select=list(select) if select else ["ALL"]), dict(settings or {}))


def lint_text(text: str, select: Optional[Sequence[str]] = None, path: str = "job.sh", settings=None) -> List[Diagnostic]:
    return lint(Source(text.encode("utf-8"), path), options(select, settings))


def codes(text: str, select: Optional[Sequence[str]] = None, path: str = "job.sh", settings=None) -> List[str]:
    return [d.code for d in lint_text(text, select, path, settings)]


def fix_text(text: str, select: Optional[Sequence[str]] = None, unsafe: bool = False, path: str = "job.sh", settings=None) -> str:
    result = fix(Source(text.encode("utf-8"), path), options(select, settings), unsafe=unsafe)
    return result.data.decode("utf-8")


def said(d: Diagnostic) -> str:
    """Everything a finding tells its reader: the first line, the help and the notes, a line each."""
    return "\n".join([d.message, d.help or "", *d.notes])


def clean_path() -> List[str]:
    """The package's folder and its dependencies' (what ``python -S`` leaves off ``sys.path``),
    for a child interpreter run as a fresh virtual environment would run it."""
    import importlib.util
    import os

    import sbatchlint

    folders = [os.path.dirname(os.path.dirname(os.path.abspath(sbatchlint.__file__)))]
    for name in ("tree_sitter", "tree_sitter_bash", "click"):
        spec = importlib.util.find_spec(name)
        folder = os.path.dirname(list(spec.submodule_search_locations)[0])
        if folder not in folders:
            folders.append(folder)
    return folders

"""Each rule's page: ``rules/<CODE>.md`` in the repository, made absolute when the installed
distribution names a ``Documentation`` URL in ``[project.urls]``."""
from __future__ import annotations

from ..stdlite import lru_cache  # (functools' own, without importing functools)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Optional

PAGE = "rules/{code}.md"  # relative to the repository root, where ``python -m sbatchlint.docs`` writes it


@lru_cache(maxsize=1)
def documentation_url() -> Optional[str]:
    """The ``Documentation`` entry of the package's ``[project.urls]``, or None."""
    for entry in _project_urls("sbatchlint"):
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("documentation", "docs") and url.strip():
            return url.strip()
    return None


def _project_urls(name: str) -> list:
    """The ``Project-URL`` headers of the first distribution called ``name`` on ``sys.path``, found
    as ``importlib.metadata`` finds it (a ``*.dist-info/METADATA`` or ``*.egg-info/PKG-INFO``,
    names compared normalised) but without importing it: that costs a run with findings about
    30 ms (the e-mail parser, zip files, path objects)."""
    import os
    import sys

    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for entry in names:
            stem, dot, suffix = entry.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or not dot:
                continue
            if _normalised(stem.partition("-")[0]) != _normalised(name):
                continue
            base = os.path.join(folder or ".", entry)
            for inside in ("METADATA", "PKG-INFO") if os.path.isdir(base) else ("",):
                path = os.path.join(base, inside) if inside else base
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        return _headers(handle.read(), "project-url")
                except OSError:
                    continue
    return []


def _normalised(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()


def _headers(text: str, wanted: str) -> list:
    """The values of the ``wanted`` header in the header block of a metadata file (an e-mail
    header block: ends at the first empty line; an indented line continues the one before)."""
    found: list = []
    current = None
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not line:  # a line of spaces only is a folded part of the header before it
            break
        if line[:1] in (" ", "\t"):
            if current is not None:
                found[current] += " " + line.strip()
            continue
        key, colon, value = line.partition(":")
        current = None
        if colon and key.strip().lower() == wanted:
            found.append(value.strip())
            current = len(found) - 1
    return found


def rule_url(code: str) -> Optional[str]:
    """The page of rule ``code``: absolute under the Documentation URL, else relative to the
    repository root. None for a code without a page (ShellCheck's)."""
    if not code.startswith("SBL"):
        return f"https://www.shellcheck.net/wiki/{code}" if code.startswith("SC") else None
    page = PAGE.format(code=code)
    base = documentation_url()
    return f"{base.rstrip('/')}/{page}" if base else page


def hyperlink(text: str, url: Optional[str]) -> str:
    """``text`` as a terminal hyperlink (OSC 8) to an absolute ``url``; as it is otherwise."""
    if not url or "://" not in url:
        return text
    return f"\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"


def terminal_url(code: str) -> Optional[str]:
    """Where a terminal link on ``code`` points: its absolute page, else the page in the checkout
    this package runs from (an editable install), as a ``file://`` URL; None when neither exists."""
    url = rule_url(code)
    if url is None or "://" in url:
        return url
    import os

    page = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), url)
    if os.path.isfile(page):
        from pathlib import Path

        return Path(page).as_uri()
    return None


def reference(code: str) -> str:
    """Where a reader of plain text finds ``code``'s page: its absolute URL, else the command that
    prints the page (a relative path means nothing outside the repository)."""
    url = rule_url(code)
    if url and "://" in url:
        return url
    return f"sbatchlint explain {code}"

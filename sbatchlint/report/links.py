"""Each rule's page: ``rules/<CODE>.md`` in the repository, made absolute when the installed
distribution names a ``Documentation`` URL in ``[project.urls]``."""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

PAGE = "rules/{code}.md"  # relative to the repository root, where ``python -m sbatchlint.docs`` writes it


@lru_cache(maxsize=1)
def documentation_url() -> Optional[str]:
    """The ``Documentation`` entry of the package's ``[project.urls]``, or None."""
    try:
        from importlib.metadata import PackageNotFoundError, metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        entries = metadata("sbatchlint").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("documentation", "docs") and url.strip():
            return url.strip()
    return None


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

"""Regular expressions compiled when first used, not when their module is imported.

A cold run imports every rule and model module; compiling their patterns up front costs more
than linting a typical script. ``lazy(pattern, flags)`` stands in for ``re.compile(pattern,
flags)``: the first attribute asked of it (``search``, ``match``, ``sub``, ``pattern``, …)
compiles the pattern and keeps the compiled pattern's methods on the object, so later calls go
straight to them.
"""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Union

_KEPT = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")


class LazyPattern:
    """``re.compile(pattern, flags)``, done on first use."""

    def __init__(self, pattern: Union[str, bytes], flags: int = 0) -> None:
        self._source = (pattern, flags)

    def compiled(self) -> "re.Pattern":
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(*self._source)
            for name in _KEPT:
                self.__dict__[name] = getattr(compiled, name)
        return compiled

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_source", "_compiled"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r})"


def lazy(pattern: Union[str, bytes], flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)

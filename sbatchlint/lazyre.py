"""Regular expressions compiled when first used, not when their module is imported.

A cold run imports every rule and model module; compiling their patterns up front costs more
than linting a typical script. ``lazy(pattern, flags)`` stands in for ``re.compile(pattern,
flags)``: the first attribute asked of it (``search``, ``match``, ``sub``, ``pattern``, …)
compiles the pattern and keeps the compiled pattern's methods on the object, so later calls go
straight to them.

Compiling a pattern is Python code (``re``'s parser and compiler) and costs a cold run more than
importing ``re``: the twenty-odd patterns one small script needs are a tenth of a cold run. So the
compiler's output for each pattern (the code ``_sre`` runs, its groups and flags) is kept in a
store beside this module's compiled bytecode, as the interpreter keeps bytecode: read once per
process, written when a run compiled a pattern the store did not hold (``save``), never when
bytecode is not written either (``-B``, ``PYTHONDONTWRITEBYTECODE``). The store is keyed by the
interpreter (its cache tag, ``_sre``'s magic number and code size): another interpreter, a
missing, unreadable or damaged store, or code ``_sre`` refuses, all fall back to ``re.compile``.
A pattern made from the store is equal to the one ``re.compile`` makes (``Pattern.__eq__``
compares the pattern, the flags and the code; tested for every pattern of the package).
"""
from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import re
    from typing import Any, Dict, Optional, Tuple, Union

_KEPT = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")

# ``re``'s flags, as the plain numbers ``re.compile`` reads them: a module that only defines
# patterns names its flags without importing ``re``
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16
VERBOSE = 64
ASCII = 256

# what ``re.escape`` puts a backslash before (the same set since Python 3.7)
_SPECIAL = {i: "\\" + chr(i) for i in b"()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def escape(text: Union[str, bytes]) -> Union[str, bytes]:
    """``re.escape(text)``, without importing ``re``."""
    if isinstance(text, str):
        return text.translate(_SPECIAL)
    return str(text, "latin1").translate(_SPECIAL).encode("latin1")


class LazyPattern:
    """``re.compile(pattern, flags)``, done on first use."""

    def __init__(self, pattern: Union[str, bytes], flags: int = 0) -> None:
        self._source = (pattern, flags)

    def compiled(self) -> "re.Pattern":
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = compile_pattern(*self._source)
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


# -- the store of compiled patterns ----------------------------------------------------------------
_STORE: "Optional[Dict[Tuple[Union[str, bytes], int], tuple]]" = None  # read on first compile
_ADDED = False  # a pattern was compiled that the store did not hold
_MOST = 1000  # patterns kept: the package has about 250; past this, only this process's are kept


def compile_pattern(pattern: Union[str, bytes], flags: int = 0) -> "re.Pattern":
    """``re.compile(pattern, flags)``, made from the store when it holds the pattern."""
    global _STORE, _ADDED
    flags = int(flags)
    store = _STORE
    if store is None:
        store = _STORE = _read(store_path())
    parts = store.get((pattern, flags))
    if parts is not None:
        import _sre

        try:
            return _sre.compile(pattern, *parts)
        except Exception:  # code this _sre refuses: compile it again below, and forget it
            del store[(pattern, flags)]
    parts = _compiled_parts(pattern, flags)
    if parts is None:
        import re

        return re.compile(pattern, flags)
    import _sre

    store[(pattern, flags)] = parts
    _ADDED = True
    return _sre.compile(pattern, *parts)


def _compiled_parts(pattern: Union[str, bytes], flags: int) -> "Optional[tuple]":
    """What ``re.compile`` gives ``_sre.compile`` after the pattern: (flags, code, groups,
    group index, index group), made the way ``re.compile`` makes them (the same steps since
    Python 3.7), or None when this interpreter's ``re`` does not have those steps."""
    if sys.version_info >= (3, 11):
        from re import _compiler, _parser
    else:
        import sre_compile as _compiler
        import sre_parse as _parser
    if flags & _parser.SRE_FLAG_DEBUG or not hasattr(_compiler, "_code"):
        return None
    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    # the code holds the compiler's named opcodes (int subclasses): plain ints, as _sre keeps them
    return (int(flags | parsed.state.flags), [int(word) for word in code], parsed.state.groups - 1, groupindex,
            tuple(indexgroup))


def _key() -> tuple:
    import _sre

    return ("sbatchlint-patterns", 1, sys.implementation.cache_tag, _sre.MAGIC, _sre.CODESIZE)


def store_path() -> "Optional[str]":
    """Where the store is: beside this module's compiled bytecode (``__pycache__``, or under
    ``sys.pycache_prefix``), or None when this interpreter keeps no bytecode."""
    cached = globals().get("__cached__")
    tag = sys.implementation.cache_tag
    if not cached or tag is None:
        return None
    import os

    return os.path.join(os.path.dirname(cached), f"lazyre.{tag}.patterns")


def _read(path: "Optional[str]") -> dict:
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    import marshal

    try:
        key, store = marshal.loads(data)
    except Exception:  # damaged: compiled again, and written whole by the next save
        return {}
    if key != _key() or type(store) is not dict:
        return {}
    return store


def save(path: "Optional[str]" = None) -> bool:
    """Write the store when this process compiled a pattern it did not hold (and bytecode is
    written: not under ``-B``); atomically, and silently not at all where it cannot be written.
    True when it was written."""
    global _ADDED
    if not _ADDED or _STORE is None or sys.dont_write_bytecode:
        return False
    path = path or store_path()
    if path is None:
        return False
    import marshal
    import os

    temporary = f"{path}.{os.getpid()}.tmp"
    written = False
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        merged = dict(_read(path))  # another process may have added its own since this one read it
        merged.update(_STORE)
        if len(merged) > _MOST:  # patterns made at run time (from settings) must not pile up
            merged = dict(_STORE) if len(_STORE) <= _MOST else {}
        with open(temporary, "wb") as handle:
            handle.write(marshal.dumps((_key(), merged)))
        os.replace(temporary, path)
        written = True
    except (OSError, ValueError):  # ValueError: a value marshal cannot write (then nothing is)
        return False
    finally:
        if not written:  # also when interrupted (Ctrl-C): no temporary file is left behind
            try:
                os.unlink(temporary)
            except OSError:
                pass
    _ADDED = False
    return True

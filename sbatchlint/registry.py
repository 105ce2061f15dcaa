"""Code → rule. A duplicate code or name is an error at import time.

Rule modules are imported when first needed: ``for_language`` imports only the modules whose
rules can run on a file of that language (``codes.RULES`` says where each code lives),
``rule`` only the one module of a code; ``all_rules`` and ``get`` import every module.
"""
from __future__ import annotations

from . import codes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # importing the rules package here would import every rule
    from typing import Dict, List, Type
    from .rules.base import Rule

_RULES: Dict[str, "Rule"] = {}
_NAMES: Dict[str, str] = {}


def _import(name: str) -> None:
    """``importlib.import_module(name)`` for an absolute name, without importing ``importlib``
    (whose package imports ``warnings``: a cold run needs neither)."""
    __import__(name)


def register(cls: "Type[Rule]") -> "Type[Rule]":
    rule = cls()
    if not rule.code or not rule.name:
        raise TypeError(f"{cls.__name__}: a rule needs a code and a name")
    if rule.code in _RULES:
        raise ValueError(f"duplicate rule code {rule.code}: {cls.__name__} and {type(_RULES[rule.code]).__name__}")
    if rule.name in _NAMES:
        raise ValueError(f"duplicate rule name {rule.name}: {rule.code} and {_NAMES[rule.name]}")
    _RULES[rule.code] = rule
    _NAMES[rule.name] = rule.code
    return cls


def all_rules() -> "List[Rule]":
    _load()
    return [_RULES[code] for code in sorted(_RULES)]


_BY_LANGUAGE: Dict[str, "List[Rule]"] = {}


# Rule modules whose every rule reports only with a cluster profile (``sbatchlint profile``):
# without one they are silent, and not imported.
PROFILE_MODULES = ("cluster",)


def for_language(language: str, profile: bool = True) -> "List[Rule]":
    """The rules that can run on a file of ``language`` ("shell" or "python"), in code order,
    importing only the modules that hold them; without a cluster ``profile``, not the rules that
    need one."""
    key = language if profile else language + ":no-profile"
    found = _BY_LANGUAGE.get(key)
    if found is None:
        wanted = [(code, module) for code, _name, module, lang in codes.RULES
                  if lang in (language, "any") and (profile or module not in PROFILE_MODULES)]
        for module in sorted({module for _code, module in wanted}):
            _import(f"{__package__}.rules.{module}")
        found = _BY_LANGUAGE[key] = [_RULES[code] for code, _module in wanted]
    return found


def rule(code: str) -> "Rule":
    """The rule with this code, importing only its module."""
    if code not in _RULES:
        module = next((m for c, _name, m, _language in codes.RULES if c == code), None)
        if module is None:
            return get(code)
        _import(f"{__package__}.rules.{module}")
    return _RULES[code]


def get(code_or_name: str) -> "Rule":
    _load()
    key = code_or_name.strip()
    if key.upper() in _RULES:
        return _RULES[key.upper()]
    if key in _NAMES:
        return _RULES[_NAMES[key]]
    raise KeyError(code_or_name)


def _load() -> None:
    """Import every rule module (each registers its rules): those in the table, and any other
    module in the package, so that a rule missing from the table is still found (and the
    table's test fails)."""
    global _LOADED
    if _LOADED:
        return
    import pkgutil

    from . import rules

    for info in sorted(pkgutil.iter_modules(rules.__path__), key=lambda info: info.name):
        if info.name != "base" and not info.name.startswith("_"):
            _import(f"{rules.__name__}.{info.name}")
    _LOADED = True


_LOADED = False

"""Code → rule. A duplicate code or name is an error at import time."""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Type

if TYPE_CHECKING:  # importing the rules package here would import every rule
    from .rules.base import Rule

_RULES: Dict[str, "Rule"] = {}
_NAMES: Dict[str, str] = {}


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


def get(code_or_name: str) -> "Rule":
    _load()
    key = code_or_name.strip()
    if key.upper() in _RULES:
        return _RULES[key.upper()]
    if key in _NAMES:
        return _RULES[_NAMES[key]]
    raise KeyError(code_or_name)


def _load() -> None:
    from . import rules  # noqa: F401  (importing the package registers every rule)

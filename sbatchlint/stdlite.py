"""Stand-ins for two standard helpers whose modules a cold run does without.

``enum`` (with ``functools``, ``collections``, ``types``… it imports) and ``functools`` (with
``collections``) cost a cold single-file run about a tenth of its time, for three small
enumerations and a few memoised functions. ``Constants`` / ``StrConstants`` stand for ``Enum`` /
``(str, Enum)`` as the package uses them, behaving as those do for what a caller sees (members by
attribute, by value ``Cls(value)`` and by name ``Cls[name]``, iteration in definition order,
``name``/``value``, ``repr``/``str``/``format``, hashing, pickling; tested against ``enum``);
``lru_cache`` is ``functools.lru_cache``'s own C implementation, taken from ``_functools``.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Callable, Optional


class _ConstantsType(type):
    """The metaclass: every upper-case class attribute of a subclass becomes a member."""

    def __new__(meta, name, bases, namespace):
        cls = super().__new__(meta, name, bases, namespace)
        by_value: dict = {}
        by_name: dict = {}
        for key, value in list(namespace.items()):
            if key.startswith("_") or not key.isupper() or callable(value) or isinstance(value, (property, classmethod, staticmethod)):
                continue
            member = cls._make(value)
            member._name_ = key
            member._value_ = value
            type.__setattr__(cls, key, member)
            by_value.setdefault(value, member)
            by_name[key] = member
        type.__setattr__(cls, "_by_value", by_value)
        type.__setattr__(cls, "_by_name", by_name)
        return cls

    def __call__(cls, value):
        try:
            return cls._by_value[value]
        except (KeyError, TypeError):
            pass
        if isinstance(value, cls):
            return value
        raise ValueError(f"{value!r} is not a valid {cls.__qualname__}")

    def __getitem__(cls, name):
        return cls._by_name[name]

    def __iter__(cls):
        return iter(cls._by_name.values())

    def __reversed__(cls):
        return reversed(list(cls._by_name.values()))

    def __len__(cls):
        return len(cls._by_name)

    def __contains__(cls, member):
        return isinstance(member, cls) and member._name_ in cls._by_name

    def __repr__(cls):
        return f"<enum {cls.__name__!r}>"

    def __setattr__(cls, name, value):
        if name in cls.__dict__.get("_by_name", ()):
            raise AttributeError(f"cannot reassign member {name!r}")
        super().__setattr__(name, value)


class Constants(metaclass=_ConstantsType):
    """``enum.Enum``'s members as the package uses them (see the module docstring)."""

    _name_: str
    _value_: Any

    @classmethod
    def _make(cls, value):
        return object.__new__(cls)

    @property
    def name(self) -> str:
        return self._name_

    @property
    def value(self):
        return self._value_

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self._name_}: {self._value_!r}>"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self._name_}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __hash__(self) -> int:
        return hash(self._name_)

    def __reduce_ex__(self, protocol):
        return type(self), (self._value_,)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class StrConstants(str, Constants):
    """``class X(str, enum.Enum)``: members are also the strings of their values."""

    @classmethod
    def _make(cls, value):
        return str.__new__(cls, value)

    __str__ = Constants.__str__
    __format__ = Constants.__format__
    __repr__ = Constants.__repr__
    __reduce_ex__ = Constants.__reduce_ex__

    def __hash__(self) -> int:
        return str.__hash__(self)


def lru_cache(maxsize: "Optional[int]" = 128) -> "Callable[[Callable], Callable]":
    """``functools.lru_cache(maxsize)`` (the same C object, with ``cache_clear``/``cache_info``)."""
    try:
        from _functools import _lru_cache_wrapper
    except ImportError:  # another interpreter: the module itself
        from functools import lru_cache as real

        return real(maxsize)

    def decorate(function: "Callable") -> "Callable":
        wrapper = _lru_cache_wrapper(function, maxsize, False, _CacheInfo)
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(wrapper, name, getattr(function, name))
        wrapper.__wrapped__ = function
        return wrapper

    return decorate


def _CacheInfo(hits: int, misses: int, maxsize, currsize: int):  # noqa: N802 - functools' name
    """``cache_info()``'s answer (``functools`` makes it a named tuple; this one is made when asked)."""
    from functools import _CacheInfo as real

    return real(hits, misses, maxsize, currsize)

"""Data classes whose methods are generated when the first instance is made, not at import.

``dataclasses.dataclass`` writes and compiles ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__setattr__``, ``__delattr__``, ``__hash__``) for every class as its module is imported: over the
package's classes that was more than half of a cold run's import time, while a typical script
makes instances of only some of them. ``dataclass`` here takes the same arguments and gives the
same class, finished by the standard decorator in place the first time an instance is created
(called, unpickled or copied). Only what an instance would
show differs before then (``dataclasses.fields`` of a class never instantiated), and nothing in
the package asks that.
"""
from __future__ import annotations

import threading

_LOCK = threading.RLock()
_PENDING: dict = {}  # class -> the decorator's options, until the class is finished


def dataclass(cls=None, /, **options):
    """``dataclasses.dataclass(cls, **options)``, applied when ``cls`` first makes an instance."""

    def wrap(cls):
        own = ("__init__", "__setstate__", "__new__")
        if any(name in cls.__dict__ for name in own) or any(base is not object for base in cls.__bases__):
            for base in cls.__mro__[1:]:  # a subclass reads its bases' fields: they are finished first
                finish(base)
            return _finished(cls, options)  # a class of its own making: finished now, as before

        def __init__(self, *args, **kwargs):
            finish(cls)
            cls.__init__(self, *args, **kwargs)

        def __setstate__(self, state):  # unpickled or copied: made without __init__
            finish(cls)
            if hasattr(cls, "__setstate__"):
                cls.__setstate__(self, state)
            else:
                self.__dict__.update(state)

        _PENDING[cls] = options
        cls.__init__ = __init__
        cls.__setstate__ = __setstate__
        return cls

    return wrap if cls is None else wrap(cls)


def finish(cls) -> None:
    """Apply the standard decorator to ``cls`` now, if it waits for it."""
    with _LOCK:
        options = _PENDING.pop(cls, None)
        if options is not None:
            del cls.__init__, cls.__setstate__
            _finished(cls, options)


def _finished(cls, options):
    import dataclasses

    for name, value in list(cls.__dict__.items()):
        if isinstance(value, _Field):
            setattr(cls, name, dataclasses.field(**value.options))
    return dataclasses.dataclass(cls, **options)


class _Field:
    """``dataclasses.field(**options)``, made when the class is finished (importing ``dataclasses``
    itself costs a cold run what a dozen classes do)."""

    __slots__ = ("options",)

    def __init__(self, options) -> None:
        self.options = options


def field(**options):
    return _Field(options)


def replace(obj, /, **changes):
    """``dataclasses.replace``: ``obj`` is an instance, so its class is finished."""
    import dataclasses

    return dataclasses.replace(obj, **changes)

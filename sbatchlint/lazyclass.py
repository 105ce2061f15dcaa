"""Data classes made cheaply: the package's own ``dataclass`` decorator.

The standard ``dataclasses.dataclass`` costs a cold run more than linting a small script does:
importing ``dataclasses`` brings in ``inspect`` (about 9 ms), and each class it processes takes
about 1 ms (its field logic, then one ``exec`` per generated method). This decorator takes the
subset of its arguments the package uses (``frozen``) and fields made with ``field`` here
(``default``, ``default_factory``, ``repr``, ``compare``, ``hash``), and gives a class that
behaves as the standard one for everything the package does with it: the same ``__init__``
(defaults, factories, ``__post_init__``), ``__repr__``, ``__eq__``, ``__hash__`` (the standard
rules: frozen and compared → hashed by the compared fields; compared and not frozen →
unhashable; an explicit ``__hash__`` kept), frozen instances that refuse assignment with
``FrozenInstanceError`` (an ``AttributeError``), subclasses that add fields after their bases',
``__match_args__``, ``replace`` and ``fields``. Nothing is compiled until a class is busy: its
``__init__`` binds arguments itself for the first instances, then is compiled; the other methods
are closures over the class's field names.

The methods are also made only when the class makes its first instance (called, unpickled or
copied): a typical script makes instances of only some of the package's classes. Only what the
class itself shows differs before then (``__hash__`` is still ``object``'s, ``__match_args__``
unset); nothing in the package asks that of a class with no instance.
"""
from __future__ import annotations

from _thread import RLock, get_ident
from _operator import attrgetter  # (operator's own: its Python module is not imported)

_LOCK = RLock()
_PENDING: dict = {}  # class -> the decorator's options, until the class is finished
_MISSING = object()  # no default
_FIELDS = "__record_fields__"  # a finished class's fields: name -> Field, in order
_OPTIONS = frozenset({"frozen"})


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen instance."""


class Field:
    """One field: what ``field(...)`` was given, and the name once its class is finished."""

    __slots__ = ("name", "default", "default_factory", "repr", "compare", "hash")

    def __init__(self, default=_MISSING, default_factory=_MISSING, repr: bool = True,
                 compare: bool = True, hash: "bool | None" = None) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare
        self.hash = hash

    def _named(self, name: str) -> "Field":
        made = Field(self.default, self.default_factory, self.repr, self.compare, self.hash)
        made.name = name
        return made

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


def field(**options) -> Field:
    """A field with a default, a default factory, or left out of ``repr``/comparison/hash."""
    return Field(**options)


def dataclass(cls=None, /, **options):
    """The decorator, with or without ``frozen=True``; methods made on the first instance."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"dataclass() got unsupported options: {', '.join(sorted(unknown))}")

    def wrap(cls):
        own = ("__init__", "__setstate__", "__new__")
        if any(name in cls.__dict__ for name in own) or any(base is not object for base in cls.__bases__):
            for base in cls.__mro__[1:]:  # a subclass reads its bases' fields: they are finished first
                finish(base)
            return _finished(cls, options)  # a class of its own making: finished now

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
    """Make ``cls``'s methods now, if it waits for them."""
    with _LOCK:
        options = _PENDING.pop(cls, None)
        if options is not None:
            del cls.__init__, cls.__setstate__
            _finished(cls, options)


def fields(class_or_instance) -> tuple:
    """The fields of a data class (or of an instance's class), in order."""
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    finish(cls)
    try:
        return tuple(cls.__dict__[_FIELDS].values())
    except KeyError:
        raise TypeError(f"{cls.__name__} is not a data class") from None


def table_row(cls, values: dict):
    """An instance of the data class ``cls`` with ``values``, a dict of every field's value in
    field order, made without calling ``__init__`` (nor ``__post_init__``): for a table of many
    instances built at once, where the general ``__init__`` binding each argument costs more than
    the table's own work. ``cls`` must be finished (``finish``)."""
    made = object.__new__(cls)
    made.__dict__.update(values)
    return made


def replace(obj, /, **changes):
    """A copy of the instance ``obj`` with ``changes`` to some of its fields."""
    for item in fields(obj):
        if item.name not in changes:
            changes[item.name] = getattr(obj, item.name)
    return obj.__class__(**changes)


def _class_var(annotation) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


def _collect(cls, frozen: bool) -> dict:
    """``cls``'s fields (its bases' first, then its own annotations) with their class attributes
    set as the standard decorator sets them."""
    found: dict = {}
    for base in reversed(cls.__mro__[1:]):
        inherited = base.__dict__.get(_FIELDS)
        if inherited is not None:
            if base.__dict__["__record_frozen__"] != frozen:
                raise TypeError("cannot inherit frozen dataclass from a non-frozen one"
                                if frozen else "cannot inherit non-frozen dataclass from a frozen one")
            found.update(inherited)
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _class_var(annotation):
            continue
        default = cls.__dict__.get(name, _MISSING)
        made = default._named(name) if isinstance(default, Field) else Field(default)._named(name)
        if made.default is not _MISSING and type(made.default).__hash__ is None:
            raise ValueError(f"mutable default {type(made.default)} for field {name} is not allowed: "
                             "use default_factory")
        if made.default is _MISSING:
            if isinstance(default, Field):
                delattr(cls, name)
        else:
            setattr(cls, name, made.default)
        found[name] = made
    seen_default = False
    for made in found.values():
        has_default = made.default is not _MISSING or made.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {made.name!r} follows default argument")
        seen_default = seen_default or has_default
    return found


def _finished(cls, options):
    frozen = bool(options.get("frozen", False))
    found = _collect(cls, frozen)
    names = tuple(found)
    made_methods = {"__init__": _first_init(cls, found, frozen), "__repr__": _repr(found), "__eq__": _eq(found)}
    if frozen:
        for name in ("__setattr__", "__delattr__"):
            if name in cls.__dict__:
                raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
        made_methods.update(_frozen(cls, frozenset(names)))
    for name, function in made_methods.items():
        if name not in cls.__dict__:
            _method(cls, name, function)
    own_hash = cls.__dict__.get("__hash__", _MISSING)
    explicit_hash = not (own_hash is _MISSING or (own_hash is None and "__eq__" in cls.__dict__))
    if not explicit_hash:
        if frozen:
            _method(cls, "__hash__", _hash(found))
        else:
            cls.__hash__ = None
    setattr(cls, _FIELDS, found)
    setattr(cls, "__record_frozen__", frozen)
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = names
    if cls.__doc__ is None:
        cls.__doc__ = f"{cls.__name__}({', '.join(names)})"
    return cls


HOT = 256  # instances made through the general ``__init__`` before the class gets a compiled one


def _first_init(cls, found: dict, frozen: bool):
    """An ``__init__`` that binds its arguments itself until the class has made ``HOT``
    instances; then the class gets the compiled one, as fast as the standard decorator's.
    Compiling is dear at start-up: the first ``compile`` in a process costs about 10 M
    instructions (4% of a cold run), each one after it about as much as a few hundred calls of
    the general ``__init__``. A run over one script makes no class ``HOT`` instances (the option
    table's 172 specifications are the most), so it compiles nothing; a run over many makes the
    busy classes hot within the first files."""
    names = tuple(found)
    count = len(names)
    fallbacks = tuple((made.default, made.default_factory) for made in found.values())
    assign = object.__setattr__ if frozen else setattr
    post_init = hasattr(cls, "__post_init__")
    made = [0]

    def __init__(self, *args, **kwargs):
        made[0] += 1
        if made[0] == HOT and cls.__dict__.get("__init__") is __init__:
            _method(cls, "__init__", _init(cls, found, frozen))
        if len(args) > count:
            raise TypeError(f"__init__() takes {count + 1} positional arguments but {len(args) + 1} were given")
        if not kwargs:  # (most calls) the first fields in order, the rest from their defaults
            for name, value in zip(names, args):
                assign(self, name, value)
            for index in range(len(args), count):
                default, factory = fallbacks[index]
                if factory is not _MISSING:
                    value = factory()
                elif default is not _MISSING:
                    value = default
                else:
                    raise TypeError(f"__init__() missing 1 required positional argument: {names[index]!r}")
                assign(self, names[index], value)
            if post_init:
                self.__post_init__()
            return
        for index, name in enumerate(names):
            if index < len(args):
                if name in kwargs:
                    raise TypeError(f"__init__() got multiple values for argument {name!r}")
                value = args[index]
            elif name in kwargs:
                value = kwargs.pop(name)
            else:
                default, factory = fallbacks[index]
                if factory is not _MISSING:
                    value = factory()
                elif default is not _MISSING:
                    value = default
                else:
                    raise TypeError(f"__init__() missing 1 required positional argument: {name!r}")
            assign(self, name, value)
        if kwargs:
            raise TypeError(f"__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")
        if post_init:
            self.__post_init__()

    return __init__


def _init(cls, found: dict, frozen: bool):
    """The compiled ``__init__`` (for a class that makes many instances: it must be as fast as the
    standard one, keyword arguments and defaults included)."""
    space: dict = {"_FACTORY": _MISSING, "_set": object.__setattr__}
    params, body = [], []
    for name, made in found.items():
        if made.default_factory is not _MISSING:
            space[f"_factory_{name}"] = made.default_factory
            params.append(f"{name}=_FACTORY")
            value = f"_factory_{name}() if {name} is _FACTORY else {name}"
        elif made.default is not _MISSING:
            space[f"_default_{name}"] = made.default
            params.append(f"{name}=_default_{name}")
            value = name
        else:
            params.append(name)
            value = name
        body.append(f" _set(self, {name!r}, {value})" if frozen else f" self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append(" self.__post_init__()")
    source = "def __init__(" + ", ".join(["self", *params]) + "):\n" + "\n".join(body or [" pass"]) + "\n"
    exec(compile(source, f"<dataclass {cls.__qualname__}>", "exec"), space)
    return space["__init__"]


def _values(names: list):
    """A function giving an instance's values of ``names`` as a tuple."""
    if len(names) == 1:
        name = names[0]
        return lambda self: (getattr(self, name),)
    return attrgetter(*names) if names else (lambda self: ())


def _repr(found: dict):
    shown = [name for name, made in found.items() if made.repr]
    values = _values(shown)
    running: set = set()

    def __repr__(self):
        key = (id(self), get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            pairs = ", ".join(f"{name}={value!r}" for name, value in zip(shown, values(self)))
            return f"{self.__class__.__qualname__}({pairs})"
        finally:
            running.discard(key)

    return __repr__


def _eq(found: dict):
    values = _values([name for name, made in found.items() if made.compare])

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(found: dict):
    values = _values([name for name, made in found.items() if (made.compare if made.hash is None else made.hash)])

    def __hash__(self):
        return hash(values(self))

    return __hash__


def _frozen(cls, names: frozenset) -> dict:
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return {"__setattr__": __setattr__, "__delattr__": __delattr__}


def _method(cls, name: str, function) -> None:
    function.__qualname__ = f"{cls.__qualname__}.{name}"
    function.__module__ = cls.__module__
    setattr(cls, name, function)

"""Data classes finished on first use behave as the standard decorator's, whichever way the first
instance comes (called, unpickled, copied)."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest

from sbatchlint import lazyclass
from sbatchlint.lazyclass import FrozenInstanceError, dataclass, field, fields, replace


def _pair(**options):
    """The same class made by the standard decorator and by the lazy one."""
    made = []
    for decorate, make_field in ((dataclasses.dataclass, dataclasses.field), (dataclass, field)):
        class Point:
            """A point."""

            x: int
            y: int = 0
            tags: list = make_field(default_factory=list, compare=False)

            def norm(self) -> int:
                return abs(self.x) + abs(self.y)

        made.append(decorate(**options)(Point))
    return made


@pytest.mark.parametrize("options", [{}, {"frozen": True}])
def test_instances_compare_print_and_hash_as_the_standard_ones(options):
    standard, lazy = _pair(**options)
    assert lazy in lazyclass._PENDING  # nothing generated yet
    a, b = lazy(1, 2), lazy(1, 2, ["t"])
    assert lazy not in lazyclass._PENDING
    assert repr(a) == repr(standard(1, 2)).replace(standard.__qualname__, lazy.__qualname__)
    assert a == b and a != lazy(2, 1) and a.norm() == 3 and b.tags == ["t"] and a.tags is not lazy(0).tags
    assert [f.name for f in fields(lazy)] == [f.name for f in dataclasses.fields(standard)] == ["x", "y", "tags"]
    if options:
        assert hash(a) == hash(b)
        with pytest.raises(FrozenInstanceError):
            a.x = 5
    else:
        assert lazy.__hash__ is None
    assert replace(a, y=7) == lazy(1, 7)
    with pytest.raises(TypeError):
        lazy()  # x is required, as for the standard class


def test_a_copy_or_an_unpickled_instance_finishes_its_class_first():
    _, lazy = _pair()
    blank = lazy.__new__(lazy)  # how copy and pickle make an instance: no __init__
    blank.__setstate__({"x": 1, "y": 2, "tags": []})
    assert lazy not in lazyclass._PENDING and blank == lazy(1, 2) and repr(blank).endswith("Point(x=1, y=2, tags=[])")
    assert copy.deepcopy(blank) == blank


def test_an_instance_pickled_elsewhere_arrives_whole():
    from sbatchlint.diagnostics import Edit

    data = pickle.dumps(Edit.insert(3, "x"))
    probe = ("import pickle, sys\nfrom sbatchlint.diagnostics import Edit\n"
             "edit = pickle.loads(sys.stdin.buffer.read())\n"
             "print(repr(edit), edit == pickle.loads(pickle.dumps(edit)), hash(edit) is not None)\n")
    done = subprocess.run([sys.executable, "-c", probe], input=data, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split() == [*repr(Edit.insert(3, "x")).split(), "True", "True"]


def test_a_subclass_of_a_lazy_class_sees_its_fields():
    _, lazy = _pair()

    @dataclass
    class Labelled(lazy):
        label: str = ""

    assert Labelled(1, 2, [], "a").label == "a" and [f.name for f in fields(Labelled)][-1] == "label"


def test_hashing_follows_the_standard_rules():
    @dataclass(frozen=True)
    class Key:
        name: str
        note: str = field(default="", compare=False)
        weight: int = field(default=0, hash=False)

    @dataclass
    class Loose:
        name: str

    @dataclass
    class Counted:
        name: str

        def __hash__(self) -> int:
            return 7

    assert hash(Key("a", "x", 1)) == hash(Key("a", "y", 2))  # neither note nor weight hashed
    assert Key("a", "x") == Key("a", "y") and Key("a", weight=1) != Key("a", weight=2)
    assert {Key("a"): 1}[Key("a", "other")] == 1
    with pytest.raises(TypeError):
        hash(Loose("z"))  # compared and not frozen: unhashable
    assert Loose.__hash__ is None and hash(Counted("z")) == 7


def test_defaults_factories_and_post_init_behave_as_the_standard_ones():
    made = []

    @dataclass
    class Job:
        name: str
        nodes: int = 1
        steps: list = field(default_factory=list)
        shown: str = field(default="x", repr=False)

        def __post_init__(self) -> None:
            made.append(self.name)

    a = Job("a")
    b = Job(name="b", nodes=2, steps=[1])
    assert (a.nodes, a.steps, b.nodes, b.steps, made) == (1, [], 2, [1], ["a", "b"])
    assert Job.nodes == 1 and not hasattr(Job, "steps")  # the class keeps a default, never a factory
    assert repr(a) == "test_defaults_factories_and_post_init_behave_as_the_standard_ones.<locals>.Job(name='a', nodes=1, steps=[])"
    assert Job.__match_args__ == ("name", "nodes", "steps", "shown")
    with pytest.raises(TypeError):
        Job("a", 1, [], "x", "extra")


def test_a_class_the_standard_decorator_refuses_is_refused():
    with pytest.raises(ValueError):
        @dataclass
        class Shared:
            items: list = []  # noqa: RUF012 - the mistake under test
        Shared()
    with pytest.raises(TypeError):
        @dataclass
        class Order:
            a: int = 0
            b: int
        Order()
    with pytest.raises(TypeError):
        @dataclass(order=True)
        class Ordered:
            a: int

    @dataclass
    class Base:
        a: int = 0

    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        @dataclass(frozen=True)
        class Frozen(Base):
            b: int = 0

    @dataclass(frozen=True)
    class FrozenBase:
        a: int = 0

    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
        @dataclass
        class Thawed(FrozenBase):
            b: int = 0


def test_a_frozen_subclass_adds_fields_after_its_bases_and_stays_frozen():
    @dataclass(frozen=True)
    class Base:
        a: int
        b: int = 0

    @dataclass(frozen=True)
    class Child(Base):
        c: str = ""

    child = Child(1, 2, "x")
    assert [f.name for f in fields(child)] == ["a", "b", "c"] and repr(child).endswith("Child(a=1, b=2, c='x')")
    assert child != Base(1, 2) and replace(child, c="y").c == "y"
    with pytest.raises(AttributeError):
        child.c = "z"
    with pytest.raises(AttributeError):
        del child.a


def test_a_repr_that_reaches_itself_prints_dots():
    @dataclass
    class Node:
        name: str
        children: list = field(default_factory=list)

    root = Node("r")
    root.children.append(root)
    assert repr(root).endswith("Node(name='r', children=[...])")



@pytest.mark.parametrize("frozen", [False, True])
def test_the_general_init_and_the_compiled_one_agree(monkeypatch, frozen):
    """The first instances of a class are made by an ``__init__`` that binds its arguments itself;
    from the HOT-th on, by a compiled one. Both take the same calls and refuse the same ones."""
    monkeypatch.setattr(lazyclass, "HOT", 4)
    posted = []

    @dataclass(frozen=frozen)
    class Step:
        name: str
        nodes: int = 1
        env: dict = field(default_factory=dict)

        def __post_init__(self) -> None:
            posted.append(self.name)

    calls = [(("a",), {}), (("b", 2), {}), ((), {"name": "c", "env": {"X": "1"}}), (("d",), {"nodes": 3})]
    made = [Step(*args, **kwargs) for args, kwargs in calls * 2]  # the second round after the switch
    assert made[:4] == made[4:] and posted == ["a", "b", "c", "d"] * 2
    assert [(s.name, s.nodes, s.env) for s in made[:4]] == [("a", 1, {}), ("b", 2, {}), ("c", 1, {"X": "1"}), ("d", 3, {})]
    assert made[0].env is not made[4].env
    generic_errors, compiled_errors = [], []
    for errors in (generic_errors, compiled_errors):
        if errors is compiled_errors:
            assert Step.__init__.__code__.co_filename.startswith("<dataclass")
        for args, kwargs in [((), {}), (("a", 1, {}, 4), {}), (("a",), {"name": "b"}), (("a",), {"colour": 1})]:
            with pytest.raises(TypeError):
                Step(*args, **kwargs)
            errors.append(True)
    assert generic_errors == compiled_errors


def test_a_class_made_few_times_compiles_nothing(monkeypatch):
    import builtins

    compiled = []
    real = builtins.compile
    monkeypatch.setattr(builtins, "compile", lambda *a, **k: compiled.append(a[1]) or real(*a, **k))

    @dataclass(frozen=True)
    class Rare:
        a: int
        b: str = ""

    assert [Rare(1), Rare(2, "x")] == [Rare(1, ""), Rare(2, b="x")] and compiled == []

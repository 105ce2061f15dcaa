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
from sbatchlint.lazyclass import dataclass, field, replace


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
    assert [f.name for f in dataclasses.fields(lazy)] == ["x", "y", "tags"]
    if options:
        assert hash(a) == hash(b)
        with pytest.raises(dataclasses.FrozenInstanceError):
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

    assert Labelled(1, 2, [], "a").label == "a" and [f.name for f in dataclasses.fields(Labelled)][-1] == "label"

"""``sbatchlint.stdlite``'s stand-ins behave as the standard helpers they replace (``enum.Enum``,
``(str, enum.Enum)``, ``functools.lru_cache``), compared side by side with the real ones; and a
run over a script imports neither ``enum`` nor ``functools``."""
from __future__ import annotations

import copy
import enum
import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest
from lintutil import clean_path

from sbatchlint import stdlite
from sbatchlint.diagnostics import Applicability, Severity
from sbatchlint.model.workload import Workload


def _real(cls):
    """The ``enum`` class ``cls`` stands for: the same members, the same mixin."""
    members = {member.name: member.value for member in cls}
    return enum.Enum(cls.__name__, members, type=str if issubclass(cls, str) else None)


@pytest.mark.parametrize("cls", [Severity, Applicability, Workload])
def test_constants_behave_as_the_enum_they_stand_for(cls):
    real = _real(cls)
    assert [m.name for m in cls] == [m.name for m in real] and len(cls) == len(real)
    assert [m.value for m in cls] == [m.value for m in real]
    for ours, theirs in zip(cls, real):
        assert cls(ours.value) is ours and real(theirs.value) is theirs
        assert cls(ours) is ours and cls[ours.name] is ours
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
        assert f"{ours}" == f"{theirs}" and f"{ours:>30}" == f"{theirs:>30}" and "%s" % ours == "%s" % theirs
        assert hash(ours) == hash(theirs)
        assert (ours == ours.value) == (theirs == theirs.value)
        assert isinstance(ours, str) == isinstance(theirs, str)
        assert ours in cls and isinstance(ours, cls) and type(ours) is cls
        assert pickle.loads(pickle.dumps(ours)) is ours
        assert copy.copy(ours) is ours and copy.deepcopy(ours) is ours
        if isinstance(ours, str):
            assert json.dumps(ours) == json.dumps(theirs) and ours.upper() == theirs.upper()
            assert {ours: 1}.get(ours.value) == {theirs: 1}.get(theirs.value) == 1
    with pytest.raises(ValueError) as ours_error:
        cls("no such value")
    with pytest.raises(ValueError) as theirs_error:
        real("no such value")
    assert str(ours_error.value) == str(theirs_error.value).replace(real.__qualname__, cls.__qualname__)
    with pytest.raises(KeyError):
        cls["NO_SUCH_NAME"]
    with pytest.raises(AttributeError):
        setattr(cls, next(iter(cls)).name, None)


def test_a_severity_keeps_its_own_attributes():
    assert [s.letter for s in Severity] == ["E", "W", "I"]
    assert Severity(str("WARNING").lower()) is Severity.WARNING


def test_lru_cache_is_functools_own():
    import functools

    calls = []

    @stdlite.lru_cache(maxsize=2)
    def square(x):
        """Squares."""
        calls.append(x)
        return x * x

    assert type(square) is type(functools.lru_cache(maxsize=2)(lambda x: x))
    assert [square(2), square(2), square(3), square(4), square(2)] == [4, 4, 9, 16, 4]
    assert calls == [2, 3, 4, 2]  # least recently used first out, as functools does
    assert square.cache_info() == functools._CacheInfo(1, 4, 2, 2)
    square.cache_clear()
    assert square.cache_info().currsize == 0
    assert square.__name__ == "square" and square.__doc__ == "Squares." and square.__wrapped__(5) == 25


def test_a_run_imports_neither_enum_nor_functools_and_the_parsers_log_types_still_work(tmp_path):
    """tree_sitter's binding makes an ``IntEnum`` as it loads: it gets one made when first used,
    which a parser's logger (the one user) still receives as the real ``IntEnum`` members."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
                                     "srun python -m megatron.bridge.recipes.run train.py\n")
    probe = ("import sys\nfrom sbatchlint.start import main\n"
             "try:\n    main(['job.sh'])\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
             "print(sorted(m for m in ('enum', 'functools', 'collections', 're', 'operator') if m in sys.modules))\n"
             "import tree_sitter\nfrom sbatchlint import shell\n"
             "parser = tree_sitter.Parser(tree_sitter.Language(shell.bash_language()))\nseen = []\n"
             "parser.logger = lambda kind, message: seen.append(kind)\nparser.parse(b'echo hi\\n')\n"
             "import enum\n"
             "print(sorted({repr(kind) for kind in seen}), all(isinstance(kind, enum.IntEnum) for kind in seen),\n"
             "      tree_sitter.LogType.LEX == 1, tree_sitter.LogType(0).name, [m.name for m in tree_sitter.LogType])\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith("SBATCHLINT_")}
    env["PYTHONPATH"] = os.pathsep.join(clean_path())
    # as installed: compiled bytecode, and the store of compiled patterns the first run writes (a
    # run that compiles a pattern itself imports re, and with it enum and functools)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "bytecode")
    for _run in range(2):
        shutil.rmtree(tmp_path / ".sbatchlint_cache", ignore_errors=True)  # the script is parsed each time
        done = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60,
                              cwd=tmp_path, env=env)
    lines = done.stdout.splitlines()
    assert lines[-3] == "exit 1" and lines[-2] == "[]", done.stdout + done.stderr
    assert lines[-1] == ("['<LogType.LEX: 1>', '<LogType.PARSE: 0>'] True True PARSE ['PARSE', 'LEX']"), done.stderr

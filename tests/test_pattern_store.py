"""The store of compiled patterns (``sbatchlint.lazyre``): a pattern made from it is the pattern
``re.compile`` makes, for every pattern of the package; the store is written only when a run
compiled something new and bytecode is written; a store from another interpreter, a damaged one,
or code ``_sre`` refuses is never used; and a second cold run reads what the first one wrote."""
from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
import textwrap

import pytest

import sbatchlint
from sbatchlint import lazyre
from sbatchlint.lazyre import LazyPattern, compile_pattern


def _package_patterns():
    """(pattern, flags) of every lazy pattern a module of the package defines at its top level or
    in a class body."""
    import warnings

    found = {}
    for info in pkgutil.walk_packages(sbatchlint.__path__, "sbatchlint."):
        if info.name.endswith(".__main__"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a dependency's own deprecations, met on import
                module = importlib.import_module(info.name)
        except ImportError:  # an optional dependency (the editor server's) is not installed
            continue
        spaces = [vars(module)] + [vars(v) for v in vars(module).values() if isinstance(v, type)]
        for space in spaces:
            for value in list(space.values()):
                values = value if isinstance(value, (tuple, list)) else (value,)
                for item in values:
                    if isinstance(item, LazyPattern):
                        found[item._source] = info.name
    return found


PATTERNS = _package_patterns()


@pytest.fixture
def empty_store(monkeypatch, tmp_path):
    path = str(tmp_path / "cache" / "lazyre.test.patterns")
    monkeypatch.setattr(lazyre, "_STORE", None)
    monkeypatch.setattr(lazyre, "_ADDED", False)
    monkeypatch.setattr(lazyre, "store_path", lambda: path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return path


def test_the_package_defines_lazy_patterns():
    assert len(PATTERNS) > 100
    assert any(isinstance(p, bytes) for p, _f in PATTERNS) and any(isinstance(p, str) for p, _f in PATTERNS)
    assert any(f & re.IGNORECASE for _p, f in PATTERNS)


def test_every_pattern_made_from_the_store_is_the_one_re_compile_makes(empty_store, monkeypatch):
    for (pattern, flags), module in PATTERNS.items():
        assert compile_pattern(pattern, flags) == re.compile(pattern, flags), (module, pattern)
    assert lazyre.save() is True
    monkeypatch.setattr(lazyre, "_STORE", None)

    def no_compiler(*_args):
        raise AssertionError("compiled again although the store holds it")

    monkeypatch.setattr(lazyre, "_compiled_parts", no_compiler)
    for (pattern, flags), module in PATTERNS.items():
        made = compile_pattern(pattern, flags)
        expected = re.compile(pattern, flags)
        assert made == expected, (module, pattern)
        assert (made.pattern, made.flags, made.groups, made.groupindex) == \
            (expected.pattern, expected.flags, expected.groups, expected.groupindex)


def test_a_pattern_from_the_store_finds_what_re_finds(empty_store, monkeypatch):
    pattern = r"(?P<name>[A-Z_]+)=(?P<value>\S*)"
    compile_pattern(pattern, re.I)
    lazyre.save()
    monkeypatch.setattr(lazyre, "_STORE", None)
    made = compile_pattern(pattern, re.I)
    assert made.sub("<\\g<name>>", "a=1 B=2") == "<a> <B>"
    assert [m.group("value") for m in made.finditer("hf_token=x y=")] == ["x", ""]


def test_nothing_is_written_when_nothing_new_was_compiled(empty_store):
    assert lazyre.save() is False and not os.path.exists(empty_store)
    compile_pattern(r"a+b", 0)
    assert lazyre.save() is True and os.path.exists(empty_store)
    stamp = os.stat(empty_store).st_mtime_ns
    compile_pattern(r"a+b", 0)
    assert lazyre.save() is False and os.stat(empty_store).st_mtime_ns == stamp


def test_nothing_is_written_where_bytecode_is_not(empty_store, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    compile_pattern(r"c+d", 0)
    assert lazyre.save() is False and not os.path.exists(empty_store)


def test_a_folder_that_cannot_be_written_is_no_error(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(lazyre, "_STORE", None)
    monkeypatch.setattr(lazyre, "_ADDED", False)
    monkeypatch.setattr(lazyre, "store_path", lambda: str(blocker / "sub" / "x.patterns"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert compile_pattern(r"e+f", 0) == re.compile(r"e+f")
    assert lazyre.save() is False
    assert not list(tmp_path.glob("**/*.tmp"))


@pytest.mark.parametrize("content", [b"", b"\x00garbage", None, "other-key", "not-a-dict"])
def test_a_damaged_or_foreign_store_is_not_used(empty_store, monkeypatch, content):
    import marshal

    os.makedirs(os.path.dirname(empty_store))
    pattern, flags = r"(x)(?P<y>y)", 0
    wrong = (2, [1, 2, 3], 5, {"y": 9}, (None, None))  # what it would take, if used
    if content is None:
        content = marshal.dumps(42)
    elif content == "other-key":
        content = marshal.dumps((("sbatchlint-patterns", 1, "other-311", 0, 4), {(pattern, flags): wrong}))
    elif content == "not-a-dict":
        content = marshal.dumps((lazyre._key(), [(pattern, flags)]))
    with open(empty_store, "wb") as handle:
        handle.write(content)
    assert compile_pattern(pattern, flags) == re.compile(pattern, flags)


def test_code_the_regular_expression_engine_refuses_is_compiled_again(empty_store):
    import marshal

    os.makedirs(os.path.dirname(empty_store))
    pattern = r"g(h)"
    refused = (32, [1, 2, 3], 1, {}, (None, None))
    with open(empty_store, "wb") as handle:
        handle.write(marshal.dumps((lazyre._key(), {(pattern, 0): refused})))
    assert compile_pattern(pattern, 0) == re.compile(pattern)
    assert lazyre.save() is True
    with open(empty_store, "rb") as handle:
        _key, stored = marshal.loads(handle.read())
    assert stored[(pattern, 0)] != refused


def test_a_second_cold_run_reads_the_store_the_first_one_wrote(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text(textwrap.dedent("""\
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=4
        export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456
        srun python train.py --data $DATA_ROOT/set
    """))
    probe = textwrap.dedent("""\
        import sys
        from sbatchlint import lazyre
        compiled = []
        real = lazyre._compiled_parts
        lazyre._compiled_parts = lambda *a: compiled.append(a) or real(*a)
        from sbatchlint.start import main
        try:
            main(["--no-cache", sys.argv[1]])
        except SystemExit as done:
            print("exit", done.code, "compiled", len(compiled), file=sys.stderr)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    runs = [subprocess.run([sys.executable, "-c", probe, str(job)], capture_output=True, text=True, env=env,
                           cwd=str(tmp_path), timeout=120) for _ in range(2)]
    first, second = (r.stderr.strip().splitlines()[-1].split() for r in runs)
    assert runs[0].stdout == runs[1].stdout and "SBL" in runs[0].stdout
    assert first[:2] == second[:2] == ["exit", "1"]
    assert int(first[3]) > 5 and int(second[3]) == 0
    stores = list((tmp_path / "pycache").glob("**/lazyre.*.patterns"))
    assert len(stores) == 1


def test_the_package_s_patterns_are_the_same_in_every_process():
    """A pattern built from a set would differ from one process to the next (string hashing is
    seeded per process): never found in the store, and stored again on every run."""
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import test_pattern_store as t; print(sorted(map(repr, t.PATTERNS)))"
    here = os.path.dirname(os.path.abspath(__file__))
    seen = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", probe, here], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        seen.add(done.stdout)
    assert len(seen) == 1
    assert sorted(map(repr, PATTERNS)) == eval(seen.pop())


def test_escape_and_the_flags_are_re_s():
    text = "".join(chr(i) for i in range(0x300)) + "hooks.slack.com/services/ sk-ant-"
    assert lazyre.escape(text) == re.escape(text)
    assert lazyre.escape(bytes(range(256))) == re.escape(bytes(range(256)))
    assert (lazyre.IGNORECASE, lazyre.MULTILINE, lazyre.DOTALL, lazyre.VERBOSE, lazyre.ASCII) == \
        (re.IGNORECASE, re.MULTILINE, re.DOTALL, re.VERBOSE, re.ASCII)


def test_an_interrupted_write_leaves_no_temporary_file(empty_store, monkeypatch):
    import marshal

    compile_pattern(r"i+j", 0)

    def interrupted(_value):
        raise KeyboardInterrupt

    monkeypatch.setattr(marshal, "dumps", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lazyre.save()
    folder = os.path.dirname(empty_store)
    assert os.listdir(folder) == []

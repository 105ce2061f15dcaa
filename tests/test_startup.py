"""What a cold start pays for: importing the command line and every rule does no regex work.

Patterns are compiled when a check first uses them (``sbatchlint.lazyre``), so a run over one
small script compiles only the few its checks need.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from lintutil import clean_path

PROBE = r"""
import os, re, sys
package = os.path.dirname(os.path.abspath(sys.argv[1]))
compiled = []
real = re._compile

def recording(pattern, flags):
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "re":
        frame = frame.f_back  # re.compile, re.match, ...: who called them
    name = frame.f_code.co_filename if frame is not None else ""
    if name.startswith(package) and not name.endswith("lazyre.py"):
        compiled.append((os.path.relpath(name, package), frame.f_lineno, str(pattern)[:40]))
    return real(pattern, flags)

re._compile = recording
import sbatchlint.cli, sbatchlint.runner, sbatchlint.linter, sbatchlint.model.script
import sbatchlint.secrets, sbatchlint.redaction, sbatchlint.convert, sbatchlint.migrate
from sbatchlint import registry
registry.all_rules()
for line in compiled:
    print(*line)
"""


def test_importing_the_command_line_and_every_rule_compiles_no_pattern():
    import sbatchlint

    done = subprocess.run([sys.executable, "-c", PROBE, sbatchlint.__file__], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", "patterns compiled at import time:\n" + done.stdout


def test_a_lazy_pattern_behaves_as_the_compiled_one():
    import re

    from sbatchlint.lazyre import lazy

    pattern = lazy(r"(?P<name>[A-Z_]+)=(?P<value>\S*)", re.I)
    assert pattern.pattern == r"(?P<name>[A-Z_]+)=(?P<value>\S*)" and pattern.flags & re.I
    assert pattern.match("hf_token=x").group("name") == "hf_token"
    assert pattern.sub("<\\g<name>>", "a=1 b=2") == "<a> <b>"
    assert [m.group("value") for m in pattern.finditer("a=1 b=2")] == ["1", "2"]
    assert pattern.fullmatch("a=1 b") is None
    with pytest.raises(AttributeError):
        pattern.no_such_method


def test_the_static_code_table_is_the_registry():
    from sbatchlint import codes, registry

    rules = [(r.code, r.name, type(r).__module__.rsplit(".", 1)[1], r.language) for r in registry.all_rules()]
    assert list(codes.RULES) == rules
    assert list(codes.CODES) == [code for code, _name, _module, _language in rules]


RUN = r"""
import sys
from sbatchlint.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    print("exit", exit.code)
print(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("sbatchlint.rules.") and m != "sbatchlint.rules.base"))
"""


def _imported_rules(*args, cwd):
    done = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    return done.stdout.splitlines()[-2:]  # after the run's own output


def test_checking_the_selection_imports_no_rule(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    assert _imported_rules(str(script), "--select", "SBL9999", cwd=tmp_path) == ["exit 2", "[]"]


def test_a_shell_script_imports_no_python_rule(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    exit_line, modules = _imported_rules(str(script), cwd=tmp_path)
    assert exit_line == "exit 0"
    assert "python" not in modules and "topology" in modules and "suppression" in modules


def test_the_cluster_rules_are_imported_only_with_a_profile(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --partition=gpu\nsrun hostname\n")
    exit_line, modules = _imported_rules(str(script), "--no-cache", cwd=tmp_path)
    assert exit_line == "exit 0" and "cluster" not in modules and "launch" in modules
    from sbatchlint.cluster.profile import PartitionFacts, Profile, to_toml

    (tmp_path / ".sbatchlint-cluster.toml").write_text(
        to_toml(Profile(cluster="lab", partitions=(PartitionFacts("batch", default=True),))))
    exit_line, modules = _imported_rules(str(script), "--no-cache", cwd=tmp_path)
    assert exit_line == "exit 1" and "cluster" in modules  # SBL017: no partition "gpu" there


def test_rule_examples_are_built_when_first_asked():
    probe = (
        "from sbatchlint import registry\nfrom sbatchlint.rules import base\n"
        "built = []\noriginal = base.Examples.__get__\n"
        "def counting(self, instance, owner=None):\n"
        "    built.append(self.built is None)\n    return original(self, instance, owner)\n"
        "base.Examples.__get__ = counting\n"
        "rules = registry.for_language('shell')\nprint(len(built))\n"
        "print(len(rules[0].examples) > 0, len(built))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["0", "True", "1"], done.stderr


def test_version_and_help_import_no_reporter_and_no_rule(tmp_path):
    probe = (
        "import sys\nfrom sbatchlint.cli import main\n"
        "for args in (['--version'], ['--help']):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sbatchlint.report', 'sbatchlint.rules', "
        "'sbatchlint.model', 'sbatchlint.diagnostics', 'dataclasses'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_the_entry_point_knows_every_command():
    from sbatchlint.cli import main
    from sbatchlint.start import COMMANDS

    assert COMMANDS == set(main.commands)


def _both_ways(args, cwd):
    """(exit, stdout, stderr) of the command line through the entry point and through the full
    option parser, each in a fresh interpreter."""
    runs = []
    for code in ("from sbatchlint.start import main; main()", "from sbatchlint.cli import main; main()"):
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                              env={**os.environ, "NO_COLOR": "1"})
        runs.append((done.returncode, done.stdout, done.stderr))
    return runs


@pytest.mark.parametrize("args", [
    ["clean.sh"], ["bad.sh"], ["clean.sh", "bad.sh"], ["jobs"], ["missing.sh"], ["jobs", "missing.sh"],
    ["empty"], ["--version"], ["bad.sh", "--quiet"], [],
])
def test_a_command_line_of_paths_gives_what_the_option_parser_gives(tmp_path, args):
    (tmp_path / "clean.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nsrun hostname\n")
    (tmp_path / "bad.sh").write_text("#!/bin/bash\nsrun hostname\n#SBATCH --nodes=2\n")
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "train.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py $UNSET\n")
    (tmp_path / "empty").mkdir()
    fast, full = _both_ways(args, tmp_path)
    assert fast == full
    if args and args[0] in ("bad.sh", "missing.sh"):
        assert fast[0] != 0 and (fast[1] + fast[2]).strip()  # the comparison saw a real finding or error


def test_a_command_line_of_paths_imports_no_option_parser(tmp_path):
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    probe = ("import sys\nfrom sbatchlint.start import main\n"
             "try:\n    main(['job.sh'])\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
             "print('click' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.splitlines()[-2:] == ["exit 0", "False"], done.stderr


def test_a_cold_run_imports_only_what_linting_needs(tmp_path):
    """The modules a run over one script could import and does not need: the option parser, the
    standard data classes (and ``inspect``), OpenSSL's hashes, JSON (the cache is ``marshal``),
    signal handling for writes it does not make, what only examples or fixes use, and what only
    a script with parse errors needs."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
                                     "srun --container-image=nvcr.io/nvidia/pytorch:24.01-py3 python train.py\n")
    unwanted = ("click", "dataclasses", "inspect", "hashlib", "json", "signal", "textwrap", "shlex", "tempfile",
                "shutil", "importlib.resources", "importlib.metadata", "email", "typing", "tree_sitter",
                "tree_sitter_bash", "contextlib", "weakref", "sbatchlint.formats", "sbatchlint.model.bash",
                "sbatchlint.budget", "sbatchlint.parallelism", "importlib", "warnings", "fnmatch")
    probe = ("import sys\nstarted = set(sys.modules)  # what the interpreter's own start-up loaded\n"
             "from sbatchlint.start import main\n"
             "try:\n    main(['job.sh'])\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
             f"print(sorted(m for m in {unwanted!r} if m in sys.modules and m not in started))\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith("SBATCHLINT_")}
    env["PYTHONPATH"] = os.pathsep.join(clean_path())
    for run in ("no cached result", "cached result"):
        # -S: as a fresh virtual environment starts, without this one's .pth files (an editable
        # install's finder imports typing, pathlib and tempfile before any program runs)
        done = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60,
                              cwd=tmp_path, env=env)
        assert done.stdout.splitlines()[-2:] == ["exit 1", "[]"], (run, done.stdout, done.stderr)
    assert any(name.endswith(".entry") for _folder, _dirs, files in os.walk(tmp_path / ".sbatchlint_cache") for name in files)


def test_the_grammar_read_from_its_binding_is_the_packages():
    """The parser and the bash grammar are loaded from their packages' compiled bindings alone;
    the grammar is the one ``tree_sitter_bash.language()`` gives, and a later import of the
    packages reuses the bindings."""
    probe = ("import sys\nfrom sbatchlint import shell\n"
             "tree = shell.parse(b'srun python train.py --rank $SLURM_PROCID\\n')\n"
             "print('tree_sitter_bash' in sys.modules, 'tree_sitter_bash._binding' in sys.modules,\n"
             "      'tree_sitter' in sys.modules, 'tree_sitter._binding' in sys.modules)\n"
             "import tree_sitter_bash\nfrom tree_sitter import Language\n"
             "print(Language(tree_sitter_bash.language()) == Language(shell.bash_language()), tree.root_node.type,\n"
             "      tree.root_node.child(0).type)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "True", "False", "True", "True", "program", "command"], done.stderr


def test_a_grammar_package_of_another_layout_is_imported_as_usual(monkeypatch):
    import tree_sitter_bash
    from tree_sitter import Language

    from sbatchlint import shell

    def unusual(name):
        raise OSError("no such binding file")

    monkeypatch.setattr(shell, "_load_binding", unusual)
    monkeypatch.delitem(sys.modules, "tree_sitter_bash._binding", raising=False)
    assert Language(shell.bash_language()) == Language(tree_sitter_bash.language())


@pytest.mark.parametrize("paths, during", [(["job.sh"], False), (["job.sh", "other.sh"], True), (["."], True)])
def test_the_collector_is_on_while_many_files_are_linted_and_off_for_the_exit(tmp_path, paths, during):
    """Start-up imports run with the cyclic collector paused; a run over many files has it on
    (between files it frees what a file's analysis left); a run over one file leaves it off (the
    file's analysis pauses it anyway); the exit does not walk the heap."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    (tmp_path / "other.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    probe = ("import gc, sys\nfrom sbatchlint import check, start\nreal = check.run\nseen = []\n"
             "def run(paths):\n    seen.append(gc.isenabled())\n    return real(paths)\n"
             "check.run = run\n"
             f"try:\n    start.main({paths!r})\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
             "print(seen, gc.isenabled())\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.splitlines()[-2:] == ["exit 0", f"[{during}] False"], done.stdout + done.stderr


def _command(args, cwd, prelude="", env=None):
    """The console script's entry point in a fresh interpreter, after ``prelude``."""
    code = prelude + "import sys; sys.argv[0] = 'sbatchlint'\nfrom sbatchlint.start import command\ncommand()\n"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**(os.environ if env is None else env), "NO_COLOR": "1"})


def test_the_command_ends_with_all_its_output_and_its_status(tmp_path):
    """A plain check ends without the interpreter's teardown; what it printed is all there, through
    a pipe, and the exit status is the run's, as the option parser's path gives them."""
    lines = ["#!/bin/bash", "#SBATCH --nodes=2"] + [f"srun python train.py $UNSET_{n}" for n in range(400)]
    (tmp_path / "many.sh").write_text("\n".join(lines) + "\n")
    (tmp_path / "clean.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nsrun hostname\n")
    for args in (["many.sh"], ["clean.sh"], ["missing.sh"], ["--version"]):
        ended = _command(args, tmp_path)
        _fast, full = _both_ways(args, tmp_path)
        assert (ended.returncode, ended.stdout, ended.stderr) == full
    assert len(ended.stdout) < 100 and len(_command(["many.sh"], tmp_path).stdout) > 65536


def test_the_command_leaves_an_exit_handler_its_turn(tmp_path):
    """Whatever waits for the interpreter's exit (coverage, a profiler's report, an embedding
    program's handler) still runs, after the run's output."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\nsrun hostname\n#SBATCH --nodes=2\n")
    prelude = "import atexit\natexit.register(print, 'handler ran')\n"
    ended = _command(["job.sh"], tmp_path, prelude)
    assert ended.returncode == 1 and ended.stdout.endswith("handler ran\n") and "SBL" in ended.stdout


def _compiled_copy(tmp_path):
    """A copy of the package with its compiled files, as an installation has them, and the
    environment that imports it."""
    import compileall
    import shutil

    import sbatchlint

    copy = tmp_path / "tree"
    shutil.copytree(os.path.dirname(os.path.abspath(sbatchlint.__file__)), copy / "sbatchlint",
                    ignore=shutil.ignore_patterns("__pycache__"))
    prefix, sys.pycache_prefix = sys.pycache_prefix, None  # beside the sources, where the run looks
    try:
        assert compileall.compile_dir(str(copy), quiet=1)
    finally:
        sys.pycache_prefix = prefix
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = os.pathsep.join([str(copy)] + clean_path()[1:])
    return copy / "sbatchlint", env


def test_a_run_loads_the_package_as_the_general_import_system_does(tmp_path):
    """The command's finder gives every module of the package the spec, attributes and code the
    general import system gives it (file, compiled file, package folders, source for tracebacks)."""
    _package, env = _compiled_copy(tmp_path)
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py\n")
    probe = r"""
import importlib.machinery, inspect, sys
from sbatchlint import start
try:
    start.main(['job.sh'])
except SystemExit as exit:
    print('exit', exit.code)
ours = 0
for name, module in sorted(sys.modules.items()):
    if not name.startswith('sbatchlint.') or not isinstance(module.__loader__, start.CompiledLoader):
        continue
    ours += 1
    parent = sys.modules[name.rpartition('.')[0]]
    general = importlib.machinery.PathFinder.find_spec(name, parent.__path__)
    spec = module.__spec__
    assert (spec.origin, spec.cached, spec.submodule_search_locations, spec.parent, spec.has_location) == (
        general.origin, general.cached, general.submodule_search_locations, general.parent, general.has_location), name
    assert (module.__file__, module.__cached__) == (general.origin, general.cached), name
    assert spec.loader.get_code(name) == general.loader.get_code(name), name
    assert spec.loader.get_code(name).co_filename == module.__file__, name
    assert module.__loader__.get_source(name) == general.loader.get_source(name), name
    assert inspect.getsourcefile(module) == general.origin, name
print('modules', ours > 40)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=env)
    assert done.stdout.splitlines()[-2:] == ["exit 0", "modules True"], done.stdout + done.stderr


def test_a_run_reads_a_module_edited_since_it_was_compiled(tmp_path):
    """A compiled file older than its source is not used: the edit is what runs (and the general
    import system writes the compiled file again)."""
    package, env = _compiled_copy(tmp_path)
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    edited = package / "report" / "text.py"
    edited.write_text(edited.read_text() + "\nimport sys\nsys.stderr.write('edited module ran\\n')\n")
    later = os.stat(edited).st_mtime + 10
    os.utime(edited, (later, later))
    for _ in range(2):  # compiled again by the first run, read by the second
        ended = _command(["job.sh"], tmp_path, env=env)
        assert ended.returncode == 0 and ended.stderr == "edited module ran\n", ended.stderr


def test_a_write_holds_off_interrupts_until_it_is_done():
    import signal

    from sbatchlint.files import signals_deferred

    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    with signals_deferred():
        assert held <= signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    with pytest.raises(OSError):
        with signals_deferred():
            raise OSError("disk full")
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


def test_the_option_tables_hold_what_the_constructor_makes():
    """The option tables' rows are made without ``__init__``: each is the instance the data
    class's constructor makes from the same values (every field set, in order; equal, same hash
    and text), so lookups, comparisons and copies see no difference."""
    import pickle

    from sbatchlint import options
    from sbatchlint.lazyclass import fields, replace

    names = [item.name for item in fields(options.OptionSpec)]
    specs = list(options.SBATCH.values()) + list(options.SRUN.values()) + list(options.PYXIS.values())
    assert len(specs) > 300
    for spec in specs:
        made = options.OptionSpec(**{name: getattr(spec, name) for name in names})
        assert list(vars(spec)) == names and vars(spec) == vars(made)
        assert spec == made and hash(spec) == hash(made) and repr(spec) == repr(made)
        assert pickle.loads(pickle.dumps(spec)) == spec and replace(spec, site=True) != spec
        with pytest.raises(AttributeError):
            spec.long = "other"


def test_the_variable_views_are_the_tables_rows_that_match():
    """The derived views of the variable table (read at every start-up) hold exactly the rows
    whose fields have the wanted values, every field at once."""
    from sbatchlint.model import variables as v

    def rows(**where):
        return frozenset(row.name for row in v.TABLE if all(getattr(row, key) in want for key, want in where.items()))

    assert v.PER_TASK == rows(scope=(v.TASK, v.NODE, v.STEP, v.LAUNCHER)) and "SLURM_PROCID" in v.PER_TASK
    assert v.INDEX == rows(index=(v.RANK, v.LOCAL, v.NODE_INDEX)) and v.HOST_NAMES == rows(index=(v.HOST,))
    assert v.LAUNCHED == rows(scope=(v.LAUNCHER, v.LAUNCHER_WIDE)) and v.TORCHRUN_SET == rows(set_by=(v.TORCHRUN,))
    assert v.SRUN_TASK == rows(in_every_task=(True,)) and v.PER_STEP_VALUE == rows(per_step_value=(True,))
    assert v.SHELL_SET == rows(set_by=(v.SHELL,)) and v.ALWAYS_SET == rows(always_set=(True,))
    both = rows(set_by=(v.SLURM,), index=(v.RANK, v.LOCAL))
    assert both and both == rows(set_by=(v.SLURM,)) & rows(index=(v.RANK, v.LOCAL)) and both <= v.SLURM_WORLD
    assert v._names(set_by=(v.SLURM,), index=(v.RANK,), scope=(v.NODE,)) == rows(set_by=(v.SLURM,), index=(v.RANK,), scope=(v.NODE,))


def test_a_run_that_reuses_a_cached_result_builds_no_model(tmp_path):
    """With the file's result cached, a run reads it back: no option table, no model, no rule and
    no parser is imported, and the output is the first run's."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py $UNSET\n")
    probe = ("import sys\nfrom sbatchlint.start import main\n"
             "try:\n    main(['job.sh'])\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
             "print(sorted(m for m in sys.modules if m == 'sbatchlint.shell' or m.startswith(('sbatchlint.options',\n"
             "      'sbatchlint.model', 'sbatchlint.rules.', 'tree_sitter'))))\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith("SBATCHLINT_")}
    env["NO_COLOR"] = "1"
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           env=env) for _ in range(2)]
    first, second = (run.stdout.splitlines() for run in runs)
    assert first[-2] == "exit 1" and "sbatchlint.options" in first[-1] and "SBL" in "\n".join(first)
    assert second[:-1] == first[:-1] and second[-1] == "[]", runs[1].stdout + runs[1].stderr


def test_loading_the_parser_binding_imports_no_regex_module_and_its_patterns_still_work():
    """tree_sitter's binding asks for ``re.compile`` when it loads (for query predicates, which a
    run never uses): it gets a stand-in that imports ``re`` when first called, so a run does not
    import ``re`` (nor ``importlib`` and its ``warnings``) for it. A ``#match?`` predicate still
    matches as with the real ``re.compile``."""
    probe = ("import sys\nfrom sbatchlint import shell\n"
             "tree = shell.parse(b'srun python train.py test.py\\n')\n"
             "print(sorted(m for m in ('re', 'importlib', 'warnings') if m in sys.modules))\n"
             "import tree_sitter\n"
             "language = tree_sitter.Language(shell.bash_language())\n"
             "query = tree_sitter.Query(language, '((word) @w (#match? @w \"^t[re]\"))')\n"
             "found = tree_sitter.QueryCursor(query).captures(tree.root_node)['w']\n"
             "print([node.text.decode() for node in found], type(sys.modules['re']).__name__, hasattr(sys.modules['re'], 'sub'))\n")
    done = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(clean_path())})
    assert done.stdout.splitlines() == ["[]", "['train.py', 'test.py'] module True"], done.stderr


@pytest.mark.parametrize("name", ["scripts/training/run.py", "x/scripts/training/a/b.py", "examples/recipes/llama.py",
                                  "tutorials/recipes/x.py", "tutorials/recipes/.py", "scripts/training/run.pyc",
                                  "scripts/training.py", "examples/recipe/x.py", "scripts/training/run.py\n",
                                  "scripts/training/a\nb.py", "Scripts/training/run.py"])
def test_the_bridge_path_pattern_is_the_globs_it_stands_for(name):
    import fnmatch

    from sbatchlint.model.launch import BRIDGE_PATH, BRIDGE_PATHS

    globbed = any(fnmatch.fnmatchcase(tail, p) for tail in (name, name.split("/", 1)[-1]) for p in BRIDGE_PATHS)
    assert (BRIDGE_PATH.match(name) is not None or BRIDGE_PATH.match(name.split("/", 1)[-1]) is not None) == globbed
    assert (BRIDGE_PATH.match(name) is not None) == any(fnmatch.fnmatchcase(name, p) for p in BRIDGE_PATHS)


@pytest.mark.parametrize("name", ["megatron.bridge", "megatron.bridge.", "megatron.bridge.training.pretrain",
                                  "megatron.bridgex", "megatron_bridge", "megatron.bridge\n", "megatron.bridge.a\nb",
                                  "xmegatron.bridge", "Megatron.bridge"])
def test_the_bridge_module_pattern_is_the_globs_it_stands_for(name):
    import fnmatch

    from sbatchlint.model.launch import BRIDGE_MODULE, BRIDGE_MODULES

    assert (BRIDGE_MODULE.match(name) is not None) == any(fnmatch.fnmatchcase(name, p) for p in BRIDGE_MODULES)

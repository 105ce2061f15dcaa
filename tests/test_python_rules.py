"""SBL500–SBL503 on realistic Python entry points, their fixes, and following them from batch scripts.

Fixtures in tests/fixtures/python/ mark every line that must be reported with ``# expect: CODE``;
every other line must stay quiet.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from lintutil import fix_text, lint_text, said
from sbatchlint.cli import main
from sbatchlint.diagnostics import Diagnostic, Edit, Fix, Severity
from sbatchlint.fix import fix_to_fixed_point
from sbatchlint.linter import Options, Selection, lint
from sbatchlint.source import Source, Span

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "python")
NAMES = sorted(n for n in os.listdir(FIXTURES) if n.endswith(".py"))
EXPECT = re.compile(r"#.*\bexpect: (SBL\d{3})")


def read(name: str) -> str:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def findings(text: str, select=("SBL5",), path="train.py"):
    source = Source(text.encode("utf-8"), path)
    return {(source.line_of(d.span.start), d.code) for d in lint_text(text, list(select), path)}


def expected(text: str):
    return {(number, match.group(1)) for number, line in enumerate(text.splitlines(), 1)
            for match in [EXPECT.search(line)] if match}


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- the fixtures ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_fixture_reports_exactly_the_marked_lines(name):
    text = read(name)
    assert findings(text) == expected(text)


@pytest.mark.parametrize("name", NAMES)
def test_fixture_fixes_parse_converge_and_leave_only_unfixable_findings(name):
    text = read(name)
    before = lint_text(text, ["SBL5"], "train.py")
    fixed = fix_text(text, ["SBL5"], unsafe=True, path="train.py")
    ast.parse(fixed)
    assert fix_text(fixed, ["SBL5"], unsafe=True, path="train.py") == fixed
    after = lint_text(fixed, ["SBL5"], "train.py")
    assert len(after) == len([d for d in before if d.fix is None])
    # comments survive every fix
    assert [line for line in text.splitlines() if line.lstrip().startswith("#")] == [
        line for line in fixed.splitlines() if line.lstrip().startswith("#")]


def test_every_launch_guard_variant_has_a_fix():
    diagnostics = lint_text(read("launch_guards.py"), ["SBL501"], "train.py")
    assert len(diagnostics) == 13
    assert all(d.fix is not None and d.fix.applicability.value == "safe" for d in diagnostics)


def test_launch_guard_message_names_the_variables():
    (d,) = lint_text('import os, sys\nif "WORLD_SIZE" not in os.environ:\n    sys.exit(1)\n', ["SBL501"], "t.py")
    assert "WORLD_SIZE" in d.message and "SLURM_NTASKS" in said(d) and "srun" in said(d)
    assert d.severity is Severity.ERROR


# -- SBL501 fixes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("before,after", [
    ('if "WORLD_SIZE" not in os.environ:', 'if "WORLD_SIZE" not in os.environ and "SLURM_NTASKS" not in os.environ:'),
    ("if os.getenv('WORLD_SIZE') is None:", "if os.getenv('WORLD_SIZE') is None and os.getenv('SLURM_NTASKS') is None:"),
    ('if not os.environ.get("WORLD_SIZE"):', 'if not os.environ.get("WORLD_SIZE") and not os.environ.get("SLURM_NTASKS"):'),
    ('if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:',
     'if ("RANK" not in os.environ and "SLURM_PROCID" not in os.environ) or '
     '("WORLD_SIZE" not in os.environ and "SLURM_NTASKS" not in os.environ):'),
    ('if not ("WORLD_SIZE" in os.environ and "RANK" in os.environ):',
     'if not (("WORLD_SIZE" in os.environ or "SLURM_NTASKS" in os.environ) and '
     '("RANK" in os.environ or "SLURM_PROCID" in os.environ)):'),
    ('if "LOCAL_RANK" not in os.environ:  # set by torchrun',
     'if "LOCAL_RANK" not in os.environ and "SLURM_LOCALID" not in os.environ:  # set by torchrun'),
])
def test_launch_guard_fix(before, after):
    text = f"import os\nimport sys\n\n{before}\n    sys.exit(1)\n"
    assert fix_text(text, ["SBL501"], path="t.py") == f"import os\nimport sys\n\n{after}\n    sys.exit(1)\n"


def test_launch_guard_fix_through_a_name_reads_the_slurm_variable():
    text = dedent('''
        import os
        import sys

        world_size = os.environ.get("WORLD_SIZE")
        if world_size is None:
            sys.exit("use torchrun")
    ''')
    fixed = fix_text(text, ["SBL501"], path="t.py")
    assert 'if world_size is None and os.environ.get("SLURM_NTASKS") is None:' in fixed


def test_launch_guard_without_a_safe_rewrite_is_reported_without_fix():
    text = 'import os, sys\nif int(os.environ.get("WORLD_SIZE", 1)) == 1:\n    sys.exit("needs torchrun")\n'
    (d,) = lint_text(text, ["SBL501"], "t.py")
    assert d.fix is None


# -- SBL502 fixes -----------------------------------------------------------------------------------
HAZARD = dedent('''
    if rank == 0:
        model.save_pretrained("/results/hf")
    dist.barrier()
''')


@pytest.mark.parametrize("call,fixed", [
    ("dist.init_process_group()", "dist.init_process_group(timeout=timedelta(minutes=60))"),
    ('dist.init_process_group("nccl")', 'dist.init_process_group("nccl", timeout=timedelta(minutes=60))'),
    ('dist.init_process_group(backend = "nccl")', 'dist.init_process_group(backend = "nccl", timeout=timedelta(minutes=60))'),
    ('dist.init_process_group(\n    backend="nccl",\n    rank=rank,\n)',
     'dist.init_process_group(\n    backend="nccl",\n    rank=rank,\n    timeout=timedelta(minutes=60),\n)'),
    ('dist.init_process_group(\n    backend="nccl",  # NVLink\n    rank=rank\n)',
     'dist.init_process_group(\n    backend="nccl",  # NVLink\n    rank=rank,\n    timeout=timedelta(minutes=60)\n)'),
    ('dist.init_process_group(\n    "nccl",\n)', 'dist.init_process_group(\n    "nccl",\n    timeout=timedelta(minutes=60),\n)'),
])
def test_timeout_fix_follows_the_call_layout(call, fixed):
    text = f"import torch.distributed as dist\n\n{call}\n{HAZARD}"
    out = fix_text(text, ["SBL502"], unsafe=True, path="t.py")
    assert out == f"import torch.distributed as dist\nfrom datetime import timedelta\n\n{fixed}\n{HAZARD}"


@pytest.mark.parametrize("imports,value,added", [
    ("import datetime\n", "datetime.timedelta(minutes=60)", None),
    ("import datetime as dt\n", "dt.timedelta(minutes=60)", None),
    ("from datetime import timedelta\n", "timedelta(minutes=60)", None),
    ("from datetime import timedelta as td\n", "td(minutes=60)", None),
    ("from datetime import datetime\n", "timedelta(minutes=60)", "from datetime import timedelta\n"),
])
def test_timeout_fix_uses_the_existing_datetime_import(imports, value, added):
    head = f'"""Export."""\nfrom __future__ import annotations\n\n{imports}import torch.distributed as dist\n'
    text = f'{head}\ndist.init_process_group("nccl")\n{HAZARD}'
    out = fix_text(text, ["SBL502"], unsafe=True, path="t.py")
    assert f'dist.init_process_group("nccl", timeout={value})' in out
    assert out.count("import timedelta") == (1 if added or "import timedelta" in imports else 0)
    if added:
        assert out.startswith(head + added)


def test_timeout_fix_is_withheld_when_timedelta_means_something_else():
    text = f'import torch.distributed as dist\n\ntimedelta = 5\ndist.init_process_group("nccl")\n{HAZARD}'
    (d,) = lint_text(text, ["SBL502"], "t.py")
    assert d.fix is None


def test_timeout_fix_is_unsafe_only():
    text = f'import torch.distributed as dist\n\ndist.init_process_group("nccl")\n{HAZARD}'
    assert fix_text(text, ["SBL502"], unsafe=False, path="t.py") == text


def test_barrier_message_names_the_work_and_the_wait():
    text = f'import torch.distributed as dist\n\ndist.init_process_group("nccl")\n{HAZARD}'
    (d,) = lint_text(text, ["SBL502"], "t.py")
    assert "model.save_pretrained` (line 5)" in d.message and "dist.barrier` (line 6)" in said(d)


# -- SBL503 fixes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("handler,fixed", [
    ("except OSError:", "except (OSError, ImportError):"),
    ("except OSError as err:", "except (OSError, ImportError) as err:"),
    ("except (OSError, ValueError):", "except (OSError, ValueError, ImportError):"),
    ("except (OSError,):", "except (OSError, ImportError):"),
    ("except builtins.OSError:", "except (builtins.OSError, ImportError):"),
])
def test_narrow_except_fix(handler, fixed):
    template = "import builtins\n\ntry:\n    save_artifacts(out)\n{}\n    pass\n"
    assert fix_text(template.format(handler), ["SBL503"], path="t.py") == template.format(fixed)


# -- SBL500 and parsing -----------------------------------------------------------------------------
def test_syntax_error_is_one_finding_with_cpythons_message():
    text = "import os\n\ndef main(:\n    pass\n\nx = (\n"
    found = lint_text(text, None, "t.py")
    assert [d.code for d in found] == ["SBL500"]
    assert "invalid Python syntax" in found[0].message and "not checked" in found[0].message
    assert Source(text.encode(), "t.py").line_of(found[0].span.start) == 3


def test_unclosed_bracket_points_at_it():
    text = 'import torch.distributed as dist\ndist.init_process_group(backend="nccl"\nprint("x")\n'
    (d,) = lint_text(text, None, "t.py")
    assert "never closed" in d.message
    assert text.encode()[d.span.start:d.span.end] == b"("


def test_a_huge_file_is_one_finding():
    text = "x = 1\n" * 100
    (d,) = lint_text(text, None, "t.py", settings={"python_max_bytes": 100})
    assert d.code == "SBL500" and "too large" in d.message


def test_pathological_nesting_is_reported_not_crashed():
    """The native parser overflows its stack on such input: run it where a crash cannot hide."""
    code = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from lintutil import lint_text\n"
        "texts = ['x = ' + '(' * 5000 + '1' + ')' * 5000 + '\\n', 'x = ' + '+'.join(['1'] * 20000) + '\\n',\n"
        "         'x = ' + 'not ' * 20000 + 'y\\n', 'x = f' + '()' * 20000 + '\\n']\n"
        "for text in texts:\n"
        "    print([d.code for d in lint_text(text, None, 't.py')])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == ["['SBL500']"] * 4


@pytest.mark.parametrize("expression", [
    " + ".join(["1"] * 490),
    "f" + "()" * 700,
    "not " * 700 + "y",
    " ".join(["'a'"] * 700),
    "[" * 199 + "]" * 199,
], ids=["sum", "calls", "nots", "strings", "brackets"])
def test_deep_but_accepted_expressions_are_analysed_and_fixed(expression):
    """Below the limits the tree is deeper than Python's default recursion limit allows libcst."""
    text = f"import os, sys\nx = {expression}\nif 'WORLD_SIZE' not in os.environ:\n    sys.exit(1)\n"
    assert [d.code for d in lint_text(text, None, "t.py")] == ["SBL501"]
    assert "'SLURM_NTASKS' not in os.environ" in fix_text(text, None, path="t.py")
    assert sys.getrecursionlimit() < 15000  # raised only while libcst works


def test_syntax_newer_than_libcst_or_python_is_still_one_finding():
    text = "a = 1\rb = 2\r"  # old Mac line ends: CPython reads them; libcst 1.0 does not
    found = [d.code for d in lint_text(text, None, "t.py")]
    assert found in ([], ["SBL500"])


def test_parse_error_count():
    from sbatchlint.python.module import parse_error_count

    assert parse_error_count(b"import os\n") == 0
    assert parse_error_count(b"def f(:\n") == 1
    assert parse_error_count(b"\xef\xbb\xbfimport os\r\n") == 0


def test_fix_engine_refuses_a_python_fix_that_breaks_parsing():
    from sbatchlint.python.module import parse_error_count

    source = Source(b"import os\nx = 1\n", "t.py")
    breaking = Diagnostic("SBL503", "narrow-artifact-except", Severity.WARNING, Span(10, 15), "m",
                          Fix.safe("break it", Edit(Span(14, 15), "(")), "t.py")
    result = fix_to_fixed_point(source, lambda s: [breaking] if s.data == source.data else [],
                                lambda data: parse_error_count(data))
    assert result.data == source.data and result.rejected == 1


def test_positions_and_edits_are_bytes_of_the_original_file():
    text = "# caf\u00e9\nimport os, sys\nx = '\u00e9\u00e9'; y = 1\nif 'WORLD_SIZE' not in os.environ: sys.exit(1)\n"
    cases = {
        "utf-8": text.encode(),
        "crlf": text.replace("\n", "\r\n").encode(),
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "latin-1": text.encode("latin-1"),
    }
    for name, data in cases.items():
        source = Source(data, "t.py")
        options = Options(Selection(["SBL5"]))
        (d,) = lint(source, options)
        assert data[d.span.start:d.span.end] == b"'WORLD_SIZE' not in os.environ", name
        from sbatchlint.linter import fix

        fixed = fix(source, options).data
        expected_text = text.replace("os.environ:", "os.environ and 'SLURM_NTASKS' not in os.environ:")
        want = {"utf-8": expected_text.encode(), "crlf": expected_text.replace("\n", "\r\n").encode(),
                "bom": b"\xef\xbb\xbf" + expected_text.encode(), "latin-1": expected_text.encode("latin-1")}[name]
        assert fixed == want, name


def test_suppression_comment_in_python():
    text = ('import os, sys\nnote = "# sbatchlint: disable=SBL501"\n'
            'if "WORLD_SIZE" not in os.environ:  # sbatchlint: disable=SBL501 -- torchrun only, on purpose\n'
            '    sys.exit(1)\n')
    assert findings(text, ["SBL5", "SBL9"]) == set()


# -- following entry points from batch scripts ------------------------------------------------------
JOB = dedent('''
    #!/bin/bash
    #SBATCH --nodes=2
    #SBATCH --ntasks-per-node=8
    #SBATCH --gpus-per-node=8
    #SBATCH --time=01:00:00
    srun --kill-on-bad-exit=1 python {script}
''')
GUARDED = 'import os\nimport sys\n\nif "WORLD_SIZE" not in os.environ:\n    sys.exit("must be launched with torchrun")\n'


def write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return str(path)


def run(*args, cwd=None):
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        return CliRunner().invoke(main, ["--output-format", "concise", "--isolated", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def test_sbatch_file_reports_the_launched_scripts_finding_at_its_path(tmp_path):
    job = write(tmp_path / "job.sh", JOB.format(script="train.py"))
    train = write(tmp_path / "train.py", GUARDED)
    out = run(job).output
    assert f"{train}:4:4: SBL501 " in out
    assert out.count("SBL501") == 1


def test_launched_script_is_linted_once_however_many_scripts_launch_it(tmp_path):
    write(tmp_path / "a.sh", JOB.format(script="train.py"))
    write(tmp_path / "b.sh", JOB.format(script="./train.py") + "srun python train.py\n")
    write(tmp_path / "train.py", GUARDED)
    out = run(str(tmp_path)).output
    assert out.count("SBL501") == 1


def test_directories_include_python_files_only_when_launched_or_asked(tmp_path):
    write(tmp_path / "job.sh", JOB.format(script="train.py"))
    write(tmp_path / "train.py", GUARDED)
    write(tmp_path / "tools" / "other.py", GUARDED)
    out = run(str(tmp_path)).output
    assert "train.py:4:4: SBL501" in out and "other.py" not in out
    out = run("--python", str(tmp_path)).output
    assert "train.py:4:4: SBL501" in out and "other.py:4:4: SBL501" in out
    assert out.count("train.py:4:4") == 1


def test_a_python_file_given_directly_is_linted(tmp_path):
    train = write(tmp_path / "train.py", GUARDED)
    result = run(train)
    assert result.exit_code == 1 and f"{train}:4:4: SBL501" in result.output


def test_fix_applies_to_the_launched_python_file(tmp_path):
    job = write(tmp_path / "job.sh", JOB.format(script="train.py"))
    train = write(tmp_path / "train.py", GUARDED)
    run("--fix", job)
    with open(train, encoding="utf-8") as handle:
        assert 'if "WORLD_SIZE" not in os.environ and "SLURM_NTASKS" not in os.environ:' in handle.read()


@pytest.mark.parametrize("launch", [
    "uv run python src/train.py",
    "torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 src/train.py --lr 3e-4",
    "python -m torch.distributed.run --nproc-per-node 8 --standalone src/train.py",
    "python -u src/train.py --config cfg.yaml",
])
def test_launchers_lead_to_the_entry_point(tmp_path, launch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    job = write(tmp_path / "slurm" / "job.sh", JOB.format(script="").replace("python \n", launch + "\n"))
    write(tmp_path / "src" / "train.py", GUARDED)
    out = run(job).output
    assert os.path.join(str(tmp_path), "src", "train.py") + ":4:4: SBL501" in out, out


def test_entry_point_relative_to_the_scripts_cd(tmp_path):
    code = tmp_path / "code"
    job = write(tmp_path / "jobs" / "job.sh", JOB.format(script="train.py").replace("srun", f"cd {code}\nsrun"))
    write(code / "train.py", GUARDED)
    assert f"{code}/train.py:4:4: SBL501" in run(job).output


def test_entry_point_through_the_container_workdir_and_mounts(tmp_path):
    repo = tmp_path / "repo"
    job = write(tmp_path / "job.sh", JOB.format(script="train.py").replace(
        "srun", f"srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts={repo}:/workspace "
                "--container-workdir=/workspace"))
    write(repo / "train.py", GUARDED)
    assert f"{repo}/train.py:4:4: SBL501" in run(job).output


def test_relative_paths_are_reported_relative(tmp_path):
    write(tmp_path / "job.sh", JOB.format(script="train.py"))
    write(tmp_path / "train.py", GUARDED)
    assert "train.py:4:4: SBL501" in run("job.sh", cwd=str(tmp_path)).output.splitlines()[-1]


def test_a_missing_or_unknown_entry_point_is_skipped(tmp_path):
    job = write(tmp_path / "job.sh", JOB.format(script="missing.py") + "srun python $SCRIPT\n")
    result = run(job)
    assert "SBL5" not in result.output and "error" not in result.output.lower()


# -- no libcst on the shell path ------------------------------------------------------------------
def _imports_libcst(*paths) -> bool:
    code = (
        "import sys\n"
        "from sbatchlint.cli import main\n"
        f"try:\n    main(['--isolated', '-j', '1', *{list(paths)!r}])\n"
        "except SystemExit:\n    pass\n"
        "print('libcst' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    last = done.stdout.strip().splitlines()[-1]
    assert last in ("True", "False"), done.stdout + done.stderr
    return last == "True"


def test_linting_shell_scripts_never_imports_libcst(tmp_path):
    job = write(tmp_path / "job.sh", JOB.format(script="train.py") + "srun python missing.py\n")
    assert not _imports_libcst(job, os.path.join(ROOT, "examples"))
    write(tmp_path / "train.py", GUARDED)  # now the job launches a Python file: libcst is needed
    assert _imports_libcst(job)


def test_the_rules_module_imports_without_libcst():
    code = "import sys\nimport sbatchlint.rules.python, sbatchlint.python.entry\nprint('libcst' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize("imports,call", [
    ("import torch.distributed as dist", "dist.init_process_group"),
    ("from torch import distributed as dist", "dist.init_process_group"),
    ("import torch", "torch.distributed.init_process_group"),
    ("import torch.distributed", "torch.distributed.init_process_group"),
    ("from torch.distributed import init_process_group as init_pg", "init_pg"),
    ("import torch.distributed.distributed_c10d as c10d", "c10d.init_process_group"),
])
def test_init_process_group_spellings(imports, call):
    text = f'{imports}\nimport torch.distributed as dist\n\n{call}(backend="nccl")\n{HAZARD}'
    assert findings(text, ["SBL502"]) == {(4, "SBL502")}


@pytest.mark.parametrize("test", [
    "rank == 0", "0 == rank", "not rank", "args.global_rank == 0", "dist.get_rank() == 0",
    'int(os.environ["RANK"]) == 0', 'int(os.getenv("SLURM_PROCID", "0")) == 0', "is_main_process()",
    "trainer.is_global_zero", "rank < 1", "rank == 0 and args.export",
])
def test_rank_zero_tests(test):
    text = (f'import os\nimport torch.distributed as dist\n\ndist.init_process_group("nccl")\n'
            f'if {test}:\n    model.save_pretrained("/results/hf")\ndist.barrier()\n')
    assert findings(text, ["SBL502"]) == {(4, "SBL502")}


@pytest.mark.parametrize("test", ["rank == 1", "rank % 8 == 0 or debug", "args.export", "rank != 0"])
def test_not_rank_zero_tests(test):
    text = (f'import torch.distributed as dist\n\ndist.init_process_group("nccl")\n'
            f'if {test}:\n    model.save_pretrained("/results/hf")\ndist.barrier()\n')
    assert findings(text, ["SBL502"]) == set()


def test_python_size_limit_from_the_configuration(tmp_path):
    (tmp_path / ".sbatchlint.toml").write_text("python-max-bytes = 20\n")
    train = write(tmp_path / "train.py", GUARDED)
    out = CliRunner().invoke(main, ["--output-format", "concise", train], catch_exceptions=False).output
    assert "SBL500" in out and "too large" in out and "SBL501" not in out


def test_a_module_run_with_dash_m_is_followed_to_its_file(tmp_path):
    job = write(tmp_path / "job.sh", JOB.format(script="-m trainer.main --lr 1e-4") + "srun python -m trainer\n")
    write(tmp_path / "trainer" / "main.py", GUARDED)
    write(tmp_path / "trainer" / "__main__.py", GUARDED)
    out = run(job).output
    assert f"{tmp_path}/trainer/main.py:4:4: SBL501" in out
    assert f"{tmp_path}/trainer/__main__.py:4:4: SBL501" in out


def test_launch_guard_through_a_compound_value_keeps_precedence():
    text = dedent('''
        import os
        import sys

        missing = "WORLD_SIZE" not in os.environ or not os.environ["WORLD_SIZE"]
        if not missing:
            print("distributed")
        else:
            sys.exit(1)
    ''')
    fixed = fix_text(text, ["SBL501"], path="t.py")
    assert 'if not missing or not ("SLURM_NTASKS" not in os.environ or not os.environ["SLURM_NTASKS"]):' in fixed


def test_attribute_and_keyword_names_are_not_the_variable():
    text = dedent('''
        import os
        import sys

        world = os.environ.get("WORLD_SIZE")
        if args.world is None:
            sys.exit(1)
    ''')
    assert findings(text, ["SBL501"]) == set()

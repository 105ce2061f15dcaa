"""The shared script generator (tests/scriptgen.py), and the properties every generated script
must keep through sbatchlint: valid bash, no crash, fixes that reach their fixed point."""
from __future__ import annotations

import subprocess

import pytest

import scriptgen
from sbatchlint.linter import Options, Selection, fix, lint
from sbatchlint.source import Source

ALL = Options(Selection(select=["ALL"]))


def _bash_n(text: str) -> str:
    result = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    return result.stderr if result.returncode else ""


def test_same_seed_same_script_other_seed_other_script():
    first = scriptgen.generate(11)
    assert scriptgen.generate(11).text == first.text
    assert scriptgen.generate(11).steps == first.steps
    assert scriptgen.generate(12).text != first.text
    assert scriptgen.generate(11, size=2).text != first.text
    assert [j.text for j in scriptgen.corpus(5, seed=3)] == [scriptgen.generate(3 + k).text for k in range(5)]


def test_size_grows_the_script_linearly():
    def totals(size):
        jobs = scriptgen.corpus(30, seed=100, size=size)
        return sum(len(j.steps) for j in jobs), sum(j.text.count("\n") for j in jobs)

    # the header and preamble are fixed costs: compare what each doubling adds
    (s1, l1), (s2, l2), (s4, l4) = totals(1), totals(2), totals(4)
    assert 1.5 < (s4 - s2) / (s2 - s1) < 2.6
    assert 1.5 < (l4 - l2) / (l2 - l1) < 2.6
    job = scriptgen.generate(5, size=3)
    assert job.text.count("/mnt/m") == 6  # 2 mounts per size unit
    assert job.text.count("# stage ") == 3


def test_the_corpus_covers_the_shapes_later_tests_rely_on():
    seen = scriptgen.shapes(scriptgen.corpus(120, seed=0))
    for launcher in scriptgen.LAUNCHERS:
        assert seen.get(f"launcher:{launcher}", 0) >= 3, (launcher, seen)
    for style in ("inline", "continued", "srun-cmd", "array"):
        assert seen.get(f"style:{style}", 0) >= 10, (style, seen)
    assert seen["loop"] >= 10 and seen["branch"] >= 10
    texts = "".join(j.text for j in scriptgen.corpus(120, seed=0))
    for shape in ("<<EOF", "bash -c", "--container-mounts", "--gres=gpu:", "--gpus-per-task", "--exclusive",
                  "case \"$CONFIG\" in", "\\$SLURM_NODEID", "--rdzv_backend=c10d", "\\\n"):
        assert shape in texts, shape


def test_step_metadata_points_at_the_srun_lines():
    for job in scriptgen.corpus(40, seed=7):
        lines = job.text.splitlines()
        for step in job.steps:
            line = lines[step.line - 1].lstrip()
            assert line.startswith(("srun", "$SRUN_CMD")), (job.seed, step, line)
            if step.ntasks is not None and step.nodes is not None and step.tasks_per_node is not None:
                assert step.ntasks == step.nodes * step.tasks_per_node


def test_literal_scripts_take_no_value_from_the_environment():
    for job in scriptgen.corpus(40, seed=0, literal=True):
        assert ":-" not in job.text and "$(date +" not in job.text and "$NNODES" not in job.text, job.seed


def test_runnable_scripts_fit_the_test_cluster():
    for job in scriptgen.corpus(60, seed=0, runnable=True, workdir="/tmp/work"):
        assert job.nodes <= 2 and "uv " not in job.text and "WORKDIR=/tmp/work\n" in job.text
        assert (job.tasks_per_node or 1) * (job.cpus_per_task or 1) <= 16
        for step in job.steps:
            assert step.nproc_per_node is None or step.nproc_per_node <= 2
        assert all(not e.startswith("/") for e in job.entries)


@pytest.mark.parametrize("kwargs", [dict(), dict(size=3), dict(runnable=True, workdir="/tmp/w")])
def test_every_generated_script_is_valid_bash(kwargs):
    for job in scriptgen.corpus(40, seed=1000, **kwargs):
        assert _bash_n(job.text) == "", (job.seed, job.text)


def test_sbatchlint_never_crashes_on_generated_scripts():
    for job in scriptgen.corpus(60, seed=2000) + scriptgen.corpus(10, seed=50, size=3):
        diagnostics = lint(Source(job.data, f"gen{job.seed}.sh"), ALL)
        assert all(d.code != "SBL900" for d in diagnostics), job.seed


FIXED_POINT = """
import subprocess, sys
sys.path.insert(0, "tests")
import scriptgen
from sbatchlint.linter import Options, Selection, fix
from sbatchlint.source import Source
ALL = Options(Selection(select=["ALL"]))
unsafe = sys.argv[1] == "unsafe"
for job in scriptgen.corpus(12, seed=3000) + scriptgen.corpus(4, seed=4000, late=True):
    once = fix(Source(job.data, "job.sh"), ALL, unsafe=unsafe)
    twice = fix(Source(once.data, "job.sh"), ALL, unsafe=unsafe)
    if not once.converged:
        print("not settled", job.seed)
    elif twice.data != once.data:
        print("changed", job.seed)
    elif subprocess.run(["bash", "-n"], input=once.data, capture_output=True).returncode:
        print("bash -n", job.seed)
"""


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_safe_fixes_reach_their_fixed_point_in_one_run(unsafe, root):
    """One run settles (``fix(fix(x)) == fix(x)``, reached within the fixer's passes) and the fixed
    script is still valid bash. (SBL307's sync step, copied from a step whose option array also
    held its node and task counts, once ran every task again and was reported again: the file
    doubled on every pass. An evaluation sweep's header, with more directives after its first
    command than the fixer has passes, once moved one directive a pass: SBL003's fixes all insert
    at the end of the header, and insertions at one point were taken one per pass.)"""
    import os
    import sys

    env = dict(os.environ, PYTHONPATH=root)
    result = subprocess.run([sys.executable, "-c", FIXED_POINT, "unsafe" if unsafe else "safe"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == "", f"a second --fix changed these generated scripts (seeds): {result.stdout}"

"""SBL201's fix for a per-task variable written on srun's command line, on the real 2-node Slurm
cluster: the task command runs through ``bash -c 'exec …'``.

Before the fix every task gets the batch shell's ``$SLURM_PROCID`` (0); after it each task its
own rank, while a value only the batch shell has (``$DATA``, with a blank in it) reaches every
task as one argument, the program is the task itself (``exec``: its pid is srun's
``SLURM_TASK_PID``, so signals and ``--kill-on-bad-exit`` reach it), and its exit code is still
the step's. An array of the batch shell's words moves behind the quotes as ``"$@"`` and reaches
every task as it did before.
"""
from __future__ import annotations

import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from slurm_cluster import clean_env, parse_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lintutil import fix_text, lint_text  # noqa: E402

pytestmark = pytest.mark.slurm

PROBE = textwrap.dedent("""\
    import os, sys
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    rank, data = args["--rank"], args["--data"]
    task_pid = os.environ.get("SLURM_TASK_PID")
    print(f"TASK rank={rank} procid={os.environ['SLURM_PROCID']} data={data.replace(' ', '_')} "
          f"is_task={int(str(os.getpid()) == task_pid)}", flush=True)
    sys.exit(3 if rank == "3" else 0)
""")


def test_per_task_variable_on_the_command_line_reaches_every_task(slurm):
    (slurm.workdir / "probe.py").write_text(PROBE)
    original = textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH --job-name=sbl201-direct
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=2
        #SBATCH --time=2
        DATA="/data/set one"
        srun --kill-on-bad-exit=1 {sys.executable} probe.py --rank $SLURM_PROCID --data "$DATA"
        """)
    (finding,) = lint_text(original, ["SBL201"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"  # $DATA goes in as an argument
    fixed = fix_text(original, ["SBL201"], unsafe=True)
    assert f"""srun --kill-on-bad-exit=1 bash -c 'exec {sys.executable} probe.py --rank $SLURM_PROCID --data "${{1}}"' _ "$DATA"\n""" in fixed
    assert not lint_text(fixed, ["SBL201"])

    info, out = slurm.run(slurm.script(original, "original.sbatch"), env=clean_env(), timeout=300)
    tasks = parse_lines(out, "TASK")
    assert Counter(t["rank"] for t in tasks) == {"0": 4}, out  # the batch shell's value, in every task
    assert info.exit_code_str == "0:0", (info, out)

    info, out = slurm.run(slurm.script(fixed, "fixed.sbatch"), env=clean_env(), timeout=300)
    tasks = parse_lines(out, "TASK")
    assert len(tasks) == 4, out
    assert all(t["rank"] == t["procid"] for t in tasks), out  # each task its own rank
    assert {t["data"] for t in tasks} == {"/data/set_one"}, out  # one argument, blank kept
    assert {t["is_task"] for t in tasks} == {"1"}, out  # exec: the program is the task
    assert info.state == "FAILED" and info.exit_code_str == "3:0", (info, out)  # rank 3's exit code


def test_a_list_of_words_moves_behind_the_quotes_and_reaches_every_task_as_before(slurm):
    # an array the batch shell expands to several words: it goes in as "$@", expanded as before
    (slurm.workdir / "probe.py").write_text(PROBE)
    original = textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH --job-name=sbl201-list
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=2
        #SBATCH --time=2
        ARGS=(--data "/data/set one")
        srun --kill-on-bad-exit=1 {sys.executable} probe.py "${{ARGS[@]}}" --rank $SLURM_PROCID
        """)
    fixed = fix_text(original, ["SBL201"], unsafe=True)
    assert f"""srun --kill-on-bad-exit=1 bash -c 'exec {sys.executable} probe.py "$@" --rank $SLURM_PROCID' _ "${{ARGS[@]}}"\n""" in fixed
    assert not lint_text(fixed, ["SBL201"])
    info, out = slurm.run(slurm.script(fixed, "fixed-list.sbatch"), env=clean_env(), timeout=300)
    tasks = parse_lines(out, "TASK")
    assert len(tasks) == 4, out
    assert all(t["rank"] == t["procid"] for t in tasks), out
    assert {t["data"] for t in tasks} == {"/data/set_one"}, out  # the array's element, one word as before
    assert {t["is_task"] for t in tasks} == {"1"}, out

"""The fix loop: fixes that never settle are not applied, and a sync step copied from a step's
option array runs one task, so SBL307's fix settles in one run."""
from __future__ import annotations

import os
import subprocess
import sys

from sbatchlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from sbatchlint.fix import choose, fix_to_fixed_point
from sbatchlint.linter import Options, Selection, fix
from sbatchlint.source import Source, Span
from lintutil import fix_text, lint_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "containers", "sync_args_array.sh")


def _feeding(source: Source):
    """A rule whose fix inserts a line the rule reports again, as many times as it finds it."""
    found = []
    for index in range(source.data.count(b"again\n") + 1):
        fix = Fix(edits=(Edit.insert(0, "again\n"),), applicability=Applicability.SAFE, description="add")
        found.append(Diagnostic(code="SBL999", name="feeding", severity=Severity.ERROR, span=Span(0, 0),
                                message=f"again {index}", fix=fix, path=source.path))
    return found


def test_fixes_that_never_settle_leave_the_file_as_it_was():
    source = Source(b"srun hostname\n", "job.sh")
    result = fix_to_fixed_point(source, _feeding, lambda data: 0)
    assert not result.converged
    assert result.data == source.data and result.applied == 0


def test_the_command_line_says_so_and_writes_nothing(tmp_path, monkeypatch):
    """Through the real runner: an unsettled fix is an internal error (exit 2), the file untouched."""
    job = tmp_path / "job.sh"
    job.write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    code = (
        "import sys, sbatchlint.runner as r\n"
        "from sbatchlint.fix import FixResult\n"
        "r.run_fix = lambda source, *a, **k: FixResult(source.data + b'x', 3, 12, False, 0)\n"
        "from sbatchlint.cli import main\n"
        "sys.argv = ['sbatchlint', '--fix', sys.argv[1]]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(job)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "did not settle after 12 passes" in done.stderr
    assert job.read_text() == "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n"


def test_a_sync_step_copied_from_an_option_array_runs_one_task():
    text = open(FIXTURE, encoding="utf-8").read()
    assert [d.code for d in lint_text(text, ["SBL307"])] == ["SBL307"]
    once = fix_text(text, ["SBL307"])
    # the array holds -N 2 --ntasks=8 too: srun takes the last value, so the counts come after it
    assert 'srun "${STEP_ARGS[@]}" --nodes=1 --ntasks=1 uv sync\n' in once
    assert once.count("uv sync") == 1
    assert not lint_text(once, ["SBL307"])
    assert fix_text(once, ["SBL307"]) == once
    assert subprocess.run(["bash", "-n"], input=once, text=True).returncode == 0


def test_more_moved_directives_than_passes_settle_in_one_run():
    # SBL003 moves each directive written after the first command to the end of the header: every
    # fix inserts at that one point. Fourteen of them, more than the fixer's passes.
    late = [
        "--job-name=sweep", "--ntasks-per-node=1", "--cpus-per-task=8", "--hint=nomultithread", "--gres=gpu:1",
        "--constraint=a100", "--time=05:00:00", "--output=%x-%j.out", "--account=eval", "--array=0-12",
        "--mail-type=ALL", "--mem=0", "--exclusive", "--partition=gpu",
    ]
    text = "#!/bin/bash\n#SBATCH --nodes=1\nset -x -e\n" + "".join(f"#SBATCH {o}\n" for o in late) + "srun python eval.py\n"
    result = fix(Source(text.encode(), "sweep.sh"), Options(Selection(select=["SBL003"])), unsafe=True)
    assert result.converged
    fixed = result.data.decode()
    # every directive lands in the header, in the order they were written (the last one wins)
    assert fixed == "#!/bin/bash\n#SBATCH --nodes=1\n" + "".join(f"#SBATCH {o}\n" for o in late) + "set -x -e\nsrun python eval.py\n"


def test_the_same_insertion_from_two_findings_is_made_once():
    edit = Edit.insert(10, "export X=1\n")
    first, second = Fix.safe("a", edit), Fix.safe("b", Edit.insert(10, "export X=1\n"))
    other = Fix.safe("c", Edit.insert(10, "export Y=2\n"))
    assert choose([first, second, other]) == [first, other]

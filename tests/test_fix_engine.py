"""The fix loop: fixes that never settle are not applied, and a sync step copied from a step's
option array runs one task, so SBL307's fix settles in one run."""
from __future__ import annotations

import os
import subprocess
import sys

from sbatchlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from sbatchlint.fix import fix_to_fixed_point
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

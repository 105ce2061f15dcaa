"""Edit placement for shell fixes (model/placement.py): new lines and new srun options written in
the script's own layout, checked by running the edited scripts in bash."""
from __future__ import annotations

import subprocess

import pytest

import scriptgen
from sbatchlint.fix import apply_edits
from sbatchlint.model import placement
from sbatchlint.model.script import Script
from sbatchlint.source import Source

# A stand-in for srun that prints the words it gets, one per line.
FAKE_SRUN = "srun() { printf '<%s>\\n' \"$@\"; echo; }\n"


def run(text: str) -> str:
    result = subprocess.run(["bash", "-c", FAKE_SRUN + text], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def bash_n(text: str) -> None:
    result = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def add(text: str, *words: str, step: int = 0) -> str:
    source = Source(text.encode())
    script = Script(source)
    edit = placement.add_step_options(script, script.steps[step], words)
    assert edit is not None
    return apply_edits(source, [edit]).decode()


@pytest.mark.parametrize(
    "before,after",
    [
        # one line: inline, right after srun
        ("srun -K python t.py --lr 1\n", "srun --ntasks=2 -K python t.py --lr 1\n"),
        # one option per continued line: a continued line of its own, indented like the others
        (
            "srun -K \\\n  --container-image=img \\\n  python t.py\n",
            "srun -K \\\n  --ntasks=2 \\\n  --container-image=img \\\n  python t.py\n",
        ),
        # options on srun's line, the command on the next: the options stay on one line
        ("srun \\\n    python t.py\n", "srun --ntasks=2 \\\n    python t.py\n"),
        ("srun -K --mpi=pmix \\\n  python t.py\n", "srun --ntasks=2 -K --mpi=pmix \\\n  python t.py\n"),
        ("srun -K \\\n\t--mpi=pmix \\\n\tpython t.py\n", "srun -K \\\n\t--ntasks=2 \\\n\t--mpi=pmix \\\n\tpython t.py\n"),
        # Windows line endings stay
        ("srun -K \\\r\n  --mpi=pmix \\\r\n  python t.py\r\n", "srun -K \\\r\n  --ntasks=2 \\\r\n  --mpi=pmix \\\r\n  python t.py\r\n"),
        # only the task's own arguments are continued: the options stay on srun's line
        ("srun -K python t.py \\\n  --lr 1\n", "srun --ntasks=2 -K python t.py \\\n  --lr 1\n"),
        # inside a loop body
        (
            "for i in 1 2; do\n    srun \\\n        -K \\\n        python t.py $i\ndone\n",
            "for i in 1 2; do\n    srun \\\n        --ntasks=2 \\\n        -K \\\n        python t.py $i\ndone\n",
        ),
        # srun from a string: the option goes into the string, in its layout
        ('SRUN="srun -K \\\n  --mpi=pmix"\n$SRUN python t.py\n', 'SRUN="srun -K \\\n  --ntasks=2 \\\n  --mpi=pmix"\n$SRUN python t.py\n'),
        ('SRUN="srun -K"\n$SRUN python t.py\n', 'SRUN="srun --ntasks=2 -K"\n$SRUN python t.py\n'),
    ],
)
def test_options_follow_the_step_layout(before, after):
    fixed = add(before, "--ntasks=2")
    assert fixed == after
    bash_n(fixed)
    # bash gives srun the same words plus the new one, in the place the fix chose
    old_calls = [c for c in run(before.replace("\r", "")).split("\n\n") if c.strip()]
    new_calls = [c for c in run(fixed.replace("\r", "")).split("\n\n") if c.strip()]
    assert len(new_calls) == len(old_calls)
    for old, new in zip(old_calls, new_calls):
        old, new = old.splitlines(), new.splitlines()
        at = new.index("<--ntasks=2>")
        assert new == old[:at] + ["<--ntasks=2>"] + old[at:]


def test_several_options_each_on_their_own_continued_line():
    fixed = add("srun -K \\\n  --mpi=pmix \\\n  python t.py\n", "--ntasks=2", "--ntasks-per-node=1")
    assert fixed == "srun -K \\\n  --ntasks=2 \\\n  --ntasks-per-node=1 \\\n  --mpi=pmix \\\n  python t.py\n"
    assert run(fixed) == "<-K>\n<--ntasks=2>\n<--ntasks-per-node=1>\n<--mpi=pmix>\n<python>\n<t.py>\n\n"


def test_an_escaped_backslash_is_no_continuation():
    # ``echo \\`` ends with a literal backslash word: the next line is another command
    text = "srun -K echo \\\\\npython t.py\n"
    assert add(text, "--ntasks=2") == "srun --ntasks=2 -K echo \\\\\npython t.py\n"


def test_after_header():
    def place(text, line):
        source = Source(text.encode())
        return apply_edits(source, [placement.after_header(Script(source), line)]).decode()

    assert place("#!/bin/bash\n#SBATCH -N 2\n#SBATCH -t 1\nsrun x\n", "#SBATCH -n 2") == (
        "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -t 1\n#SBATCH -n 2\nsrun x\n"
    )
    assert place("#!/bin/bash\r\n#SBATCH -N 2\r\nsrun x\r\n", "#SBATCH -n 2") == "#!/bin/bash\r\n#SBATCH -N 2\r\n#SBATCH -n 2\r\nsrun x\r\n"
    assert place("#!/bin/bash\n#SBATCH -N 2", "#SBATCH -n 2") == "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -n 2"
    assert place("#!/bin/bash\nsrun x\n", "#SBATCH -n 2") == "#!/bin/bash\n#SBATCH -n 2\nsrun x\n"


def test_before_step():
    def place(text, line, step=0):
        source = Source(text.encode())
        script = Script(source)
        edit = placement.before_step(script, script.steps[step], line)
        return None if edit is None else apply_edits(source, [edit]).decode()

    assert place("for i in 1 2; do\n  srun -K \\\n    python t.py\ndone\n", "echo $i") == (
        "for i in 1 2; do\n  echo $i\n  srun -K \\\n    python t.py\ndone\n"
    )
    assert place("if true; then\n\tsrun x | tee log\nfi\n", "mkdir -p logs") == "if true; then\n\tmkdir -p logs\n\tsrun x | tee log\nfi\n"
    # a line before ``a && srun`` or after ``then`` on the same line would change what runs
    assert place("cd /x && srun python t.py\n", "echo hi") is None
    assert place("if true; then srun python t.py; fi\n", "echo hi") is None


def test_generated_steps_keep_their_layout_and_their_words():
    """Over the shared generator's steps: bash -n passes, one line is added exactly when the step
    was written one option per line, and bash hands srun the old words plus the new option."""
    checked = 0
    for job in scriptgen.corpus(25, seed=4000, runnable=True, workdir="/tmp/w"):
        source = Source(job.data)
        script = Script(source)
        for step, meta in zip(script.steps, job.steps):
            edit = placement.add_step_options(script, step, ["--ntasks=7"])
            if edit is None:
                continue
            fixed = apply_edits(source, [edit]).decode()
            bash_n(fixed)
            added = fixed.count("\n") - job.text.count("\n")
            lines = job.text.splitlines()
            one_per_line = meta.style == "continued" and lines[meta.line].lstrip().startswith("-")
            assert added == (1 if one_per_line else 0), (job.seed, meta)
            checked += 1
    assert checked > 40


def test_launcher_options_follow_the_launcher_layout():
    from sbatchlint.model.launch import launches

    def add_to_launcher(text, *words):
        source = Source(text.encode())
        script = Script(source)
        edit = placement.add_launcher_options(script, launches(script)[0], words)
        return apply_edits(source, [edit]).decode()

    continued = (
        "#!/bin/bash\n#SBATCH -N 2\nCMD=\"torchrun \\\n    --nproc_per_node=8 \\\n    train.py --lr 1\"\n"
        "srun bash -c \"$CMD\"\n"
    )
    assert add_to_launcher(continued, "--nnodes=2") == continued.replace(
        "torchrun \\\n", "torchrun \\\n    --nnodes=2 \\\n"
    )
    # the entry point's own arguments are continued, the launcher's options are not
    inline = "#!/bin/bash\n#SBATCH -N 2\nsrun torchrun --nproc_per_node=8 train.py \\\n  --lr 1\n"
    assert add_to_launcher(inline, "--nnodes=2") == inline.replace("torchrun ", "torchrun --nnodes=2 ")

"""Which tasks run a command (model/tasks.py), the variable table it reads (model/variables.py),
and SBL307's verdict for each answer."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lintutil import codes
from sbatchlint.model import tasks, variables
from sbatchlint.model.script import Script
from sbatchlint.model.tasks import tasks_running
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
UV = "export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv\ncd /lustre/fsw/alice/Megatron-Bridge\n"


def who(line: str, header: str = HEADER, program: str = "uv") -> tasks.TaskSet:
    """The task set of the (only) command running ``program`` in the script."""
    script = Script(Source((header + line + "\n").encode(), "job.sh"))
    found = [
        c
        for c in script.commands + [t for s in script.steps for t in s.task_commands]
        if c.argv and c.argv[c.begin].text == program
    ]
    assert len(found) == 1, found
    return tasks_running(script, found[0])


@pytest.mark.parametrize(
    "line, kind, variable",
    [
        ("uv sync", tasks.ONE, None),  # the batch shell
        ("srun uv sync", tasks.EVERY, None),
        ("srun --ntasks=1 uv sync", tasks.ONE, None),
        ("srun --ntasks=2 --ntasks-per-node=1 uv sync", tasks.PER_NODE, None),
        ("srun bash -c 'uv sync'", tasks.EVERY, None),
        ("""srun bash -c 'if [ "$SLURM_LOCALID" -eq 0 ]; then uv sync; fi'""", tasks.PER_NODE, "SLURM_LOCALID"),
        ("""srun bash -c 'if [ "$SLURM_PROCID" = 0 ]; then uv sync; fi'""", tasks.ONE, "SLURM_PROCID"),
        ("""srun bash -c '[ "${SLURM_PROCID}" -ne 0 ] || uv sync'""", tasks.ONE, "SLURM_PROCID"),
        ("""srun bash -c '(( SLURM_LOCALID == 0 )) && uv sync'""", tasks.PER_NODE, "SLURM_LOCALID"),
        ("""srun bash -c 'case $SLURM_LOCALID in 0) uv sync;; *) sleep 5;; esac'""", tasks.PER_NODE, "SLURM_LOCALID"),
        ("""srun bash -c '[[ $SLURM_LOCALID == 0 && $SLURM_NODEID == 0 ]] && uv sync'""", tasks.ONE, "SLURM_LOCALID"),
        ("""srun bash -c 'if [ $SLURM_NODEID = 1 ]; then uv sync; fi'""", tasks.NODE, "SLURM_NODEID"),
        # the else branch: every task but one per node
        ("""srun bash -c 'if [ $SLURM_LOCALID = 0 ]; then sleep 5; else uv sync; fi'""", tasks.SOME, "SLURM_LOCALID"),
        # a variable the task string sets from Slurm's own
        ("""srun bash -c 'R=$SLURM_PROCID; [ "$R" = 0 ] && uv sync'""", tasks.ONE, "SLURM_PROCID"),
        # a launcher's variable is unset in srun's tasks: the test says nothing about who runs it
        ("""srun bash -c '[ "$RANK" = 0 ] && uv sync'""", tasks.UNKNOWN, None),
        ("""srun bash -c '[ -n "$SLURM_PROCID" ] && uv sync'""", tasks.UNKNOWN, None),
        # only what decides counts: a per-task value in the block's body or in the command's arguments
        ("""srun bash -c 'if true; then echo "rank $SLURM_PROCID"; uv sync; fi'""", tasks.EVERY, None),
        ("""srun bash -c 'cd /w && uv run torchrun --node_rank=$SLURM_NODEID t.py'""", tasks.EVERY, None),
        # expanded by the batch shell while it builds the string: task 0's value in every task
        ('''srun bash -c "if [ $SLURM_LOCALID -eq 0 ]; then uv sync; fi"''', tasks.EVERY, None),
        ('''srun bash -c "if [ \\$SLURM_LOCALID -eq 0 ]; then uv sync; fi"''', tasks.PER_NODE, "SLURM_LOCALID"),
        ("srun --het-group=1 uv sync", tasks.GROUP, None),
    ],
)
def test_which_tasks_run_a_command(line, kind, variable):
    answer = who(line)
    assert (answer.kind, answer.variable) == (kind, variable)


def test_a_local_rank_test_on_one_node_is_one_task():
    header = HEADER.replace("--nodes=2", "--nodes=1")
    assert who("""srun bash -c 'if [ "$SLURM_LOCALID" -eq 0 ]; then uv sync; fi'""", header).kind == tasks.ONE


def test_the_test_is_located_in_the_batch_script():
    line = """srun bash -c 'if [ "$SLURM_PROCID" = 0 ]; then uv sync; fi'"""
    answer = who(line)
    text = (HEADER + line).encode()
    assert text[answer.test.start : answer.test.end].decode() == '"$SLURM_PROCID" = 0'
    assert answer.phrase == "one task"


# -- SBL307's verdicts --------------------------------------------------------------------------
def sbl307(task: str) -> list:
    return [c for c in codes(HEADER + UV + f"srun bash -c '{task}'\n") if c == "SBL307"]


def test_sbl307_an_echo_of_the_rank_in_the_if_body_guards_nothing():
    # Fixed: the old text search read the whole `if` block, so this `echo` made the sync look guarded.
    assert sbl307('if [ -d .venv ]; then echo "task $SLURM_PROCID"; uv sync; fi') == ["SBL307"]


def test_sbl307_the_launch_own_node_rank_guards_nothing():
    assert sbl307("cd /w && uv run python -m torch.distributed.run --node_rank=$SLURM_NODEID t.py") == ["SBL307"]


def test_sbl307_a_test_the_batch_shell_expanded_guards_nothing():
    text = HEADER + UV + 'srun bash -c "if [ $SLURM_LOCALID -eq 0 ]; then uv sync; fi"\n'
    assert "SBL307" in codes(text)
    escaped = text.replace("[ $SLURM", "[ \\$SLURM")
    assert "SBL307" not in codes(escaped)


@pytest.mark.parametrize(
    "task",
    [
        'if [ "$SLURM_PROCID" -eq 0 ]; then uv sync; fi',  # one task
        'if [ "$SLURM_LOCALID" -eq 0 ]; then uv sync; else sleep 10; fi',  # one per node
        '[ "$SLURM_NODEID" = 0 ] && uv sync',  # one node
        '[ "$RANK" = 0 ] && uv sync',  # unknown
    ],
)
def test_sbl307_stays_silent_when_a_test_limits_the_sync(task):
    assert sbl307(task) == []


# -- one table ----------------------------------------------------------------------------------
def test_the_table_answers_scopes():
    assert variables.scope_of("SLURM_PROCID") == variables.TASK
    assert variables.scope_of("SLURM_NODEID") == variables.NODE
    assert variables.scope_of("SLURM_STEP_RESV_PORTS") == variables.STEP  # any SLURM_STEP_* name
    assert variables.scope_of("RANK") == variables.LAUNCHER
    assert variables.scope_of("SLURM_JOB_NUM_NODES") == variables.JOB
    assert variables.scope_of("DATA_DIR") is None
    assert variables.slurm_equivalent("LOCAL_RANK") == "SLURM_LOCALID"


PER_TASK_NAMES = {v.name for v in variables.TABLE if v.scope in (variables.TASK, variables.NODE, variables.LAUNCHER)}


def test_per_task_names_are_spelled_in_one_module_only():
    """Code outside model/variables.py names no per-task variable in a string constant; docs and
    rule examples (long texts) aside."""
    package = Path(variables.__file__).parent.parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "variables.py" and path.parent.name == "model":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value in PER_TASK_NAMES:
                    offenders.append(f"{path.relative_to(package)}:{node.lineno}: {node.value!r}")
    assert offenders == []

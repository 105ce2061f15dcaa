"""SBL201–SBL203 on scripts shaped like real ones: what fires, what must not, and the exact fixes.

Besides comparing fixed texts byte for byte, the fixtures are *run*: a fake ``srun`` (a bash
function) starts two tasks as child processes, which see only what the batch shell exported,
with their own ``SLURM_PROCID``/``SLURM_NODEID``; fake ``torchrun``/``python``/``uv`` print what
they receive. Before the fix every task prints the first node's values; after it, its own.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from lintutil import codes, fix_text, lint_text, said
from sbatchlint.model.script import Script
from sbatchlint.source import Source

FIXTURES = Path(__file__).parent / "fixtures" / "expansion"
SELECT = ["SBL201", "SBL202", "SBL203"]
BASH = shutil.which("bash")


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def findings(text: str) -> List[Tuple[str, int, str, Optional[str]]]:
    """(code, line, the bytes reported, fix applicability or None), in source order."""
    data = text.encode("utf-8")
    out = []
    for d in lint_text(text, SELECT):
        line = data[: d.span.start].count(b"\n") + 1
        site = data[d.span.start : d.span.end].decode("utf-8")
        out.append((d.code, line, site, d.fix.applicability.value if d.fix else None))
    return out


def assert_fixed_point(text: str, unsafe: bool) -> None:
    """Fixing again changes nothing, and the script still parses (also for bash)."""
    assert fix_text(text, SELECT, unsafe=unsafe) == text
    assert not Script(Source(text.encode("utf-8"), "job.sh")).errors
    assert "SBL001" not in codes(text)
    if BASH:
        assert subprocess.run([BASH, "-n"], input=text.encode("utf-8")).returncode == 0


# -- running a script with a fake srun -------------------------------------------------------------
FAKE_PROGRAMS = {
    "torchrun": 'echo "torchrun $*"',
    "python": 'echo "python $*"',
    "uv": 'echo "uv $*"',
    "sleep": ":",
    "scontrol": "echo n1",
}
PRELUDE = r"""
srun() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --) shift; break ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  local input="" i
  [ -t 0 ] || input=$(cat)
  for i in 0 1; do
    # A child process: it sees the batch shell's exported variables only.
    SLURM_PROCID=$i SLURM_NODEID=$i SLURM_LOCALID=$i SLURMD_NODENAME=n$((i + 1)) "$@" <<< "$input"
  done
}
"""


def run(text: str, tmp_path: Path, prelude: str = PRELUDE) -> List[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in FAKE_PROGRAMS.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    script = tmp_path / "job.sh"
    script.write_text(text)
    startup = tmp_path / "startup.sh"  # every non-interactive bash reads it: no real directories
    startup.write_text("cd() { :; }\n")
    # a login shell (bash -lc) resets PATH from /etc/profile, then reads this
    (tmp_path / ".bash_profile").write_text(f"PATH={bin_dir}:$PATH\n. {startup}\n")
    env = {
        "BASH_ENV": str(startup),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SLURM_JOB_ID": "77",
        "SLURM_JOB_NUM_NODES": "2",
        "SLURM_NNODES": "2",
        "SLURM_JOB_NODELIST": "n[1-2]",
        "SLURM_PROCID": "0",
        "SLURM_NODEID": "0",
        "SLURM_LOCALID": "0",
        "SLURMD_NODENAME": "n1",
        "SLURM_NTASKS": "2",
    }
    done = subprocess.run(
        [BASH, "--noprofile", "--norc", "-c", prelude + f"\nsource {script}\n"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.strip()]


needs_bash = pytest.mark.skipif(BASH is None, reason="needs bash")


# -- TRAIN_CMD over many lines ---------------------------------------------------------------------
def test_train_cmd_over_many_lines():
    text = fixture("mlm_torchrun_train_cmd.sbatch")
    assert findings(text) == [
        ("SBL202", 23, "$SLURM_JOB_NUM_NODES", "safe"),
        ("SBL201", 24, "$SLURM_NODEID", "safe"),
        ("SBL201", 30, "${SLURMD_NODENAME}", "safe"),
    ]
    expected = (
        text.replace("--nnodes=$SLURM_JOB_NUM_NODES", "--nnodes=\\$SLURM_JOB_NUM_NODES")
        .replace("--node_rank=$SLURM_NODEID", "--node_rank=\\$SLURM_NODEID")
        .replace("node-${SLURMD_NODENAME}", "node-\\${SLURMD_NODENAME}")
    )
    fixed = fix_text(text, SELECT)
    assert fixed == expected
    assert len(fixed.encode()) == len(text.encode()) + 3  # exactly three backslashes
    assert findings(fixed) == []
    assert_fixed_point(fixed, unsafe=True)


@needs_bash
def test_train_cmd_fix_gives_each_node_its_rank(tmp_path):
    text = fixture("mlm_torchrun_train_cmd.sbatch")
    before = [line for line in run(text, tmp_path) if line.startswith("torchrun")]
    after = [line for line in run(fix_text(text, SELECT), tmp_path) if line.startswith("torchrun")]
    assert len(before) == len(after) == 2
    assert all("--node_rank=0 " in line and "node-n1" in line for line in before)
    assert "--node_rank=0 " in after[0] and "node-n1" in after[0]
    assert "--node_rank=1 " in after[1] and "node-n2" in after[1]
    # host-side values still expanded by the batch shell, exported ones by the task
    assert all("--data-path /lustre/fsw/llm/data/gpt/corpus_text_document" in line for line in after)
    assert all("--master_addr=n1 --master_port=29500" in line for line in after)
    assert all("--nnodes=2 " in line and "/logs/77/" in line for line in after)


# -- a sweep loop: read <<<, CMD="$CMD …", SRUN_CMD with container flags, bash -lc ----------------------
def test_sweep_loop_with_srun_cmd():
    text = fixture("bridge_sweep_loop.sbatch")
    assert findings(text) == [("SBL201", 19, "$SLURM_LOCALID", "safe")]
    fixed = fix_text(text, SELECT)
    assert fixed == text.replace("if [ $SLURM_LOCALID -eq 0 ]", "if [ \\$SLURM_LOCALID -eq 0 ]")
    assert findings(fixed) == []
    assert_fixed_point(fixed, unsafe=True)


@needs_bash
def test_sweep_loop_fix_lets_one_task_per_node_sync(tmp_path):
    text = fixture("bridge_sweep_loop.sbatch")
    before = run(text, tmp_path)
    after = run(fix_text(text, SELECT), tmp_path)
    # two configurations × two tasks: before, every task believes it is local rank 0
    assert sum(line == "uv sync" for line in before) == 4
    assert sum(line == "uv sync" for line in after) == 2
    runs = [line for line in after if line.startswith("uv run")]
    assert len(runs) == 4
    assert "model.tensor_model_parallel_size=2" in runs[0] and runs[0].endswith("tp2-pp1-rank0")
    assert "model.tensor_model_parallel_size=4" in runs[3] and runs[3].endswith("tp4-pp2-rank1")


# -- here-documents -----------------------------------------------------------------------------------
def test_heredoc_steps():
    text = fixture("heredoc_steps.sbatch")
    assert findings(text) == [
        ("SBL201", 12, "$SLURM_PROCID", "safe"),
        ("SBL201", 13, "$SLURM_PROCID", "safe"),
        ("SBL203", 18, "$PORT", "unsafe"),
    ]
    safe = fix_text(text, SELECT)
    assert safe == text.replace('echo "task $SLURM_PROCID', 'echo "task \\$SLURM_PROCID').replace(
        "--rank $SLURM_PROCID --out", "--rank \\$SLURM_PROCID --out"
    )
    unsafe = fix_text(text, SELECT, unsafe=True)
    assert unsafe == safe.replace("\nPORT=29500\n", "\nexport PORT=29500\n")
    assert findings(unsafe) == []
    assert_fixed_point(unsafe, unsafe=True)


@needs_bash
def test_heredoc_fixes_at_run_time(tmp_path):
    text = fixture("heredoc_steps.sbatch")
    before = run(text, tmp_path)
    after = run(fix_text(text, SELECT, unsafe=True), tmp_path)
    assert [line for line in before if line.startswith("python save_shard")] == [
        "python save_shard.py --rank 0 --out /lustre/fsw/llm/checkpoints/run1"
    ] * 2
    assert [line for line in after if line.startswith("python save_shard")] == [
        "python save_shard.py --rank 0 --out /lustre/fsw/llm/checkpoints/run1",
        "python save_shard.py --rank 1 --out /lustre/fsw/llm/checkpoints/run1",
    ]
    assert [line for line in before if line.startswith("python serve")] == [
        "python serve.py --rank 0 --port ",
        "python serve.py --rank 1 --port ",
    ]
    assert [line for line in after if line.startswith("python serve")] == [
        "python serve.py --rank 0 --port 29500",
        "python serve.py --rank 1 --port 29500",
    ]


# -- the task's environment -----------------------------------------------------------------------------
def test_task_environment():
    text = fixture("task_environment.sbatch")
    assert findings(text) == [
        ("SBL203", 21, "$SEED", "unsafe"),
        ("SBL203", 21, "$DATA", "unsafe"),
        ("SBL203", 24, "$RUN_NAME", "unsafe"),
        ("SBL203", 24, "$LAYERS", None),  # bash cannot export an array
        ("SBL203", 25, "$CKPT", "unsafe"),  # --export=ALL,CKPT selects exported variables only
        ("SBL203", 27, "$DATA", "unsafe"),  # --export=NONE,DATA: DATA must be exported to be selected
        ("SBL203", 27, "$HF_HOME", None),  # --export=NONE,DATA: exporting would not help
    ]
    messages = {said(d) for d in lint_text(text, ["SBL203"])}
    assert any("unless the submission environment exports it" in m for m in messages)  # ${RUN_NAME:-…}
    assert any("cannot export arrays" in m for m in messages)
    assert any("--export=NONE,DATA" in m for m in messages)
    assert fix_text(text, SELECT) == text  # only unsafe fixes
    fixed = fix_text(text, SELECT, unsafe=True)
    assert fixed == (
        text.replace("\nDATA=/lustre", "\nexport DATA=/lustre")
        .replace("\nRUN_NAME=", "\nexport RUN_NAME=")
        .replace("local SEED=1234", "local -x SEED=1234")
        .replace("\nCKPT=", "\nexport CKPT=")
    )
    assert [f[2] for f in findings(fixed)] == ["$LAYERS", "$HF_HOME"]
    assert_fixed_point(fixed, unsafe=True)


@needs_bash
def test_task_environment_fix_at_run_time(tmp_path):
    text = fixture("task_environment.sbatch")
    fixed = fix_text(text, SELECT, unsafe=True)
    before, after = run(text, tmp_path), run(fixed, tmp_path)
    assert "python train.py --seed  --data " in before
    assert "python train.py --seed 1234 --data /lustre/fsw/llm/data" in after
    assert any(line.startswith("python train.py --name  --layers ") for line in before)
    assert any(line.startswith("python train.py --name baseline --layers  --hf /lustre") for line in after)


# -- the step's command line: never "fixed" with a backslash; the task's own shell where it can be -------
def test_command_line_expansions_run_through_the_tasks_shell():
    text = fixture("command_line.sbatch")
    found = lint_text(text, ["SBL201"])
    assert [(d.code, d.fix.applicability.value if d.fix else None) for d in found] == [
        ("SBL201", None),  # ARGS, split into torchrun's argv: the value is built in another variable
        ("SBL201", "unsafe"),  # written at the step, next to values only the batch shell has
        ("SBL201", None),  # RANK=… srun: srun's environment, not the task command
        ("SBL201", None),  # --export=ALL,LOCAL_RANK=…: an option of srun
    ]
    helps = [d.help for d in found]
    assert "bash -c 'exec … --node_rank=$SLURM_NODEID …'" in helps[0]
    assert "bash -c 'exec … RANK=$SLURM_PROCID …'" in helps[2]
    assert fix_text(text, SELECT) == text  # nothing safe to do
    fixed = fix_text(text, SELECT, unsafe=True)
    assert (
        "srun --kill-on-bad-exit=1 bash -c 'exec torchrun --nproc_per_node=8 --nnodes=2 --node_rank=${SLURM_NODEID:-0} \\\n"
        "  --master_addr=\"${1}\" --master_port=29500 train.py --seed \"${2}\"' _ \"$MASTER_ADDR\" \"$RANDOM\"\n"
    ) in fixed
    assert fix_text(fixed, SELECT, unsafe=True) == fixed


def test_task_shell_fix_is_safe_when_nothing_needs_the_batch_shell():
    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
        "srun -K python train.py --rank $SLURM_PROCID --local \"$SLURM_LOCALID\" --job $SLURM_JOB_ID > out.log\n"
    )
    found = lint_text(text, ["SBL201"])  # one finding per variable, each with the same fix
    assert len(found) == 2 and {d.fix.applicability.value for d in found if d.fix} == {"safe"}
    assert found[0].fix == found[1].fix
    fixed = fix_text(text, SELECT)
    assert fixed.endswith(
        "srun -K bash -c 'exec python train.py --rank $SLURM_PROCID --local \"$SLURM_LOCALID\" --job $SLURM_JOB_ID' > out.log\n"
    )
    assert not lint_text(fixed, SELECT)


def test_task_shell_fix_keeps_single_quotes_and_passes_substitutions():
    head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
    text = head + "srun python train.py --name 'run one' --rank $SLURM_PROCID --day \"$(date '+%F')\"\n"
    fixed = fix_text(text, SELECT, unsafe=True)
    assert fixed == head + (
        "srun bash -c 'exec python train.py --name '\\''run one'\\'' --rank $SLURM_PROCID --day \"${1}\"' "
        "_ \"$(date '+%F')\"\n"
    )
    assert fix_text(fixed, SELECT, unsafe=True) == fixed


def test_no_task_shell_fix_for_a_launchers_variable():
    head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
    launcher = head + "srun python train.py --node $SLURM_NODEID --rank $RANK\n"
    assert all(d.fix is None for d in lint_text(launcher, ["SBL201"]))


def test_task_shell_fix_moves_lists_of_words_behind_the_quotes():
    """A word the batch shell expands to several (an array, an unquoted variable) cannot be one
    argument: the words that need the batch shell move, as written, behind the quotes and run as
    ``"$@"``, so the batch shell expands them exactly as before."""
    text = fixture("command_line_lists.sbatch")
    found = {d.span.start: d for d in lint_text(text, ["SBL201"])}
    assert len(found) == 4
    last = found[max(found)]
    assert last.fix is None
    assert "(no automatic fix: values only the batch shell has stand on both sides of one the task's shell must expand" in last.help
    fixed = fix_text(text, SELECT, unsafe=True)
    assert (
        "srun --kill-on-bad-exit=1 bash -c 'exec python train.py \"$@\" --rank $SLURM_PROCID' _ \"${TRAIN_ARGS[@]}\"\n"
    ) in fixed
    assert (
        "srun --kill-on-bad-exit=1 bash -c 'exec \"$@\" \\\n"
        "  --node_rank=$SLURM_NODEID train.py' _ $LAUNCH --master_addr=$MASTER_ADDR\n"
    ) in fixed
    # one word through another variable ($SCRATCH inside $RUN_DIR) goes in as one argument
    assert "srun --kill-on-bad-exit=1 bash -c 'exec python eval.py --out \"${1}\" --rank $SLURM_PROCID' _ \"$RUN_DIR\"\n" in fixed
    assert fix_text(fixed, SELECT, unsafe=True) == fixed
    assert [d.span.start for d in lint_text(fixed, ["SBL201"])] == [fixed.index("--node_rank=$SLURM_NODEID \"${TRAIN") + 12]
    assert subprocess.run(["bash", "-n"], input=fixed.encode(), check=False).returncode == 0
    # the batch shell's words are passed, so these fixes need --unsafe-fixes
    assert fix_text(text, SELECT) == text


def test_task_shell_fix_passes_a_launchers_name_the_script_assigns_itself():
    head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
    text = head + (
        "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
        "srun python train.py --addr $MASTER_ADDR --rank $SLURM_PROCID\n"
    )
    fixed = fix_text(text, SELECT, unsafe=True)
    assert fixed.endswith("srun bash -c 'exec python train.py --addr \"${1}\" --rank $SLURM_PROCID' _ \"$MASTER_ADDR\"\n")
    # the launcher's own value, which no shell of the task has: no fix, and the help says why
    (finding,) = [d for d in lint_text(head + "srun python train.py --local $LOCAL_RANK --rank $SLURM_PROCID\n", ["SBL201"])
                  if "SLURM_PROCID" in d.message]
    assert finding.fix is None
    assert "(no automatic fix: `$LOCAL_RANK` is a launcher's variable that no shell of the task has)" in finding.help


def test_no_task_shell_fix_for_a_per_task_value_inside_another_variable_says_why():
    head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
    text = head + 'EXTRA="--local $SLURM_LOCALID"\nsrun python train.py $EXTRA --rank $SLURM_PROCID\n'
    (finding,) = [d for d in lint_text(text, ["SBL201"]) if "SLURM_PROCID" in d.message]
    assert finding.fix is None
    assert ("(no automatic fix: `$EXTRA` holds `$SLURM_LOCALID` as the batch shell expanded it, "
            "a value no task's shell can give it again)") in finding.help

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

from lintutil import codes, fix_text, lint_text
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
    messages = {d.message for d in lint_text(text, ["SBL203"])}
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


# -- the step's command line: reported, never "fixed" with a backslash -------------------------------------
def test_command_line_expansions_have_no_fix():
    text = fixture("command_line.sbatch")
    assert findings(text) == [
        ("SBL201", 8, "$SLURM_NODEID", None),  # ARGS, split into torchrun's argv
        ("SBL201", 10, "${SLURM_NODEID:-0}", None),
        ("SBL201", 12, "$SLURM_PROCID", None),  # RANK=… srun
        ("SBL201", 13, "$SLURM_LOCALID", None),  # --export=ALL,LOCAL_RANK=…
    ]
    helps = [d.help for d in lint_text(text, ["SBL201"])]
    assert "bash -c '… --node_rank=$SLURM_NODEID …'" in helps[0]
    assert "bash -c '… RANK=$SLURM_PROCID …'" in helps[2]
    assert fix_text(text, SELECT, unsafe=True) == text


# -- expansions the batch shell performs, whose escaping would change something else ------------------------
def test_not_escapable_when_the_text_is_used_elsewhere():
    text = fixture("not_escapable.sbatch")
    found = lint_text(text, SELECT)
    assert findings(text) == [
        ("SBL201", 7, "$SLURM_NODEID", None),  # NODE_RANK is also tested in the batch shell
        ("SBL201", 14, "$SLURM_PROCID", None),  # SHARED_ARGS also goes to a direct argv
        ("SBL201", 18, "$SLURM_LOCALID", None),  # LAUNCH is exported
        ("SBL201", 21, "$SLURM_PROCID", None),  # single-quoted inside the command string
    ]
    helps = [d.help for d in found]
    assert "also used outside task command strings" in helps[0]
    assert "exported" not in helps[0]
    assert "would not expand it there" in helps[3]
    assert fix_text(text, SELECT, unsafe=True) == text


# -- smaller cases ---------------------------------------------------------------------------------------------
HEAD = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"


@pytest.mark.parametrize(
    "body",
    [
        "srun bash -c 'python train.py --rank $SLURM_PROCID --node $SLURM_NODEID'\n",
        'srun bash -c "python train.py --rank \\${SLURM_PROCID}"\n',
        "srun bash -c $'python train.py --rank $SLURM_PROCID'\n",
        'echo "rank $SLURM_PROCID on $SLURMD_NODENAME"\nsrun hostname\n',
        'if [ "$SLURM_PROCID" = 0 ]; then echo first; fi\nsrun hostname\n',
        "srun --ntasks=1 bash -c \"echo $SLURM_PROCID $SLURM_LOCALID > /tmp/ready\"\n",
        "srun --nodes=1 bash -c \"echo $SLURM_NODEID $SLURMD_NODENAME\"\n",
        'RANK=$(cat /lustre/fsw/llm/rank.txt)\nsrun bash -c "python train.py --rank $RANK"\n',
        'srun bash -c "python train.py --seed $RANDOM --out $HOME/out"\n',
        "srun bash <<'EOF'\npython train.py --rank $SLURM_PROCID\nEOF\n",
        'srun python train.py --job $SLURM_JOB_ID --nodes $SLURM_JOB_NUM_NODES\n',
        # the first node's name, frozen on purpose: the rendezvous host
        'MASTER_ADDR=$SLURMD_NODENAME\nsrun bash -c "torchrun --master_addr=$MASTER_ADDR train.py"\n',
        'srun bash -c "torchrun --rdzv_endpoint=${HOSTNAME}:29500 --rdzv_backend=c10d train.py"\n',
        "srun torchrun --rdzv-endpoint $HOSTNAME:29500 --rdzv_backend=c10d train.py\n",
        # a host-side path the batch shell also uses: expanded early on purpose
        'OUT=/lustre/fsw/llm/results/$SLURM_JOB_ID\nmkdir -p "$OUT"\nsrun bash -c "python train.py --out $OUT"\n',
    ],
)
def test_nothing_to_report(body):
    assert codes(HEAD + body, SELECT) == []


@pytest.mark.parametrize(
    "body,code",
    [
        ('srun sh -c "python train.py --rank $SLURM_PROCID"\n', "SBL201"),
        ('srun bash -c "python train.py --step $SLURM_STEP_ID"\n', "SBL201"),
        ('srun --nodes=1 --nodelist=n2 bash -c "echo $SLURM_NODEID"\n', "SBL201"),
        ('srun --ntasks=1 bash -c "echo $SLURM_NODEID $SLURM_STEP_NUM_TASKS"\n', "SBL201"),
        ('srun bash <<< "python train.py --rank $SLURM_PROCID"\n', "SBL201"),
        ('srun --gpus-per-task=1 bash -c "python train.py --gpus $CUDA_VISIBLE_DEVICES"\n', "SBL201"),
        ('srun bash -c "python train.py --gpus $CUDA_VISIBLE_DEVICES"\n', "SBL202"),
        ('srun bash -c "python train.py --job $SLURM_JOB_ID"\n', "SBL202"),
        ('srun bash -c "python train.py --log-dir /lustre/fsw/llm/logs/$SLURMD_NODENAME"\n', "SBL201"),
        ('srun bash -c "python train.py --out /lustre/fsw/llm/hosts/$HOSTNAME"\n', "SBL201"),
    ],
)
def test_reported(body, code):
    assert codes(HEAD + body, SELECT) == [code]
    fixed = fix_text(HEAD + body, SELECT)
    assert fixed.count("\\$") == 1 and codes(fixed, SELECT) == []


def test_launcher_variables_are_escaped_only_where_the_task_sets_them():
    unset = HEAD + 'srun bash -lc "python train.py --rank $RANK --local-rank $LOCAL_RANK"\n'
    assert findings(unset) == [("SBL201", 5, "$RANK", None), ("SBL201", 5, "$LOCAL_RANK", None)]
    assert ["\\$SLURM_PROCID" in d.help for d in lint_text(unset, ["SBL201"])] == [True, False]
    assert "\\$SLURM_LOCALID" in lint_text(unset, ["SBL201"])[1].help
    own = HEAD + 'srun bash -c "export RANK=\\$SLURM_PROCID; python train.py --rank $RANK"\n'
    assert findings(own) == [("SBL201", 5, "$RANK", "safe")]
    assert fix_text(own, SELECT) == own.replace("--rank $RANK", "--rank \\$RANK")


def test_task_strings_that_load_an_environment_may_define_anything():
    for loader in ("source /lustre/fsw/llm/env.sh", ". ./env.sh", "module load cuda", 'eval "$(conda shell.bash hook)"'):
        text = HEAD + f"CUDA_HOME=/usr/local/cuda\nsrun bash -c '{loader} && nvcc --version && ls $CUDA_HOME'\n"
        assert codes(text, ["SBL203"]) == [], loader


def test_escape_follows_the_chain_to_the_first_assignment():
    text = HEAD + (
        'NODE_RANK=$SLURM_NODEID\n'
        'CMD="python train.py --node-rank $NODE_RANK"\n'
        'for LR in 1e-4 3e-4; do\n'
        '  RUN="$CMD --lr $LR"\n'
        '  echo "launching: $RUN"\n'
        '  srun --kill-on-bad-exit=1 bash -c "$RUN"\n'
        "done\n"
    )
    assert findings(text) == [("SBL201", 5, "$SLURM_NODEID", "safe")]
    fixed = fix_text(text, SELECT)
    assert fixed == text.replace("NODE_RANK=$SLURM_NODEID", "NODE_RANK=\\$SLURM_NODEID")
    assert_fixed_point(fixed, unsafe=True)


def test_partial_step_keeps_job_counts_unfixed():
    text = HEAD + 'srun --nodes=1 --ntasks=1 bash -c "python prepare.py --world-size $SLURM_NTASKS --job $SLURM_JOB_ID"\n'
    assert findings(text) == [
        ("SBL202", 5, "$SLURM_NTASKS", None),
        ("SBL202", 5, "$SLURM_JOB_ID", "safe"),
    ]


def test_fix_keeps_crlf_line_endings():
    text = (HEAD + 'CMD="python train.py \\\n  --rank $SLURM_PROCID"\nsrun bash -c "$CMD"\n').replace("\n", "\r\n")
    fixed = fix_text(text, SELECT)
    assert fixed == text.replace("--rank $SLURM_PROCID", "--rank \\$SLURM_PROCID")
    assert fixed.count("\r\n") == text.count("\r\n")


@pytest.mark.parametrize(
    "setup,reported",
    [
        ("PORT=29500\n", True),
        ("PORT=29500\nexport PORT\n", False),
        ("export PORT\nPORT=29500\n", False),
        ("declare -x PORT=29500\n", False),
        ("set -o allexport\nPORT=29500\n", False),
        ("set -a\nset +a\nPORT=29500\n", True),
        ("", False),  # never assigned: from the environment, not this rule
    ],
)
def test_export_state_before_the_step(setup, reported):
    text = HEAD + setup + "srun bash -c 'python serve.py --port $PORT'\n"
    assert (codes(text, ["SBL203"]) == ["SBL203"]) is reported


def test_task_level_command_substitution():
    text = HEAD + 'CFG_FILE=/lustre/fsw/llm/cfg/run.yaml\nsrun bash -c "python train.py --cfg \\$(cat \\$CFG_FILE) --rank \\$SLURM_PROCID"\n'
    assert findings(text) == [("SBL203", 6, "\\$CFG_FILE", "unsafe")]


def test_export_after_the_step_is_too_late():
    text = HEAD + "PORT=29500\nsrun bash -c 'python serve.py --port $PORT'\nexport PORT\nsrun bash -c 'echo $PORT'\n"
    assert findings(text) == [("SBL203", 6, "$PORT", "unsafe")]


@pytest.mark.parametrize(
    "step",
    [
        "PORT=$PORT srun bash -c 'python serve.py --port $PORT'\n",
        "env PORT=$PORT srun bash -c 'python serve.py --port $PORT'\n",
        "srun env PORT=$PORT bash -c 'python serve.py --port $PORT'\n",
        "srun --export=ALL,PORT=$PORT bash -c 'python serve.py --port $PORT'\n",
        "srun --export=$EXPORTS bash -c 'python serve.py --port $PORT'\n",
        "srun bash -c 'PORT=1; python serve.py --port $PORT'\n",
        "srun bash -c 'export PORT=$((29500 + SLURM_LOCALID)); python serve.py --port $PORT'\n",
        "srun bash -c 'for PORT in 1 2; do python serve.py --port $PORT; done'\n",
        "srun bash -c 'read -r PORT < port.txt; python serve.py --port $PORT'\n",
        "srun $(cat srun_args.txt) bash -c 'python serve.py --port $PORT'\n",
    ],
)
def test_variable_given_to_the_task_another_way(step):
    assert codes(HEAD + "PORT=29500\n" + step, ["SBL203"]) == []


@pytest.mark.parametrize(
    "setup,export,reported",
    [
        ("PORT=29500\n", "ALL,PORT", True),  # a bare name selects from srun's environment only
        ("export PORT=29500\n", "ALL,PORT", False),
        ("PORT=29500\n", "NONE,PORT", True),
        ("export PORT=29500\n", "NONE,PORT", False),
        ("export PORT=29500\n", "NONE", True),
        ("export PORT=29500\n", "HF_HOME", True),
        ("PORT=29500\n", "NONE,PORT=$PORT", False),
    ],
)
def test_srun_export_lists(setup, export, reported):
    text = HEAD + setup + f"srun --export={export} /bin/bash -c 'python serve.py --port $PORT'\n"
    found = lint_text(text, ["SBL203"])
    assert bool(found) is reported
    if found and not setup.startswith("export"):
        # exporting it is what makes srun able to pass it
        fixed = fix_text(text, SELECT, unsafe=True)
        assert fixed == text.replace("\nPORT=29500", "\nexport PORT=29500")


def test_export_fix_for_conditional_assignments():
    text = HEAD + (
        'if [ "$SLURM_JOB_NUM_NODES" -gt 1 ]; then\n'
        "  PORT=29500\n"
        "else\n"
        "  PORT=29600\n"
        "fi\n"
        "srun bash -c 'python serve.py --port $PORT'\n"
    )
    assert findings(text) == [("SBL203", 10, "$PORT", "unsafe")]
    fixed = fix_text(text, SELECT, unsafe=True)
    assert fixed == text.replace("  PORT=", "  export PORT=")
    assert_fixed_point(fixed, unsafe=True)


def test_secret_values_stay_out_of_messages():
    text = HEAD + 'HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH12\nsrun bash -c "huggingface-cli login --token \\$HF_TOKEN && echo $SLURM_PROCID"\n'
    for d in lint_text(text, SELECT):
        for part in (d.message, d.label or "", d.help or "", d.fix.description if d.fix else ""):
            assert "hf_abcdefghijklmnop" not in part


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.sbatch")))
def test_fixing_a_fixture_adds_no_error_of_any_rule(name):
    text = fixture(name)
    before = {d.code for d in lint_text(text) if d.severity.value == "error"}
    fixed = fix_text(text, SELECT, unsafe=True)
    after = [f"{d.code}: {d.message}" for d in lint_text(fixed) if d.severity.value == "error" and d.code not in before]
    assert not after


# -- srun's own file-name options (--output/-o, --error/-e, --input/-i) ------------------------------------
FILE_SRUN = r"""
srun() {
  local out="" err="" i file
  while [ $# -gt 0 ]; do
    case "$1" in
      --output=*) out=${1#--output=}; shift ;;
      --error=*) err=${1#--error=}; shift ;;
      -o|--output) out=$2; shift 2 ;;
      -e|--error) err=$2; shift 2 ;;
      --) shift; break ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  for i in 0 1; do
    # srun's own patterns: %t is the task's rank, %n its node's index (one task per node here)
    file=${out//\%t/$i}; file=${file//\%n/$i}
    SLURM_PROCID=$i SLURM_NODEID=$i SLURM_LOCALID=0 "$@" >> "$file"
  done
}
"""


def test_srun_file_names():
    text = fixture("srun_file_names.sbatch")
    assert findings(text) == [
        ("SBL201", 16, "${SLURM_PROCID}", "safe"),
        ("SBL201", 17, "${SLURM_NODEID}", "safe"),
        ("SBL201", 21, "$SLURM_PROCID", None),  # EVAL_LOG: through another variable
        ("SBL201", 23, "$SLURM_LOCALID", None),  # srun has no pattern for it
    ]
    found = lint_text(text, ["SBL201"])
    assert all("every task writes the same file" in d.message for d in found)
    assert "`%t`" in found[0].help and "`%n`" in found[1].help
    assert "through another variable" in found[2].help and "`%t`" in found[2].help
    assert "no file-name pattern" in found[3].help
    fixed = fix_text(text, SELECT)
    assert fixed == text.replace('rank_${SLURM_PROCID}.log"', 'rank_%t.log"').replace(
        "node_${SLURM_NODEID}.err", "node_%n.err"
    )
    assert [f[2] for f in findings(fixed)] == ["$SLURM_PROCID", "$SLURM_LOCALID"]
    assert_fixed_point(fixed, unsafe=True)


@pytest.mark.parametrize(
    "step,site,fixed_step",
    [
        (
            "srun --kill-on-bad-exit=1 --output=logs/rank_${SLURM_PROCID}.log python train.py\n",
            "${SLURM_PROCID}",
            "srun --kill-on-bad-exit=1 --output=logs/rank_%t.log python train.py\n",
        ),
        (
            "srun --kill-on-bad-exit=1 --output=logs/rank_$SLURM_PROCID.log python train.py\n",
            "$SLURM_PROCID",
            "srun --kill-on-bad-exit=1 --output=logs/rank_%t.log python train.py\n",
        ),
        (
            "srun --kill-on-bad-exit=1 -o logs/rank_$SLURM_PROCID.log python train.py\n",
            "$SLURM_PROCID",
            "srun --kill-on-bad-exit=1 -o logs/rank_%t.log python train.py\n",
        ),
        (
            'srun --kill-on-bad-exit=1 -o "out_$SLURM_NODEID.txt" python train.py\n',
            "$SLURM_NODEID",
            'srun --kill-on-bad-exit=1 -o "out_%n.txt" python train.py\n',
        ),
        (
            "srun --kill-on-bad-exit=1 --error 'logs/'\"node_${SLURM_NODEID}\"'.err' python train.py\n",
            "${SLURM_NODEID}",
            "srun --kill-on-bad-exit=1 --error 'logs/'\"node_%n\"'.err' python train.py\n",
        ),
        (
            "srun --kill-on-bad-exit=1 -i /lustre/fsw/llm/shards/part_$SLURM_PROCID.txt python shard.py\n",
            "$SLURM_PROCID",
            "srun --kill-on-bad-exit=1 -i /lustre/fsw/llm/shards/part_%t.txt python shard.py\n",
        ),
        (
            'srun --kill-on-bad-exit=1 --output="$RUN_DIR/%j_${SLURM_PROCID}.log" python train.py\n',
            "${SLURM_PROCID}",
            'srun --kill-on-bad-exit=1 --output="$RUN_DIR/%j_%t.log" python train.py\n',
        ),
        (
            "srun --kill-on-bad-exit=1 -o logs/100%%_$SLURM_PROCID.log python train.py\n",
            "$SLURM_PROCID",
            "srun --kill-on-bad-exit=1 -o logs/100%%_%t.log python train.py\n",
        ),
    ],
)
def test_file_name_fixed_with_srun_patterns(step, site, fixed_step):
    text = HEAD + step
    assert findings(text) == [("SBL201", 5, site, "safe")]
    fixed = fix_text(text, SELECT)
    assert fixed == HEAD + fixed_step
    assert codes(fixed, SELECT) == []
    assert_fixed_point(fixed, unsafe=True)


@pytest.mark.parametrize(
    "body,site,hint",
    [
        # through another variable: it may be used elsewhere too
        ("LOG=logs/rank_$SLURM_PROCID.log\nsrun -o $LOG python train.py\n", "$SLURM_PROCID", "%t"),
        ('SRUN="srun --kill-on-bad-exit=1 -o logs/node_$SLURM_NODEID.log"\n$SRUN python train.py\n', "$SLURM_NODEID", "%n"),
        # no srun pattern for it
        ("srun -e logs/local_$SLURM_LOCALID.err python train.py\n", "$SLURM_LOCALID", "%t"),
        ("srun -o logs/rank_$RANK.log python train.py\n", "$RANK", "%t"),
        ("srun -o logs/$SLURMD_NODENAME.log python train.py\n", "$SLURMD_NODENAME", "%N"),
        ("srun -o logs/$HOSTNAME python train.py\n", "$HOSTNAME", "%N"),
        # more than the bare variable, an open % before it, a backslash (srun then replaces nothing)
        ("srun -o logs/rank_${SLURM_PROCID:-0}.log python train.py\n", "${SLURM_PROCID:-0}", "%t"),
        ("srun -o logs/rank_%3$SLURM_PROCID.log python train.py\n", "$SLURM_PROCID", "%t"),
        ('srun -o "logs\\\\rank_$SLURM_PROCID.log" python train.py\n', "$SLURM_PROCID", "%t"),
    ],
)
def test_file_name_reported_without_fix(body, site, hint):
    text = HEAD + body
    found = findings(text)
    assert len(found) == 1 and found[0][0] == "SBL201" and found[0][2] == site and found[0][3] is None
    assert f"`{hint}`" in lint_text(text, ["SBL201"])[0].help
    assert fix_text(text, SELECT, unsafe=True) == text


@pytest.mark.parametrize(
    "body",
    [
        "srun --kill-on-bad-exit=1 -o logs/%j_rank_%t.log -e logs/%j_node_%n.err python train.py\n",
        'srun --kill-on-bad-exit=1 --output="logs/%x_%N_%2t.log" python train.py\n',
        # the batch shell's own files: not a step's
        "echo started > out_$SLURM_PROCID\nsrun --kill-on-bad-exit=1 python train.py\n",
        "python prepare.py > logs/prepare_$SLURM_NODEID.log 2>&1\nsrun --kill-on-bad-exit=1 python train.py\n",
        # a bare number is srun's "this task only" form, not a file name
        "srun --kill-on-bad-exit=1 --output=$SLURM_PROCID python train.py\n",
        # one task (or one node) gets the batch shell's value anyway
        "srun --ntasks=1 -o logs/prepare_$SLURM_PROCID.log python prepare.py\n",
        "srun --nodes=1 -o logs/node_$SLURM_NODEID.log python prepare.py\n",
        # job-wide values are the same in every task
        "srun --kill-on-bad-exit=1 -o logs/$SLURM_JOB_ID/rank_%t.log python train.py\n",
        # escaped: srun gets the text itself (not this rule's business)
        "srun --kill-on-bad-exit=1 -o 'logs/rank_$SLURM_PROCID.log' python train.py\n",
    ],
)
def test_file_name_nothing_new(body):
    assert findings(HEAD + body) == []


def test_directive_file_names_are_not_this_rule():
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --output=logs/rank_$SLURM_PROCID.log\nsrun hostname\n"
    assert codes(text, ["SBL201"]) == []


def test_file_name_site_already_reported_once():
    # LOG also reaches a task string: the string's finding covers the site, no second one
    text = HEAD + 'LOG=logs/rank_$SLURM_PROCID.log\nsrun --kill-on-bad-exit=1 -o "$LOG" bash -c "python train.py --log $LOG"\n'
    found = lint_text(text, ["SBL201"])
    assert [(d.span.start, d.span.end) for d in found] == [(len(HEAD) + 14, len(HEAD) + 27)]
    assert "when it builds `LOG`" in found[0].message


@needs_bash
def test_file_name_fix_gives_each_task_its_own_file(tmp_path):
    text = HEAD + "srun --kill-on-bad-exit=1 --output=logs/rank_${SLURM_PROCID}.log python train.py --rank-from-env\n"
    (tmp_path / "logs").mkdir()
    run(text, tmp_path, FILE_SRUN)
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["rank_0.log"]
    assert len((tmp_path / "logs" / "rank_0.log").read_text().splitlines()) == 2  # both tasks in one file
    shutil.rmtree(tmp_path / "logs")
    (tmp_path / "logs").mkdir()
    run(fix_text(text, SELECT), tmp_path, FILE_SRUN)
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["rank_0.log", "rank_1.log"]


def test_srun_file_name_written_as_one_short_option_word():
    text = HEAD + "srun -olog_${SLURM_PROCID}.txt -eerr_$SLURM_NODEID.txt python train.py\n"
    assert [(f[0], f[2], f[3]) for f in findings(text)] == [
        ("SBL201", "${SLURM_PROCID}", "safe"),
        ("SBL201", "$SLURM_NODEID", "safe"),
    ]
    fixed = fix_text(text, SELECT)
    assert fixed == HEAD + "srun -olog_%t.txt -eerr_%n.txt python train.py\n"
    assert_fixed_point(fixed, unsafe=True)

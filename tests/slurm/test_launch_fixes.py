"""The launch rules' claims and fixes, on the real 2-node Slurm cluster (tests/slurm/start-cluster.sh).

- srun ignores a step's ``--ntasks-per-node=1`` when the job fixes the task count, so torchrun runs
  once per task (SBL101 reports it); after ``--fix`` the step runs one launcher per node and the
  world is right.
- A TRAIN_CMD string without ``--nnodes``/``--node_rank`` (SBL103): after ``--fix`` the escaped
  ``\\${SLURM_NODEID}`` is expanded by each node's task and the two nodes form one world.
"""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from slurm_cluster import parse_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lintutil import fix_text, lint_text, said  # noqa: E402

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not importable: run tests/slurm/ensure-torch.sh"),
]

DEMO = Path(__file__).resolve().parent / "demo" / "allreduce.py"
PY = sys.executable
PRELUDE = """
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
export OMP_NUM_THREADS=1
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))
"""


def job(text: str) -> str:
    return textwrap.dedent(text).lstrip().replace("@PRELUDE@", PRELUDE.strip())


def test_ignored_step_flag_then_sbl101_fix(slurm):
    original = job(f"""
        #!/bin/bash
        #SBATCH --job-name=sbl101
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=2
        #SBATCH --time=2
        @PRELUDE@
        srun --kill-on-bad-exit=1 --ntasks-per-node=1 bash -c 'echo "TASK host=$SLURMD_NODENAME"; {PY} -m torch.distributed.run --nnodes=$SLURM_JOB_NUM_NODES --node_rank=$SLURM_NODEID --nproc_per_node=2 --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT {DEMO}'
        """)
    (finding,) = lint_text(original, ["SBL101"])
    assert "srun ignores the step's `--ntasks-per-node=1`" in said(finding)

    info, out = slurm.run(slurm.script(original, "original.sbatch"), timeout=150)
    tasks = parse_lines(out, "TASK")
    assert Counter(t["host"] for t in tasks) == {"n1": 2, "n2": 2}, out  # the step flag lost
    assert not info.ok  # the second launcher on each node cannot bind the port

    fixed = fix_text(original, ["SBL101"])
    assert "--ntasks=${SLURM_JOB_NUM_NODES}" in fixed
    info, out = slurm.run(slurm.script(fixed, "fixed.sbatch"), timeout=150)
    assert info.ok, (info, out)
    assert Counter(t["host"] for t in parse_lines(out, "TASK")) == {"n1": 1, "n2": 1}, out
    results = parse_lines(out, "RESULT")
    assert sorted(int(r["rank"]) for r in results) == [0, 1, 2, 3], out
    assert {r["world"] for r in results} == {"4"} and {r["sum"] for r in results} == {"6"}


def test_train_cmd_string_sbl103_fix(slurm):
    original = job(f"""
        #!/bin/bash
        #SBATCH --job-name=sbl103
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=1
        #SBATCH --time=2
        @PRELUDE@
        TRAIN_CMD="{PY} -m torch.distributed.run \\
          --nproc_per_node=2 --master_addr=\\$MASTER_ADDR --master_port=\\$MASTER_PORT \\
          {DEMO}"
        srun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"
        """)
    assert [d.code for d in lint_text(original, ["SBL103"])] == ["SBL103"]
    fixed = fix_text(original, ["SBL103"])
    # the launcher's options are written one continued line each: the fix follows that layout
    assert "  --nnodes=\\${SLURM_JOB_NUM_NODES} \\\n  --node_rank=\\${SLURM_NODEID} \\\n" in fixed
    info, out = slurm.run(slurm.script(fixed, "fixed.sbatch"), timeout=150)
    assert info.ok, (info, out)
    results = parse_lines(out, "RESULT")
    assert sorted(int(r["rank"]) for r in results) == [0, 1, 2, 3], out
    assert {r["world"] for r in results} == {"4"} and {r["sum"] for r in results} == {"6"}


def test_torchrun_on_srun_sbl103_fix_forms_one_world(slurm):
    # torchrun written directly on srun's command line: no node rank the batch shell could give
    # each node, so the fix adds a c10d rendezvous on the first node, from job-wide values
    original = job(f"""
        #!/bin/bash
        #SBATCH --job-name=sbl103-direct
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=1
        #SBATCH --time=2
        @PRELUDE@
        srun --kill-on-bad-exit=1 {PY} -m torch.distributed.run --nproc_per_node=2 --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT {DEMO}
        """)
    (finding,) = lint_text(original, ["SBL103"])
    assert finding.fix is not None and finding.fix.applicability.value == "safe"
    fixed = fix_text(original, ["SBL103"])
    assert (
        "torch.distributed.run --nnodes=${SLURM_JOB_NUM_NODES} --rdzv_backend=c10d "
        "--rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT --rdzv_id=$SLURM_JOB_ID --nproc_per_node=2"
    ) in fixed
    assert not lint_text(fixed, ["SBL103", "SBL113", "SBL201"])

    info, out = slurm.run(slurm.script(original, "original.sbatch"), timeout=150)
    # each node's agent starts a world of its own on its own node (here both nodes share one
    # host, so the second cannot even bind the port): never one world of four
    assert "4" not in {r["world"] for r in parse_lines(out, "RESULT")}, out
    info, out = slurm.run(slurm.script(fixed, "fixed.sbatch"), timeout=150)
    assert info.ok, (info, out)
    results = parse_lines(out, "RESULT")
    assert sorted(int(r["rank"]) for r in results) == [0, 1, 2, 3], out
    assert {r["world"] for r in results} == {"4"} and {r["sum"] for r in results} == {"6"}

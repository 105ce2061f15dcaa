"""SBL112 on the real 2-node cluster: torchrun run by the batch shell of a two-node job starts its
workers on the first node only; after the (unsafe) fix, one torchrun per node forms one world."""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from slurm_cluster import parse_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lintutil import fix_text, lint_text  # noqa: E402

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not importable: run tests/slurm/ensure-torch.sh"),
]

DEMO = Path(__file__).resolve().parent / "demo" / "allreduce.py"
PY = sys.executable


def test_batch_shell_torchrun_uses_the_first_node_only_until_fixed(slurm):
    original = textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH --job-name=sbl112
        #SBATCH --nodes=2
        #SBATCH --time=2
        unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
        export OMP_NUM_THREADS=1
        {PY} -m torch.distributed.run --nproc_per_node=2 --master_port=$((20000 + SLURM_JOB_ID % 10000)) {DEMO}
        """)
    (finding,) = lint_text(original, ["SBL112"])
    assert "first of the job's 2 nodes only" in finding.message

    info, out = slurm.run(slurm.script(original, "original.sbatch"), timeout=600)
    assert info.ok, (info, out)
    sources = parse_lines(out, "SOURCE")
    assert Counter(s["host"] for s in sources) == {"n1": 2}, out  # n2 ran nothing
    assert {r["world"] for r in parse_lines(out, "RESULT")} == {"2"}, out

    fixed = fix_text(original, ["SBL112"], unsafe=True)
    assert "srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1" in fixed
    assert lint_text(fixed, ["SBL112"]) == []
    # other jobs share this machine's ports: the rendezvous gets a port of its own, as the
    # original's master port does
    fixed = fixed.replace(":29500", ":$((20000 + SLURM_JOB_ID % 10000))")
    info, out = slurm.run(slurm.script(fixed, "fixed.sbatch"), timeout=600)
    assert info.ok, (info, out)
    assert Counter(s["host"] for s in parse_lines(out, "SOURCE")) == {"n1": 2, "n2": 2}, out
    results = parse_lines(out, "RESULT")
    assert sorted(int(r["rank"]) for r in results) == [0, 1, 2, 3], out
    assert {r["world"] for r in results} == {"4"} and {r["sum"] for r in results} == {"6"}

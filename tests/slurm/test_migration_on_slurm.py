"""SBL102's migration and ``sbatchlint convert`` on the real 2-node Slurm cluster (tests/slurm/start-cluster.sh).

- A Bridge-style TRAIN_CMD job that runs torchrun once per node (rendezvous exported by the batch
  shell) completes; after the migration (``--unsafe-fixes``) it runs srun-native, two tasks per
  node, and every task's RANK, WORLD_SIZE and LOCAL_RANK (and the rendezvous address) are derived
  from SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the node list the way Bridge does it
  (tests/slurm/demo/allreduce.py): the two nodes form one world of four ranks.
- ``sbatch --test-only`` accepts every script ``sbatchlint convert`` writes for the invariant grid of
  tests/test_convert.py (16-node scripts with ``--nodes=2`` on sbatch's command line: the cluster has two).

The jobs run outside containers, as the other tests here do: the interpreter running pytest
stands in for ``uv run python``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from slurm_cluster import clean_env, parse_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lintutil import fix_text, lint_text  # noqa: E402
from test_convert import GRID, grid_script  # noqa: E402

pytestmark = pytest.mark.slurm

DEMO = Path(__file__).resolve().parent / "demo" / "allreduce.py"
PY = sys.executable
SETTINGS = {"bridge_entry_points": ["*/demo/allreduce.py"]}  # the demo stands in for a Bridge entry point
RENDEZVOUS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch not importable: run tests/slurm/ensure-torch.sh"
)


def _env():
    """The submission environment without any rendezvous variable pytest may have inherited."""
    return {k: v for k, v in clean_env().items() if k not in RENDEZVOUS}


@needs_torch
def test_migrated_job_derives_ranks_from_slurm(slurm):
    original = textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH --job-name=sbl102
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=1
        #SBATCH --gpus-per-node=2
        #SBATCH --time=2
        export OMP_NUM_THREADS=1
        export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
        export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))

        TRAIN_CMD="echo TASK host=\\$SLURMD_NODENAME procid=\\$SLURM_PROCID; {PY} -m torch.distributed.run \\
          --nproc_per_node=2 --nnodes=\\${{SLURM_JOB_NUM_NODES}} --node_rank=\\${{SLURM_NODEID}} \\
          --master_addr=\\$MASTER_ADDR --master_port=\\$MASTER_PORT \\
          {DEMO}"
        srun --kill-on-bad-exit=1 bash -c "$TRAIN_CMD"
        """)
    (finding,) = lint_text(original, ["SBL102"], settings=SETTINGS)
    assert finding.fix is not None

    info, out = slurm.run(slurm.script(original, "torchrun.sbatch"), env=_env(), timeout=150)
    assert info.ok, (info, out)
    assert Counter(t["host"] for t in parse_lines(out, "TASK")) == {"n1": 1, "n2": 1}, out  # one torchrun per node
    assert {r["derived"] for r in parse_lines(out, "SOURCE")} == {"-"}, out  # torchrun set everything

    migrated = fix_text(original, ["SBL102"], unsafe=True, settings=SETTINGS)
    assert "#SBATCH --ntasks-per-node=2\n" in migrated
    assert "torch.distributed.run" not in migrated and "MASTER_ADDR" not in migrated
    assert f'TRAIN_CMD="echo TASK host=\\$SLURMD_NODENAME procid=\\$SLURM_PROCID; {PY} \\\n  {DEMO}"' in migrated
    assert not [d for d in lint_text(migrated, settings=SETTINGS) if d.code.startswith(("SBL1", "SBL2"))]

    info, out = slurm.run(slurm.script(migrated, "srun-native.sbatch"), env=_env(), timeout=150)
    assert info.ok, (info, out)
    tasks = parse_lines(out, "TASK")
    assert Counter(t["host"] for t in tasks) == {"n1": 2, "n2": 2}, out  # one task per GPU
    sources = parse_lines(out, "SOURCE")
    assert len(sources) == 4, out
    for source in sources:  # nothing set by hand: every value came from SLURM_*
        assert source["derived"].split(",") == list(RENDEZVOUS), out
    results = parse_lines(out, "RESULT")
    assert sorted(int(r["rank"]) for r in results) == [0, 1, 2, 3], out
    assert {r["world"] for r in results} == {"4"} and {r["sum"] for r in results} == {"6"}, out
    procids = {int(t["procid"]) for t in tasks}
    assert procids == {0, 1, 2, 3}
    host_of = {int(s["rank"]): s["host"] for s in sources}
    local_ranks = defaultdict(set)
    for result in results:
        local_ranks[host_of[int(result["rank"])]].add(int(result["local"]))
    assert dict(local_ranks) == {"n1": {0, 1}, "n2": {0, 1}}, out  # LOCAL_RANK = SLURM_LOCALID per node


def test_sbatch_accepts_every_converted_script(slurm):
    for launcher, nodes, mounts in GRID:
        text = grid_script(launcher, nodes, mounts)
        name = f"convert-{launcher}-{nodes}-{'mounts' if mounts else 'default'}.sbatch"
        # A 16-node script asks for more than this cluster has ("More processors requested than
        # permitted"): the command line's --nodes=2 overrides that one directive, every other
        # line of the header is checked as written.
        extra = ("--nodes=2",) if nodes > 2 else ()
        result = slurm.test_only(slurm.script(text, name), *extra, env=_env())
        assert result.accepted, (name, result.output)
        assert "to start at" in result.output, result.output

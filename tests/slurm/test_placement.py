"""SBL110 on the real 2-node cluster: where Slurm puts a total task count.

Kept apart from test_rule_proofs.py and run before it: placement depends on the CPUs and GPUs
free when the job starts, and that module keeps a job running in the background.
"""
from __future__ import annotations

from collections import Counter

import pytest

from proofs import changed_lines, codes, fixed_by_sbatchlint, script
from slurm_cluster import parse_lines, wait_idle

pytestmark = pytest.mark.slurm


def test_sbl110_tasks_packed_by_free_cpus(slurm):
    broken = slurm.script(script("""
        #!/bin/bash
        #SBATCH --job-name=sbl110
        #SBATCH --nodes=2
        #SBATCH --ntasks=16
        #SBATCH --gpus-per-node=8
        #SBATCH --time=1
        echo "JOB tasks_per_node=$SLURM_TASKS_PER_NODE"
        echo "SHARED jobs=$(squeue -h -t R -w "$SLURM_JOB_NODELIST" -o %i | grep -cvx "$SLURM_JOB_ID")"
        srun --kill-on-bad-exit=1 bash -c 'echo "TASK host=$SLURMD_NODENAME"'
        """), "ntasks.sbatch")
    assert codes(broken) == ["SBL110"]
    fixed = fixed_by_sbatchlint(broken, "per-node.sbatch")
    assert changed_lines(broken, fixed) == [("#SBATCH --ntasks=16", "#SBATCH --ntasks-per-node=8")]

    # One after the other: the packing depends on the CPUs free when the job starts. On idle
    # nodes it is "15,1"; a job of another test session on the same cluster can leave exactly
    # eight free CPUs on each node, and then Slurm packs 8 + 8. So the broken job starts on idle
    # nodes, and the unevenness is asserted unless another job shared them after all (the job
    # itself counts the others running there).
    if not wait_idle(timeout=120):
        pytest.skip("other jobs hold CPUs on the nodes: where Slurm packs the tasks depends on them")
    info, out = slurm.run(broken, timeout=120)
    assert info.ok, (info, out)
    per_node = Counter(t["host"] for t in parse_lines(out, "TASK"))
    assert sum(per_node.values()) == 16, out
    if max(per_node.values()) == 8 and parse_lines(out, "SHARED")[0]["jobs"] != "0":
        pytest.skip("another test session's job shared the nodes: Slurm packed around it")
    assert max(per_node.values()) > 8, out
    assert "," in parse_lines(out, "JOB")[0]["tasks_per_node"], out

    info, out = slurm.run(fixed, timeout=120)
    assert info.ok, (info, out)
    assert parse_lines(out, "JOB")[0]["tasks_per_node"] == "8(x2)"
    assert Counter(t["host"] for t in parse_lines(out, "TASK")) == {"n1": 8, "n2": 8}, out


def test_sbl110_exclusive_nodes_are_filled_evenly(slurm):
    """Measured, not claimed by the rule: with --exclusive the job holds every CPU of both
    nodes and Slurm spreads --ntasks evenly (8 + 8). The rule still reports the script: its fix
    changes nothing there, and the packing comes back as soon as the job does not hold whole
    nodes."""
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks=16
        #SBATCH --gpus-per-node=8
        #SBATCH --exclusive
        #SBATCH --time=1
        echo "JOB tasks_per_node=$SLURM_TASKS_PER_NODE"
        """))
    assert codes(job) == ["SBL110"]
    info, out = slurm.run(job, timeout=120)
    assert info.ok, (info, out)
    assert parse_lines(out, "JOB")[0]["tasks_per_node"] == "8(x2)"

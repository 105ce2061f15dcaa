"""Smoke tests of the local Slurm cluster harness (tests/slurm/start-cluster.sh)."""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

import slurm_cluster
from slurm_cluster import parse_lines

pytestmark = pytest.mark.slurm

DEMO = Path(__file__).resolve().parent / "demo" / "allreduce.py"
PY = sys.executable

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="torch not importable: run tests/slurm/ensure-torch.sh",
)


def script(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def test_two_nodes_two_tasks_each_see_node_ids_and_gpus(slurm):
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --job-name=smoke-2n
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=2
        #SBATCH --gpus-per-node=8
        #SBATCH --time=1
        srun bash -c 'echo "TASK node=$SLURM_NODEID proc=$SLURM_PROCID local=$SLURM_LOCALID host=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES"'
        """))
    info, out = slurm.run(job, timeout=90)
    assert info.ok, (info, out)
    assert info.exit_code_str == "0:0"
    tasks = parse_lines(out, "TASK")
    assert len(tasks) == 4, out
    assert Counter(t["node"] for t in tasks) == {"0": 2, "1": 2}
    assert {t["host"] for t in tasks} == {"n1", "n2"}
    assert sorted(int(t["proc"]) for t in tasks) == [0, 1, 2, 3]
    assert {t["local"] for t in tasks} == {"0", "1"}
    assert {t["cvd"] for t in tasks} == {"0,1,2,3,4,5,6,7"}


def test_pyxis_options_accepted_and_ignored(slurm):
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --nodes=1
        #SBATCH --time=1
        #SBATCH --container-image=x
        #SBATCH --container-mounts=/tmp:/tmp
        srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
             --container-mounts=/tmp:/tmp,/lustre/x:/lustre/x:ro \\
             --container-workdir=/tmp --container-name=demo --no-container-mount-home \\
             --container-remap-root --container-writable --container-env=HF_HOME \\
             echo "RAN outside a container"
        """))
    checked = slurm.test_only(job)
    assert checked.accepted, checked.output
    info, out = slurm.run(job, timeout=90)
    assert info.ok, (info, out)
    assert "RAN outside a container" in out


def test_srun_mpi_pmix(slurm):
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=2
        #SBATCH --time=1
        srun --mpi=pmix bash -c 'echo "PMIX rank=$PMIX_RANK host=$SLURMD_NODENAME"'
        """))
    info, out = slurm.run(job, timeout=90)
    assert info.ok, (info, out)
    rows = parse_lines(out, "PMIX")
    assert sorted(int(r["rank"]) for r in rows) == [0, 1, 2, 3], out
    assert Counter(r["host"] for r in rows) == {"n1": 2, "n2": 2}


def test_test_only_rejects_misspelled_option(slurm):
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntask-per-node=8
        #SBATCH --time=1
        srun hostname
        """))
    res = slurm.test_only(job)
    assert not res.accepted
    assert res.returncode == 255
    assert "unrecognized option '--ntask-per-node=8'" in res.stderr


def test_test_only_accepts_a_good_script(slurm):
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --nodes=2 --ntasks-per-node=8 --gpus-per-node=8
        #SBATCH --partition=interactive --time=1
        srun hostname
        """))
    res = slurm.test_only(job)
    assert res.accepted, res.output
    assert "to start at" in res.stderr


def test_failed_job_state_and_exit_code_also_from_completion_log(slurm):
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --time=1
        #SBATCH --output=logs-%j.txt
        echo "about to fail"
        exit 3
        """))
    info, out = slurm.run(job, timeout=60)
    assert info.state == "FAILED"
    assert info.exit_code == 3 and info.exit_code_str == "3:0"
    assert info.source == "scontrol"
    assert info.std_out == slurm.workdir / f"logs-{info.job_id}.txt"
    assert "about to fail" in out
    # Once slurmctld forgets the job (MinJobAge), the completion log answers.
    late = slurm_cluster.jobcomp_info(info.job_id)
    assert late is not None and late.source == "jobcomp"
    assert (late.state, late.exit_code_str) == ("FAILED", "3:0")
    assert "about to fail" in slurm_cluster.read_output(late)


def test_cancel(slurm):
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --time=1
        echo started
        sleep 60
        """))
    job_id = slurm.submit(job)
    slurm.cancel(job_id)
    info = slurm.wait(job_id, timeout=30)
    assert info.state == "CANCELLED"


@needs_torch
def test_torchrun_one_task_per_node(slurm):
    job = slurm.script(script(f"""
        #!/bin/bash
        #SBATCH --job-name=torchrun-demo
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=1
        #SBATCH --time=2
        set -euo pipefail
        unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
        export OMP_NUM_THREADS=1
        export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
        export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))
        srun --kill-on-bad-exit=1 bash -c '{PY} -m torch.distributed.run \\
            --nnodes="$SLURM_JOB_NUM_NODES" --node_rank="$SLURM_NODEID" --nproc_per_node=2 \\
            --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" {DEMO}'
        """))
    info, out = slurm.run(job, timeout=150)
    assert info.ok, (info, out)
    results = parse_lines(out, "RESULT")
    assert sorted(int(r["rank"]) for r in results) == [0, 1, 2, 3], out
    assert {r["world"] for r in results} == {"4"}
    assert {r["sum"] for r in results} == {"6"}
    assert Counter(r["local"] for r in results) == {"0": 2, "1": 2}
    # torchrun set every variable; the demo derived nothing.
    sources = parse_lines(out, "SOURCE")
    assert {s["derived"] for s in sources} == {"-"}
    assert Counter(s["host"] for s in sources) == {"n1": 2, "n2": 2}


@needs_torch
def test_srun_native_two_tasks_per_node(slurm):
    job = slurm.script(script(f"""
        #!/bin/bash
        #SBATCH --job-name=srun-native-demo
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=2
        #SBATCH --time=2
        unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
        export OMP_NUM_THREADS=1
        srun --kill-on-bad-exit=1 {PY} {DEMO}
        """))
    info, out = slurm.run(job, timeout=150)
    assert info.ok, (info, out)
    results = parse_lines(out, "RESULT")
    assert sorted(int(r["rank"]) for r in results) == [0, 1, 2, 3], out
    assert {r["world"] for r in results} == {"4"}
    assert {r["sum"] for r in results} == {"6"}
    assert Counter(r["local"] for r in results) == {"0": 2, "1": 2}
    sources = parse_lines(out, "SOURCE")
    assert {s["derived"] for s in sources} == {"RANK,WORLD_SIZE,LOCAL_RANK,MASTER_ADDR,MASTER_PORT"}
    assert Counter(s["host"] for s in sources) == {"n1": 2, "n2": 2}

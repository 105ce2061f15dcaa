"""``sbatchlint diagnose`` on the logs of real failing jobs of the local cluster.

Seven small jobs (2 nodes, gloo on the CPU, a 1-minute limit) are submitted together: a rank
raising with ``--kill-on-bad-exit``, one raising before the process group exists without it (the
others hang until the time limit), two torchrun launchers per node on a fixed port (EADDRINUSE),
rank 0 busy "saving artifacts" before a barrier with a short process group timeout, an ImportError
on rank 0 only, a log directory that does not exist (0:53) and a plain time limit. For each, the
command run on the job's output file names the task, the node and the cause.

``SBATCHLINT_SAVE_SLURM_LOGS=1`` keeps the logs under ``tests/data/slurm-logs/`` (``diagnose-*``).
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

import slurm_cluster
from proofs import DEMO, HERE, PY, REPO, save_log, script, wait_all

pytestmark = pytest.mark.slurm
FAILURES = HERE / "demo" / "failures.py"
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="torch not importable: run tests/slurm/ensure-torch.sh")

HEADER = """
    #!/bin/bash
    #SBATCH --job-name={name}
    #SBATCH --nodes=2
    #SBATCH --ntasks-per-node=2
    #SBATCH --time=1
    unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
    export OMP_NUM_THREADS=1
    """

JOBS = {
    "diagnose-raise": f"srun -l --kill-on-bad-exit=1 {PY} {FAILURES} raise",
    "diagnose-hang": f"srun -l {PY} {FAILURES} raise-early --timeout 600",
    "diagnose-eaddrinuse": (
        "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
        "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))\n"
        f"srun -l --kill-on-bad-exit=1 bash -c '{PY} -m torch.distributed.run --nnodes=2 --node_rank=$SLURM_NODEID "
        f"--nproc_per_node=1 --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT {DEMO}'"),
    "diagnose-busy-barrier": f"srun --kill-on-bad-exit=1 {PY} {FAILURES} busy-barrier --timeout 10",
    "diagnose-import-rank0": f"srun -l --kill-on-bad-exit=1 {PY} {FAILURES} import-rank0 --timeout 60",
    "diagnose-time-limit": f"srun -l --kill-on-bad-exit=1 {PY} {FAILURES} train",
}


def diagnose(*args: str):
    done = subprocess.run([PY, "-m", "sbatchlint", "diagnose", "--output-format", "json", *args],
                          capture_output=True, text=True, timeout=120, cwd=str(REPO))
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def neutral(log: str) -> str:
    """The log as kept: this machine's loopback address replaced (both nodes share one host)."""
    return log.replace("127.0.0.1", "10.0.0.1")


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    problem = slurm_cluster.cluster_problem()
    if problem is not None:
        if os.environ.get("SBATCHLINT_REQUIRE_SLURM") == "1":
            pytest.fail(f"{slurm_cluster.SKIP_REASON} ({problem})", pytrace=False)
        pytest.skip(slurm_cluster.SKIP_REASON)
    session = slurm_cluster.SlurmSession(tmp_path_factory.mktemp("diagnose"))
    scripts = {name: session.script(script(HEADER.format(name=name) + "    " + command.replace("\n", "\n    ")), f"{name}.sbatch")
               for name, command in JOBS.items()}
    scripts["diagnose-launch-failure"] = session.script(script("""
        #!/bin/bash
        #SBATCH --job-name=launch-failure
        #SBATCH --nodes=1
        #SBATCH --time=1
        #SBATCH --output=logs/%x_%j.out
        mkdir -p logs
        srun hostname
        """), "diagnose-launch-failure.sbatch")
    ids = {name: session.submit(path) for name, path in scripts.items()}
    infos = dict(zip(ids, wait_all(session, list(ids.values()), timeout=240)))
    out = {}
    for name, info in infos.items():
        path = slurm_cluster.output_path(info)
        log = session.output(info)
        if log:
            kept = session.workdir / f"{name}.out"
            kept.write_text(neutral(log))
            save_log(name, info, neutral(log), scripts[name])
            path = kept
        out[name] = (info, path, scripts[name])
    yield out
    session.close()


def first(data):
    return data["first_failure"]["task"], data["first_failure"]["node"]


@needs_torch
def test_a_rank_raising_with_kill_on_bad_exit(jobs):
    info, path, _ = jobs["diagnose-raise"]
    assert (info.state, info.exit_code_str) == ("FAILED", "143:0"), info
    rc, data = diagnose(str(path))
    assert rc == 0 and first(data) == (1, "n1")
    assert data["diagnoses"][0]["id"] == "python-exception"
    assert data["verdict"].startswith("task 1 on n1 failed first: ValueError: loss is NaN at step 3 (in main, failures.py:")
    assert data["victims"]["count"] == 3


@needs_torch
def test_without_kill_on_bad_exit_the_others_hang_until_the_time_limit(jobs):
    info, path, job_script = jobs["diagnose-hang"]
    assert info.state == "TIMEOUT", info
    rc, data = diagnose(str(path), "--job-script", str(job_script))
    assert rc == 0 and first(data) == (1, "n1")
    assert [d["id"] for d in data["diagnoses"]] == ["python-exception", "hang-until-time-limit"]
    assert "RuntimeError: rank 1: dataset shard 7 is missing" in data["verdict"]
    assert [d["code"] for d in data["lint"]] == ["SBL107"]


@needs_torch
def test_two_torchrun_launchers_per_node_on_a_fixed_port(jobs):
    info, path, _ = jobs["diagnose-eaddrinuse"]
    assert info.state == "FAILED", info
    rc, data = diagnose(str(path))
    assert rc == 0 and data["diagnoses"][0]["id"] == "address-in-use"
    task, node = first(data)
    log = path.read_text()
    # the task named is one whose own lines hold the EADDRINUSE error, on the node srun names
    assert re.search(rf"^{task}: .*EADDRINUSE", log, re.M)
    assert re.search(rf"^srun: error: {node}: tasks? [0-9,-]*\b{task}\b", log, re.M) or \
        re.search(rf"^srun: error: {node}: tasks? {task}-", log, re.M)
    assert [r["code"] for r in data["diagnoses"][0]["rules"]] == ["SBL101", "SBL201"]


@needs_torch
def test_rank0_busy_before_a_barrier_with_a_short_timeout(jobs):
    info, path, _ = jobs["diagnose-busy-barrier"]
    assert info.state == "FAILED", info
    rc, data = diagnose(str(path))
    cause = data["diagnoses"][0]
    assert rc == 0 and cause["id"] == "rank0-unreachable"
    assert first(data)[0] in (1, 2, 3)
    assert any("saving tokenizer and config" in note for note in cause["notes"])
    assert any("SBL502" in note for note in cause["notes"])


@needs_torch
def test_import_error_on_rank0_only(jobs):
    info, path, _ = jobs["diagnose-import-rank0"]
    assert info.state == "FAILED", info
    rc, data = diagnose(str(path))
    assert rc == 0 and first(data) == (0, "n1")
    cause = data["diagnoses"][0]
    assert cause["id"] == "import-error" and "No module named 'modeling_custom_moe'" in cause["cause"]
    assert data["victims"]["count"] == 3


def test_missing_output_directory_fails_at_launch(jobs):
    info, path, job_script = jobs["diagnose-launch-failure"]
    assert (info.state, info.exit_code_str) == ("FAILED", "0:53"), info
    assert not path.exists() and not path.parent.exists()
    rc, data = diagnose(str(path), "--job-script", str(job_script))
    assert rc == 0 and data["diagnoses"][0]["id"] == "missing-output-directory"
    assert [d["code"] for d in data["lint"]] == ["SBL010"]


@needs_torch
def test_a_time_limit(jobs):
    info, path, _ = jobs["diagnose-time-limit"]
    assert info.state == "TIMEOUT", info
    rc, data = diagnose(str(path))
    assert rc == 0 and data["first_failure"] is None
    assert data["diagnoses"][0]["id"] == "time-limit"
    assert data["victims"]["count"] == 4

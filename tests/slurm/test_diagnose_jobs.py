"""``sbatchlint diagnose`` on the logs of real failing jobs of the local cluster, and by job id.

Seven small jobs (2 nodes, gloo on the CPU, a 1-minute limit) are submitted together: a rank
raising with ``--kill-on-bad-exit``, one raising before the process group exists without it (the
others hang until the time limit), two torchrun launchers per node on a fixed port (EADDRINUSE),
rank 0 busy "saving artifacts" before a barrier with a short process group timeout, an ImportError
on rank 0 only, a log directory that does not exist (0:53) and a plain time limit. For each, the
command run on the job's output file names the task, the node and the cause.

With them run a job array whose element 1 fails, a het job whose second component's task fails,
and a job cancelled while it runs. ``diagnose --job ID`` (no log given) finds every one of them
through Slurm's accounting (sacct) and the controller: the same task, node and cause as from the
log, and the job's and steps' Slurm states and exit codes. Two more tests take sources away: the
controller (as when it has forgotten the job) and accounting (as on a site without slurmdbd).
The cluster has no cgroups, so it cannot produce OUT_OF_MEMORY; that state is covered by
tests/test_diagnose_job.py.

``SBATCHLINT_SAVE_SLURM_LOGS=1`` keeps the logs under ``tests/data/slurm-logs/`` (``diagnose-*``);
``SBATCHLINT_SAVE_SACCT=1`` keeps each job's sacct answer under ``tests/data/sacct/``.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time

import pytest

import slurm_cluster
from proofs import DEMO, HERE, PY, REPO, save_log, script, wait_all

pytestmark = pytest.mark.slurm
FAILURES = HERE / "demo" / "failures.py"
SACCT_DATA = REPO / "tests" / "data" / "sacct"
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


ARRAY = """
    #!/bin/bash
    #SBATCH --job-name=diagnose-array
    #SBATCH --array=0-2
    #SBATCH --ntasks=1
    #SBATCH --time=1
    srun -l {py} -c 'import os, sys
    shard = int(os.environ["SLURM_ARRAY_TASK_ID"])
    print("tokenizing shard", shard, flush=True)
    if shard == 1:
        raise ValueError(f"shard {{shard}} holds no documents")'
    """

HET = """
    #!/bin/bash
    #SBATCH --job-name=diagnose-het
    #SBATCH --time=1
    #SBATCH --nodes=1 --ntasks=1
    #SBATCH hetjob
    #SBATCH --nodes=1 --ntasks=1
    srun -l --het-group=0,1 {py} -c 'import os
    rank = int(os.environ["SLURM_PROCID"])
    print("component", os.environ.get("SLURM_HET_JOB_ID"), "rank", rank, flush=True)
    if rank == 1:
        raise RuntimeError("the reader component found no input files")'
    """

CANCELLED = """
    #!/bin/bash
    #SBATCH --job-name=diagnose-cancelled
    #SBATCH --ntasks=1
    #SBATCH --time=2
    srun -l sleep 300
    """


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
    others = {name: session.submit(session.script(script(text.format(py=PY)), f"{name}.sbatch"))
              for name, text in (("diagnose-array", ARRAY), ("diagnose-het", HET), ("diagnose-cancelled", CANCELLED))}
    _cancel_when_running(session, others["diagnose-cancelled"])
    infos = dict(zip(ids, wait_all(session, list(ids.values()), timeout=240)))
    for job_id in others.values():
        _wait_accounted(job_id)
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
    out["ids"] = dict(ids, **others)
    _save_sacct(out["ids"])
    yield out
    session.close()


def _sacct_states(job_id) -> list:
    done = subprocess.run(["sacct", "-j", str(job_id), "-X", "-n", "--parsable2", "--format=State"],
                          capture_output=True, text=True, timeout=30)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def _cancel_when_running(session, job_id, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _sacct_states(job_id) == ["RUNNING"]:
            time.sleep(2)  # the step has started
            session.cancel(job_id)
            return
        time.sleep(0.5)
    session.cancel(job_id)


def _wait_accounted(job_id, timeout=240):
    """Until sacct holds every part of the job (array elements, het components) in a final state."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = _sacct_states(job_id)
        if states and all(state in slurm_cluster.FINAL_STATES for state in states):
            return
        time.sleep(1)
    raise AssertionError(f"job {job_id}: {_sacct_states(job_id)} after {timeout} s")


def _save_sacct(ids) -> None:
    """With SBATCHLINT_SAVE_SACCT=1: keep what sacct answers for each job, as unit-test data."""
    if os.environ.get("SBATCHLINT_SAVE_SACCT") != "1":
        return
    from sbatchlint.diagnose.slurm import sacct_command

    SACCT_DATA.mkdir(parents=True, exist_ok=True)
    for name, job_id in ids.items():
        asked = {"diagnose-array": f"{job_id}_1"}.get(name, str(job_id))
        text = subprocess.run(sacct_command(asked), capture_output=True, text=True, timeout=30).stdout
        text = re.sub(r"/tmp/pytest-of-[^/|]+/pytest-[0-9]+/[^/|]+", "/home/user/run", text)
        for prefix in {sys.prefix, sys.base_prefix}:
            text = text.replace(prefix, "/opt/venv")
        text = text.replace(str(REPO), "/home/user/sbatchlint")
        (SACCT_DATA / f"{name}.txt").write_text(f"# {' '.join(sacct_command(asked))}\n{text}")


def by_id(job_id, *args):
    """``diagnose --job ID`` and nothing else: the tool finds the job, its logs and its script."""
    return diagnose("--job", str(job_id), *args)


def steps(data):
    return {s["id"].split(".", 1)[1]: (s["state"], s["exit_code"]) for s in data["job"]["steps"]}


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


# ------------------------------------------------------------------------------ by job id alone


@needs_torch
def test_by_id_a_rank_raising(jobs):
    rc, data = by_id(jobs["ids"]["diagnose-raise"])
    assert rc == 0 and first(data) == (1, "n1") and data["diagnoses"][0]["id"] == "python-exception"
    assert data["job"]["source"] == "sacct" and data["job"]["state"] == "FAILED"
    # srun -K ends the step at once: Slurm records it as failed or cancelled, as the race goes
    assert steps(data)["0"][0] in ("FAILED", "CANCELLED")
    assert data["job"]["nodes"] == "n[1-2]" and data["logs"][0]["exists"]


@needs_torch
def test_by_id_a_hang_until_the_time_limit_with_its_script_kept_by_slurm(jobs):
    rc, data = by_id(jobs["ids"]["diagnose-hang"])
    assert rc == 0 and first(data) == (1, "n1")
    assert [d["id"] for d in data["diagnoses"]] == ["python-exception", "hang-until-time-limit"]
    assert data["job"]["state"] == "TIMEOUT"
    assert steps(data)["0"] == ("FAILED", "1:0")  # task 1's exit, recorded when the step ended
    # the batch script came from Slurm, and its finding explains the hang
    assert [d["code"] for d in data["lint"]] == ["SBL107"]
    assert data["lint"][0]["path"].startswith(f"job {jobs['ids']['diagnose-hang']} batch script (")


@needs_torch
def test_by_id_a_plain_time_limit(jobs):
    rc, data = by_id(jobs["ids"]["diagnose-time-limit"])
    assert rc == 0 and data["diagnoses"][0]["id"] == "time-limit"
    assert data["job"]["state"] == "TIMEOUT" and data["job"]["exit_code"] == "0:0"


@needs_torch
def test_by_id_eaddrinuse_and_import_error(jobs):
    rc, data = by_id(jobs["ids"]["diagnose-eaddrinuse"])
    assert rc == 0 and data["diagnoses"][0]["id"] == "address-in-use" and data["job"]["state"] == "FAILED"
    rc, data = by_id(jobs["ids"]["diagnose-import-rank0"])
    assert rc == 0 and first(data) == (0, "n1") and data["diagnoses"][0]["id"] == "import-error"


def test_by_id_missing_output_directory(jobs):
    job_id = jobs["ids"]["diagnose-launch-failure"]
    rc, data = by_id(job_id)
    assert rc == 0 and data["diagnoses"][0]["id"] == "missing-output-directory"
    assert (data["job"]["state"], data["job"]["exit_code"]) == ("FAILED", "0:53")
    assert data["logs"] == [{"path": data["job"]["std_out"], "lines": 0, "bytes": 0, "exists": False}]
    assert data["job"]["std_out"].endswith(f"/logs/launch-failure_{job_id}.out")
    assert [d["code"] for d in data["lint"]] == ["SBL010"]


def test_by_id_an_array_element(jobs):
    array = jobs["ids"]["diagnose-array"]
    rc, data = by_id(f"{array}_1")
    assert rc == 0 and data["diagnoses"][0]["id"] == "python-exception"
    assert data["first_failure"]["task"] == 0
    assert "ValueError: shard 1 holds no documents" in data["verdict"]
    assert (data["job"]["id"], data["job"]["state"], data["job"]["exit_code"]) == (f"{array}_1", "FAILED", "1:0")
    assert steps(data)["0"] == ("FAILED", "1:0")
    assert data["logs"][0]["path"].endswith(f"/slurm-{array}_1.out")
    # the other elements completed
    rc, data = by_id(f"{array}_2")
    assert rc == 1 and data["job"]["state"] == "COMPLETED"


def test_by_id_a_het_job(jobs):
    het = jobs["ids"]["diagnose-het"]
    rc, data = by_id(het)
    assert rc == 0 and data["diagnoses"][0]["id"] == "python-exception"
    assert "RuntimeError: the reader component found no input files" in data["verdict"]
    # srun counts "task N" per component, its -l labels across them: task 1 is component 1's task 0
    second = next(c for c in data["job"]["components"] if c["id"] == f"{het}+1")
    assert first(data) == (1, second["nodes"])
    assert [(e["code"], e["tasks"]) for e in data["exit_codes"]] == [("1", "task 1")]
    components = {c["id"]: c["state"] for c in data["job"]["components"]}
    assert set(components) == {f"{het}+0", f"{het}+1"} and "FAILED" in components.values()
    assert data["job"]["state"] == "FAILED"


def test_by_id_a_cancelled_job(jobs):
    rc, data = by_id(jobs["ids"]["diagnose-cancelled"])
    assert rc == 0 and data["diagnoses"][0]["id"] == "cancelled"
    assert data["job"]["state"].startswith("CANCELLED")


def test_by_id_after_the_controller_forgot_the_job(jobs):
    """Only sacct knows the job (as 2 minutes after it ends): the log is found from the stored
    batch script and the submission line, where the controller had put it."""
    from sbatchlint.diagnose import slurm

    def forgetful(argv):
        if argv[0] == "scontrol":
            return 1, "", "slurm_load_jobs error: Invalid job id specified"
        return slurm.run(argv)

    _, launch_log, launch_script = jobs["diagnose-launch-failure"]
    array = jobs["ids"]["diagnose-array"]
    for job_id, log, job_script in (
            (jobs["ids"]["diagnose-launch-failure"], launch_log, launch_script),
            (f"{array}_1", launch_script.parent / f"slurm-{array}_1.out", launch_script.parent / "diagnose-array.sbatch")):
        alone = slurm.look_up(str(job_id), runner=forgetful)
        assert alone.record.source == "sacct" and alone.script_from == "sacct --batch-script"
        assert alone.logs == [str(log)] and alone.script == job_script.read_bytes()


def test_by_id_bad_input(jobs):
    done = subprocess.run([PY, "-m", "sbatchlint", "diagnose", "--job", "12x"], capture_output=True, text=True,
                          cwd=str(REPO))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a job id" in done.stderr
    done = subprocess.run([PY, "-m", "sbatchlint", "diagnose", "--job", "999999999"], capture_output=True,
                          text=True, cwd=str(REPO))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--log FILE" in done.stderr


def test_by_id_without_accounting_the_controller_is_the_source(slurm, monkeypatch):
    """Where sacct has nothing (a site without slurmdbd), the controller's record, while it
    still knows the job, gives the state, the log and the script, and the output says so."""
    from click.testing import CliRunner

    from sbatchlint.cli import main
    from sbatchlint.diagnose import slurm as sources

    job = slurm.script(script(f"""
        #!/bin/bash
        #SBATCH --job-name=no-accounting
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=1
        #SBATCH --time=1
        #SBATCH --output=%x-%j.log
        srun -l {PY} -c 'import os
        if os.environ["SLURM_PROCID"] == "1":
            raise KeyError("tokenizer_config")'
        """), "no-accounting.sbatch")
    info, _ = slurm.run(job, timeout=200)
    assert info.state == "FAILED", info
    real = sources.run

    def no_accounting(argv):
        if argv[0] == "sacct":
            return 1, "", "sacct: error: Slurm accounting storage is disabled"
        return real(argv)

    monkeypatch.setattr(sources, "run", no_accounting)
    result = CliRunner().invoke(main, ["diagnose", "--job", str(info.job_id), "--output-format", "json"])
    data = json.loads(result.output)
    assert result.exit_code == 0, result.output
    assert data["job"]["source"] == "scontrol" and data["job"]["state"] == "FAILED"
    assert data["job"]["std_out"] == str(slurm.workdir / f"no-accounting-{info.job_id}.log")
    assert first(data) == (1, "n2") and "KeyError: 'tokenizer_config'" in data["verdict"]
    assert "sacct gave no answer (sacct: error: Slurm accounting storage is disabled)" in data["notes"]

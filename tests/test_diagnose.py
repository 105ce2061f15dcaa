"""``sbatchlint diagnose``: the verdict a user reads for real job logs and for fixtures in the
shapes real logs have, the exit codes, the JSON schema, masking, and reading in chunks."""
from __future__ import annotations

import gzip
import io
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sbatchlint.cli import main
from sbatchlint.diagnose import catalog, diagnose
from sbatchlint.diagnose.events import Collector
from sbatchlint.diagnose.reader import scan

DATA = Path(__file__).resolve().parent / "data"
LOGS = DATA / "slurm-logs"
FIXTURES = DATA / "diagnose"
SCHEMA = Path(__file__).resolve().parents[1] / "sbatchlint" / "diagnose" / "schema.json"


def run(*args, input=None):
    return CliRunner().invoke(main, ["diagnose", *args], input=input, catch_exceptions=False)


def verdict(path, **kw):
    return diagnose([str(path)], **kw).verdict


def ids(v):
    return [f.id for f in v.findings]


# -- every diagnosis's documented example is diagnosed as itself ------------------------------
@pytest.mark.parametrize("kind", [k for k in catalog.KINDS if k.example], ids=lambda k: k.id)
def test_each_example_gives_its_own_diagnosis(kind, tmp_path):
    log = tmp_path / "job.log"
    log.write_text(kind.example)
    v = verdict(log)
    assert kind.id in ids(v), (ids(v), v.text)
    # no known cause (exit code 1) when all the log tells is that a task failed
    assert v.found == (kind.id not in ("task-failed", "traceback-cut-off"))


def test_every_diagnosis_has_a_fix_and_existing_rules():
    from sbatchlint import registry

    for kind in catalog.KINDS:
        assert kind.fix and kind.meaning and kind.title, kind.id
        for code in kind.rules:
            registry.get(code)
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", kind.id)


# -- the logs of real jobs on the local cluster ----------------------------------------------------
# name -> (first failing task, its node, diagnosis ids in order, victims)
REAL = {
    "sbl101-eaddrinuse": (0, "n1", ["address-in-use"], 3),
    "sbl201-node-rank-0": (1, "n2", ["address-in-use"], 1),
    "sbl107-kill-on-bad-exit": (1, "n2", ["python-exception"], 1),
    "sbl107-timeout": (1, "n2", ["python-exception", "hang-until-time-limit"], 1),
    "diagnose-raise": (1, "n1", ["python-exception"], 3),
    "diagnose-hang": (1, "n1", ["python-exception", "hang-until-time-limit"], 3),
    "diagnose-eaddrinuse": (1, "n1", ["address-in-use"], 3),
    "diagnose-busy-barrier": (1, "n1", ["rank0-unreachable"], 3),
    "diagnose-import-rank0": (0, "n1", ["import-error"], 3),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_failures_name_the_task_node_and_cause(name):
    task, node, expected, stopped = REAL[name]
    v = verdict(LOGS / f"{name}.out")
    assert (v.first.task, v.first.host) == (task, node)
    assert ids(v) == expected
    assert len(v.victims) == stopped
    assert v.text.startswith(f"task {task} on {node} failed first: ")


def test_real_timeout_log_points_at_kill_on_bad_exit():
    result = run(str(LOGS / "sbl107-timeout.out"))
    assert result.exit_code == 0
    assert "RuntimeError: rank 1: simulated failure during setup (in <module>, crash.py:9)" in result.output
    assert "rule: SBL107 missing-kill-on-bad-exit" in result.output
    assert re.search(r"sbl107-timeout\.out:8 +slurmstepd-n1: error: \*\*\* STEP \d+\.0 ON n1 CANCELLED AT \S+ DUE TO TIME LIMIT", result.output)


def test_real_time_limit_without_a_failure():
    v = verdict(LOGS / "diagnose-time-limit.out")
    assert v.first is None and ids(v) == ["time-limit"] and len(v.victims) == 4


def test_real_busy_rank0_is_shown_with_its_last_line():
    (cause,) = verdict(LOGS / "diagnose-busy-barrier.out").findings
    assert "INFO saving tokenizer and config to the checkpoint directory" in cause.extra[0]
    assert "SBL502" in cause.extra[1]


def test_duplicate_worlds_of_a_completed_job():
    v = verdict(LOGS / "sbl101-duplicate-worlds.out")
    assert ids(v) == ["duplicate-world"] and v.found
    (line, count), = v.findings[0].evidence
    assert line.text == "RESULT rank=0 world=2 local=0 sum=1" and count == 2


def test_a_job_that_worked_has_no_known_cause():
    result = run(str(LOGS / "sbl101-fixed.out"))
    assert result.exit_code == 1
    assert result.output.startswith("no known cause: no failure found in the log")


# -- fixtures for what the local cluster cannot produce --------------------------------------------
def test_moe_out_of_memory_under_torchrun_with_pdsh_prefixes():
    v = verdict(FIXTURES / "moe-oom-torchrun.log")
    assert ids(v) == ["moe-expert-memory"]
    assert (v.first.rank, v.first.host, v.first.task) == (9, "gpu-a02", 1)
    assert "128 experts / EP 4 = 32 experts per GPU, each split 2 ways by ETP (unset: Megatron uses TP)" in v.findings[0].extra[0]
    # the victims: rank 8 (SIGTERM in torchrun's summary), rank 0 (a watchdog timeout), task 0 (srun)
    assert sorted((u.key[0], u.key[1]) for u in v.victims) == [("rank", 0), ("rank", 8), ("task", 0)]
    # transformer_engine's warning is noise: it is no evidence
    assert all("UserWarning" not in line.text for f in v.findings for line, _ in f.evidence)


def test_nccl_network_error_names_the_rank_and_the_ib_completion():
    v = verdict(FIXTURES / "nccl-network.log")
    assert ids(v) == ["nccl-network-error"]
    assert (v.first.task, v.first.host) == (8, "ib-h17")
    texts = [line.body for line, _ in v.findings[0].evidence]
    assert any(t.startswith("NET/IB : Got completion from peer") for t in texts)
    assert len(v.victims) == 15  # the watchdog timeout on rank 0 came after, and is a victim's


def test_cuda_oom_with_crlf_line_ends():
    v = verdict(FIXTURES / "cuda-oom-crlf.log")
    assert ids(v) == ["cuda-out-of-memory"] and (v.first.task, v.first.host) == (1, "a100-2")
    assert not any("\r" in line.text for line, _ in v.findings[0].evidence)


def test_first_failure_by_time_stamps_not_by_line_order(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "3: [2026-01-05 10:00:09,000] [rank3] step 10\n"
        "3: [rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "5: [2026-01-05 10:00:02,000] [rank5] step 10\n"
        "5: [rank5]: ValueError: bad batch\n"
        "srun: error: h1: task 3: Exited with exit code 1\n"
        "srun: error: h2: task 5: Exited with exit code 1\n")
    v = verdict(log)
    assert v.first.task == 5 and v.ordered_by == "time stamps" and v.tie == []
    data = json.loads(run(str(log), "--output-format", "json").output)
    assert data["first_failure"]["time"] == "2026-01-05 10:00:02.000"


def test_failures_within_two_seconds_are_a_tie_and_a_specific_cause_wins(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "0: [2026-01-05 10:00:01,000] [rank0] saving\n"
        "0: [rank0]: RuntimeError: something generic\n"
        "7: [2026-01-05 10:00:02,500] [rank7] forward\n"
        "7: [rank7]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n"
        "srun: error: h1: task 0: Exited with exit code 1\n"
        "srun: error: h2: task 7: Exited with exit code 1\n")
    v = verdict(log)
    assert v.first.task == 7 and [u.task for u in v.tie] == [0]
    assert "a tie by the clocks" in v.text and ids(v)[0] == "cuda-out-of-memory"


def test_two_ranks_in_one_line_and_task_ranges(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "[rank2]: Traceback (most recent call last):[rank3]: Traceback (most recent call last):\n"
        "[rank2]: KeyError: 'labels'\n"
        "srun: error: n7: tasks 0-1,3: Terminated\n"
        "srun: error: n8: task 2: Exited with exit code 1\n")
    v = verdict(log)
    assert (v.first.task, v.first.host) == (2, "n8")
    assert sorted(u.task for u in v.victims) == [0, 1, 3]


def test_a_traceback_cut_off_at_the_end_still_names_the_task(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "srun: error: n2: task 1: Exited with exit code 1\n"
        "1: Traceback (most recent call last):\n"
        '1:   File "/home/u/train.py", line 3, in <module>\n')
    v = verdict(log)
    assert v.first.task == 1 and "traceback-cut-off" in ids(v)


def test_binary_bytes_and_progress_bars(tmp_path):
    log = tmp_path / "job.log"
    log.write_bytes(b"\x00\xff\xfe garbage\n 10%|#  | 1/10 [00:01<00:09]\r 20%|## | 2/10\r\n"
                    b"0: [rank0]: ValueError: bad \xff value\n"
                    b"srun: error: n1: task 0: Exited with exit code 1\n")
    v = verdict(log)
    assert ids(v) == ["python-exception"] and "bad \ufffd value" in v.text


# -- reading: chunks, gzip, stdin, two files -------------------------------------------------------
def test_results_do_not_depend_on_where_chunks_end():
    data = (FIXTURES / "moe-oom-torchrun.log").read_bytes()

    def events(chunk):
        c = Collector()
        scan(io.BytesIO(data), c, chunk=chunk)
        return [(e.kind, e.line.number, e.line.text) for e in c.events], [b.fields for b in c.blocks]

    assert events(37) == events(1 << 20)


def test_gzip_and_stdin(tmp_path):
    raw = (LOGS / "sbl107-kill-on-bad-exit.out").read_bytes()
    packed = tmp_path / "job.log.gz"
    packed.write_bytes(gzip.compress(raw))
    for args, stdin in (([str(packed)], None), (["-"], raw)):
        result = CliRunner().invoke(main, ["diagnose", *args], input=stdin)
        assert result.exit_code == 0, result.output
        assert result.output.startswith("task 1 on n2 failed first: RuntimeError: rank 1: simulated failure")


def test_output_and_error_in_two_files(tmp_path):
    out, err = tmp_path / "job.out", tmp_path / "job.err"
    out.write_text("[2026-01-05 10:00:01,000] [rank0] step 1\n")
    err.write_text("1: [rank1]: ImportError: cannot import name 'FlashAttention'\n"
                   "srun: error: g2: task 1: Exited with exit code 1\nsrun: error: g1: task 0: Terminated\n")
    result = run(str(out), str(err), "--output-format", "json")
    data = json.loads(result.output)
    assert data["first_failure"]["task"] == 1 and data["diagnoses"][0]["id"] == "import-error"
    assert data["diagnoses"][0]["evidence"][0]["log"] == str(err)


# -- the command line ------------------------------------------------------------------------------
def test_bad_input_is_one_line_and_exit_2(tmp_path):
    for args in ([str(tmp_path / "nope.log")], [str(tmp_path)], []):
        result = CliRunner().invoke(main, ["diagnose", *args])
        assert result.exit_code == 2
        assert "Traceback" not in result.output


def test_a_missing_log_directory_is_the_launch_failure(tmp_path):
    result = run(str(tmp_path / "logs" / "train_4242.out"))
    assert result.exit_code == 0
    assert "logs/ does not exist" in result.output and "0:53" in result.output
    assert "rule: SBL010 output-directory-created-in-job" in result.output


def test_json_follows_the_documented_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    for path in [*sorted(LOGS.glob("*.out")), *sorted(FIXTURES.glob("*.log")), tmp_path / "logs" / "x.out"]:
        result = run(str(path), "--output-format", "json")
        data = json.loads(result.output)
        jsonschema.validate(data, schema)
        assert result.exit_code == (0 if data["cause_found"] else 1)


def test_secrets_in_an_environment_dump_are_masked(tmp_path):
    token = "hf_" + "Q7x" * 12
    wandb = "9f2c" * 10
    log = tmp_path / "job.log"
    log.write_text(
        f"0: HF_TOKEN={token}\n"
        f"0: [rank0]: RuntimeError: login failed with WANDB_API_KEY={wandb} and token {token}\n"
        "srun: error: n1: task 0: Exited with exit code 1\n")
    for fmt in ("text", "json"):
        result = run(str(log), "--output-format", fmt)
        assert token not in result.output and wandb not in result.output
        assert "WANDB_API_KEY=9f2…" in result.output


def test_job_script_findings_that_explain_the_failure():
    result = run(str(LOGS / "sbl107-timeout.out"), "--job-script", str(LOGS / "sbl107-timeout.sbatch"))
    assert result.exit_code == 0
    assert re.search(r"sbl107-timeout\.sbatch:8:1: SBL107 ", result.output)


def test_diagnose_is_not_imported_by_check():
    import subprocess
    import sys

    code = ("import sys; from sbatchlint import cli; "
            "print(any(m.startswith('sbatchlint.diagnose') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    assert out.stdout.strip() == "False"


# -- generated pages -------------------------------------------------------------------------------
def test_diagnosis_pages_are_current(root):
    from sbatchlint.diagnose import docs

    directory = os.path.join(root, "diagnoses")
    wanted = docs.pages()
    assert sorted(n for n in os.listdir(directory) if n.endswith(".md")) == sorted(wanted), \
        "diagnoses/ is stale: run `python -m sbatchlint.diagnose.docs`"
    for name, text in wanted.items():
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            assert handle.read() == text, f"diagnoses/{name} is stale: run `python -m sbatchlint.diagnose.docs`"
    for kind in catalog.KINDS:
        if kind.example:
            assert "## Example log" in wanted[f"{kind.id}.md"] and f"{kind.id}: " in wanted[f"{kind.id}.md"]


def test_what_tasks_print_after_the_time_limit_is_no_cause(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "0: [2026-01-05 10:00:01,000] [rank0] iteration 40\n"
        "slurmstepd: error: *** JOB 77 ON g1 CANCELLED AT 2026-01-05T10:00:05 DUE TO TIME LIMIT ***\n"
        "1: [rank1]: RuntimeError: Connection closed by peer [10.0.0.2]:1234\n"
        "srun: error: g1: task 0: Terminated\n"
        "srun: error: g2: task 1: Exited with exit code 1\n")
    v = verdict(log)
    assert v.first is None and ids(v) == ["time-limit"]


def test_two_root_cause_blocks_in_a_same_second_tie(tmp_path):
    """Each torchrun agent prints its own Root Cause; rank 0 being one of them is no evidence."""
    def summary(host, rank, code, pid):
        return "".join(f"{host}: {line}\n" for line in [
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
            "============================================================",
            "train.py FAILED", "------------------------------------------------------------",
            "Failures:", "  <NO_OTHER_FAILURES>", "------------------------------------------------------------",
            "Root Cause (first observed failure):", "[0]:", "  time      : 2026-03-03_04:05:06",
            f"  host      : {host}", f"  rank      : {rank} (local_rank: {rank % 8})", f"  exitcode  : {code} (pid: {pid})",
            "  error_file: <N/A>", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
            "============================================================"])

    log = tmp_path / "job.log"
    log.write_text(
        "dgx1: [default0]:[rank0]: RuntimeError: NCCL communicator was aborted on rank 0.\n"
        "dgx2: [default1]:[rank9]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.\n"
        + summary("dgx1", 0, 1, 1001) + summary("dgx2", 9, 1, 2002)
        + "srun: error: dgx1: task 0: Exited with exit code 1\nsrun: error: dgx2: task 1: Exited with exit code 1\n")
    v = verdict(log)
    assert (v.first.rank, v.first.host, v.first.task) == (9, "dgx2", 1)
    assert [u.rank for u in v.tie] == [0] and v.ordered_by == "time stamps"
    assert ids(v)[0] == "cuda-out-of-memory"


@pytest.mark.parametrize("prefix, rank, host", [
    ("[gpu-07:3]: [rank11]: ", 11, "gpu-07"),
    ("trainer/0 [default1]:[rank1]: ", 1, None),
    ("node-12: [rank5]: ", 5, "node-12"),
])
def test_prefix_shapes(tmp_path, prefix, rank, host):
    log = tmp_path / "job.log"
    log.write_text(f"{prefix}AssertionError: shapes differ\n")
    v = verdict(log)
    assert v.first.rank == rank and v.first.host == host
    assert ids(v) == ["python-exception"]


@pytest.mark.parametrize("record, expected", [
    (dict(state="TIMEOUT", exit_code="0:15"), "time-limit"),
    (dict(state="FAILED", exit_code="0:53", reason="JobLaunchFailure"), "missing-output-directory"),
    (dict(state="OUT_OF_MEMORY", exit_code="0:125"), "host-out-of-memory"),
    (dict(state="NODE_FAIL", exit_code="0:0"), "node-failure"),
])
def test_slurm_accounting_adds_what_the_log_does_not_say(tmp_path, record, expected):
    """diagnose --job (reading a job by its id) hands the job's state and exit code in."""
    from sbatchlint.diagnose.job import JobRecord

    log = tmp_path / "job.log"
    log.write_text("[2026-01-05 10:00:01,000] [rank0] iteration 40\n")
    assert not verdict(log).found
    v = verdict(log, job=JobRecord(job_id="77", source="sacct", **record))
    assert ids(v) == [expected] and v.found


def test_job_script_secrets_stay_hidden_and_a_bad_script_is_bad_input(tmp_path):
    secret = "wb" + "7Kq2" * 9
    job = tmp_path / "job.sbatch"
    job.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
                   f"export WANDB_API_KEY={secret}\nsrun python train.py\n")
    log = tmp_path / "job.log"
    log.write_text(f"1: RuntimeError: wandb rejected key {secret}\nsrun: error: n2: task 1: Exited with exit code 1\n")
    result = run(str(log), "--job-script", str(job), "--output-format", "json")
    assert secret not in result.output and "wb7…" in result.output
    bad = run(str(log), "--job-script", str(tmp_path / "missing.sbatch"))
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_the_victims_repeated_lines_are_shown_once_with_a_count(tmp_path):
    log = tmp_path / "job.log"
    lines = ["5: [rank5]: ZeroDivisionError: division by zero"]
    lines += [f"{t}: [rank{t}]: RuntimeError: Connection closed by peer [10.0.0.{t}]:{4000 + t}" for t in range(8) if t != 5]
    lines += ["srun: error: h1: task 5: Exited with exit code 1", "slurmstepd: error: *** STEP 9.0 ON h1 CANCELLED AT 2026-01-01T00:00:00 ***",
              "srun: error: h1: tasks 0-4,6-7: Terminated"]
    log.write_text("\n".join(lines) + "\n")
    result = run(str(log))
    assert result.output.startswith("task 5 on h1 failed first: ZeroDivisionError: division by zero; 7 other tasks")
    assert "stopped after it: tasks 0-4,6-7" in result.output
    assert re.search(r"job\.log:2 +0: \[rank0\]: RuntimeError: Connection closed by peer .*\(×7, the same from other tasks\)", result.output)

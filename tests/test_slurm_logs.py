"""The job logs kept under tests/data/slurm-logs/ (written by tests/slurm/test_rule_proofs.py and
tests/slurm/test_diagnose_jobs.py on the local cluster) still hold what tells each failure apart, say nothing about the machine they ran on,
and their scripts are what sbatchlint reports (or passes)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lintutil import codes

LOGS = Path(__file__).resolve().parent / "data" / "slurm-logs"

# name -> (codes sbatchlint reports for the script, outcome, lines the log must hold)
EXPECTED = {
    "sbl101-eaddrinuse": (
        ["SBL101"],
        ("FAILED", "1:0"),
        [
            r"torch\.distributed\.DistNetworkError: .*EADDRINUSE.*address already in use",
            r"static_tcp_rendezvous\.py",
            r"^srun: error: n\d: tasks? [\d-]+: Exited with exit code 1$",
            r"^slurmstepd-n1: error: \*\*\* STEP \d+\.0 ON n1 CANCELLED AT \S+ \*\*\*$",
        ],
    ),
    "sbl101-fixed": (
        [],
        ("COMPLETED", "0:0"),
        [r"^RESULT rank=0 world=4 local=0 sum=6$", r"^RESULT rank=3 world=4 local=1 sum=6$"],
    ),
    "sbl101-duplicate-worlds": (
        ["SBL101"],
        ("COMPLETED", "0:0"),
        [r"^RESULT rank=0 world=2 local=0 sum=1$(.|\n)*^RESULT rank=0 world=2 local=0 sum=1$"],
    ),
    "sbl201-node-rank-0": (
        ["SBL201", "SBL201"],
        ("FAILED", "143:0"),
        [
            r"^NODE host=n1 node_rank=0$",
            r"^NODE host=n2 node_rank=0$",
            r"EADDRINUSE",
            r"^srun: error: n2: task 1: Exited with exit code 1$",
        ],
    ),
    "sbl107-timeout": (
        ["SBL107"],
        ("TIMEOUT", "0:15"),
        [
            r"^RuntimeError: rank 1: simulated failure during setup$",
            r"^srun: error: n2: task 1: Exited with exit code 1$",
            r"^WAIT rank=0 host=n1$",
            r"^slurmstepd-n1: error: \*\*\* JOB \d+ ON n1 CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*$",
        ],
    ),
    "sbl107-kill-on-bad-exit": (
        [],
        ("FAILED", "143:0"),
        [
            r"^RuntimeError: rank 1: simulated failure during setup$",
            r"^srun: error: n2: task 1: Exited with exit code 1$",
            r"^slurmstepd-n1: error: \*\*\* STEP \d+\.0 ON n1 CANCELLED AT \S+ \*\*\*$",
            r"^srun: error: n1: task 0: Terminated$",
        ],
    ),
    # written by tests/slurm/test_diagnose_jobs.py
    "diagnose-raise": (
        [],
        ("FAILED", "143:0"),
        [r"^1: \[rank1\]: ValueError: loss is NaN at step 3$", r"^srun: error: n1: task 1: Exited with exit code 1$",
         r"^srun: error: n2: tasks 2-3: Terminated$"],
    ),
    "diagnose-hang": (
        ["SBL107"],
        ("TIMEOUT", "0:15"),
        [r"^1: RuntimeError: rank 1: dataset shard 7 is missing$", r"^srun: error: n1: task 1: Exited with exit code 1$",
         r"^slurmstepd-n1: error: \*\*\* JOB \d+ ON n1 CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*$"],
    ),
    "diagnose-eaddrinuse": (
        ["SBL101", "SBL108"],
        ("FAILED", "1:0"),
        [r"^\d: torch\.distributed\.DistNetworkError: .*EADDRINUSE", r"^srun: error: n\d: tasks? [\d-]+: Exited with exit code 1$"],
    ),
    "diagnose-busy-barrier": (
        [],
        ("FAILED", "143:0"),
        [r"\[rank0\] INFO saving tokenizer and config", r"^\[rank\d\]: RuntimeError: .*Timed out waiting 10000ms",
         r"^srun: error: n\d: tasks? [\d-]+: Exited with exit code 1$"],
    ),
    "diagnose-import-rank0": (
        [],
        ("FAILED", "143:0"),
        [r"^0: \[rank0\]: ModuleNotFoundError: No module named 'modeling_custom_moe'$",
         r"^srun: error: n1: task 0: Exited with exit code 1$"],
    ),
    "diagnose-time-limit": (
        [],
        ("TIMEOUT", "0:15"),
        [r"INFO step \d+ \| loss", r"^slurmstepd-n1: error: \*\*\* JOB \d+ ON n1 CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*$"],
    ),
}


def test_every_kept_log_is_described():
    assert sorted(p.stem for p in LOGS.glob("*.out")) == sorted(EXPECTED)
    for name in EXPECTED:
        assert (LOGS / f"{name}.sbatch").is_file() and (LOGS / f"{name}.json").is_file()
        assert f"`{name}`" in (LOGS / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_log_holds_the_key_lines(name):
    _, (state, exit_code), patterns = EXPECTED[name]
    log = (LOGS / f"{name}.out").read_text()
    for pattern in patterns:
        assert re.search(pattern, log, re.M), pattern
    outcome = json.loads((LOGS / f"{name}.json").read_text())
    assert (outcome["state"], outcome["exit_code"]) == (state, exit_code)
    assert outcome["nodes"] == "n[1-2]" or outcome["nodes"] in ("n1", "n2")


def test_timeout_and_kill_on_bad_exit_differ_in_duration():
    timeout = json.loads((LOGS / "sbl107-timeout.json").read_text())
    killed = json.loads((LOGS / "sbl107-kill-on-bad-exit.json").read_text())
    assert timeout["elapsed_seconds"] >= 60 > 30 >= killed["elapsed_seconds"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_script_is_what_sbatchlint_reports(name):
    expected_codes, _, _ = EXPECTED[name]
    assert sorted(codes((LOGS / f"{name}.sbatch").read_text())) == expected_codes


@pytest.mark.parametrize("path", sorted(p.name for p in LOGS.iterdir()), ids=str)
def test_nothing_machine_specific(path):
    text = (LOGS / path).read_text()
    for marker in ("/root", "/tmp/", "/work/", "pytest-of", ".pyenv", "localhost", "127.0.0.1"):
        assert marker not in text, marker
    if path.endswith(".out"):
        hosts = set(re.findall(r"\bhost=(\S+)", text)) | set(re.findall(r"\bON (\S+) CANCELLED", text))
        assert hosts <= {"n1", "n2"}

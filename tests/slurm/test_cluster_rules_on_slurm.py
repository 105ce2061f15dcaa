"""`sbatchlint profile` on the real test cluster, and the cluster rules proved against its sbatch.

The cluster (tests/slurm/start-cluster.sh): Slurm 22.05 with accounting (slurmdbd, associations
enforced); partitions `batch` (default), `interactive` and `short` (MaxTime 30 minutes) over the
nodes n1 and n2 of 16 CPUs, 2000000 MB and 8 GPUs each, and `cpu` over n3 (16 CPUs, no GPU); the
pyxis stand-in loaded; root associated with the accounts `sbatchlint`, `llm_research` and `root`
everywhere and with `teaching` on `cpu` only. Every script below goes through
`sbatch --test-only`: each one sbatch refuses gets the rule's finding, each one it accepts gets
no finding from any cluster rule. What this cluster cannot refuse (a missing plugin) is checked
by the rules' examples and tests/test_cluster_profile.py on recorded outputs.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sbatchlint.config import load_profile
from sbatchlint.linter import Options, Selection, lint
from sbatchlint.source import Source

pytestmark = pytest.mark.slurm

REPO = Path(__file__).resolve().parents[2]
CLUSTER_RULES = ["SBL014", "SBL017", "SBL018", "SBL019", "SBL020", "SBL021", "SBL022"]


def run_sbatchlint(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "sbatchlint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def profile(slurm, tmp_path):
    done = run_sbatchlint(["profile"], tmp_path)
    assert done.returncode == 0, done.stderr
    return load_profile(str(tmp_path / ".sbatchlint-cluster.toml"))


def test_profile_reads_the_test_cluster(profile, tmp_path):
    assert profile.cluster == "sbatchlint"
    assert profile.slurm_version.startswith("22.05.")
    assert [(p.name, p.default) for p in profile.partitions] == [
        ("batch", True), ("interactive", False), ("short", False), ("cpu", False)]
    shape = {p.name: (p.nodes, p.cpus_per_node, p.memory_per_node, p.gpus_per_node, p.gres, p.max_time)
             for p in profile.partitions}
    for name in ("batch", "interactive"):
        assert shape[name] == (2, 16, 2000000, 8, ("gpu:8",), "UNLIMITED")
    assert shape["short"] == (2, 16, 2000000, 8, ("gpu:8",), "00:30:00")
    assert shape["cpu"] == (1, 16, 2000000, 0, (), "UNLIMITED")
    assert profile.pyxis is True
    for option in ("container-image=", "container-mounts=", "container-workdir=", "no-container-mount-home",
                   "container-env="):
        assert option in profile.plugin_options
    # the user's own associations, from slurmdbd; nothing left unread
    assert sorted(profile.associations) == [
        ("llm_research", ""), ("root", ""), ("sbatchlint", ""), ("teaching", "cpu")]
    assert profile.not_read == ()
    text = (tmp_path / ".sbatchlint-cluster.toml").read_text()
    user = os.environ.get("USER") or "root"
    # the user's name is not kept: where it shows, it is the account Slurm gives root of its own
    assert [line for line in text.splitlines() if f'"{user}"' in line] in ([], ['account = "root"'])
    assert "user" not in [line.split("=")[0].strip() for line in text.splitlines()]


def cluster_findings(text: str, profile):
    options = Options(Selection(select=CLUSTER_RULES), {"cluster": profile})
    return lint(Source(text.encode(), "job.sh"), options)


def job(*directives: str) -> str:
    return "#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in directives) + "srun hostname\n"


REFUSED = [
    pytest.param(job("--partition=bach"), "SBL017", "Invalid partition name", id="partition-typo"),
    pytest.param(job("--partition=batch,gpu"), "SBL017", "Invalid partition name", id="partition-list"),
    pytest.param(job("--nodes=3"), "SBL019", "Node count specification invalid", id="nodes"),
    pytest.param(job("--nodes=2", "--gpus-per-node=9"), "SBL019", "Requested node configuration", id="gpus-per-node"),
    pytest.param(job("--gres=gpu:9"), "SBL019", "Requested node configuration", id="gres-gpu"),
    pytest.param(job("--nodes=2", "--gpus=18"), "SBL019", "Requested node configuration", id="gpus-total"),
    pytest.param(job("--gpus=17"), "SBL019", "Requested node configuration", id="gpus-over-all"),
    pytest.param(job("--nodes=1", "--gpus=9"), "SBL019", "Requested node configuration", id="gpus-one-node"),
    pytest.param(job("--ntasks-per-node=2", "--gpus-per-task=8"), "SBL019", "Requested node configuration",
                 id="gpus-per-task"),
    pytest.param(job("--cpus-per-task=17"), "SBL019", "Requested node configuration", id="cpus-per-task"),
    pytest.param(job("--nodes=2", "--ntasks-per-node=8", "--cpus-per-task=4"), "SBL019",
                 "More processors requested than permitted", id="tasks-x-cpus"),
    pytest.param(job("--gpus-per-node=8", "--cpus-per-gpu=3"), "SBL019", "Requested node configuration",
                 id="cpus-per-gpu"),
    pytest.param(job("--mincpus=17"), "SBL019", "Requested node configuration", id="mincpus"),
    pytest.param(job("--ntasks=40"), "SBL019", "More processors requested than permitted", id="ntasks"),
    pytest.param(job("--mem=3000G"), "SBL019", "Requested node configuration", id="mem"),
    pytest.param(job("--cpus-per-task=16", "--mem-per-cpu=200G"), "SBL019", "Requested node configuration",
                 id="mem-per-cpu"),
    pytest.param(job("--environment=edf"), "SBL022", "unrecognized option", id="option-of-no-plugin"),
    pytest.param(job("--gres=nvme:1"), "SBL020", "Invalid generic resource", id="gres-name"),
    # the three refusals that need a limited partition, a partition without GPUs and accounting
    pytest.param(job("--partition=short", "--time=2:00:00"), "SBL018", "Requested time limit is invalid",
                 id="time-over-maxtime"),
    pytest.param(job("--partition=short", "--time=31"), "SBL018", "Requested time limit is invalid",
                 id="time-just-over-maxtime"),
    pytest.param(job("--partition=cpu", "--gres=gpu:1"), "SBL020", "Requested node configuration",
                 id="gres-on-cpu-partition"),
    pytest.param(job("--partition=cpu", "--gpus-per-node=1"), "SBL020", "Requested node configuration",
                 id="gpus-on-cpu-partition"),
    pytest.param(job("--account=other"), "SBL021", "Invalid account or account/partition combination",
                 id="account-without-association"),
    pytest.param(job("--account=teaching"), "SBL021", "Invalid account or account/partition combination",
                 id="account-for-another-partition"),
]

ACCEPTED = [
    pytest.param(job("--partition=interactive"), id="partition"),
    pytest.param(job("--partition=batch,interactive"), id="partition-list"),
    pytest.param(job("--nodes=2", "--gpus-per-node=8"), id="gpus-per-node"),
    pytest.param(job("--nodes=1-3"), id="node-range"),
    pytest.param(job("--gres=gpu:8"), id="gres-gpu"),
    pytest.param(job("--gpus=9"), id="gpus-spread"),  # no node count: Slurm takes two nodes
    pytest.param(job("--ntasks=2", "--gpus-per-task=8"), id="gpus-per-task-spread"),
    pytest.param(job("--nodes=2", "--ntasks-per-node=8", "--cpus-per-task=2", "--gpus-per-node=8"), id="tasks-x-cpus"),
    pytest.param(job("--ntasks=32"), id="ntasks"),
    pytest.param(job("--mem=1000G"), id="mem"),
    pytest.param(job("--mem=0"), id="mem-all"),
    pytest.param(job("--gpus-per-node=4", "--mem-per-gpu=600G"), id="mem-per-gpu"),
    pytest.param(job("--time=100-00:00:00"), id="time-unlimited"),
    pytest.param(job("--partition=short", "--time=30"), id="time-at-maxtime"),
    pytest.param(job("--partition=short"), id="time-default"),
    pytest.param(job("--account=llm_research"), id="account"),
    pytest.param(job("--account=teaching", "--partition=cpu"), id="account-on-its-partition"),
    pytest.param(job("--partition=cpu", "--cpus-per-task=16"), id="cpu-partition"),
    pytest.param(job("--container-image=ubuntu", "--container-mounts=/tmp:/tmp"), id="pyxis-options"),
    pytest.param("#!/bin/bash\n#SBATCH --nodes=2\nsrun --container-image=ubuntu --no-container-mount-home hostname\n",
                 id="pyxis-step"),
]


@pytest.mark.parametrize("text,code,refusal", REFUSED)
def test_refused_script_gets_the_finding(slurm, profile, text, code, refusal):
    answer = slurm.test_only(slurm.script(text))
    assert not answer.accepted, answer.output
    assert refusal in answer.output
    found = cluster_findings(text, profile)
    assert [d.code for d in found] == [code], [d.message for d in found]
    assert "cluster profile of sbatchlint taken" in found[0].notes[-1]


@pytest.mark.parametrize("text", ACCEPTED)
def test_accepted_script_gets_no_finding(slurm, profile, text):
    answer = slurm.test_only(slurm.script(text))
    assert answer.accepted, answer.output
    assert cluster_findings(text, profile) == []

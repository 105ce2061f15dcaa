"""What an srun step inherits from the job, on the real 2-node cluster (tests/slurm/start-cluster.sh).

The measured facts behind ``task_counts`` in sbatchlint/model/geometry.py (its docstring holds
the table these tests assert). Every job runs its steps one after the other; each step prints one
``TASK`` line per task between ``STEP``/``DONE`` markers, and srun's own warnings land in between
(sbatch sends stdout and stderr to the same log). Besides the facts themselves, every step is
checked against the model: what the geometry says it knows must be what ran.
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sbatchlint.model.geometry import geometry, task_layout  # noqa: E402
from sbatchlint.model.script import Script  # noqa: E402
from sbatchlint.source import Source  # noqa: E402

pytestmark = pytest.mark.slurm

REPORT = (
    'echo "TASK host=$SLURMD_NODENAME per_node=$SLURM_STEP_TASKS_PER_NODE '
    'tasks=$SLURM_STEP_NUM_TASKS gpus=${CUDA_VISIBLE_DEVICES:-none}"'
)
CANT_HONOR = "can't honor --ntasks-per-node"
TOO_MANY = "More processors requested than permitted"
REQUESTED = re.compile(r"requested tasks (\d+) with the number of requested nodes (\d+)")
# srun waits for the previous step's resources now and then: not a word about this step's layout
RETRY = ("step creation temporarily disabled", "Step created for job")


@dataclass
class Ran:
    """What one step did."""

    label: str
    rc: Optional[int] = None
    hosts: Counter = field(default_factory=Counter)
    per_node: set = field(default_factory=set)  # SLURM_STEP_TASKS_PER_NODE as the tasks saw it
    gpus: set = field(default_factory=set)
    srun: List[str] = field(default_factory=list)  # srun's own lines

    @property
    def total(self) -> int:
        return sum(self.hosts.values())

    @property
    def layout(self) -> str:
        (value,) = self.per_node
        return value

    @property
    def gpus_each(self) -> set:
        """How many GPUs each task sees (which ones depends on what other jobs hold)."""
        return {0 if g == "none" else len(g.split(",")) for g in self.gpus}

    def said(self, text: str) -> bool:
        return any(text in line for line in self.srun)


def job_script(header: Sequence[str], steps: Sequence[Tuple[str, str]], name: str) -> str:
    """A batch script: the header lines, then one ``srun <options> bash -c "$REPORT"`` per step;
    a step's options may start with ``export …;`` to run a command just before it."""
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}", "#SBATCH --time=1"]
    lines += [f"#SBATCH {h}" for h in header]
    lines.append(f"REPORT='{REPORT}'")
    lines.append('echo "JOB per_node=$SLURM_TASKS_PER_NODE nodes=$SLURM_NNODES"')
    for label, options in steps:
        before, _, options = options.rpartition(";")
        if before:
            lines.append(before.strip())
        lines.append(f'echo "STEP {label}"')
        lines.append(f'srun {options.strip()} bash -c "$REPORT"'.replace("  ", " "))
        lines.append(f'echo "DONE {label} rc=$?"')
    return "\n".join(lines) + "\n"


def parse(out: str) -> Tuple[Dict[str, str], Dict[str, Ran]]:
    job: Dict[str, str] = {}
    ran: Dict[str, Ran] = {}
    current: Optional[Ran] = None
    for line in out.splitlines():
        if line.startswith("JOB "):
            job = dict(kv.split("=", 1) for kv in line.split()[1:])
        elif line.startswith("STEP "):
            current = ran.setdefault(line.split()[1], Ran(line.split()[1]))
        elif line.startswith("DONE ") and current is not None:
            current.rc = int(line.split("rc=")[1])
            current = None
        elif current is not None and line.startswith("TASK "):
            fields = dict(kv.split("=", 1) for kv in line.split()[1:])
            current.hosts[fields["host"]] += 1
            current.per_node.add(fields["per_node"])
            current.gpus.add(fields["gpus"])
        elif current is not None and "srun" in line and not any(r in line for r in RETRY):
            current.srun.append(line)
    return job, ran


def run(slurm, header: Sequence[str], steps: Sequence[Tuple[str, str]], name: str):
    """Run the job; check the model against every step; return (job line, steps by label)."""
    text = job_script(header, steps, name)
    info, out = slurm.run(slurm.script(text, f"{name}.sbatch"), timeout=150)
    assert info.finished and info.state == "COMPLETED", (info, out)
    job, ran = parse(out)
    assert set(ran) == {label for label, _ in steps}, out
    script = Script(Source(text.encode("utf-8"), f"{name}.sbatch"), {"slurm_version": "auto"})  # this cluster's release
    assert len(script.steps) == len(steps)
    for (label, _), step in zip(steps, script.steps):
        model_agrees(script, step, ran[label], out)
    return job, ran


def model_agrees(script: Script, step, ran: Ran, out: str) -> None:
    """What the geometry claims to know about a step is what srun did (or asked for)."""
    geo = geometry(script, step)
    layout = task_layout(script, step)
    where = f"step {ran.label}: {geo}\n{out}"
    if ran.rc == 0:
        counts = sorted(ran.hosts.values())
        assert geo.nodes.value in (None, len(ran.hosts)), where
        assert geo.ntasks.value in (None, ran.total), where
        if geo.tasks_per_node.value is not None:
            assert set(counts) == {geo.tasks_per_node.value}, where
        if layout.per_node is not None:
            assert max(counts) >= layout.per_node, where  # the busiest node runs at least that many
        if layout.more_than_one:
            assert max(counts) > 1, where
    else:
        requested = [REQUESTED.search(line) for line in ran.srun]
        for match in filter(None, requested):
            assert (geo.ntasks.value, geo.nodes.value) == (int(match.group(1)), int(match.group(2))), where
    own = step.option("ntasks-per-node")
    if own is not None and ran.said(CANT_HONOR):
        assert geo.ignored == [own], where  # srun says it drops the step's own count
    if geo.ignored and ran.rc == 0 and own is not None and own.value and own.value.isdigit():
        assert set(ran.hosts.values()) != {int(own.value)}, where
    if ran.rc == 0 and geo.gpus_per_node.value and geo.gpus_per_task.value is None:
        assert ran.gpus_each == {geo.gpus_per_node.value}, where


# -- the job fixes the task count per node ------------------------------------------------------
def test_step_per_node_count_against_the_jobs_task_count(slurm):
    job, ran = run(
        slurm,
        ["--nodes=2", "--ntasks-per-node=8"],
        [
            ("plain", ""),
            ("tpn1", "--ntasks-per-node=1"),
            ("N2tpn1", "-N2 --ntasks-per-node=1"),
            ("tpn4", "--ntasks-per-node=4"),
            ("n2tpn1", "--ntasks=2 --ntasks-per-node=1"),
            ("n2", "-n2"),
            ("n3", "-n3"),
            ("n4", "-n4"),
            ("n8tpn2", "-n8 --ntasks-per-node=2"),
            ("n1", "-n1"),
            ("N1", "-N1"),
            ("N1tpn1", "-N1 --ntasks-per-node=1"),
            ("N1n8", "-N1 -n8"),
        ],
        "inherit-per-node",
    )
    assert job == {"per_node": "8(x2)", "nodes": "2"}
    assert ran["plain"].layout == "8(x2)" and ran["plain"].total == 16
    for label in ("tpn1", "N2tpn1", "tpn4"):
        # the job's SLURM_NTASKS=16 wins: "can't honor --ntasks-per-node set to 1 … Ignoring"
        assert ran[label].said(CANT_HONOR) and ran[label].said("requested tasks 16"), ran[label]
        assert ran[label].layout == "8(x2)" and ran[label].total == 16
    assert ran["n2tpn1"].layout == "1(x2)" and not ran["n2tpn1"].srun
    # a step's own -n spreads in blocks; the job's SLURM_NTASKS_PER_NODE=8 is dropped silently
    assert (ran["n2"].layout, ran["n3"].layout, ran["n4"].layout) == ("1(x2)", "2,1", "2(x2)")
    assert not (ran["n2"].srun or ran["n3"].srun or ran["n4"].srun)
    assert ran["n8tpn2"].said(CANT_HONOR) and ran["n8tpn2"].layout == "4(x2)"
    assert ran["n1"].said("setting nnodes to 1") and ran["n1"].total == 1
    for label in ("N1", "N1tpn1"):
        # 16 tasks asked on one node that has 8 of the job's CPUs: the step does not start
        assert ran[label].said("requested tasks 16 with the number of requested nodes 1"), ran[label]
        assert ran[label].said(TOO_MANY) and ran[label].rc != 0 and not ran[label].hosts
    assert ran["N1n8"].layout == "8" and ran["N1n8"].rc == 0


def test_larger_step_per_node_count_is_dropped_without_a_word(slurm):
    _, ran = run(slurm, ["--nodes=2", "--ntasks-per-node=1"], [("tpn2", "--ntasks-per-node=2")], "inherit-larger")
    assert ran["tpn2"].layout == "1(x2)" and not ran["tpn2"].srun


def test_job_per_node_count_is_a_maximum_next_to_its_total(slurm):
    _, ran = run(slurm, ["--nodes=2", "--ntasks=4", "--ntasks-per-node=8"], [("plain", "")], "inherit-max")
    assert ran["plain"].layout == "2(x2)"


# -- the job gives a total: placed by free CPUs ---------------------------------------------------
def test_total_without_per_node_follows_the_free_cpus(slurm):
    job, ran = run(
        slurm,
        ["--nodes=2", "--ntasks=16"],
        [
            ("plain", ""),
            ("tpn1", "--ntasks-per-node=1"),
            ("N2tpn8", "-N2 --ntasks-per-node=8"),
            ("n2", "-n2"),
        ],
        "inherit-free-cpus",
    )
    allocation = job["per_node"]
    assert ran["plain"].layout == allocation and ran["plain"].total == 16
    assert ran["tpn1"].said(CANT_HONOR) and ran["tpn1"].layout == allocation
    # 16 = 2 × 8: srun keeps the step's count, yet the tasks follow the job's CPUs (12,4 in a
    # 15,1 allocation, 7,9 in a 6,10 one): it cannot even out what the job got
    assert not ran["N2tpn8"].said(CANT_HONOR) and ran["N2tpn8"].total == 16
    if allocation != "8(x2)":
        assert ran["N2tpn8"].layout != "8(x2)", ran["N2tpn8"]
    assert ran["n2"].layout == "1(x2)"
    # the model does not claim a per-node count for any step that has more tasks than nodes
    script = Script(Source(job_script(["--nodes=2", "--ntasks=16"], [("x", ""), ("y", "-N2 --ntasks-per-node=8")], "x").encode(), "x"),
                    {"slurm_version": "auto"})
    assert [geometry(script, s).tasks_per_node.value for s in script.steps] == [None, None]


def test_per_node_count_equal_to_total_over_nodes_rounded_down_is_kept(slurm):
    _, ran = run(slurm, ["--nodes=2", "--ntasks=15"], [("tpn7", "--ntasks-per-node=7")], "inherit-floor")
    assert not ran["tpn7"].said(CANT_HONOR) and ran["tpn7"].total == 15


def test_per_task_gpus_do_not_even_out_the_placement(slurm):
    job, ran = run(slurm, ["--nodes=2", "--ntasks=8", "--gpus-per-task=1"], [("plain", "")], "inherit-gpus-per-task")
    assert ran["plain"].layout == job["per_node"] and ran["plain"].gpus_each == {1}
    # on idle nodes 7,1: the GPUs each task needs are there on either node


def test_total_alone_may_land_on_one_node(slurm):
    job, ran = run(slurm, ["--ntasks=16"], [("plain", ""), ("N2tpn8", "-N2 --ntasks-per-node=8")], "inherit-total-only")
    if job["nodes"] == "1":
        assert ran["N2tpn8"].said("Only allocated 1 nodes asked for 2") and ran["N2tpn8"].rc != 0


# -- no task count in the job -------------------------------------------------------------------
def test_without_a_job_task_count_the_step_per_node_count_is_kept(slurm):
    _, ran = run(
        slurm,
        ["--nodes=2"],
        [("plain", ""), ("tpn2", "--ntasks-per-node=2")],
        "inherit-nodes-only",
    )
    assert ran["plain"].layout == "1(x2)"
    # kept, but the job holds one CPU per node
    assert ran["tpn2"].said(TOO_MANY) and ran["tpn2"].rc != 0
    _, ran = run(
        slurm,
        ["--nodes=2", "--cpus-per-task=2"],
        [("tpn2", "--ntasks-per-node=2"), ("n2tpn1", "--ntasks=2 --ntasks-per-node=1")],
        "inherit-nodes-cpus",
    )
    assert ran["tpn2"].layout == "2(x2)" and not ran["tpn2"].srun
    assert ran["n2tpn1"].layout == "1(x2)"


# -- CPUs and GPUs --------------------------------------------------------------------------------
def test_cpus_per_task_is_not_inherited_unless_exported(slurm):
    _, ran = run(
        slurm,
        ["--nodes=1", "--ntasks=2", "--cpus-per-task=4"],
        [
            ("n8", "-n8"),
            ("c4n8", "-c4 -n8"),
            ("exported", "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK; -n8"),
        ],
        "inherit-cpus",
    )
    # 8 tasks fit in the job's 8 CPUs only at one CPU each: -c is not inherited
    assert ran["n8"].rc == 0 and ran["n8"].total == 8
    assert ran["c4n8"].said(TOO_MANY) and ran["c4n8"].rc != 0
    assert ran["exported"].said(TOO_MANY) and ran["exported"].rc != 0


def test_gpus_per_node_are_inherited_and_step_requests_replace_them(slurm):
    _, ran = run(
        slurm,
        ["--nodes=2", "--ntasks-per-node=2", "--gpus-per-node=4"],
        [
            ("plain", ""),
            ("n2tpn1", "--ntasks=2 --ntasks-per-node=1"),
            ("gpn2", "--gpus-per-node=2"),
            ("gres1", "--gres=gpu:1"),
            ("tpn1", "--ntasks-per-node=1"),
        ],
        "inherit-gpus",
    )
    assert ran["plain"].gpus_each == {4} and ran["n2tpn1"].gpus_each == {4}
    assert ran["n2tpn1"].layout == "1(x2)"
    assert ran["gpn2"].gpus_each == {2} and ran["gres1"].gpus_each == {1}
    assert ran["tpn1"].said(CANT_HONOR) and ran["tpn1"].layout == "2(x2)" and ran["tpn1"].gpus_each == {4}

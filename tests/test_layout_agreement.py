"""The geometry (model/geometry.py) and the launch analysis (model/launch.py) see every step alike.

Over every fixture of the launch and topology rules, the shipped examples and the SBL1xx rule
examples: a step's ``task_layout`` (what SBL101/SBL104/SBL106 ask) is its ``geometry`` (what
SBL105/SBL107–SBL111 ask), and both follow srun's rule for a step's own ``--ntasks-per-node``.
Then the measured rows of TASK_LAYOUT (model/geometry.py; tests/slurm/test_step_inheritance.py
runs them on the real cluster) as unit cases.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from sbatchlint import registry
from sbatchlint.model import launch as launch_model
from sbatchlint.model.geometry import geometry, job_geometry, job_task_count_set, parse_count, task_layout
from sbatchlint.model.script import Script
from sbatchlint.source import Source

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_RULES = ("SBL101", "SBL102", "SBL103", "SBL104", "SBL105", "SBL106", "SBL107", "SBL108", "SBL109", "SBL110", "SBL111")


def corpus() -> List[Tuple[str, str]]:
    found = []
    for folder in ("tests/fixtures/launch", "tests/fixtures/topology", "examples"):
        for path in sorted((ROOT / folder).iterdir()):
            if path.is_file() and path.suffix in (".sh", ".sbatch"):
                found.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for rule in registry.all_rules():
        if rule.code not in LAUNCH_RULES:
            continue
        for index, example in enumerate(rule.bad_examples()):
            found.append((f"{rule.code}-bad{index}", example.source))
            if example.fixed is not None:
                found.append((f"{rule.code}-bad{index}-fixed", example.fixed))
        for index, example in enumerate(rule.good_examples()):
            found.append((f"{rule.code}-good{index}", example.source))
    return found


CORPUS = corpus()


def parse(text: str) -> Script:
    # the rows were measured on Slurm 22.05, whose steps do not inherit --cpus-per-task
    return Script(Source(text.encode("utf-8"), "job.sh"), {"slurm_version": "22.05"})


def test_the_corpus_has_steps_of_every_kind():
    kinds = set()
    for _, text in CORPUS:
        script = parse(text)
        for step in script.steps:
            kinds.update(launch.kind for launch in launch_model.launches_of(script, step))
    assert {launch_model.SRUN_NATIVE, launch_model.TORCHRUN} <= kinds
    assert len(CORPUS) > 60


@pytest.mark.parametrize("name,text", CORPUS, ids=[name for name, _ in CORPUS])
def test_geometry_and_launch_agree_on_every_step(name, text):
    script = parse(text)
    for step in script.steps:
        geo = geometry(script, step)
        layout = task_layout(script, step)
        assert launch_model.task_layout is task_layout  # one computation, re-exported
        where = f"{name}, line {script.source.line_of(step.srun_word.span.start)}"
        assert layout.nodes == geo.nodes.value, where
        assert layout.total == geo.ntasks.value, where
        assert layout.origin is geo.tasks_per_node.origin, where
        assert layout.ignored is (geo.ignored[-1] if geo.ignored else None), where
        per_node = geo.tasks_per_node.value
        if per_node is not None:
            assert layout.per_node == per_node and layout.more_than_one == (per_node > 1), where
        elif geo.ntasks.value is not None and geo.nodes.value:
            total, nodes = geo.ntasks.value, geo.nodes.value
            assert layout.per_node == -(-total // nodes), where  # the busiest node, at least
            assert layout.more_than_one == (total > nodes), where
        else:
            assert layout.per_node is None and not layout.more_than_one, where
        # a known per-node count and a known total agree with the node count
        if per_node is not None and geo.ntasks.value is not None and geo.nodes.value is not None:
            assert per_node * geo.nodes.value == geo.ntasks.value, where
        # the launches of the step are the ones the topology rules see
        for launch in launch_model.launches_of(script, step):
            assert launch.step is step, where


@pytest.mark.parametrize("name,text", CORPUS, ids=[name for name, _ in CORPUS])
def test_a_steps_own_per_node_count_follows_srun(name, text):
    """srun keeps a step's --ntasks-per-node only when it equals total // nodes."""
    script = parse(text)
    for step in script.steps:
        own = step.option("ntasks-per-node")
        geo = geometry(script, step)
        if own is None or step.options_incomplete:
            assert not geo.ignored
            continue
        asked = parse_count(own.value)
        total, nodes = geo.ntasks.value, geo.nodes.value
        where = f"{name}, line {script.source.line_of(step.srun_word.span.start)}"
        if asked is None or total is None or not nodes:
            continue
        if asked == total // nodes:
            assert not geo.ignored, where
        else:
            assert geo.ignored == [own], where
            assert task_layout(script, step).ignored is own, where
            if step.option("ntasks") is None:
                assert job_task_count_set(script), where  # only a job count makes the total fixed


# -- the measured rows ----------------------------------------------------------------------------
# header, step options -> nodes, total, tasks per node (None: not known statically), ignored
ROWS = [
    ("--nodes=2 --ntasks-per-node=8", "", (2, 16, 8, False)),
    ("--nodes=2 --ntasks-per-node=8", "--ntasks-per-node=1", (2, 16, 8, True)),
    ("--nodes=2 --ntasks-per-node=8", "-N2 --ntasks-per-node=1", (2, 16, 8, True)),
    ("--nodes=2 --ntasks-per-node=8", "--ntasks-per-node=4", (2, 16, 8, True)),
    ("--nodes=2 --ntasks-per-node=8", "--ntasks=2 --ntasks-per-node=1", (2, 2, 1, False)),
    ("--nodes=2 --ntasks-per-node=8", "-n2", (2, 2, 1, False)),
    ("--nodes=2 --ntasks-per-node=8", "-n3", (2, 3, None, False)),
    ("--nodes=2 --ntasks-per-node=8", "-n4", (2, 4, 2, False)),
    ("--nodes=2 --ntasks-per-node=8", "-n8 --ntasks-per-node=2", (2, 8, 4, True)),
    ("--nodes=2 --ntasks-per-node=8", "-n1", (1, 1, 1, False)),
    ("--nodes=2 --ntasks-per-node=8", "-N2 -n1", (1, 1, 1, False)),
    ("--nodes=2 --ntasks-per-node=8", "-N1", (1, 16, 16, False)),
    ("--nodes=2 --ntasks-per-node=8", "-N1 --ntasks-per-node=1", (1, 16, 16, True)),
    ("--nodes=2 --ntasks-per-node=8", "-N1 -n8", (1, 8, 8, False)),
    ("--nodes=2 --ntasks-per-node=1", "--ntasks-per-node=2", (2, 2, 1, True)),
    ("--nodes=2 --ntasks=4 --ntasks-per-node=8", "", (2, 4, 2, False)),
    ("--nodes=2 --ntasks=16", "", (2, 16, None, False)),
    ("--nodes=2 --ntasks=16", "--ntasks-per-node=1", (2, 16, None, True)),
    ("--nodes=2 --ntasks=16", "-N2 --ntasks-per-node=8", (2, 16, None, False)),
    ("--nodes=2 --ntasks=16", "-n2", (2, 2, 1, False)),
    ("--nodes=2 --ntasks=15", "--ntasks-per-node=7", (2, 15, None, False)),
    ("--nodes=2", "", (2, 2, 1, False)),
    ("--nodes=2", "--ntasks-per-node=2", (2, 4, 2, False)),
    ("--nodes=2 --cpus-per-task=2", "--ntasks=2 --ntasks-per-node=1", (2, 2, 1, False)),
    ("--nodes=2 --ntasks-per-node=2 --gpus-per-node=4", "--ntasks-per-node=1", (2, 4, 2, True)),
]


def row_script(header: str, step: str) -> Script:
    lines = ["#!/bin/bash"] + [f"#SBATCH {part}" for part in header.split()]
    lines.append(f"srun {step} python train.py".replace("  ", " "))
    return parse("\n".join(lines) + "\n")


@pytest.mark.parametrize("header,step,expected", ROWS, ids=[f"{h} | {s or '-'}" for h, s, _ in ROWS])
def test_measured_rows(header, step, expected):
    script = row_script(header, step)
    (srun,) = script.steps
    geo = geometry(script, srun)
    nodes, total, per_node, ignored = expected
    assert (geo.nodes.value, geo.ntasks.value, geo.tasks_per_node.value, bool(geo.ignored)) == expected
    layout = task_layout(script, srun)
    assert (layout.nodes, layout.total) == (nodes, total)
    assert (layout.ignored is not None) == ignored
    if per_node is not None:
        assert layout.per_node == per_node


def test_cpus_and_gpus_rows():
    script = row_script("--nodes=1 --ntasks=2 --cpus-per-task=4", "-n8")
    geo = geometry(script, script.steps[0])
    assert (geo.cpus_per_task.value, geo.cpus_per_task.origin.where, geo.ntasks.value) == (1, "default", 8)
    script = parse(
        "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=2\n#SBATCH --cpus-per-task=4\n"
        "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK\nsrun -n8 python train.py\n"
    )
    assert geometry(script, script.steps[0]).cpus_per_task.value == 4
    header = "--nodes=2 --ntasks-per-node=2 --gpus-per-node=4"
    for step, gpus in (("", 4), ("--ntasks=2 --ntasks-per-node=1", 4), ("--gpus-per-node=2", 2), ("--gres=gpu:1", 1)):
        script = row_script(header, step)
        assert geometry(script, script.steps[0]).gpus_per_node.value == gpus, step


def test_job_geometry_by_free_cpus():
    assert job_geometry(row_script("--nodes=2 --ntasks=16", "")).tasks_per_node.value is None
    assert job_geometry(row_script("--nodes=2 --ntasks=2", "")).tasks_per_node.value == 1
    assert job_geometry(row_script("--nodes=1 --ntasks=16", "")).tasks_per_node.value == 16
    assert job_geometry(row_script("--ntasks=16 --ntasks-per-node=8", "")).nodes.value == 2

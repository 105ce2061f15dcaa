"""The container analysis skips the search for a cache variable nothing can set.

For every containerized step, ``Containers`` asks the environment the task sees for each cache
variable (``HF_HOME``, ``UV_CACHE_DIR``…). When no assignment, prefix, task-string assignment,
sourced file, ``--export`` entry or unread file can set the variable, and the image does not set
it either, the answer is "unset" without a search. These tests compare that judgement with the
full search (``_task_env``) over shapes written for the purpose, and check what a user sees: the
same cache paths whichever way they are found.
"""
from __future__ import annotations

import pytest

from sbatchlint.model import containers as model
from sbatchlint.model.script import Script
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"
IMAGE = "--container-image=registry.example.com/team/trainer:1"
SHAPES = [
    f"export HF_HOME=/lustre/hf\nsrun {IMAGE} python t.py\n",
    f"HF_HOME=/lustre/hf\nsrun {IMAGE} python t.py\n",
    f"srun {IMAGE} --export=ALL,HF_HOME=/lustre/hf python t.py\n",
    f"srun {IMAGE} --export=NONE python t.py\n",
    f"srun {IMAGE} bash -c 'export UV_CACHE_DIR=/lustre/uv; python t.py'\n",
    f"srun {IMAGE} env TORCH_HOME=/lustre/torch python t.py\n",
    f"TRITON_CACHE_DIR=/lustre/triton srun {IMAGE} python t.py\n",
    f"source ./site-env.sh\nsrun {IMAGE} python t.py\n",
    f"srun {IMAGE} bash -c 'source /opt/env.sh && python t.py'\n",
    f"export XDG_CACHE_HOME=$HOME/.cache\nsrun {IMAGE} python t.py\n",
    f"srun {IMAGE} python t.py\n",
    "srun --container-name=train python t.py\n",
]
SETTINGS = [
    {},
    {"image_environment": {"registry.example.com/team/*": {"HF_HOME": "/root/.cache/huggingface", "PIP_CACHE_DIR": "/pip"}}},
]


def _analysis(body: str, settings: dict):
    script = Script(Source((HEADER + body).encode(), "job.sh"), settings)
    return script, script.containers


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("body", SHAPES)
def test_a_variable_nothing_can_set_is_what_the_search_finds_unset(body, settings):
    script, containers = _analysis(body, settings)
    judged = 0
    for step in script.steps:
        container = containers.for_step(step)
        for name in model.CACHE_VARIABLES:
            if containers._may_be_set(step, name):
                continue
            judged += 1
            searched = model._task_env(script, step, name, container)
            assert searched.where == "unset" and not searched.values, (body, name, searched.where)
            # and with the image's own values applied, the skip in _container_paths holds
            if container.containerized and name not in containers._image_environment(container):
                assert not containers.task_env(step, name).is_set
    # every shape leaves some cache variable to nothing, but one that sources a file the model
    # cannot read: that file may set anything
    assert bool(judged) == ("source" not in body)


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("body", SHAPES)
def test_cache_paths_are_the_same_without_the_skip(body, settings, monkeypatch):
    _, fast = _analysis(body, settings)
    seen = [(u.kind, u.path.text, u.span, u.variable) for u in fast.container_paths]
    monkeypatch.setattr(model.Containers, "_may_be_set", lambda self, step, name: True)
    _, slow = _analysis(body, settings)
    assert [(u.kind, u.path.text, u.span, u.variable) for u in slow.container_paths] == seen


def test_the_images_own_cache_variable_is_found_through_the_skip():
    """An image that sets HF_HOME itself: its value is the task's, and the cache path is there."""
    settings = SETTINGS[1]
    script, containers = _analysis(f"srun {IMAGE} python t.py\n", settings)
    uses = [(u.kind, u.variable, u.path.text) for u in containers.container_paths if u.kind == "cache"]
    assert ("cache", "HF_HOME", "/root/.cache/huggingface") in uses
    assert ("cache", "PIP_CACHE_DIR", "/pip") in uses

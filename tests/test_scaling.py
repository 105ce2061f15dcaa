"""Linting cost grows linearly with the script, counted in Python calls rather than seconds.

The shared generator's scripts at 8x the size (8x the steps, variables, loops, mounts and branch
alternatives) may take at most 10x the Python function calls of the same seeds at 1x: a
quadratic path anywhere in the model or the rules shows as a far larger ratio. Calls, unlike
seconds, do not depend on the machine or its load.
"""
from __future__ import annotations

import sys

import pytest

from sbatchlint.linter import lint
from sbatchlint.source import Source

# the shared generator (tests/scriptgen.py); until it is in the tree there is nothing to scale
scriptgen = pytest.importorskip("scriptgen", reason="the shared script generator (tests/scriptgen.py) is not in this tree")

SEEDS = range(3)


def calls(size: int) -> int:
    texts = [scriptgen.generate(seed=seed, size=size).text.encode() for seed in SEEDS]
    count = 0

    def profile(frame, event, arg) -> None:
        nonlocal count
        if event == "call":
            count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        for index, data in enumerate(texts):
            lint(Source(data, f"job{index}.sh"))
    finally:
        sys.setprofile(previous)
    return count


def test_python_calls_grow_linearly_with_the_script():
    lint(Source(scriptgen.generate(seed=1_000).text.encode(), "warmup.sh"))  # memos and lazy tables filled
    small, large = calls(1), calls(8)
    assert small > 1000  # the profile saw the linting
    assert large / small <= 10, f"8x the script took {large / small:.1f}x the Python calls ({small} -> {large})"

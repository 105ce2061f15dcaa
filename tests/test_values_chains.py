"""Long ``CMD="$CMD …"`` chains are followed to their start, and pathological ones stay bounded."""
from __future__ import annotations

from sbatchlint.model.script import Script
from sbatchlint.source import Source


def task_string(lines):
    script = Script(Source(("\n".join(["#!/bin/bash", *lines]) + "\n").encode(), "job.sh"))
    return script.steps[-1].task_argv[2]


def test_a_long_append_chain_is_fully_known():
    lines = ["CKPT=/lustre/ckpt", 'CMD="uv run python train.py"']
    lines += [f'CMD="$CMD --opt{i} $CKPT/{i}"' for i in range(30)]
    lines += ['srun bash -c "$CMD"']
    word = task_string(lines)
    assert word.known
    assert word.text.startswith("uv run python train.py --opt0 /lustre/ckpt/0 --opt1")
    assert word.text.endswith("--opt29 /lustre/ckpt/29")


def test_every_piece_keeps_its_origin_through_the_chain():
    lines = ["CKPT=/lustre/ckpt", 'CMD="python train.py"']
    lines += [f'CMD="$CMD --opt{i} $CKPT"' for i in range(6)]
    lines += ['srun bash -c "$CMD"']
    word = task_string(lines)
    ckpt = [p for p in word.pieces if p.text == "/lustre/ckpt"]
    assert len(ckpt) == 6 and {p.span for p in ckpt} == {ckpt[0].span}


def test_a_doubling_chain_stays_bounded():
    lines = ['T="a"'] + ['T="$T $T"' for _ in range(40)] + ['srun bash -c "$T"']
    word = task_string(lines)
    assert len(word.pieces) < 10000

"""A step re-read with one run of its srun words replaced by another value of their expansion
(the container and branch analyses do this for every alternative) reads the same options as a
reading of the whole new command, although it reuses the step's own reading around the run."""
from __future__ import annotations

import pytest

from sbatchlint.model import steps as step_model
from sbatchlint.model.branches import alternative_groups
from sbatchlint.model.script import Script
from sbatchlint.model.steps import Command, OptionReading, read_step
from sbatchlint.model.values import Word, split_value
from sbatchlint.source import Source

SHAPES = {
    # a value word consumed by the option before the expansion, or not
    "value word": """#!/bin/bash
if [ -n "$BIG" ]; then MEM="--mem 64G"; else MEM="-c 4"; fi
srun -N 2 $MEM --ntasks-per-node 8 python train.py
""",
    # the expansion's other value has fewer words, none, or an unknown one
    "word counts": """#!/bin/bash
ARGS="--nodes=2 --exclusive"
if [ "$X" = 1 ]; then ARGS=""; fi
if [ "$Y" = 1 ]; then ARGS="$SLURM_EXTRA --nodes 4 -l"; fi
srun $ARGS -o out.log python train.py
""",
    # an option taking the next word stands last, so the other value takes the task's first word
    "option left open": """#!/bin/bash
case "$MODE" in
  a) OPT="--label" ;;
  b) OPT="--ntasks" ;;
esac
srun --kill-on-bad-exit=1 $OPT python train.py
""",
    # the other value ends the options (``--``) or starts the task early
    "end of options": """#!/bin/bash
FLAGS="-- hostname"
if [ -n "$ECHO" ]; then FLAGS="echo"; fi
if [ -n "$MPI" ]; then FLAGS="--mpi=pmix"; fi
srun -N1 $FLAGS --container-image=img.sqsh bash -c "python run.py"
""",
    # several expansions, and one whose words are replaced separately
    "several runs": """#!/bin/bash
A="--container-mounts=/data:/data"
B="-n 16"
for M in /a:/a /b:/b; do A="--container-mounts=$M"; done
if [ -n "$Q" ]; then B="--ntasks=4 --cpus-per-task 2"; fi
srun $A $B --container-workdir=/work $SRUN_EXTRA python train.py
""",
}


def _compare(step, fake, start, stop, count) -> None:
    reading = OptionReading(step)
    reread = reading.reread(fake, start, stop, count)
    full = read_step(None, fake, step.srun_index, with_task=False)
    assert reread.options == full.options
    assert [[id(w) for w in o.words] for o in reread.options] == [[id(w) for w in o.words] for o in full.options]
    assert [id(w) for w in reread.task_argv] == [id(w) for w in full.task_argv]
    assert reread.options_incomplete == full.options_incomplete
    assert reread.srun_index == full.srun_index


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_step_reread_with_other_values_reads_as_a_whole_reading(shape):
    model = Script(Source(SHAPES[shape].encode(), "job.sh"))
    (step,) = model.steps
    argv = step.command.argv
    first_task = len(argv) - len(step.task_argv)
    compared = 0
    # every run of words an expansion gave, replaced by each of its values
    for start, stop, node, span, alternatives, ifs in alternative_groups(argv, first_task):
        for alternative in alternatives:
            words = [Word(part, node, span, None) for part in split_value(alternative, ifs)]
            new_argv = argv[:start] + words + argv[stop:]
            if start <= step.srun_index or step_model.unwrap(new_argv) != step.srun_index:
                continue
            _compare(step, Command(step.command.node, new_argv), start, stop, len(words))
            compared += 1
    # and every single word of such a run replaced alone, as the container analysis does
    for index in range(step.srun_index + 1, first_task):
        word = argv[index]
        for alternative in word.alternatives or []:
            words = [Word(part, word.node, word.span, None) for part in split_value(alternative)]
            new_argv = argv[:index] + words + argv[index + 1 :]
            _compare(step, Command(step.command.node, new_argv), index, index + 1, len(words))
            compared += 1
    assert compared >= 2


def test_each_alternative_of_a_task_string_maps_its_words_to_their_own_bytes():
    # the alternatives share the string's literal pieces; the words they cut from them, and
    # the words only one alternative has, each point at the bytes that wrote them
    text = b"""#!/bin/bash
#SBATCH --nodes=2
OUT=/scratch/a
if [ -n "$B" ]; then OUT=/scratch/bb; fi
if [ -n "$C" ]; then TP=4; else TP=8; fi
srun bash -c "python train.py --out $OUT --tp $TP --seed 1"
"""
    model = Script(Source(text, "job.sh"))
    (launch,) = model.launches
    readings = set()
    for variant in launch.variants + launch.others:
        argv = variant.command.argv
        for word in argv:
            if word.known:
                assert text[word.span.start : word.span.end].decode() == word.text
        readings.add(" ".join(word.text for word in argv))
    assert readings == {
        f"python train.py --out {out} --tp {tp} --seed 1"
        for out in ("/scratch/a", "/scratch/bb")
        for tp in ("${TP}", "4", "8")
    }


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_one_reading_reread_many_times_reads_each_as_a_whole_reading(shape):
    """One reading serves every re-reading of a step (as the container and branch analyses use
    it): what it kept of each word it read (``_plan``) gives what reading the word afresh gives,
    wherever the word now stands."""
    model = Script(Source(SHAPES[shape].encode(), "job.sh"))
    (step,) = model.steps
    argv = step.command.argv
    first_task = len(argv) - len(step.task_argv)
    reading = OptionReading(step)
    compared = 0
    for rounds in range(2):  # (the second round reads every word from what the first kept)
        for index in range(step.srun_index + 1, first_task):
            word = argv[index]
            for alternative in word.alternatives or []:
                words = [Word(part, word.node, word.span, None) for part in split_value(alternative)]
                new_argv = argv[:index] + words + argv[index + 1 :]
                fake = Command(step.command.node, new_argv)
                reread = reading.reread(fake, index, index + 1, len(words))
                full = read_step(None, fake, step.srun_index, with_task=False)
                assert reread.options == full.options
                assert [[id(w) for w in o.words] for o in reread.options] == [[id(w) for w in o.words] for o in full.options]
                assert [id(w) for w in reread.task_argv] == [id(w) for w in full.task_argv]
                assert reread.options_incomplete == full.options_incomplete
                compared += 1
    assert compared >= 2
    assert reading.plans

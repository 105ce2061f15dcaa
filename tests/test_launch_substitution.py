"""Launch variants of a task string read without parsing the alternative string again.

A step inside ``for TP in 1 2 4`` runs ``bash -c "… --tp $TP"`` once per value: every
alternative string differs from the step's own only in a literal argument of the same length.
``launch._substituted`` maps the command the step's own string parsed to onto the alternative's
pieces instead of parsing it. These tests compare it with the full reading over shapes written
for the purpose: where it answers, it must answer what parsing gives; where the alternative reads
differently (another word count, a redirection, a number that is a file descriptor), it must
leave the question to the parser.
"""
from __future__ import annotations

import pytest

from sbatchlint.model import launch as launch_model
from sbatchlint.model.script import Script
from sbatchlint.model.steps import task_string_command
from sbatchlint.source import Source

from lintutil import lint_text

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"

# (name, body, whether the shortcut must answer for at least one alternative)
SHAPES = [
    ("digits", 'for TP in 1 2 4; do\n  srun bash -c "cd /w && python train.py --tp $TP --pp 1"\ndone\n', True),
    ("option with value", 'for N in 4 8; do\n  srun bash -c "torchrun --nproc_per_node=$N --nnodes=2 t.py"\ndone\n', True),
    ("override", 'for TP in 2 4; do\n  srun bash -c "python t.py model.tensor_model_parallel_size=$TP x=1"\ndone\n', True),
    ("two loops in one word", 'for A in 1 2; do for B in 3 4; do\n  srun bash -c "python t.py --cfg=$A,$B"\ndone; done\n', True),
    ("branch", 'if [ -n "$BIG" ]; then TP=8; else TP=2; fi\nsrun bash -lc "python t.py --tp $TP"\n', True),
    ("names", 'for M in tiny huge; do\n  srun bash -c "python t.py --model $M --out /r/$M"\ndone\n', True),
    ("a later command", 'for TP in 1 2; do\n  srun bash -c "cd /w; python a.py; python b.py --tp $TP"\ndone\n', True),
    ("two commands", 'for TP in 1 2; do\n  srun bash -c "cd /w; python a.py --tp $TP; python b.py --tp $TP"\ndone\n', False),
    ("a directory", 'for D in aa bb; do\n  srun bash -c "cd /w/$D && python t.py"\ndone\n', True),
    ("word then number", 'for M in ab 12; do\n  srun bash -c "python t.py --m $M"\ndone\n', False),
    ("number then word", 'for M in 12 ab; do\n  srun bash -c "python t.py --m $M"\ndone\n', False),
    ("descriptor", 'for F in 12 ab; do\n  srun bash -c "python t.py $F>out.log"\ndone\n', False),
    ("descriptor last", 'for F in ab 12; do\n  srun bash -c "python t.py $F>out.log"\ndone\n', False),
    ("reserved word", 'for W in done abcd; do\n  srun bash -c "echo $W; python t.py"\ndone\n', False),
    ("other length", 'for TP in 1 16; do\n  srun bash -c "python t.py --tp $TP"\ndone\n', False),
    ("inner loop", 'for A in 1 2; do\n  srun bash -c "for x in $A; do python t.py --x \\$x; done"\ndone\n', False),
    ("prefix", 'for TP in 1 2; do\n  srun bash -c "TP=$TP python t.py"\ndone\n', False),
    ("default", 'TP=${TP:-2}\nsrun bash -c "python t.py --tp $TP"\n', False),
    ("quoted", "for N in ab cd; do\n  srun bash -c \"python t.py --name '$N'\"\ndone\n", False),
    ("blank", 'for A in "a b" "c d"; do\n  srun bash -c "python t.py $A"\ndone\n', False),
    ("glob", 'for P in "a*" bc; do\n  srun bash -c "python t.py $P"\ndone\n', False),
    ("redirect target", 'for L in aa bb; do\n  srun bash -c "python t.py > /logs/$L.txt"\ndone\n', False),
    ("command name", 'for P in py3 py4; do\n  srun bash -c "$P t.py"\ndone\n', False),
    ("assignment", 'for TP in 1 2; do\n  srun bash -c "X=$TP; python t.py --tp \\$X"\ndone\n', False),
]


def _string_word(step):
    argv = step.task_argv
    j = step.shell_index + 1
    while j < len(argv) and argv[j].known and argv[j].text.startswith("-"):
        flag = argv[j].text
        j += 1
        if "c" in flag[1:] and not flag.startswith("--"):
            break
    return argv[j]


def _reading(command):
    """Everything a launch reads of a task command (the node by its place and kind)."""
    return (
        [(w.value, w.span, w.alternatives, w.node) for w in command.argv],
        [(e.name, e.value, e.span) for e in command.env],
        command.in_string,
        (command.node.start_byte, command.node.end_byte, command.node.type),
    )


def _compare(body: str) -> int:
    """Check every answer of the shortcut against the parse; how many it gave."""
    script = Script(Source((HEADER + body).encode(), "job.sh"))
    answered = 0
    for step in script.steps:
        if step.shell_index is None or step.task_string is None:
            continue
        alternatives = _string_word(step).alternatives or []
        own = step.task_values
        for index in range(len(step.task_commands)):
            for alternative in alternatives[:-1]:
                fast = launch_model._substituted(script, step, alternative, index)
                if fast is None:
                    continue
                answered += 1
                full = task_string_command(script.values, alternative, index, len(step.task_commands), step)
                step.task_values = own
                assert full is not None and _reading(fast) == _reading(full), (body, index, alternative.text)
    return answered


@pytest.mark.parametrize("name, body, applies", SHAPES, ids=[s[0] for s in SHAPES])
def test_the_shortcut_answers_what_parsing_the_alternative_gives(name, body, applies):
    answered = _compare(body)
    if applies:
        assert answered, "the shortcut should apply to this shape"
    else:
        assert answered == 0, "the alternative does not read as the step's own string"


@pytest.mark.parametrize("name, body, applies", SHAPES, ids=[s[0] for s in SHAPES])
def test_findings_are_the_same_without_the_shortcut(name, body, applies, monkeypatch):
    text = HEADER + body
    fast = [(d.code, d.span, d.message) for d in lint_text(text)]
    monkeypatch.setattr(launch_model, "_substituted", lambda *args: None)
    assert [(d.code, d.span, d.message) for d in lint_text(text)] == fast


def test_each_loop_configuration_keeps_its_own_sizes():
    """What a user sees through the shortcut: every iteration's sizes, at their own bytes."""
    body = 'for TP in 3 4; do\n  srun bash -c "python -m torch.distributed.run --nproc_per_node=8 t.py --tp $TP"\ndone\n'
    script = Script(Source((HEADER + body).encode(), "job.sh"))
    (launch,) = script.launches
    sizes = [variant.parallelism["tp"] for variant in launch.variants]
    assert [size.number for size in sizes] == [3, 4]
    data = (HEADER + body).encode()
    assert [data[p.span.start : p.span.end] for size in sizes for p in size.value.pieces] == [b"3", b"4"]
    assert [c.sizes for c in launch.configurations()] == [{"tp": 3}, {"tp": 4}]


# -- the same tree for the batch-shell expansions a task string receives (model/boundary.py) -------
EXPANSION_SHAPES = [
    'for TP in 1 2 4; do\n  srun bash -c "python t.py --tp $TP --out $WORKSPACE/run"\ndone\n',
    "for TP in 1 2; do\n  srun bash -c \"python t.py --tp $TP --q '$QUIET' --w $WORKSPACE\"\ndone\n",
    'for M in tiny huge; do\n  srun bash -c "python t.py --model $M; echo $WORKSPACE"\ndone\n',
    'for M in ab 12; do\n  srun bash -c "python t.py --m $M --w $WORKSPACE"\ndone\n',
    'for F in 12 ab; do\n  srun bash -c "python t.py $F>$WORKSPACE/log"\ndone\n',
    'for A in "a b" "c d"; do\n  srun bash -c "python t.py $A --w ${WORKSPACE}"\ndone\n',
    'for W in done abcd; do\n  srun bash -c "echo $W $WORKSPACE"\ndone\n',
    'for A in 1 2; do\n  srun bash -c "X=$A; python t.py --w $WORKSPACE \\$X"\ndone\n',
    'for TP in 1 16; do\n  srun bash -c "python t.py --tp $TP --w $WORKSPACE"\ndone\n',
    'for W in fi ab; do\n  srun bash -c "$W $WORKSPACE"\ndone\n',
]


@pytest.mark.parametrize("body", EXPANSION_SHAPES)
def test_an_alternative_read_on_the_steps_tree_expands_where_its_own_tree_does(body):
    from sbatchlint.model import boundary
    from sbatchlint.model.steps import task_tree

    script = Script(Source((HEADER + body).encode(), "job.sh"))
    compared = 0
    for entry in script.early_expansions:
        for occurrence in entry.occurrences:
            own = boundary._own_tree(occurrence, script.values)
            if own is None:
                continue
            compared += 1
            parsed = task_tree(script.values, occurrence.value.text.encode()).root_node
            fast = boundary._task_expands_at(occurrence, entry.name, {occurrence.value.text: own}, script.values)
            full = boundary._task_expands_at(occurrence, entry.name, {occurrence.value.text: parsed}, script.values)
            assert fast == full, (body, entry.name, occurrence.value.text)
    if "in 1 2" in body and "X=" not in body or "tiny" in body:
        assert compared, "the step's tree should answer for this shape"


@pytest.mark.parametrize("body", EXPANSION_SHAPES)
def test_expansion_findings_are_the_same_without_the_steps_tree(body, monkeypatch):
    from sbatchlint.model import boundary

    text = HEADER + body
    fast = [(d.code, d.span, d.message) for d in lint_text(text)]
    monkeypatch.setattr(boundary, "_own_tree", lambda *args: None)
    assert [(d.code, d.span, d.message) for d in lint_text(text)] == fast


@pytest.mark.parametrize("body", EXPANSION_SHAPES + [
    'CMD="python t.py --w $WORKSPACE --o $WORKSPACE"\nfor TP in 1 2; do\n  srun bash -c "$CMD --tp $TP"\ndone\n',
    'if [ -n "$A" ]; then X=1; else X=2; fi\nsrun --export=ALL,W=$WORKSPACE bash -c "python t.py $X $WORKSPACE"\n',
    # the words an unquoted flag splits into share its alternatives: each is recorded once
    'if [ "$MODE" == a ]; then F="--bin-size ${SIZE}"; else F="--bins 4"; fi\nsrun prep ${F} --seed 1\n',
])
def test_every_occurrence_of_an_early_expansion_is_recorded_once(body):
    """Each (site, step, alternative, offset) once, and every one of them: what a scan of the
    steps' task words finds."""
    from sbatchlint.model import boundary

    script = Script(Source((HEADER + body).encode(), "job.sh"))
    recorded = [
        (entry.site.start, entry.site.end, id(o.step), id(o.value), o.offset)
        for entry in script.early_expansions
        for o in entry.occurrences
    ]
    assert len(recorded) == len(set(recorded))
    expected = set()
    for step in script.steps:
        for word, _ in boundary._task_words(step):
            for value in boundary._alternatives(word):
                for offset, piece in boundary._named_unknowns(value):
                    if boundary._is_expansion_of(script.data, piece):
                        expected.add((piece.span.start, piece.span.end, id(step), id(value), offset))
    # (an environment word is made afresh on each scan: compare those by site and offset)
    def loose(marks):
        return {(a, b, s, o) for a, b, s, _v, o in marks}
    assert loose(recorded) == loose(expected)
    assert {m for m in recorded if m[3] in {x[3] for x in expected}} <= expected

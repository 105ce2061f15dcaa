"""Launch variants of a task string read without parsing the alternative string again.

A step inside ``for TP in 1 2 4`` runs ``bash -c "… --tp $TP"`` once per value: every
alternative string differs from the step's own only in a literal argument of the same length.
``launch._substituted`` maps the command the step's own string parsed to onto the alternative's
pieces instead of parsing it. An alternative that rewrites plain argument words with text of
another length (``${WORKSPACE:-/workspace}/ckpt`` left to the task's shell as ``${WORKSPACE}/ckpt``)
is read the same way, each rewritten word off the alternative's own pieces (``launch._shifted``).
These tests compare both with the full reading over shapes written for the purpose: where they
answer, they must answer what parsing gives; where the alternative reads differently (another
word count, a redirection, a number that is a file descriptor, a variable the string assigns),
they must leave the question to the parser.
"""
from __future__ import annotations

import pytest

from sbatchlint.model import launch as launch_model
from sbatchlint.model.script import Script
from sbatchlint.model.steps import parsed_task_string, task_string_command
from sbatchlint.model.swaps import swapped_words
from sbatchlint.source import Source

from lintutil import lint_text

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"

# (name, body, whether the same-tree shortcut must answer for at least one alternative, and
# whether the shortcut for another length must)
SHAPES = [
    ("digits", 'for TP in 1 2 4; do\n  srun bash -c "cd /w && python train.py --tp $TP --pp 1"\ndone\n', True, False),
    ("option with value", 'for N in 4 8; do\n  srun bash -c "torchrun --nproc_per_node=$N --nnodes=2 t.py"\ndone\n', True, False),
    ("override", 'for TP in 2 4; do\n  srun bash -c "python t.py model.tensor_model_parallel_size=$TP x=1"\ndone\n', True, False),
    ("two loops in one word", 'for A in 1 2; do for B in 3 4; do\n  srun bash -c "python t.py --cfg=$A,$B"\ndone; done\n', True, False),
    ("branch", 'if [ -n "$BIG" ]; then TP=8; else TP=2; fi\nsrun bash -lc "python t.py --tp $TP"\n', True, True),
    ("names", 'for M in tiny huge; do\n  srun bash -c "python t.py --model $M --out /r/$M"\ndone\n', True, False),
    ("a later command", 'for TP in 1 2; do\n  srun bash -c "cd /w; python a.py; python b.py --tp $TP"\ndone\n', True, False),
    ("two commands", 'for TP in 1 2; do\n  srun bash -c "cd /w; python a.py --tp $TP; python b.py --tp $TP"\ndone\n', False, False),
    ("a directory", 'for D in aa bb; do\n  srun bash -c "cd /w/$D && python t.py"\ndone\n', True, False),
    ("word then number", 'for M in ab 12; do\n  srun bash -c "python t.py --m $M"\ndone\n', False, True),
    ("number then word", 'for M in 12 ab; do\n  srun bash -c "python t.py --m $M"\ndone\n', False, True),
    ("descriptor", 'for F in 12 ab; do\n  srun bash -c "python t.py $F>out.log"\ndone\n', False, False),
    ("descriptor last", 'for F in ab 12; do\n  srun bash -c "python t.py $F>out.log"\ndone\n', False, False),
    ("reserved word", 'for W in done abcd; do\n  srun bash -c "echo $W; python t.py"\ndone\n', False, False),
    ("other length", 'for TP in 1 16; do\n  srun bash -c "python t.py --tp $TP"\ndone\n', False, True),
    ("inner loop", 'for A in 1 2; do\n  srun bash -c "for x in $A; do python t.py --x \\$x; done"\ndone\n', False, False),
    ("prefix", 'for TP in 1 2; do\n  srun bash -c "TP=$TP python t.py"\ndone\n', False, False),
    ("default", 'TP=${TP:-2}\nsrun bash -c "python t.py --tp $TP"\n', False, True),
    ("quoted", "for N in ab cd; do\n  srun bash -c \"python t.py --name '$N'\"\ndone\n", False, True),
    ("blank", 'for A in "a b" "c d"; do\n  srun bash -c "python t.py $A"\ndone\n', False, False),
    ("glob", 'for P in "a*" bc; do\n  srun bash -c "python t.py $P"\ndone\n', False, False),
    ("redirect target", 'for L in aa bb; do\n  srun bash -c "python t.py > /logs/$L.txt"\ndone\n', False, False),
    ("command name", 'for P in py3 py4; do\n  srun bash -c "$P t.py"\ndone\n', False, False),
    ("assignment", 'for TP in 1 2; do\n  srun bash -c "X=$TP; python t.py --tp \\$X"\ndone\n', False, False),
]


# Alternatives of another length: defaults the environment may override, longer loop values.
SHIFTED_SHAPES = [
    ("default in a path", 'srun bash -c "python t.py --save ${W:-/workspace}/ckpt --tp 2"\n', True),
    ("default alone", 'srun bash -c "torchrun --nproc_per_node ${G:-4} t.py"\n', True),
    ("two defaults in a word", 'srun bash -c "python t.py --data ${A:-/a}/x/${B:-b}.bin"\n', True),
    ("defaults in two words", 'srun bash -c "python t.py --save ${W:-/ws}/c --load ${W:-/ws}/d"\n', True),
    ("longer loop value", 'for TP in 1 16; do\n  srun bash -c "python t.py --tp $TP --pp 1"\ndone\n', True),
    ("a later command moves", 'srun bash -c "python t.py --tp 2; cp x ${W:-/ws}/y"\n', True),
    ("digits after an expansion", 'srun bash -c "python t.py --m ${W:-/w}12ab"\n', True),
    ("a number in the loop", 'for M in 12 ab; do\n  srun bash -c "python t.py --m ${W:-/w}/$M"\ndone\n', True),
    ("an empty value before", 'E=""\nsrun bash -c "python t.py --save $E${W:-/ws}/ckpt"\n', True),
    ("a line continuation before", 'srun bash -c "python t.py --save \\\n${W:-/ws}/ckpt --tp 2"\n', False),
    ("a line continuation after", 'srun bash -c "python t.py --save ${W:-/ws}/ckpt\\\n --tp 2"\n', False),
    ("an earlier command moves", 'srun bash -c "cd ${W:-/ws} && python t.py --tp 2"\n', True),
    ("earlier commands move", 'srun bash -c "cd ${W:-/w} && mkdir -p ${W:-/w}/o; X=1 python t.py --s ${W:-/w}/c"\n', True),
    ("an earlier command shrinks", 'for D in /long/dir /d; do\n  srun bash -c "cd $D; python t.py --tp 2"\ndone\n', True),
    ("an unknown in the step's string", 'srun bash -c "torchrun --nproc_per_node=${GPUS:-$NPROC_PER_NODE} t.py"\n', True),
    ("an expansion the task's shell makes after it", 'srun bash -c "python t.py --save ${W:-/ws}/c --rank \\$SLURM_PROCID"\n', True),
    ("a variable of the string after it", 'srun bash -c "X=\\$Y; python t.py --save ${W:-/ws}/c \\"\\$X\\""\n', False),
    ("quotes in the word", 'srun bash -c "python t.py --x=\\"a\\"${W:-/ws}"\n', False),
    ("assigned in the string", 'srun bash -c "W=/x; python t.py --save ${W:-/ws}/ckpt"\n', False),
    ("assigned later in the string", 'srun bash -c "python t.py --save ${W:-/ws}/ckpt; W=/x"\n', False),
    ("IFS", 'srun bash -c "IFS=,; python t.py --save ${W:-/ws}/ckpt"\n', False),
    ("a split variable after it", 'srun bash -c "X=1; python t.py --save ${W:-/ws}/ckpt --x \\$X"\n', False),
    ("an escape after it", 'srun bash -c "python t.py --save ${W:-/ws}/ckpt a\\\\ b"\n', False),
    ("glob", 'srun bash -c "python t.py ${W:-/ws}/*.py"\n', False),
    ("quoted in the string", "srun bash -c \"python t.py --save '${W:-/ws}/ckpt'\"\n", True),
    ("quoted twice in the string", "srun bash -c \"python t.py --m '${M:-org/model-v1}' --p '/ws/${M:-org/model-v1}'\"\n", True),
    ("a quote in a single-quoted word", "for N in \"a'b\" cd; do\n  srun bash -c \"python t.py --name '$N'\"\ndone\n", False),
    ("a quoted word and a plain one", "srun bash -c \"python t.py --m '${M:-a/b}' --save ${W:-/ws}/c\"\n", True),
    ("redirect target", 'srun bash -c "python t.py > ${W:-/ws}/log"\n', False),
    ("command name", 'srun bash -c "${PY:-python} t.py"\n', False),
    ("before a redirection", 'srun bash -c "python t.py ${F:-ab}>out.log"\n', False),
    ("a prefix assignment", 'srun bash -c "X=${W:-/ws} python t.py"\n', False),
    ("read", 'srun bash -c "read ${W:-abc} < /f; python t.py"\n', False),
    ("a reserved word", 'for W in done abcdef; do\n  srun bash -c "echo $W; python t.py"\ndone\n', False),
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


def _reading(command, same_length=True):
    """Everything a launch reads of a task command (the node by its place and kind; where it
    ends only when the alternative is as long as the step's string)."""
    node = command.node
    return (
        [(w.value, w.span, w.alternatives, w.node) for w in command.argv],
        [(e.name, e.value, e.span) for e in command.env],
        command.in_string,
        (node.start_byte, node.type) + ((node.end_byte,) if same_length else ()),
    )


def _compare(body: str):
    """Check every answer of the shortcuts against the parse; how many each gave (the same
    tree, another length)."""
    script = Script(Source((HEADER + body).encode(), "job.sh"))
    same_tree = shifted = 0
    for step in script.steps:
        if step.shell_index is None or step.task_string is None:
            continue
        alternatives = _string_word(step).alternatives or []
        own = step.task_values
        root = parsed_task_string(script.values, step.task_string).local[0].root_node
        for index in range(len(step.task_commands)):
            for alternative in alternatives[:-1]:
                fast = launch_model._substituted(script, step, alternative, index)
                if fast is None:
                    continue
                if swapped_words(root, step.task_string, alternative):
                    same_tree += 1
                else:
                    shifted += 1
                full = task_string_command(script.values, alternative, index, len(step.task_commands), step)
                step.task_values = own
                # where the node ends is compared when the alternative is as long as the step's
                # string, or when the command moved (its node is the alternative's own)
                moved = fast.node.start_byte != step.task_commands[index].node.start_byte
                exact = moved or len(alternative.text) == len(step.task_string.text)
                assert full is not None, (body, index, alternative.text)
                assert _reading(fast, exact) == _reading(full, exact), (body, index, alternative.text)
    return same_tree, shifted


@pytest.mark.parametrize("name, body, applies, shifted", SHAPES, ids=[s[0] for s in SHAPES])
def test_the_shortcut_answers_what_parsing_the_alternative_gives(name, body, applies, shifted):
    same_tree, other = _compare(body)
    if applies:
        assert same_tree, "the shortcut should apply to this shape"
    else:
        assert same_tree == 0, "the alternative does not read as the step's own string"
    assert bool(other) == shifted


@pytest.mark.parametrize("name, body, applies", SHIFTED_SHAPES, ids=[s[0] for s in SHIFTED_SHAPES])
def test_an_alternative_of_another_length_reads_as_parsing_it_gives(name, body, applies):
    _same_tree, shifted = _compare(body)
    if applies:
        assert shifted, "the shortcut should apply to this shape"
    else:
        assert shifted == 0, "the alternative must be parsed"


@pytest.mark.parametrize("body", [
    'srun bash -c "cd ${W:-/ws} && python t.py --tp 2"\n',
    'srun bash -c "cd ${W:-/w} && mkdir -p ${W:-/w}/o; X=1 python t.py --s ${W:-/w}/c"\n',
    'for D in /long/dir /d; do\n  srun bash -c "cd $D; python t.py --tp 2"\ndone\n',
])
def test_a_command_an_earlier_rewritten_word_moves_is_read_off_the_steps_parse(body):
    """The launch's command comes after the rewritten words: its node is the alternative's own,
    where the words before it moved it, and the rest is the step's reading."""
    script = Script(Source((HEADER + body).encode(), "job.sh"))
    (step,) = script.steps
    index = len(step.task_commands) - 1
    moved = 0
    for alternative in (_string_word(step).alternatives or [])[:-1]:
        fast = launch_model._substituted(script, step, alternative, index)
        assert fast is not None, alternative.text
        full = task_string_command(script.values, alternative, index, len(step.task_commands), step)
        moving = fast.node.start_byte != step.task_commands[index].node.start_byte
        assert _reading(fast, moving) == _reading(full, moving)  # a moved node: the parse's own
        moved += moving
    assert moved


@pytest.mark.parametrize("name, body", [s[:2] for s in SHAPES + SHIFTED_SHAPES], ids=[s[0] for s in SHAPES + SHIFTED_SHAPES])
def test_findings_are_the_same_without_the_shortcut(name, body, monkeypatch):
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


# Alternatives of another length with batch-shell expansions inside and around the rewritten words.
SHIFTED_EXPANSION_SHAPES = [
    'srun bash -c "python t.py --save ${W:-/ws}/ckpt --out $WORKSPACE/run"\n',
    'srun bash -c "python t.py --out $WORKSPACE/run --save ${W:-/ws}/ckpt --log $WORKSPACE/log"\n',
    "srun bash -c \"python t.py --q '$QUIET' --save ${W:-/ws}/ckpt --r '$QUIET'\"\n",
    'srun bash -c "python t.py --save ${W:-/workspace}/$RUN/ckpt; echo $WORKSPACE"\n',
    'srun bash -c "python t.py --save ${W:-/ws}/c --load ${W:-/ws}/d \\"$WORKSPACE\\""\n',
    'srun bash -c "python t.py --tp ${TP:-2}; cat <<< \\"$WORKSPACE\\" # $QUIET"\n',
    'srun bash -c "W=/x; python t.py --save ${W:-/ws}/ckpt --out $WORKSPACE"\n',
    "srun bash -c \"python t.py --q '${W:-/ws}/x' --out $WORKSPACE --r '$QUIET'\"\n",
]


@pytest.mark.parametrize("body", EXPANSION_SHAPES + SHIFTED_EXPANSION_SHAPES)
def test_an_alternative_read_on_the_steps_shifted_tree_expands_where_its_own_tree_does(body):
    from sbatchlint.model import boundary
    from sbatchlint.model.steps import task_tree

    script = Script(Source((HEADER + body).encode(), "job.sh"))
    compared = 0
    for entry in script.early_expansions:
        for occurrence in entry.occurrences:
            shifted = boundary._shifted_tree(occurrence, script.values)
            if shifted is None:
                continue
            compared += 1
            parsed = task_tree(script.values, occurrence.value.text.encode()).root_node
            fast = boundary._task_expands_at(occurrence, entry.name, {occurrence.value.text: shifted}, script.values)
            full = boundary._task_expands_at(occurrence, entry.name, {occurrence.value.text: parsed}, script.values)
            assert fast == full, (body, entry.name, occurrence.value.text)
    if body in SHIFTED_EXPANSION_SHAPES and "W=/x" not in body:
        assert compared, "the step's tree should answer for this shape"


@pytest.mark.parametrize("body", EXPANSION_SHAPES + SHIFTED_EXPANSION_SHAPES)
def test_expansion_findings_are_the_same_without_the_steps_tree(body, monkeypatch):
    from sbatchlint.model import boundary

    text = HEADER + body
    fast = [(d.code, d.span, d.message) for d in lint_text(text)]
    monkeypatch.setattr(boundary, "_own_tree", lambda *args: None)
    monkeypatch.setattr(boundary, "_shifted_tree", lambda *args: None)
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

"""Shortcuts the model takes for speed give what the plain reading gives.

Each test compares a fast path with the straightforward computation it replaces, over shapes
written for the purpose (and fails when the shortcut answers differently), or checks what a user
sees through it.
"""
from __future__ import annotations

import itertools
import re

import pytest

from sbatchlint.model.script import Script
from sbatchlint.model.values import noglob
from sbatchlint.shell import _SECOND_ASSIGNMENT
from sbatchlint.source import Source, Span
from sbatchlint.model.values import Value

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"


def script(text: str) -> Script:
    return Script(Source(text.encode(), "job.sh"))


# -- ``set -f``: searched for its literal, the word boundary checked by hand ---------------------
PLAIN_NOGLOB = re.compile(rb"\bset\s+(-[a-zA-Z]*f|-o\s+noglob)\b")

NOGLOB_SHAPES = [
    b"set -f\n", b"set -ef\n", b"set -euf\n", b"set -e\n", b"set -o noglob\n", b"set -o  noglob\n",
    b"set -o pipefail\n", b"reset -f\n", b"offset -f\n", b"dataset -f\n", b"reset -f; set -f\n",
    b"reset -f\nset -f\n", b"echo dataset -f && set -x\n", b"_set -f\n", b"9set -f\n", b"set\t-f\n",
    b"set -fx\n", b"set -f2\n", b"set -o noglobber\n", b"# set -f\n", b"x=1;set -f\n", b"(set -f)\n",
    b"set", b"set -", b"set -f", b"resetset -f\n", b"set -- -f\n", b"SET -f\n", b"set\n-f\n",
]


@pytest.mark.parametrize("data", NOGLOB_SHAPES)
def test_noglob_agrees_with_the_word_boundary_pattern(data):
    assert noglob(data) == bool(PLAIN_NOGLOB.search(data))
    assert noglob(b"echo hi\n" + data) == bool(PLAIN_NOGLOB.search(b"echo hi\n" + data))


def test_noglob_agrees_on_every_short_mix_of_its_pieces():
    pieces = [b"set", b"re", b" ", b"-", b"f", b"o", b"noglob", b"\n", b"_", b"x"]
    for length in range(1, 6):
        for parts in itertools.product(pieces, repeat=length):
            data = b"".join(parts)
            assert noglob(data) == bool(PLAIN_NOGLOB.search(data)), data


def test_a_pattern_is_a_file_name_unless_the_script_turns_globbing_off():
    body = 'CONFIGS="configs/*.yaml"\nsrun -K python train.py $CONFIGS\n'

    def last_word(prefix: str):
        (step,) = script(HEADER + prefix + body).steps
        word = step.command.argv[-1]
        return word.text if word.known else None

    assert last_word("") is None
    assert last_word("set -f\n") == "configs/*.yaml"
    assert last_word("set -o noglob\n") == "configs/*.yaml"
    assert last_word("reset -f\n") is None  # another command whose name ends in "set"
    assert last_word("echo dataset -f\n") is None


# -- glued assignments: the first value read from one class of first bytes ------------------------
PLAIN_SECOND_ASSIGNMENT = re.compile(
    rb"(?:=[^ \t\n=]*|[\"')}\]])(?:[ \t]|\\\r?\n)+[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\n]*\])?\+?="
)

GLUE_SHAPES = [
    b"A=1 B=2\n", b"A=1 B=2 C=3\n", b"A=\"x y\" B=2\n", b"A='x' B=2\n", b"A=$(date) B=2\n",
    b"A=${X} B=2\n", b"A=(1 2) B=2\n", b"A[1]=x B[2]=y\n", b"A=1 B+=2\n", b"A=1 \\\nB=2\n",
    b"A=1 \\\r\nB=2\n", b"A=x\\ y B=2\n", b"A=1 b c=2\n", b"A==1 B=2\n", b"echo x=1 y=2\n",
    b"A=1\tB=2\n", b"A=1  B=2 cmd\n", b"f() { A=1; } B=2\n", b"A=1 B[x y]=2\n", b"A=1 9B=2\n",
    b"A=\"$B\" C=\"$D\" E=1 srun x\n", b"A=1 B\n", b"A=a=b C=d\n", b"A=1 \\\n  \\\n B=2\n",
]


@pytest.mark.parametrize("data", GLUE_SHAPES)
def test_second_assignment_finds_what_the_two_branch_pattern_finds(data):
    for text in (data, b"echo start\n" + data + b"srun hostname\n", data * 3):
        found = [m.span() for m in _SECOND_ASSIGNMENT.finditer(text)]
        assert found == [m.span() for m in PLAIN_SECOND_ASSIGNMENT.finditer(text)], text


def test_second_assignment_agrees_on_every_short_mix_of_its_pieces():
    pieces = [b"A", b"=", b" ", b"\"", b")", b"\\\n", b"x", b"[1]", b"+", b"\n"]
    for length in range(1, 6):
        for parts in itertools.product(pieces, repeat=length):
            data = b"".join(parts)
            found = [m.span() for m in _SECOND_ASSIGNMENT.finditer(data)]
            assert found == [m.span() for m in PLAIN_SECOND_ASSIGNMENT.finditer(data)], data


def test_glued_assignments_after_a_quoted_value_are_the_shells_own():
    text = HEADER + 'PORT="29500" ADDR=node1\nsrun python serve.py --port $PORT\n'
    model = script(text)
    (step,) = model.steps
    assert step.command.env == []  # the newline ends the assignments' statement
    assert [w.text for w in step.command.argv][-1] == "29500"


def _sexp(node) -> tuple:
    return (node.type, node.start_byte, node.end_byte, tuple(_sexp(child) for child in node.children))


@pytest.mark.parametrize("data", GLUE_SHAPES)
def test_the_indexed_parse_undoes_glued_assignments_as_the_plain_parse_does(data):
    """``parse_indexed`` skips the pattern search when no command starts with an assignment: it
    gives the tree ``parse`` gives, glued or not, and the index of that tree."""
    from sbatchlint.shell import NodeIndex, parse, parse_indexed

    for text in (data, data + b"srun hostname\n", b"echo start\n" + data + b"  srun -n 2 x\n",
                 data + b"# note\nsrun x\n", b"(" + data + b"srun x)\n", b"echo $(" + data + b"ls)\n",
                 b"echo $((10#$N))\n" + data + b"srun x\n", b">log " + data + b"srun x\n"):
        tree, index = parse_indexed(text)
        assert _sexp(tree.root_node) == _sexp(parse(text).root_node), text
        assert index.root == tree.root_node
        plain = NodeIndex(tree.root_node)
        for kind in ("command", "variable_assignment", "variable_assignments", "command_name"):
            assert [_sexp(n) for n in index.of_type(kind)] == [_sexp(n) for n in plain.of_type(kind)]


@pytest.mark.parametrize("data", GLUE_SHAPES)
def test_the_collecting_parse_of_a_task_string_is_the_plain_parse_and_its_walk(data):
    """``parse_collecting`` (a task string's parse, with the nodes its values read) skips the
    pattern search when no command may hold glued assignments: it gives the tree ``parse``
    gives, glued or not, and the nodes of those types a walk of that tree finds."""
    from sbatchlint.model.values import Values
    from sbatchlint.shell import parse, parse_collecting, walk

    kinds = Values.COLLECTED
    for text in (data, data + b"srun hostname\n", b"echo start\n" + data + b"  srun -n 2 x\n",
                 data + b"# note\nsrun x\n", b"(" + data + b"srun x)\n", b"echo $(" + data + b"ls)\n",
                 b"echo $((10#$N))\n" + data + b"srun x\n", b">log " + data + b"srun x\n",
                 b"for i in 1 2; do export A=$i; unset B; declare -x C=1; done\n" + data + b"x\n"):
        tree, nodes = parse_collecting(text, kinds)
        plain = parse(text)
        assert _sexp(tree.root_node) == _sexp(plain.root_node), text
        assert [_sexp(n) for n in nodes] == [_sexp(n) for n in walk(plain.root_node) if n.type in kinds], text


def test_a_task_string_read_before_or_after_its_tree_was_asked_for_reads_the_same():
    """A task string's text parsed first for its commands (nodes found by the parse's walk) or
    first for its tree alone (``task_tree``: nodes found by walking it after) gives the same
    tree, assignments and commands."""
    from sbatchlint.model import steps as step_model

    body = ('CMD="A=1 B=2\nexport C=$A; for i in 1 2; do D+=$i; done; unset B\n'
            'X=1 Y=2 python t.py --a $A --c \\$C --d $D"\nsrun bash -c "$CMD"\n')
    first, second = script(HEADER + body), script(HEADER + body)
    string = first.steps[0].task_string
    text = string.text.encode("utf-8")
    step_model.task_tree(second.values, text)  # the tree first, as the launches may ask
    second.steps
    a, b = step_model._task_text(first.values, text), step_model._task_text(second.values, text)
    assert _sexp(a[0].root_node) == _sexp(b[0].root_node)
    assert [_sexp(n) for n in a[3]] == [_sexp(n) for n in b[3]] and len(a[3]) > 4
    assert {k: [x.span for x in v] for k, v in a[1].assignments.items()} == {
        k: [x.span for x in v] for k, v in b[1].assignments.items()}
    assert [[w.text for w in c.argv] for c in first.steps[0].task_commands] == [
        [w.text for w in c.argv] for c in second.steps[0].task_commands]


def test_a_glued_line_is_cut_in_the_scripts_own_tree():
    """A command whose leading assignments end a line gets the ``;`` (its tree has the
    assignments as a statement of their own), and a command without one keeps its tree."""
    glued = script('A="x y" B=$(date) \nsrun hostname\n')
    assert [c.type for c in glued.root.children] == ["variable_assignments", ";", "command"]
    kept = script('A="x y" B=$(date) srun hostname\n')
    assert [c.type for c in kept.root.children] == ["command"]


INDEX_SHAPES = [
    'A=1 B="x $Y ${Z:-w}" C=(1 2) D[3]=4\nexport E=$A/b_$C.d F+=1\nunset A\nfor i in 1 2; do echo "$i"; done\n',
    'cat <<EOF | while read -r x; do srun echo "$x" ${x}; done\nbody $HOME ${USER}\nEOF\n# a comment\n',
    "echo 'raw' $'ansi' $\"tr\" $((1 + N)) `date` $(ls $D) > out.log 2>&1\ncat <<'Q' >> f\nlit $x\nQ\n",
    'f() { local v=1; declare -a arr=(x y); }\nif [[ $A == b ]]; then X=${A#*/}; elif true; then :; fi\n',
    'srun --export=ALL,A=$B python -c "print(1)" $@ "$@" ${ARR[@]} x$((2))y\ncase $1 in a) B=1;; esac\n',
    'echo $A/b_$C.d "unterminated\n',
]


@pytest.mark.parametrize("text", INDEX_SHAPES)
def test_the_node_index_answers_every_type_as_a_filter_of_the_whole_walk(text):
    """The index keeps only the ``INDEXED`` types; any question, of kept types, of other types
    (walked when asked), of several types and of types with several kind ids, gets the nodes a
    filter of the whole walk gives, in walk order."""
    from sbatchlint.shell import INDEXED, NodeIndex, _walk, parse

    root = parse(text.encode()).root_node
    index = NodeIndex(root)
    every = list(_walk(root))
    asked = [(kind,) for kind in sorted({node.type for node in every} | INDEXED)]
    asked += [("variable_assignment", "declaration_command", "for_statement", "command", "unset_command"),
              ("simple_expansion", "expansion"), ("comment", "heredoc_body"), ("word", "command"),
              ("string", "raw_string", "ansi_c_string", "translated_string", "arithmetic_expansion"),
              ("expansion", "simple_expansion", "expansion")]
    for kinds in asked:
        assert [n.id for n in index.of_type(*kinds)] == [n.id for n in every if n.type in kinds], kinds
    assert [n.id for n in index.order] == [n.id for n in every]


# -- a launch on CPU: the hint pattern searched only when its words can be there -----------------
@pytest.mark.parametrize(
    "args, gpus",
    [
        ("", True),
        ("--backend gloo", False),
        ("--backend=GLOO", False),
        ("--device CPU", False),
        ("--cpu", False),
        ("--CPU", False),
        ("--no-cuda", False),
        ("--No_Cuda", False),
        ("--cpus 4", True),  # not the word "cpu"
        ("--cuda-graphs", True),
        ("--gloo-timeout 30", True),
        ("--dist nccl,gloo", True),  # "gloo" after a comma is no backend given
    ],
)
def test_a_launch_that_says_it_runs_on_cpu_wants_no_gpu(args, gpus):
    from sbatchlint.model.workload import CPU_HINTS, _launch_text, uses_gpus

    (launch,) = script(HEADER + f"srun torchrun --nproc_per_node=8 train.py {args}\n").launches
    assert uses_gpus(launch) is gpus
    assert (not CPU_HINTS.search(_launch_text(launch))) is gpus  # what the full search says


# -- substitution: each piece carried to the use site once, every value mapped in one pass --------
def _carried_one_by_one(piece, name, span, quote):
    """What a piece of ``$name``'s value becomes at a use site, written out plainly."""
    from sbatchlint.model.values import Piece

    unquoted = quote == ""
    site = (span,)
    if piece.known:
        return Piece(piece.text, piece.span, piece.quote, True, piece.name, piece.escaped, piece.via + site,
                     piece.split or unquoted, False, piece.loop)
    if piece.span is not None:
        return Piece(piece.text, piece.span or span, piece.quote, False, piece.name or name, piece.escaped,
                     piece.via + site, piece.split or unquoted, False, piece.loop)
    return Piece("", span, quote, False, piece.name or name, False, piece.via + site, unquoted, False, piece.loop)


SUBSTITUTION_SHAPES = [
    'X="a b"\n',
    'X=1\nif [ -n "$D" ]; then X="$X --debug"; fi\nX="$X --fast"\n',
    'X=\ncase "$M" in a) X="$X -a";; b) X="$X -b";; esac\nX="$X $X"\n',
    'X=${EXTRA:-"--lr 1"}\n',
    'unset X\n',
    'X=""\n[ -n "$Q" ] && X="$PREFIX"\n',
    'X=$(hostname)\nif true; then X="$X:1"; else X="${X}:2"; fi\n',
    'for N in 1 2; do X="--n $N"; done\n',
]


@pytest.mark.parametrize("body", SUBSTITUTION_SHAPES)
@pytest.mark.parametrize("quoted", [True, False])
def test_substitution_gives_what_carrying_each_piece_gives(body, quoted):
    use = 'echo "$X" end\n' if quoted else "echo $X end\n"
    model = script(HEADER + body + use)
    values = model.values
    (echo,) = [c for c in model.commands if c.program == "echo" and c.node.start_byte >= len(HEADER + body)]
    argument = echo._arguments[1]  # (0: the command name)
    expansion = argument if not quoted else argument.named_children[0]
    span = Span(expansion.start_byte, expansion.end_byte)
    quote = '"' if quoted else ""
    found = values.lookup("X", span.start, expansion, 1)
    got = values._substitute("X", span, expansion, 0, quote)
    if not found:
        assert [v.text for v in got] == ["${X}"]
        return
    expected = [Value(tuple(_carried_one_by_one(p, "X", span, quote) for p in v.pieces)) for v in found]
    assert got == expected
    # a piece object several alternatives hold reaches the site as one object
    by_original = {}
    for before, after in zip(found, got):
        for old, new in zip(before.pieces, after.pieces):
            assert by_original.setdefault(id(old), new) is new


# -- the model is freed when its file is done, before the cyclic collector runs again -------------
JOB = HEADER + """#SBATCH --job-name=shapes
set -euo pipefail
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
ARGS="--tp 2 --pp 1"
if [ -n "${DEBUG:-}" ]; then ARGS="$ARGS --log-level debug"; fi
srun --container-image=nvcr.io/nvidia/pytorch:24.05-py3 bash -c "torchrun --nnodes=$SLURM_NNODES \\
  --rdzv_endpoint=$MASTER_ADDR:29500 train.py $ARGS"
"""


@pytest.mark.parametrize("fix", [False, True])
def test_the_model_is_freed_before_the_collector_is_turned_back_on(tmp_path, monkeypatch, fix):
    """The collector is held off while a file's model is built and read; were the model still
    alive when it is turned back on, the next collection would walk all of it for nothing."""
    import gc
    import weakref

    from sbatchlint import linter, runner

    built = []
    plain_build = linter.build

    def build(source, options=None):
        model = plain_build(source, options)
        built.append(weakref.ref(model))
        return model

    alive_at_enable = []

    class Collector:
        isenabled = staticmethod(gc.isenabled)
        disable = staticmethod(gc.disable)

        @staticmethod
        def enable():
            alive_at_enable.append(sum(ref() is not None for ref in built))
            gc.enable()

    monkeypatch.setattr(runner, "build", build)
    monkeypatch.setattr(linter, "build", build)
    monkeypatch.setattr(runner, "gc", Collector)
    monkeypatch.setattr(linter, "gc", Collector)
    path = tmp_path / "job.sh"
    path.write_text(JOB)
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        result = runner.run_job(runner.Job(str(path), str(path), linter.Options(), diff=fix))
    finally:
        if not was_enabled:
            gc.disable()
    assert result.error is None
    assert (result.diff is not None) is fix
    assert built and alive_at_enable and alive_at_enable[-1] == 0


# -- placeholder words: the candidate pattern tried only where one of its literals begins --------
def test_word_candidates_are_what_a_search_over_every_byte_finds():
    from sbatchlint.model.placeholders import _WORD_CANDIDATE, _word_candidates, _word_spans

    pieces = [b"your", b"_", b"-", b"here", b"change", b"me", b"fill", b"in", b"replace", b"xx", b"x", b" "]
    for length in range(1, 5):
        for parts in itertools.product(pieces, repeat=length):
            data = b"".join(parts)
            expected = [m.span() for m in _WORD_CANDIDATE.finditer(data)]
            assert list(_word_candidates(data)) == expected, data
            assert _word_spans(data.upper()) == expected, data  # found in the lowered bytes


@pytest.mark.parametrize(
    "line, found",
    [
        ("export WANDB_ENTITY=your_team_here\n", ["your_team_here"]),
        ("ACCOUNT=CHANGE_ME\n", ["CHANGE_ME"]),
        ("DATA=/data/project_xxxxxxxxx/set\n", ["project_xxxxxxxxx"]),
        ("DATA=/data/backfill_in_progress/set\n", []),
        ("TOKEN=fill_me_in\n", ["fill_me"]),
    ],
)
def test_placeholder_words_in_assignments_are_reported(line, found):
    from lintutil import lint_text

    text = HEADER + line + "srun python train.py\n"
    assert [d.message.split("`")[1] for d in lint_text(text) if d.code == "SBL009"] == found


# -- parallelism sizes: words without a "p" skipped -----------------------------------------------
def test_every_parallelism_name_holds_the_letter_the_reading_looks_for():
    from sbatchlint.model.launch import PARALLELISM_NAMES

    assert all("p" in name for name in PARALLELISM_NAMES)  # else parallel_sizes would skip it


@pytest.mark.parametrize(
    "args, sizes",
    [
        ("--tensor-model-parallel-size 4 --pipeline-model-parallel-size=2", {"tp": 4, "pp": 2}),
        ("--TP 2 --Pp=4 --lr 1e-4 --seq-length 4096", {"tp": 2, "pp": 4}),
        ("model.tensor_model_parallel_size=8 model.context_parallel_size=2 trainer.devices=8", {"tp": 8, "cp": 2}),
        ("+model.Expert_Model_Parallel_Size=4 ~model.etp=1", {"ep": 4}),
        ("--tp 2 $EXTRA --lr 1", {}),
        ("--tp 2 --micro-batch-size 1 --tp 4", {"tp": 4}),
    ],
)
def test_parallel_sizes_are_read_in_every_spelling(args, sizes):
    text = HEADER + f"srun torchrun --nproc_per_node=8 pretrain_gpt.py {args}\n"
    (launch,) = script(text).launches
    assert {d: s.number for d, s in launch.parallelism.items()} == sizes


# -- products of alternatives bound to loop iterations -------------------------------------------
def _plain_product(parts):
    """Every combination, filtered by reading the whole combination at each part."""
    from sbatchlint.model.values import MAX_ALTERNATIVES, consistent

    results = [()]
    for alternatives in parts:
        if not alternatives:
            continue
        if any(p.loop for a in alternatives for p in a.pieces):
            combined = [r + a.pieces for r in results for a in alternatives if consistent(r + a.pieces)]
            results = combined[-MAX_ALTERNATIVES:] or results
            continue
        if len(results) * len(alternatives) > MAX_ALTERNATIVES:
            alternatives = alternatives[-max(1, MAX_ALTERNATIVES // max(1, len(results))):]
        results = [r + a.pieces for r in results for a in alternatives]
    return [Value(r) for r in results]


def test_product_keeps_each_loop_iteration_together_as_a_full_check_does():
    import random

    from sbatchlint.model.values import Piece, _product

    rng = random.Random(7)
    loops = [(10, i) for i in range(3)] + [(50, i) for i in range(2)]

    def value():
        pieces = []
        for _ in range(rng.randint(0, 3)):
            bound = tuple(rng.sample(loops, rng.randint(0, 2))) if rng.random() < 0.6 else ()
            pieces.append(Piece(rng.choice("abc"), None, loop=bound))
        return Value(tuple(pieces))

    for _ in range(400):
        parts = [[value() for _ in range(rng.randint(0, 4))] for _ in range(rng.randint(1, 5))]
        assert _product(parts) == _plain_product(parts)


def test_loop_iterations_stay_together_in_a_command():
    text = HEADER + (
        'for CFG in "2 4" "4 2"; do\n'
        '  read -r TP PP <<< "$CFG"\n'
        '  srun bash -c "torchrun pretrain_gpt.py --tp $TP --pp $PP"\n'
        "done\n"
    )
    (launch,) = script(text).launches
    pairs = {(v.parallelism["tp"].number, v.parallelism["pp"].number) for v in launch.variants or [launch]}
    assert (2, 4) in pairs or (4, 2) in pairs
    assert (2, 2) not in pairs and (4, 4) not in pairs


# -- backslashes: the escapable bytes read as ints -------------------------------------------------
@pytest.mark.parametrize(
    "word, text",
    [
        ('"a\\$b"', "a$b"), ('"a\\`b"', "a`b"), ('"a\\"b"', 'a"b'), ('"a\\\\b"', "a\\b"), ('"a\\xb"', "a\\xb"),
        ('"a\\\nb"', "ab"), ("a\\$b", "a$b"), ("a\\xb", "axb"), ('"a\\\'b"', "a\\'b"), ('"\\é"', "\\é"),
    ],
)
def test_a_backslash_escapes_what_bash_lets_it_escape(word, text):
    (command,) = script(f"#!/bin/bash\nprintf %s {word}\n").commands
    assert command.argv[2].text == text


def test_a_backslash_in_an_unquoted_here_document_escapes_dollar_but_not_a_quote():
    body = 'cat <<EOF\nprice \\$5 "\\"q\\"" \\x\nEOF\n'
    doc = script("#!/bin/bash\n" + body)
    (node,) = doc.nodes_of_type("heredoc_body")
    (value,) = doc.values.evaluate(node)
    assert value.text == 'price $5 "\\"q\\"" \\x\n'


# -- array splats: only words holding an ``@`` are looked at ---------------------------------------
@pytest.mark.parametrize(
    "word, argv",
    [
        ('"${ARGS[@]}"', ["--lr", "1e-4", "--tp 2"]),
        ('"${ARGS[*]}"', ["--lr 1e-4 --tp 2"]),
        ('"x${ARGS[@]}"', None),  # glued to text: not one word per element here
        ("user@host", ["user@host"]),
        ('"${ARGS[@]}" "${ARGS[@]}"', ["--lr", "1e-4", "--tp 2", "--lr", "1e-4", "--tp 2"]),
    ],
)
def test_an_array_splat_gives_one_word_per_element(word, argv):
    text = f"#!/bin/bash\nARGS=(--lr 1e-4 \"--tp 2\")\nprintf %s {word}\n"
    (command,) = [c for c in script(text).commands if c.program == "printf"]
    words = command.argv[2:]
    if argv is None:
        assert len(words) == 1
    else:
        assert [w.text for w in words] == argv
    for w in words:
        assert w.text == w.value.text == "".join(p.text if p.known else p.render() for p in w.pieces)


# -- SBL202: a command string with a blank in its literal text is not evaluated ----------------
QUOTED_VALUES = [
    '"torchrun --nnodes=$N train.py"', '"$A $B"', '"${A:-x y}"', '"$A"', '"a\\ b"', '"a\\\tb"',
    '"x\\\ny"', '"${A}${B}"', '"pre ${A:-}"', '"$(hostname) x"', '"a\\"b c"', '"\tx$A"',
    '"$A\t"', '"${A// /_}"', '"/results/${SLURM_JOB_ID}"', '""', '"$A""$B c"', '"a$A b"',
    '"${A:+--flag $B}"', '"x${A[@]}y"', '"\\$A b"',
]
ASSIGNED = ["", 'A="1 2"\n', "A=1\nB=2\n", 'A=x\nB="y z"\n', "for A in p q; do :; done\n"]


@pytest.mark.parametrize("value", QUOTED_VALUES)
@pytest.mark.parametrize("before", ASSIGNED)
def test_a_blank_in_a_strings_literal_text_is_in_every_value_it_takes(value, before):
    model = script(HEADER + before + f"CMD={value}\n")
    (assignment,) = model.values.assignments["CMD"]
    node = assignment.value_node
    values = model.values.evaluate(node)
    blank_everywhere = bool(values) and all(any(c.isspace() for c in v.text) for v in values)
    if model.blank_in_quoted_literal(node):
        assert blank_everywhere, (value, [v.text for v in values])


def test_the_blank_test_finds_the_literal_blanks():
    def blank(value: str) -> bool:
        model = script(HEADER + f"CMD={value}\n")
        return model.blank_in_quoted_literal(model.values.assignments["CMD"][0].value_node)

    assert blank('"torchrun --nnodes=$N train.py"') and blank('"a\\ b"') and blank('"\tx$A"')
    assert not blank('"${A:-x y}"') and not blank('"$A"') and not blank("'a b'") and not blank('"a\\\nb"')


# -- a step's geometry reads its options by canonical name in one pass --------------------------
STEP_LINES = [
    "srun -N 1 --nodes=2 --ntasks=4 python a.py",
    "srun --tasks-per-node=2 --ntasks-per-node=4 python a.py",
    "srun --ntasks-per-node=4 --tasks-per-node=2 -c 3 --cpus-per-task=5 python a.py",
    "srun --gpus-per-node=2 --gres=gpu:4 --gpus=8 --gpus-per-task=1 --het-group=1 python a.py",
    "srun -n2 -N2 --nodes 3 -n 5 python a.py",
    "srun python a.py",
]


@pytest.mark.parametrize("line", STEP_LINES)
def test_the_last_option_of_each_name_is_the_one_step_option_finds(line):
    from sbatchlint import options as option_table
    from sbatchlint.model.geometry import last_options, step_option

    (step,) = script(HEADER + line + "\n").steps
    last = last_options(step)
    names = set(option_table.SBATCH) | set(option_table.ALIASES.values()) | set(last)
    for name in sorted(names):
        assert last.get(name) is step_option(step, name), name


def test_the_winning_directive_follows_a_directive_added_after_a_question():
    from sbatchlint.model.header import Directive

    header = script(HEADER + "srun python a.py\n").header
    assert header.winning("nodes").value == "2" and header.get("nodes").value == "2"
    later = Directive(**{**header.winning("nodes").__dict__, "value": "5"})
    header.directives.append(later)
    assert header.winning("nodes") is later and header.get("nodes") is later


# -- a written here-document is submitted only by a command whose program is sbatch ---------------
@pytest.mark.parametrize(
    "submit, submitted",
    [("sbatch job.sh", True), ("/usr/bin/sbatch --parsable job.sh", True), ("bash job.sh", False),
     ("echo sbatch job.sh", False), ("", False)],
)
def test_a_written_job_is_submitted_when_sbatch_runs_it(submit, submitted):
    text = "#!/bin/bash\ncat > job.sh <<EOF\n#!/bin/bash\n#SBATCH -N 1\nsrun hostname\nEOF\n" + submit + "\n"
    (doc,) = script(text).heredocs
    assert doc.target == "job.sh" and doc.submitted is submitted


# -- SBL403: a `set` without an x in its bytes (nor an expansion) leaves xtrace as it is ----------
SET_SHAPES = [
    "set -e", "set -euo pipefail", "set -x", "set +x", "set -o xtrace", "set +o xtrace", "set -ex",
    'set -"x"', "set -\\x", "set $OPTS", 'set "${OPTS}"', "set -- -x", "set -o errexit", "set -v",
    "set -$(echo x)", "set -`echo x`", "set -e -u", "set ~", "set -?", "set -[x]", "set -o pipefail +e",
]


@pytest.mark.parametrize("line", SET_SHAPES)
def test_a_set_command_without_an_x_changes_no_tracing(line):
    from sbatchlint.rules.secrets import _may_trace, _xtrace_change

    model = script(HEADER + "OPTS=-x\n" + line + "\n")
    (command,) = [c for c in model.commands if c.program == "set"]
    asked = _may_trace(command)  # before the words are evaluated
    change = _xtrace_change([w.text for w in command.args])
    if not asked:
        assert change is None, line
    if "x" in line:
        assert asked, line


def test_tracing_turned_on_by_a_variable_is_seen():
    from lintutil import lint_text

    text = HEADER + 'export HF_TOKEN\nOPTS=-x\nset $OPTS\nsrun python a.py --token "$HF_TOKEN"\n'
    assert [d.code for d in lint_text(text) if d.code == "SBL403"] == ["SBL403"]


# -- a credential shape's literal part is looked for once per file, in its bytes -----------------
SHAPE_TEXTS = [
    b"export HF_TOKEN=hf_" + b"Q7v" * 12 + b"\n", b"echo hello\n", b"x=\xe2hf_" + b"a1" * 20 + b"\n",
    b"\xff\xfeghp_" + b"Z9" * 20, b"# sk-" + b"k" * 30 + b" in a comment\n", b"AKIA" + b"B" * 16,
    b"hooks.slack.com/services/T0/B0/x\n", b"\xe9t\xe9 xox", b"", b"h\xc3f_abc",
]


@pytest.mark.parametrize("data", SHAPE_TEXTS)
@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_shapes_found_from_the_bytes_hint_are_the_ones_a_text_search_finds(data, encoding):
    from sbatchlint.redaction import _ANY_HINT, shape_hints, shapes_in

    text = data.decode("utf-8", "replace") if encoding == "utf-8" else data.decode("latin-1")
    hinted = shape_hints(data)
    assert hinted == (_ANY_HINT.search(text) is not None)
    assert list(shapes_in(text, hinted)) == list(shapes_in(text))
    assert shape_hints(bytes(data)) == hinted and shape_hints(b"plain") is False  # asked again, and another


def test_a_text_scan_finds_a_shape_in_a_file_without_a_secret_name():
    from sbatchlint.redaction import text_scan

    data = b"#!/bin/bash\npython a.py --auth hf_" + b"Q7v" * 12 + b"\n"
    (found,) = text_scan(Source(data, "job.sh"))
    assert found.kind == "Hugging Face token"


# -- a command's program, set when it is built from a plain first word ---------------------------
PROGRAM_SHAPES = [
    "echo a\n/usr/bin/srun -N1 x\n./run.sh\nsrun\\ x y\n'srun' a\n\"$S\" b\n$SRUN b\nX=1 env srun a\n",
    "A=$B/c_$\nsrun.d x\n${R}un y\nd/é/srun z\n/ a\nr/ b\nexec srun c\n$(which srun) d\nsrun$X e\n",
    "a\\\nb c\n  srun   x  \nf() { srun -n1 a; }\nif true; then time srun b; fi\n",
]


@pytest.mark.parametrize("body", PROGRAM_SHAPES)
def test_a_commands_program_set_when_built_is_what_its_argv_gives(body):
    from sbatchlint.model.steps import Command, _basename

    model = script(HEADER + body)
    seen = 0
    for command in model.commands:
        set_when_built = "program" in command.__dict__
        seen += set_when_built
        program = command.program
        del command.__dict__["program"]
        assert program == Command.program.func(command)  # the property's own reading
        argv = command.argv
        assert program == (_basename(argv[0].text) if argv and argv[0].known else "")
    assert seen  # (the shortcut was taken)

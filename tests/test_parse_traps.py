"""Words tree-sitter-bash cuts at a bare ``$`` are read as bash reads them.

After an expansion, a quote or a substitution earlier in an unquoted word, ``$NAME`` followed by
more text is split silently (no ERROR node): ``echo $A/b_$C.d`` parses as ``echo`` + ``$A/b_$``
(a concatenation ending with a bare ``$`` token) + ``C.d``. Bash sees ONE word with ``$C``
expanded. The oracle everywhere below is the same word written with braces (``$A/b_${C}.d``),
which parses right: the model must give the same argv, values, pieces and findings, with every
span moved by the two brace bytes.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

import pytest

from lintutil import fix_text, lint_text
from sbatchlint import shell
from sbatchlint.model.script import Script
from sbatchlint.model.values import Piece, Value
from sbatchlint.source import Source, Span

HEADER = (
    "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --time=01:00:00\n"
    "#SBATCH --account=proj\n#SBATCH --partition=batch\n"
)


def script(text: str) -> Script:
    return Script(Source(text.encode("utf-8"), "job.sh"))


def braced(text: str) -> Tuple[str, List[Tuple[int, int]]]:
    """The text with every hidden ``$NAME`` written ``${NAME}``, and (``$`` offset, name length)
    of each, to map offsets of the cut spelling onto the braced one."""
    data = text.encode("utf-8")
    hidden = shell.hidden_expansions(shell.parse(data).root_node, data)
    out = data
    for expansion in reversed(hidden):
        start, end = expansion.name_span.start, expansion.name_span.end
        out = out[:start] + b"{" + out[start:end] + b"}" + out[end:]
    return out.decode("utf-8"), [(e.span.start, len(e.name_span)) for e in hidden]


def moved(offset: int, sites: List[Tuple[int, int]]) -> int:
    """Where a byte offset of the cut spelling is in the braced one."""
    shift = 0
    for dollar, length in sites:
        if offset > dollar + length:
            shift += 2  # after the name: both braces
        elif offset > dollar:
            shift += 1  # in the name: the opening brace
    return offset + shift


def map_span(span: Optional[Span], sites) -> Optional[Span]:
    return None if span is None else Span(moved(span.start, sites), moved(span.end, sites))


def map_piece(piece: Piece, sites) -> tuple:
    return (
        piece.text,
        map_span(piece.span, sites),
        piece.quote,
        piece.known,
        piece.name,
        piece.escaped,
        tuple(map_span(v, sites) for v in piece.via),
        piece.split,
        piece.task,
    )


def same_piece(piece: Piece) -> tuple:
    return map_piece(piece, [])


def mapped(value: Value, sites) -> List[tuple]:
    return [map_piece(p, sites) for p in value.pieces]


def plain(value: Value) -> List[tuple]:
    return [same_piece(p) for p in value.pieces]


def assert_same_words(cut_words, braced_words, sites) -> None:
    assert [w.text for w in cut_words] == [w.text for w in braced_words]
    for cut, oracle in zip(cut_words, braced_words):
        assert mapped(cut.value, sites) == plain(oracle.value)
        assert map_span(cut.span, sites) == oracle.span
        cut_alternatives = cut.alternatives or [cut.value]
        oracle_alternatives = oracle.alternatives or [oracle.value]
        assert [mapped(v, sites) for v in cut_alternatives] == [plain(v) for v in oracle_alternatives]


# -- the map of shapes ----------------------------------------------------------------------------
CUT = [
    "echo $A/b_$C.d",
    "echo $A/$C.d",
    "echo $A-$C.d",
    "echo $A/b_$C/",
    "echo ${A}/b_$C.d",
    'echo "$A"/$B.c',
    "echo '$A'/b_$B.c",
    'echo $A/"b"_$B.c',
    "echo $(date)/$B.c",
    "echo `date`/$B.c",
    "echo $((1+2))/$B.c",
    "echo $A/b_$1.d",
    "echo $A/b_$@.d",
    "echo $A/b_$?.d",
    "echo $A/b_$_x.d",
    "echo $A:$B.c",
    "echo $A/$B/c",
    "X=$A/b_$B.c",
    "export X=$A/b_$B.c",
    "arr=($A/b_$B.c y)",
    "for f in $A/b_$B.c y; do :; done",
    "cat <<< $A/b_$B.c",
    "echo >$A/b_$B.c",
    "echo $A/$.d",  # a literal ``$`` before ``.d``: the word is cut all the same
]
WHOLE = [
    "echo $A/b_$C",  # nothing after the second name
    "echo $A.b_$C",
    "echo a$A.b",
    "echo x/$B.c",  # no expansion before the ``$``
    "echo $A/b_${C}.d",
    "echo $A/b_$$.d",
    "echo $A/b_$#.d",
    "echo $A/b_$1x",
    "echo $A/b_$B:c",
    "echo $A/$B_c",
    "echo $A/b_$(date).d",
    "echo $A/b_$'x'.d",
    'X="$A/b_$B.c"',
    "[[ $A/b_$B.c == x ]]",
    "case $A/b_$B.c in x) ;; esac",
    "echo ${X:-$A/b_$B.c}",
    'bash -c "echo $A/b_$B.c"',
]


def _cuts(text: str) -> List[Tuple[str, str]]:
    """(node before, node after) of every pair the grammar split at a bare ``$``."""
    data = text.encode()
    tree = shell.parse(data)
    pairs = []
    for node in shell.walk(tree.root_node):
        if node.type == "concatenation":
            for following in shell.word_chain(node, data):
                pairs.append((node.type, following.type))
    return pairs


@pytest.mark.parametrize("text", CUT)
def test_the_grammar_cuts_these_words(text):
    assert _cuts(text), "the grammar no longer cuts this word: the guard may be simplified"
    assert not shell.parse(text.encode()).root_node.has_error


@pytest.mark.parametrize("text", WHOLE)
def test_the_grammar_keeps_these_words_whole(text):
    assert not _cuts(text)


def test_an_assignment_cut_makes_a_command_of_the_rest():
    data = b"X=$A/b_$B.c\n"
    command = shell.parse(data).root_node.children[0]
    assert command.type == "command"
    assert shell.text(command.child_by_field_name("name"), data) == "B.c"
    assert shell.only_assignments(command, data)
    data = b"X=$A/b_$B.c cmd\n"
    assert not shell.only_assignments(shell.parse(data).root_node.children[0], data)


# -- argv: the same as the braced spelling ----------------------------------------------------------
ARGV = [
    ("echo $A/b_$C.d", ["echo", "${A}/b_${C}.d"]),
    ("srun -e $LOG_DIR/node_$SLURM_NODEID.err python x.py", ["srun", "-e", "${LOG_DIR}/node_${SLURM_NODEID}.err", "python", "x.py"]),
    ("srun --output=$DIR/rank_$SLURM_PROCID.log python x.py", ["srun", "--output=${DIR}/rank_${SLURM_PROCID}.log", "python", "x.py"]),
    ('echo "$A"/$B.c \'$A\'/b_$B.c $A/"b"_$B.c', ["echo", "${A}/${B}.c", "$A/b_${B}.c", "${A}/b_${B}.c"]),
    ("echo $A/b_$B.c_$D.e x", ["echo", "${A}/b_${B}.c_${D}.e", "x"]),
    ("echo $A/$B.c$C/$D.e x", ["echo", "${A}/${B}.c${C}/${D}.e", "x"]),
    ("echo $A/$B/c/$D.e", ["echo", "${A}/${B}/c/${D}.e"]),
    ("echo $A/b_$1.d $A/b_$@.d $A/b_$?.d $A/b_$_x.d", ["echo", "${A}/b_${1}.d", "${A}/b_${@}.d", "${A}/b_${?}.d", "${A}/b_${_x}.d"]),
    ("echo $A/b_$0.d $A/b_$-.d $A/b_$*.d", ["echo", "${A}/b_${0}.d", "${A}/b_${-}.d", "${A}/b_${*}.d"]),
    ("echo $(date)/$B.c `date`/$B.c", ["echo", "${?}/${B}.c", "${?}/${B}.c"]),
    ("$BIN/tool_$V.sh --flag", ["${BIN}/tool_${V}.sh", "--flag"]),
    ("A=/p\nC=q\necho $A/b_$C.d", ["echo", "/p/b_q.d"]),
    ('A=/p\nC="1 2"\necho $A/b_$C.d', ["echo", "/p/b_1", "2.d"]),  # word splitting of $C, as bash
    ("echo $A/b_$B.c | tr a b", ["echo", "${A}/b_${B}.c"]),
    ('echo "$(cat $A/b_$B.c)"', ["cat", "${A}/b_${B}.c"]),
]


@pytest.mark.parametrize("text,expected", ARGV)
def test_argv_of_a_cut_word(text, expected):
    cut = script(text + "\n")
    braced_text, sites = braced(text + "\n")
    assert sites, "no hidden expansion found"
    oracle = script(braced_text)
    cut_commands = [c for c in cut.commands if c.argv and c.argv[0].text not in ("tr", "date")]
    oracle_commands = [c for c in oracle.commands if c.argv and c.argv[0].text not in ("tr", "date")]
    assert [w.text for w in cut_commands[-1].argv] == expected
    assert len(cut_commands) == len(oracle_commands)
    for command, other in zip(cut_commands, oracle_commands):
        assert_same_words(command.argv, other.argv, sites)


def test_a_cut_special_parameter_reads_like_its_plain_expansion():
    # ``${!}`` is no oracle (the grammar reads an indirection): compare with ``$!`` ending a word
    [_echo, cut] = script("echo $A/b_$!.d\n").commands[0].argv
    [_echo, whole] = script("echo $A/b_$!\n").commands[0].argv
    assert cut.text == "${A}/b_${!}.d"
    assert [same_piece(p) for p in cut.pieces[:3]] == [same_piece(p) for p in whole.pieces]


def test_a_cut_word_edits_the_name_bytes():
    text = "srun python x.py --log $DIR/rank_$SLURM_PROCID.txt\n"
    word = script(text).steps[0].task_argv[-1]
    data = text.encode()
    rank = next(p for p in word.pieces if p.name == "SLURM_PROCID")
    assert data[rank.span.start : rank.span.end] == b"$SLURM_PROCID"
    rest = word.pieces[-1]
    assert rest.text == ".txt" and data[rest.span.start : rest.span.end] == b".txt"
    assert word.span == Span(data.index(b"$DIR"), data.index(b".txt") + 4)


def test_a_bare_dollar_that_ends_a_word_is_literal():
    text = 'echo a$ ${A}x$ $A/$.d $A/b_$"x".d\n'
    argv = script(text).commands[0].argv
    assert [w.text for w in argv] == ["echo", "a$", "${A}x$", "${A}/$.d", "${A}/b_x.d"]
    data = text.encode()
    dollar = argv[1].pieces[-1]
    assert dollar.text == "$" and data[dollar.span.start : dollar.span.end] == b"$"
    assert [p.text for p in argv[3].pieces] == ["", "/", "$", ".d"]


# -- assignments, prefixes, redirections, arrays, loops ------------------------------------------
def test_a_cut_assignment_is_an_assignment_not_a_command():
    text = "X=$A/b_$B.c\nY=1 Z=$A/b_$B.c;\necho $X $Z\n"
    cut = script(text)
    braced_text, sites = braced(text)
    oracle = script(braced_text)
    assert [c.program for c in cut.commands] == ["echo"]
    for name in ("X", "Y", "Z"):
        assert [mapped(v, sites) for v in cut.values.lookup(name, len(text))] == [
            plain(v) for v in oracle.values.lookup(name, len(braced_text))
        ]
        [assignment] = cut.values.assignments[name]
        [other] = oracle.values.assignments[name]
        assert map_span(assignment.span, sites) == other.span
    assert_same_words(cut.commands[-1].argv, oracle.commands[-1].argv, sites)


def test_a_cut_prefix_assignment_keeps_the_real_command():
    text = "X=$A/b_$B.c srun python x.py\n"
    cut = script(text)
    braced_text, sites = braced(text)
    oracle = script(braced_text)
    [command] = cut.commands
    assert [w.text for w in command.argv] == ["srun", "python", "x.py"]
    assert len(cut.steps) == 1
    [env] = command.env
    [other] = oracle.commands[0].env
    assert env.name == "X" and mapped(env.value, sites) == plain(other.value)
    assert "X" not in cut.values.assignments  # only the command's environment


def test_declarations_and_locals():
    text = "export X=$A/b_$B.c\nf() {\n  local Y=$A/b_$B.c\n  echo $Y\n}\n"
    cut = script(text)
    braced_text, sites = braced(text)
    oracle = script(braced_text)
    assert cut.values.is_exported("X")
    assert [mapped(v, sites) for v in cut.values.lookup("X", len(text))] == [
        plain(v) for v in oracle.values.lookup("X", len(braced_text))
    ]
    assert_same_words(cut.commands[-1].argv, oracle.commands[-1].argv, sites)


def test_a_here_string_cut_gives_no_argument():
    text = "cat <<< $A/b_$B.c -n\n"
    assert [w.text for w in script(text).commands[0].argv] == ["cat", "-n"]


def test_arrays_and_for_loops():
    text = 'arr=($A/b_$B.c "y")\nfor f in $A/b_$B.c z; do echo "$f"; done\necho "${arr[@]}"\n'
    cut = script(text)
    braced_text, sites = braced(text)
    oracle = script(braced_text)
    elements = cut.values.array_elements("arr", len(text))
    assert [v.text for v in elements] == ["${A}/b_${B}.c", "y"]
    assert [mapped(v, sites) for v in elements] == [
        plain(v) for v in oracle.values.array_elements("arr", len(braced_text))
    ]
    loop = [c for c in cut.commands if c.node.start_byte < text.index("done")][-1]
    oracle_loop = [c for c in oracle.commands if c.node.start_byte < braced_text.index("done")][-1]
    assert [v.text for v in loop.argv[1].alternatives or [loop.argv[1].value]] == ["${A}/b_${B}.c", "z"]
    assert_same_words(loop.argv, oracle_loop.argv, sites)
    assert_same_words(cut.commands[-1].argv, oracle.commands[-1].argv, sites)


def test_a_task_string_cut_word():
    text = "srun bash -c 'python x.py --log $D/rank_$SLURM_PROCID.txt'\n"
    cut = script(text)
    braced_text, _sites = braced(text)
    assert braced_text == text  # single-quoted here: the batch script has no cut word
    oracle = script(text.replace("$SLURM_PROCID", "${SLURM_PROCID}"))
    sites = [(text.index("$SLURM_PROCID"), len("SLURM_PROCID"))]
    [command] = cut.steps[0].task_commands
    [other] = oracle.steps[0].task_commands
    assert [w.text for w in command.argv] == ["python", "x.py", "--log", "${D}/rank_${SLURM_PROCID}.txt"]
    assert_same_words(command.argv, other.argv, sites)
    assert all(p.task for p in command.argv[-1].pieces if not p.known)


# -- the helper for rules that look for expansion nodes ----------------------------------------------
def test_hidden_expansions():
    text = 'echo $A/b_$C.d $A/$.d a$ "$A/b_$D.e"\nX=$A/$B/c\n'
    data = text.encode()
    s = script(text)
    found = shell.hidden_expansions(s.node_index, data)
    assert [(h.name, data[h.span.start : h.span.end]) for h in found] == [("C", b"$C"), ("B", b"$B")]
    assert all(h.dollar.type == "$" and h.dollar.start_byte == h.span.start for h in found)
    assert shell.hidden_expansions(s.node_index, data) is found  # kept on the index


def test_nothing_is_looked_for_without_a_cut():
    s = script(HEADER + 'A=/x\necho "$A" $A/b ${A}_${B}.c a$ $A.b_$C\nsrun python x.py\n')
    assert s.values._cut_words is False
    assert shell.hidden_expansions(s.node_index, s.data) == []


# -- findings: the same as the braced spelling ------------------------------------------------------
_BRACED_NAME = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9@?*!#-])\}")


def _normal(text: str) -> str:
    return _BRACED_NAME.sub(r"$\1", text)


def _findings(text: str) -> list:
    data = text.encode()
    return [
        (d.code, _normal(d.message), _normal(data[d.span.start : d.span.end].decode()), d.fix.applicability.value if d.fix else None)
        for d in lint_text(text)
    ]


LINT = [
    # SBL201 on the step's command line, in srun's own options, in a cut assignment the task gets
    ("srun python x.py --log $DIR/rank_$SLURM_PROCID.txt", {"SBL201"}),
    ("srun --output=$DIR/rank_$SLURM_PROCID.log python x.py", {"SBL201"}),
    ("srun -e $LOG_DIR/node_$SLURM_NODEID.err python x.py", {"SBL201"}),
    ('LOGF=$DIR/rank_$SLURM_PROCID.txt\nsrun bash -c "python x.py --log $LOGF"', {"SBL201"}),
    ('LOGF="$DIR"/rank_$SLURM_PROCID.txt\nsrun bash -c "python x.py --log $LOGF"', {"SBL201"}),
    # a hidden use elsewhere keeps the escape from being offered
    ('LOGF=$DIR/rank_$SLURM_PROCID.txt\ncp $A/x_$LOGF.d /x\nsrun bash -c "python x.py --log $LOGF"', {"SBL201"}),
    # SBL202
    # (in the command string itself: a value of its own, LOGF=…, is computed early on purpose)
    ('CMD="python x.py --log $DIR/n_$SLURM_JOB_ID.log"\nsrun bash -c "$CMD"', {"SBL202"}),
    # SBL203: a late expansion cut in the task string; a cut assignment exported by the fix
    ("MYDIR=/x\nsrun bash -c 'python x.py --log $SLURM_PROCID/rank_$MYDIR.txt'", {"SBL203"}),
    ("MYDIR=$A/x_$B.y\nsrun bash -c 'python x.py --log $MYDIR'", {"SBL203"}),
    # SBL401 / SBL402
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH python $A/x_$B.py", {"SBL401"}),
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH$A/x_$B.y\nsrun python x.py", {"SBL401"}),
    ("export WANDB_API_KEY\necho $A/key_$WANDB_API_KEY.txt", {"SBL402"}),
    ("export WANDB_API_KEY\nsrun python x.py --key $A/x_$WANDB_API_KEY.d", {"SBL402"}),
    ('export WANDB_API_KEY\nT=$A/x_$WANDB_API_KEY.d\nsrun bash -c "python x.py --t $T"', {"SBL402"}),
]


@pytest.mark.parametrize("body,codes", LINT)
def test_findings_match_the_braced_spelling(body, codes):
    text = HEADER + body + "\n"
    braced_text, sites = braced(text)
    if not sites:  # the cut is in a task string: brace it there
        braced_text = re.sub(r"(?<=[/_])\$([A-Za-z_][A-Za-z0-9_]*)(?=\.)", r"${\1}", text)
    assert braced_text != text
    found = _findings(text)
    assert codes <= {code for code, *_ in found}
    assert found == _findings(braced_text)
    assert _normal(fix_text(text, unsafe=True)) == _normal(fix_text(braced_text, unsafe=True))


def test_fixes_through_a_cut_word_edit_the_right_bytes():
    text = HEADER + 'LOGF=$DIR/rank_$SLURM_PROCID.txt\nsrun bash -c "python x.py --log $LOGF"\n'
    fixed = fix_text(text, select=["SBL201"])
    assert 'LOGF=$DIR/rank_\\$SLURM_PROCID.txt\n' in fixed
    text = HEADER + "MYDIR=$A/x_$B.y\nsrun bash -c 'python x.py --log $MYDIR'\n"
    assert "export MYDIR=$A/x_$B.y\n" in fix_text(text, select=["SBL203"], unsafe=True)
    text = HEADER + "export HF_TOKEN\nsrun bash -c \"python x.py --t $A/x_$HF_TOKEN.d\"\n"
    assert '--t $A/x_\\$HF_TOKEN.d"' in fix_text(text, select=["SBL402"])


# -- rules that look for a variable's expansions in the tree -------------------------------------
@pytest.mark.parametrize("spelling", ["$DIR/${MASTER_ADDR}.txt", "$DIR/$MASTER_ADDR.txt"])
def test_loopback_master_addr_expanded_in_a_cut_word(spelling):
    # SBL105: MASTER_ADDR=localhost is not exported, but the batch shell expands it for the step
    text = HEADER + "MASTER_ADDR=localhost\nsrun python x.py --addr " + spelling + "\n"
    assert [d.code for d in lint_text(text, ["SBL105"])] == ["SBL105"]


@pytest.mark.parametrize("spelling, fixable", [("$LOGS/n_${SLURM_NTASKS}.txt", False), ("$LOGS/n_$SLURM_NTASKS.txt", False), ("$LOGS/none.txt", True)])
def test_task_count_read_in_a_cut_word_keeps_the_count_fix_away(spelling, fixable):
    # SBL101 offers no fix that changes the task count when the script reads that count
    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
        "echo " + spelling + "\nsrun torchrun --nnodes=2 --nproc_per_node=8 train.py\n"
    )
    (finding,) = lint_text(text, ["SBL101"])
    assert (finding.fix is not None) is fixable


# -- assignments glued to the next line's command -------------------------------------------------
# ``A=1 B=2`` then a newline and a command parses as ONE command with prefix assignments; bash
# ends the statement at the newline. The model must read the spelling below like its oracle, the
# same assignments written one per line.
GLUED = [
    ("PORT=29500 ADDR=node1\n", "PORT=29500\nADDR=node1\n"),
    ("PORT=29500 ADDR=node1 # rendezvous\n", "PORT=29500\nADDR=node1 # rendezvous\n"),
    ("PORT=29500 ADDR=node1\nX=1 Y=2\n", "PORT=29500\nADDR=node1\nX=1\nY=2\n"),
]


@pytest.mark.parametrize("glued, oracle", GLUED)
def test_glued_assignments_are_the_shells_own(glued, oracle):
    tail = "srun bash -c 'python serve.py --port $PORT --addr $ADDR'\n"
    model = script(HEADER + glued + tail)
    assert {"PORT", "ADDR"} <= set(model.values.assignments)
    (step,) = model.steps
    assert step.command.env == []  # srun gets no such environment
    assert model.text(step.span).startswith("srun ")
    found = [(d.code, d.message.split(" (line")[0]) for d in lint_text(HEADER + glued + tail)]
    expected = [(d.code, d.message.split(" (line")[0]) for d in lint_text(HEADER + oracle + tail)]
    assert found == expected
    assert ("SBL203" in {code for code, _ in found})  # neither reaches the task: not exported


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_glued_assignments_in_any_line_ending(line_end):
    text = (HEADER + "A=1 B=2\nsrun python x.py --a $A\n").replace("\n", line_end)
    model = script(text)
    (step,) = model.steps
    assert step.command.env == [] and {"A", "B"} <= set(model.values.assignments)
    assert [w.text for w in step.task_argv] == ["python", "x.py", "--a", "1"]


def test_a_continued_line_stays_a_prefix():
    # ``A=1 B=2 \`` + newline: bash joins the lines, the assignments are srun's environment
    model = script(HEADER + "A=1 B=2 \\\n  srun python x.py\n")
    (step,) = model.steps
    assert [env.name for env in step.command.env] == ["A", "B"]
    assert "A" not in model.values.assignments


def test_ungluing_keeps_every_offset():
    text = HEADER + "if true; then\n  A=1 B=2\n  srun python x.py --b $B\nfi\n"
    model = script(text)
    (step,) = model.steps
    assert model.text(step.srun_word.span) == "srun"
    assert [w.text for w in step.task_argv] == ["python", "x.py", "--b", "2"]
    assert model.errors == []


@pytest.mark.parametrize(
    "before, after",
    [
        ("if true; then A=1 B=2\n  srun python x.py --a $A\nfi\n", "if true; then\n  A=1\n  B=2\n  srun python x.py --a $A\nfi\n"),
        ("for i in 1; do A=1 B=2\n  srun python x.py --a $A\ndone\n", "for i in 1; do\n  A=1\n  B=2\n  srun python x.py --a $A\ndone\n"),
        ("true && A=1 B=2\nsrun python x.py --a $A\n", "true && A=1 && B=2\nsrun python x.py --a $A\n"),
    ],
)
def test_glued_assignments_after_a_keyword_or_operator(before, after):
    glued, oracle = script(HEADER + before), script(HEADER + after)
    (step,), (expected,) = glued.steps, oracle.steps
    assert step.command.env == [] and {"A", "B"} <= set(glued.values.assignments)
    assert [w.text for w in step.task_argv] == [w.text for w in expected.task_argv] == ["python", "x.py", "--a", "1"]


BROKEN = [
    "#!/bin/bash\nif [ -n \"$X\" ]; then\n  srun hostname\n",  # a missing fi
    "#!/bin/bash\necho \"unclosed\nsrun hostname\n",  # a quote never closed
    "#!/bin/bash\nfi\nsrun hostname\n",  # a reserved word where a command goes
    "#!/bin/bash\nfor i in 1 2; do echo $i\nsrun python train.py --x=$(( 1 + )\n",
    "#!/bin/bash\n" + "".join(f"export A_{i}=value{i}\nsrun --nodes=1 echo {i}\n" for i in range(300))
    + "case $X in\n  a) echo\n",  # one broken line at the end of a long script
    "#!/bin/bash\nsrun hostname\n",  # nothing broken
]


@pytest.mark.parametrize("text", BROKEN)
def test_error_regions_through_the_index_are_those_of_a_whole_walk(text):
    """With the script's node index, only the subtrees that hold an error are walked for ERROR
    nodes and MISSING tokens; the regions are those a walk of every node gives."""
    from sbatchlint import shell

    data = text.encode()
    tree = shell.parse(data)
    index = shell.NodeIndex(tree.root_node)
    regions = shell.error_regions(tree, data, index)
    assert regions == shell.error_regions(tree, data)
    assert bool(regions) == (text is not BROKEN[-1])

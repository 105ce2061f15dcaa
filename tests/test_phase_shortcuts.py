"""Shortcuts in building the model's base (header, values, commands, steps) give what the plain
reading gives.

Each test compares a fast path with the straightforward computation it replaces, over shapes
written for the purpose, and fails when the shortcut answers differently.
"""
from __future__ import annotations

import itertools
import random

import pytest

from sbatchlint.model import header as model_header
from sbatchlint.model.header import Header, parse_header
from sbatchlint.source import Source, Span


# -- the header: lines read from the line table, below the first command only from a '#' on ------
def _plain_header(source: Source, data_regions=(), table=None) -> Header:
    """sbatch's scan as the module docstring tells it: every line read in turn, each with its
    ``line_span``."""
    header = Header(source=source, table=table if table is not None else model_header.sbatch_options.SBATCH)
    in_header = True
    for number in range(1, source.line_count + 1):
        span = source.line_span(number)
        if any(region.start <= span.start < region.end for region in data_regions):
            continue
        raw = source.data[span.start : span.end]
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            span = Span(span.start + 3, span.end)
        magic = model_header.MAGIC
        if raw.startswith(magic) and (in_header or raw[len(magic) : len(magic) + 1] in (b"", b" ", b"\t", b"\r", b"-")):
            placement = "header" if in_header else "late"
            directives = model_header._directives(source, number, span, placement, header.table)
            if in_header:
                for directive in directives:
                    if directive.separator:
                        header.components += 1
                    directive.component = header.components
                header.last_header_line = number
            header.directives.extend(directives)
            header.lines[number] = directives
            continue
        stripped = raw.lstrip(b" \t")
        if stripped[:1] == b"#":
            malformed = model_header._malformed(source, number, span.start, span.end, raw)
            if malformed is not None:
                header.malformed.append(malformed)
                continue
        if not stripped.strip() or stripped.startswith(b"#"):
            continue
        if in_header:
            in_header = False
            header.first_command_line = number
    return header


def _header_fingerprint(header: Header) -> tuple:
    return (
        [(d.line, d.line_span, d.option, d.value, d.span, d.value_span, d.placement, d.component, d.text, d.glued,
          d.truncated_at, d.dropped, d.unclosed_quote, d.ignored_words) for d in header.directives],
        [(m.line, m.span, m.kind, m.text, m.fixed_line) for m in header.malformed],
        header.first_command_line, header.last_header_line, sorted(header.lines), header.components,
    )


# Lines in the shapes that make the scan turn: the header's own, comments, blank lines, commands,
# '#' inside a command line, late and malformed directives, line ends of every kind.
HEADER_LINES = [
    "#!/bin/bash", "#SBATCH --nodes=2", "#SBATCH -N 2 # two", "#SBATCH --job-name=a#b", "#SBATCH hetjob",
    "#SBATCH-N2", "#SBATCHED", "  #SBATCH --time=1:00", "# SBATCH --mem=1G", "#sbatch --gpus=1",
    "#   sbatch --nodes=4 train.sh", "# a comment", "", "   ", "\t", "echo '#SBATCH --nodes=9' # x",
    "srun hostname", "N=${#A[@]}", "cat <<EOF", "#SBATCH --partition=in-a-heredoc", "EOF",
    "x=1 # trailing", "#", "\r", "#SBATCH --account=a\r", "echo a\\", "#SBATCH --qos=b 'unclosed",
]


def _header_texts():
    rng = random.Random(19)
    for _ in range(300):
        lines = [rng.choice(HEADER_LINES) for _ in range(rng.randint(0, 12))]
        text = "\n".join(lines)
        if rng.random() < 0.7:
            text += "\n"
        if rng.random() < 0.1:
            text = "\ufeff" + text
        yield text


def test_the_header_scan_reads_every_shape_as_a_line_by_line_scan_does():
    for text in itertools.chain(_header_texts(), ["#SBATCH -N1", "\ufeff#SBATCH -N1\n", "echo\n#SBATCH -N1"]):
        source = Source(text.encode(), "job.sh")
        data = source.data
        regions = []
        start = data.find(b"<<EOF\n")
        if start >= 0:  # the here-document body, as the model passes it: data, not lines
            body = start + len(b"<<EOF\n")
            end = data.find(b"EOF", body)
            regions.append(Span(body, end if end >= 0 else len(data)))
        for given in ((), regions):
            assert _header_fingerprint(parse_header(source, given)) == _header_fingerprint(
                _plain_header(source, given)
            ), text


# -- glued assignments: the candidate pattern's runs never give back what they took ---------------
def test_second_assignment_agrees_with_the_backtracking_pattern_around_backslashes_and_blanks():
    """The possessive runs (Python 3.11 on) stop a value before a backslash that continues the
    line and nowhere else: every mix of the bytes that decide where a value and a blank run end
    gives the spans the plain pattern gives."""
    import re

    from sbatchlint.shell import _SECOND_ASSIGNMENT

    plain = re.compile(rb"(?:=[^ \t\n=]*|[\"')}\]])(?:[ \t]|\\\r?\n)+[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\n]*\])?\+?=")
    pieces = [b"A", b"=", b" ", b"\t", b"\"", b"]", b"\\", b"\r", b"\n", b"\\\n", b"\\\r\n", b"[1", b"+", b"x"]
    rng = random.Random(7)
    mixes = [parts for length in range(1, 4) for parts in itertools.product(pieces, repeat=length)]
    mixes += [[rng.choice(pieces) for _ in range(rng.randint(4, 9))] for _ in range(4000)]
    for parts in mixes:
        for data in (b"X=" + b"".join(parts) + b" B=", b"".join(parts) + b"C=1"):
            found = [m.span() for m in _SECOND_ASSIGNMENT.finditer(data)]
            assert found == [m.span() for m in plain.finditer(data)], data


# -- values: a product past the cap, the assignments before a use ------------------------------
def test_a_product_past_the_cap_joins_the_kept_value_as_it_would_one_by_one():
    """Once the results pass half the cap, a part with several values keeps only its most recent
    one: joined with the single-valued parts around it, in order, as the plain product joins it."""
    from test_evaluation_shortcuts import _plain_product

    from sbatchlint.model.values import MAX_ALTERNATIVES, Piece, Value, _product

    rng = random.Random(5)

    def values(count: int, loop: bool = False) -> list:
        made = []
        for _ in range(count):
            pieces = tuple(Piece(rng.choice("abcdef"), None, loop=((1, rng.randint(0, 1)),) if loop else ())
                           for _ in range(rng.randint(0, 2)))
            made.append(Value(pieces))
        return made

    for _ in range(300):
        parts = [values(rng.choice((3, 4, 5))), values(rng.choice((3, 4)))]  # past half the cap
        for _ in range(rng.randint(1, 8)):
            parts.append(values(rng.choice((0, 1, 1, 2, 3, MAX_ALTERNATIVES + 2)), loop=rng.random() < 0.15))
        assert [v.pieces for v in _product(parts)] == [v.pieces for v in _plain_product(parts)], parts


def test_the_assignments_before_a_use_are_those_made_before_it_and_not_around_it():
    from sbatchlint.model.script import Script

    text = 'X=1\nX="$X a"\nY=${X:-$X}\nX+=$X\nf() { X=2; }\nexport X="$X"\nunset X\nX=\n'
    values = Script(Source(text.encode(), "job.sh")).values
    for at in range(len(text) + 2):
        plain = [a for a in values.assignments["X"] if a.start < at and not a.span.start <= at < a.span.end]
        assert values.assignments_before("X", at) == plain, at
    assert values.assignments_before("NOT_SET", 3) == []


# -- the source context reads the chdir from the model's header when it has it -------------------
CHDIR_SHAPES = [
    "#SBATCH -D /scratch/run\n", "#SBATCH --chdir=sub/dir\n", "#SBATCH -D run\n#SBATCH --chdir=/abs\n",
    "#SBATCH --chdir=$HOME/x\n", "#SBATCH --chdir=~/x\n", "#SBATCH -D%j\n", "#SBATCH --ch=/abbreviated\n",
    "#SBATCH --chdir /spaced\n", "#SBATCH hetjob\n#SBATCH -D /second\n", "echo start\n#SBATCH -D /late\n",
    "cat > job.sh <<EOF\n#SBATCH -D /in/body\nEOF\n", "# -D in a comment, chdir too\n",
    "#SBATCH -D /a # -D /b\n", "#SBATCH --chdir='/quoted dir'\n",
]


@pytest.mark.parametrize("body", CHDIR_SHAPES)
@pytest.mark.parametrize("first", ["header", "values"])
def test_the_source_context_reads_the_chdir_the_header_reads_afresh(tmp_path, body, first):
    from sbatchlint.model.script import Script
    from sbatchlint.model.sourced import SourceContext

    path = tmp_path / "job.sh"
    text = "#!/bin/bash\n#SBATCH --nodes=2\n" + body + "source env.sh\nsrun hostname\n"
    path.write_text(text)
    model = Script(Source(text.encode(), str(path)))
    getattr(model, first)  # the header read before the values, or not
    context = model.values.context
    afresh = SourceContext.for_script(str(path), text.encode())
    assert (context.path, context.submit_dir, context.chdir, context.chain, context.batch) == (
        afresh.path, afresh.submit_dir, afresh.chdir, afresh.chain, afresh.batch)
    if first == "header" and body.startswith("#SBATCH -D /scratch"):
        assert context.chdir == "/scratch/run"


# -- data classes: the general __init__ with positional arguments only -------------------------
@pytest.mark.parametrize("frozen", [False, True])
def test_the_general_init_binds_positional_arguments_as_the_compiled_one_does(monkeypatch, frozen):
    """Before a class is busy its ``__init__`` binds positional-only calls on a short path: the
    given fields in order, every other from its default or a fresh value of its factory; too many
    or too few arguments are refused as the compiled ``__init__`` refuses them."""
    from sbatchlint import lazyclass
    from sbatchlint.lazyclass import dataclass, field, fields

    monkeypatch.setattr(lazyclass, "HOT", 10 ** 9)  # never compiled: the general one answers
    posted = []

    def make():
        @dataclass(frozen=frozen)
        class Row:
            name: str
            count: int = 3
            tags: list = field(default_factory=list)
            note: str = "x"

            def __post_init__(self) -> None:
                posted.append(self.name)

        return Row

    general = make()
    compiled = make()
    lazyclass.finish(compiled)
    compiled.__init__ = lazyclass._init(compiled, compiled.__dict__["__record_fields__"], frozen)
    calls = [("a",), ("b", 5), ("c", 6, ["t"]), ("d", 7, [], "y")]
    for args in calls:
        one, other = general(*args), compiled(*args)
        assert [getattr(one, f.name) for f in fields(one)] == [getattr(other, f.name) for f in fields(other)]
    assert posted == [name for args in calls for name in (args[0], args[0])]
    assert general("e").tags is not general("f").tags  # a fresh value of the factory each time
    for args in [(), ("a", 1, [], "n", "extra")]:
        for cls in (general, compiled):
            with pytest.raises(TypeError):
                cls(*args)


# -- substitution: carried pieces made without the class call ------------------------------------
@pytest.mark.parametrize("quoted", [True, False])
def test_a_carried_piece_is_the_piece_the_class_makes_exact_included(quoted):
    from sbatchlint.model.script import Script
    from sbatchlint.model.values import Piece

    head = 'A="x y"\nB=$\'t\\tu\'\nC="$A-$B"\nD=${E:-"d e"}\nF="é$C"\nG="$F $D"\n'
    use = 'echo "$G" end\n' if quoted else "echo $G end\n"
    model = Script(Source((head + use).encode(), "job.sh"))
    (echo,) = [c for c in model.commands if c.program == "echo"]
    argument = echo._arguments[1]
    expansion = argument if not quoted else argument.named_children[0]
    span = Span(expansion.start_byte, expansion.end_byte)
    for value in model.values._substitute("G", span, expansion, 0, '"' if quoted else ""):
        for piece in value.pieces:
            made = Piece(piece.text, piece.span, piece.quote, piece.known, piece.name, piece.escaped, piece.via,
                         piece.split, piece.task, piece.loop)
            assert piece == made and piece.exact == made.exact and piece.via[-1] == span


# -- the analyses' modules: imported when first asked, then kept ---------------------------------
def test_an_analysis_imports_its_module_when_first_asked_and_reads_it_afresh_each_time(monkeypatch):
    import importlib
    import sys

    from sbatchlint.model import script as script_module

    assert script_module._module("launch") is importlib.import_module("sbatchlint.model.launch")
    assert script_module._module("secrets", 2) is sys.modules["sbatchlint.secrets"]
    launch = importlib.import_module("sbatchlint.model.launch")
    monkeypatch.setattr(launch, "build_launches", lambda model: ["patched"])  # a module's name is read at each use
    model = script_module.Script(Source(b"#!/bin/bash\nsrun hostname\n", "job.sh"))
    assert model.launches == ["patched"]


# -- a plain word of an argv, made without the class calls ---------------------------------------
def test_a_plain_word_is_the_word_the_classes_make():
    from sbatchlint.model.script import Script
    from sbatchlint.model.values import Piece, Value, Word

    text = "#!/bin/bash\nsrun -N 2 python train.py --lr=0.1 é/ü 42 \\\n  --x y\n"
    model = Script(Source(text.encode(), "job.sh"))
    (command,) = model.commands
    words = command.argv
    assert [w.text for w in words] == ["srun", "-N", "2", "python", "train.py", "--lr=0.1", "é/ü", "42", "--x", "y"]
    for word in words:
        span = Span(word.span.start, word.span.end)
        made = Word(Value((Piece(word.text, span, ""),)), word.node, span, None)
        assert word == made and word.ifs == made.ifs and word.value.pieces == made.value.pieces
        assert (word.value.text, word.value.known, word.pieces[0].exact) == (made.value.text, made.value.known,
                                                                           made.pieces[0].exact)
        assert word.span == Span(word.node.start_byte, word.node.end_byte)
        assert word.value.offsets == made.value.offsets


def test_a_command_from_the_tree_evaluates_its_argv_once_when_first_asked():
    """``Command.argv`` of a batch command is computed on first read and then held by the
    instance; the other fields never evaluate it, and a name the class lacks is an
    ``AttributeError`` as for any object (no ``__getattr__``: every read of a command would go
    through it)."""
    from sbatchlint.model.script import Script
    from sbatchlint.model.steps import Command

    script = Script(Source(b'#!/bin/bash\nX="a b"\nsrun echo $X c\n', "job.sh"))
    command = script.commands[-1]
    assert "argv" not in command.__dict__
    assert (command.node.type, command.env, command.in_string, command.program) == ("command", [], False, "srun")
    assert "argv" not in command.__dict__  # (the program came from the plain first word)
    argv = command.argv
    assert [w.text for w in argv] == ["srun", "echo", "a", "b", "c"]
    assert command.argv is argv and command.__dict__["argv"] is argv
    given = Command(command.node, argv)
    assert given.argv is argv
    with pytest.raises(AttributeError, match="'Command' object has no attribute 'nothing'"):
        command.nothing  # noqa: B018
    assert "__getattr__" not in vars(Command)


def test_a_cut_piece_is_the_piece_the_class_makes():
    """``Piece._with`` fills every field as the class call it stands for does, whatever the
    original's fields and whether its ``exact`` was computed already."""
    from sbatchlint.model.values import Piece

    originals = [
        Piece("ab", Span(1, 3), '"'),
        Piece("é", Span(4, 6), "", True, "X", False, (Span(9, 11),), True, False, ((3, 1),)),
        Piece("", Span(7, 9), "'", False, "Y", True, (), False, True),
        Piece("c", None),
    ]
    for original in originals:
        original.exact  # (computed on some, not on the cut)
        for text, span, escaped in (("a", Span(1, 2), False), ("", None, True)):
            cut = original._with(text, span, escaped)
            made = Piece(text, span, original.quote, original.known, original.name, escaped, original.via,
                         original.split, original.task, original.loop)
            assert cut._fields() == made._fields() and cut.exact == made.exact
            assert [getattr(cut, name) for name in Piece.__slots__] == [getattr(made, name) for name in Piece.__slots__]


def test_the_objects_made_without_class_calls_are_those_the_classes_make():
    """``values._value``, ``_span``, ``_literal``, ``_unknown_value`` and ``_word`` fill every slot
    as the class calls they stand for do (the caches still to compute included)."""
    from sbatchlint.model import values as model_values
    from sbatchlint.model.values import Piece, Value, Word

    def slots(made):
        return [(name, getattr(made, name)) for name in type(made).__slots__]

    pieces = (Piece("a", Span(0, 1), '"'), Piece("", Span(2, 4), "", False, "X"))
    assert slots(model_values._value(pieces)) == slots(Value(pieces))
    assert slots(model_values._value(())) == slots(Value(()))
    assert slots(model_values._span(3, 7)) == slots(Span(3, 7))
    for escaped in (False, True):
        assert slots(model_values._literal("b", Span(1, 2), "<<", escaped)) == slots(
            Piece("b", Span(1, 2), "<<", escaped=escaped))
    for span, quote, name in ((Span(5, 9), '"', "HOME"), (None, "", None)):
        made = model_values._unknown_value(span, quote, name)
        expected = Value((Piece("", span, quote, known=False, name=name),))
        assert made == expected and made.known is expected.known is False and made.text == expected.text
        assert slots(made.pieces[0]) == slots(expected.pieces[0])
    value = Value(pieces)
    for alternatives, ifs in ((None, " \t\n"), ([value, value], ",")):
        assert slots(model_values._word(value, None, Span(0, 4), alternatives, ifs)) == slots(
            Word(value, None, Span(0, 4), alternatives, ifs))


def test_a_carried_unknown_piece_and_a_tree_command_are_what_the_class_calls_make():
    """``values._carried_unknown`` (both of its forms) and ``steps._command`` of a batch command
    fill every field as the class calls they stand for do."""
    from sbatchlint.model import steps as model_steps
    from sbatchlint.model import values as model_values
    from sbatchlint.model.script import Script
    from sbatchlint.model.values import Piece

    site = (Span(20, 24),)
    for p in (Piece("", Span(3, 7), '"', False, "A", False, (Span(1, 2),), True, True, ((4, 0),)),
              Piece("x", Span(3, 5), "", False, None, True),
              Piece("", None, "", False, "B", loop=((4, 1),))):
        for unquoted in (False, True):
            made = model_values._carried_unknown(p, Span(20, 24), '"', "N", site, unquoted)
            if p.span is not None:
                expected = Piece(p.text, p.span, p.quote, False, p.name or "N", p.escaped, p.via + site,
                                 p.split or unquoted, False, p.loop)
            else:
                expected = Piece("", Span(20, 24), '"', False, p.name or "N", False, p.via + site, unquoted, False, p.loop)
            assert [getattr(made, n) for n in Piece.__slots__] == [getattr(expected, n) for n in Piece.__slots__]

    script = Script(Source(b'#!/bin/bash\nX=1 srun -N 2 echo "$X"\n', "job.sh"))
    command = model_steps._command(script.values, script.nodes_of_type("command")[0])
    expected = model_steps.Command(command.node, None, command.env, False, values=script.values,
                                   arguments=command._arguments)
    # (and its program, set from its plain first word, is what the property reads)
    fields = dict(vars(command))
    assert fields.pop("program") == model_steps.Command.program.func(expected) == "srun"
    assert list(fields.items()) == list(vars(expected).items())
    assert [e.name for e in command.env] == ["X"] and [w.text for w in command.argv] == ["srun", "-N", "2", "echo", "${X}"]

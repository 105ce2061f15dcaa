"""The value evaluation's shortcuts give what the plain computation gives.

The model is built twice over the same scripts: as it runs, and with its shortcuts turned off
(every node's span taken by ``node_span``, every plain word read through ``evaluate`` and word
splitting, every ``+=`` looked for among the assignment's children, every part of a product
joined to the results as it comes, every IFS assignment read again at each use). Every command's argv, environment and step, and every
assignment, must come out the same, piece by piece.
"""
from __future__ import annotations

import random

import pytest

import scriptgen
from sbatchlint.model import values as model_values
from sbatchlint.model.script import Script
from sbatchlint.shell import ancestors
from sbatchlint.model.values import MAX_ALTERNATIVES, Piece, Value, _product
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"

SHAPES = [
    # blanks at a node's edges: after a line continuation, inside a default's words
    'EXTRA="--log 1"\nsrun python train.py --a 1 \\\n    $EXTRA \\\n  --b 2\n',
    'P=${PROMPT:-What is it?}\nsrun echo ${NAME:-a b c} "$P"\n',
    'srun \\\n\tpython \\\n\ttrain.py\n',
    'CMD="$CMD $(echo "$O" | tr \'\\n\' \' \')"\nA="${X:-a} `pwd`/b ${!N*} $Y"\nsrun bash -c "$CMD $A"\n',
    # appends and what only looks like one
    'X=a\nX+=b\nY=c+=d\nA=(1 2)\nA+=(3)\nB[1]+=x\nZ="+="\nW=+=\nexport V+=1\nsrun echo $X $Y "${A[@]}" $Z $W $V\n',
    'X+=\nX=\nsrun echo "$X"\n',
    # chains, branches, loops, escapes, here-documents
    'CMD="python train.py"\nif [ -n "$D" ]; then CMD="$CMD --debug"; fi\n'
    'for M in /a /b; do MOUNTS="$MOUNTS,$M:$M"; done\nCMD="$CMD --mounts $MOUNTS"\n'
    'srun --container-mounts=$MOUNTS bash -c "$CMD \\$SLURM_PROCID"\n',
    'CFGS=("2,1" "4,2")\nfor C in "${CFGS[@]}"; do\n  IFS=, read -r TP PP <<< "$C"\n'
    '  srun bash -c "torchrun run.py --tp $TP --pp $PP"\ndone\n',
    "srun bash <<EOF\necho \\$HOSTNAME $USER \\`date\\`\nEOF\n",
    "srun bash <<'EOF'\necho $HOSTNAME\nEOF\n",
    'X=a\\ b\\$c\nsrun echo "$X" \'$X\' $\'x\\ty\' a\\ b "q\\"r"\n',
    'A=$B/c_$\nsrun echo $A/b_$C.d "x$"\n',
    # the IFS each command splits on: in functions, branches, unset, appended, unknown
    'L="a,b c"\nIFS=,\nsrun echo $L\nf() { local IFS=:; X="a:b"; srun echo $X $L; }\nIFS=";"\nsrun echo $L\nf\n',
    'Z="e,f g"\nif [ -n "$Q" ]; then IFS=,; fi\nsrun echo $Z\nunset IFS\nsrun echo $Z\nIFS+=x\nsrun echo $Z\n'
    'IFS=$SEP\nsrun echo $Z\nIFS=\nsrun echo $Z\n',
    # assignments in constructs that do or do not enclose the use (lists, case, loops, subshells)
    'O=0\n[ -n "$D" ] && O=1 && srun echo $O\nsrun echo $O\ncase $K in a) O=2; srun echo $O ;; *) srun echo $O ;; esac\n'
    'while read -r L; do O="$O $L"; (O=3; srun echo $O) || srun echo "$O"; done < f\nsrun echo $O\n'
    'g() { if true; then O=4; else srun echo $O; fi; srun echo ${O:-x}; }\nsrun echo $O\n'
    'for I in 1 2; do until false; do O=$I; srun echo $O; done; srun echo $O; done\nsrun bash -c "echo $O"\n',
]


def _fingerprint(text: str) -> list:
    model = Script(Source(text.encode(), "job.sh"))
    out: list = []
    for name, assignments in sorted(model.values.assignments.items()):
        out.append((name, [(a.kind, a.span, a.exported, a.declared_by) for a in assignments]))
        out.append([v.pieces for v in model.values.lookup(name, len(model.data) + 1)])
    for command in model.commands:
        # (the IFS a word was split on matters for its alternatives: a plain word has none)
        out.append([(w.value.pieces, w.span, [a.pieces for a in w.alternatives or []], w.alternatives and w.ifs)
                    for w in command.argv])
        out.append([(e.name, e.value.pieces, e.span) for e in command.env])
    for step in model.steps:
        out.append([(o.name, o.value, [w.span for w in o.words]) for o in step.options])
        out.append(step.task_string.pieces if step.task_string is not None else None)
        for task in step.task_commands:
            out.append([(w.value.pieces, w.span) for w in task.argv])
    return out


def _plain_product(parts):
    """``_product`` joining each part to the results as it comes."""
    results = [()]
    bound = None
    for alternatives in parts:
        if alternatives.__class__ is tuple:  # literal pieces: one value
            alternatives = [Value(alternatives)]
        if not alternatives:
            continue
        if any(any(p.loop for p in a.pieces) for a in alternatives):
            if bound is None:
                bound = [model_values._bindings(r) or {} for r in results]
            own = [model_values._bindings(a.pieces) for a in alternatives]
            combined, combined_bound = [], []
            for r, held in zip(results, bound):
                for a, adds in zip(alternatives, own):
                    if adds is None:
                        continue
                    merged = model_values._merged_bindings(held, adds)
                    if merged is not None:
                        combined.append(r + a.pieces)
                        combined_bound.append(merged)
            if combined:
                results = combined[-MAX_ALTERNATIVES:]
                bound = combined_bound[-MAX_ALTERNATIVES:]
            continue
        if len(results) * len(alternatives) > MAX_ALTERNATIVES:
            alternatives = alternatives[-max(1, MAX_ALTERNATIVES // max(1, len(results))):]
        if bound is not None:
            bound = [held for held in bound for _ in alternatives]
        results = [r + a.pieces for r in results for a in alternatives]
    return [Value(r) for r in results]


def _plain_add_assignment(original):
    """``Values._add_assignment`` with the kind read from the children alone."""

    def add(self, node, declared_by=None, exported=False):
        before = {name: len(found) for name, found in self.assignments.items()}
        original(self, node, declared_by, exported)
        for name, found in self.assignments.items():
            if len(found) > before.get(name, 0):
                added = found[-1]
                if added.kind in ("assign", "append"):
                    operator = next((c.type for c in node.children if c.type in ("=", "+=")), "=")
                    added.kind = "append" if operator == "+=" else "assign"

    return add


def _afresh(original):
    def read(self, assignment):
        self._ifs_memo.clear()
        return original(self, assignment)

    return read


def _plain_use_scopes(use):
    """The constructs around a use: every ancestor's bounds and type."""
    return set() if use is None else {(n.start_byte, n.end_byte, n.type) for n in ancestors(use)}


@pytest.fixture
def plain(monkeypatch):
    def turn_off():
        monkeypatch.setattr(model_values, "_use_scopes", _plain_use_scopes)  # no bounds compared
        monkeypatch.setattr(model_values, "_LEADING_BLANKS", frozenset(range(256)))  # node_span always
        monkeypatch.setattr(model_values, "_PLAIN_WORDS", frozenset())  # no plain-word path
        monkeypatch.setattr(model_values, "_product", _plain_product)
        monkeypatch.setattr(
            model_values.Values, "_add_assignment", _plain_add_assignment(model_values.Values._add_assignment)
        )
        for name in ("_function_of", "_ifs_texts"):  # what ifs_at reads of an assignment, read afresh
            monkeypatch.setattr(model_values.Values, name, _afresh(getattr(model_values.Values, name)))

    return turn_off


TEXTS = [HEADER + body for body in SHAPES] + [scriptgen.generate(seed=seed).text for seed in range(6)]


@pytest.mark.parametrize("index", range(len(TEXTS)))
def test_the_model_reads_every_shape_as_without_its_shortcuts(index, plain):
    text = TEXTS[index]
    fast = _fingerprint(text)
    plain()
    assert fast == _fingerprint(text)


def test_the_shortcuts_are_really_turned_off(plain):
    """(The comparison above would pass trivially if the plain reading were the fast one.)"""
    plain()
    assert model_values._product is _plain_product and not model_values._PLAIN_WORDS
    assert model_values._use_scopes is _plain_use_scopes


def test_product_joins_single_values_between_several_as_it_would_one_by_one():
    """Runs of parts with one value are joined to the results once, between parts with several
    (past the cap on alternatives too) and around parts bound to loop iterations."""
    rng = random.Random(11)

    def value(loop: bool) -> Value:
        pieces = []
        for _ in range(rng.randint(0, 3)):
            bound = ((rng.choice((10, 20)), rng.randint(0, 2)),) if loop and rng.random() < 0.5 else ()
            pieces.append(Piece(rng.choice("abcd"), None, loop=bound))
        return Value(tuple(pieces))

    for _ in range(500):
        parts = []
        for _ in range(rng.randint(1, 9)):
            count = rng.choice((0, 1, 1, 1, 2, 3, 5))
            loop = rng.random() < 0.2
            parts.append([value(loop) for _ in range(count)])
        assert _product(parts) == _plain_product(parts), parts


def test_a_literal_word_of_a_task_string_maps_as_the_string_slice_gives():
    """``steps._remap_literal`` cuts a word lying inside one exact piece of the string itself;
    anywhere else it reads ``slice_pieces``. Either way: the string's pieces for those bytes,
    and their source bounds."""
    from sbatchlint.model.steps import _remap_literal
    from sbatchlint.source import Span

    rng = random.Random(5)
    for _ in range(300):
        pieces, position = [], 100
        for _ in range(rng.randint(1, 6)):
            text = "".join(rng.choice("ab é-") for _ in range(rng.randint(0, 6)))
            size = len(text.encode())
            kind = rng.choice(("exact", "exact", "escaped", "unknown", "made"))
            if kind == "exact":
                pieces.append(Piece(text, Span(position, position + size), '"'))
            elif kind == "escaped":
                pieces.append(Piece(text[:1], Span(position, position + 2), "", escaped=True))
            elif kind == "unknown":
                pieces.append(Piece("", Span(position, position + 4), "", False, "X"))
            else:
                pieces.append(Piece(text, None))
            position += size + rng.randint(0, 3)
        string = Value(tuple(pieces))
        total = len(string.text.encode())
        start = rng.randint(0, total)
        end = rng.randint(start, total)
        outer = tuple(string.slice_pieces(start, end))
        spans = [p.span for p in outer if p.span is not None]
        bounds = Span(min(s.start for s in spans), max(s.end for s in spans)) if spans else Span(0, 0)
        word = _remap_literal(Span(start, end), string, {})
        assert (word.value.pieces, word.span) == (outer, bounds), (string, start, end)

"""The other ways a step may be written: its srun words under every alternative value the model
sees (``SRUN_CMD`` set in an ``if`` and in its ``else``), and the branch each comes from.

A command's argv is read with the most recent value of each variable (the primary alternative);
``Word.alternatives`` keeps the others, at most ``values.MAX_ALTERNATIVES`` (16) per word: past
that, the oldest values stand as one unknown value, so cost stays linear and no rule takes the
values it was not shown for all there are. ``step_alternatives(script, step)`` re-reads the step's srun options under each
alternative of the words before the task command (the primary one too: the step's geometry
reads a count that differs between alternatives as unknown), so a rule can check every branch's step
and name the branch that triggers a finding (``describe_branch``): "the `else` branch (line 9)".
``branch_of(script, launch, variant)`` names the branch that writes one alternative of a launch
(``Launch.variants`` and ``Launch.others``): where the pieces only that alternative has are written.
"""
from __future__ import annotations

import posixpath

from ..lazyclass import dataclass
from ..shell import ancestors
from ..source import Span
from . import steps as step_model
from .steps import Command, Step
from .values import Value, Word, gaps_of, split_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List, Optional, Sequence, Tuple
    from .launch import Launch
    from .script import Script


@dataclass
class StepAlternative:
    """The step as another alternative of its srun words writes it (options only, no task)."""

    step: Step
    branch: Optional[str]  # where that alternative is written ("the `else` branch (line 9)"), if known


def step_alternatives(script: "Script", step: Step) -> List[StepAlternative]:
    """Every other reading of the step's srun options (memoised per step)."""
    memo = script.step_alternatives
    found = memo.get(id(step))
    if found is None or found[0] is not step:
        found = memo[id(step)] = (step, _build(script, step))  # the step kept alive with its entry
    return found[1]


def _build(script: "Script", step: Step) -> List[StepAlternative]:
    command = step.command
    argv = command.argv
    first_task = len(argv) - len(step.task_argv)
    out: List[StepAlternative] = []
    glob = script.values.globbing
    reading: Optional[step_model.OptionReading] = None
    for start, end, node, span, alternatives, ifs in alternative_groups(argv, first_task):
        for alternative in alternatives:  # the primary too: read alone, its counts are its own
            words = [Word(part, node, span, None) for part in split_value(alternative, ifs, glob)]
            new_argv = argv[:start] + words + argv[end:]
            begin = step_model.unwrap(new_argv)
            if begin >= len(new_argv) or not new_argv[begin].known or posixpath.basename(new_argv[begin].text) != "srun":
                continue
            fake = Command(command.node, new_argv, command.env, command.in_string)
            if begin == step.srun_index and start > begin:
                # the options the step's own reading gives before and after the run, shared
                if reading is None:
                    reading = step_model.OptionReading(step)
                other = reading.reread(fake, start, end, len(words))
            else:
                other = step_model.read_step(script.values, fake, begin, with_task=False)
            other.task_argv = step.task_argv
            out.append(StepAlternative(other, describe_branch(script, alternative)))
    return out


if TYPE_CHECKING:  # a type for annotations only
    Group = Tuple[int, int, Any, Span, List[Value], Optional[str]]


def alternative_groups(argv: Sequence[Word], limit: Optional[int] = None) -> List[Group]:
    """The runs of ``argv[:limit]`` one expansion with several values produced, in order, as
    (start, end, node, span, alternatives, IFS): the words an unquoted expansion split into share
    its alternatives and are replaced together (split on the same IFS); an expansion whose
    primary value gave no word at all (``OPTS=""`` last) is an empty run (start == end), its
    other values still there."""
    limit = len(argv) if limit is None else limit
    groups: List[Group] = [
        (gap.index, gap.index, gap.node, gap.span, gap.alternatives, gap.ifs) for gap in gaps_of(argv) if gap.index <= limit
    ]
    index = 0
    while index < limit:
        word = argv[index]
        end = index + 1
        if not word.alternatives:
            index = end
            continue
        while end < limit and argv[end].node is word.node and argv[end].alternatives is word.alternatives:
            end += 1
        groups.append((index, end, word.node, word.span, word.alternatives, word.ifs))
        index = end
    groups.sort(key=lambda g: (g[0], g[1]))
    return groups


def variant_branch(script: "Script", launch: "Launch", variant: "Launch") -> Optional[str]:
    """The branch that writes a variant of a launch (its words under another alternative)
    differently from the launch's: where the pieces only the variant has are written."""
    own = {p.span for w in launch.command.argv for p in w.pieces if p.span is not None}
    for word in variant.command.argv:
        differing = tuple(p for p in word.pieces if p.span is not None and p.span not in own and p.known and p.text.strip())
        if differing:
            return describe_branch(script, Value(differing))
    return None


def branch_of(script: "Script", launch: "Launch", variant: "Launch") -> Optional[str]:
    """The branch that writes ``variant`` (one of the launch's ``variants`` or ``others``); for
    the launch itself, the branch its own words come from, told from the other alternatives'."""
    if variant is not launch:
        return variant_branch(script, launch, variant)
    others = [v for v in launch.variants + launch.others if v is not launch]
    return next((w for w in (variant_branch(script, v, launch) for v in others) if w), None)


_CONDITION_LIMIT = 40


def describe_branch(script: "Script", value: Value) -> Optional[str]:
    """The branch of an ``if``/``elif``/``else`` or the ``case`` pattern where the text of
    ``value`` is written (its first piece with a place in the script), or None."""
    for piece in value.pieces:
        if piece.span is None or not piece.known or not piece.text.strip():
            continue
        node = script.root.descendant_for_byte_range(piece.span.start, piece.span.end)
        if node is None:
            return None
        for ancestor in [node] + list(ancestors(node)):
            kind = ancestor.type
            line = script.source.line_of(ancestor.start_byte)
            if kind == "else_clause":
                return f"the `else` branch (line {line})"
            if kind in ("elif_clause", "if_statement"):
                keyword = "elif" if kind == "elif_clause" else "if"
                condition = []
                for child in ancestor.children[1:]:
                    if child.type == "then":
                        break
                    condition.append(child)
                text = _short(_text(script, condition[0], condition[-1])) if condition else "…"
                return f"the `{keyword} {text}` branch (line {line})"
            if kind == "case_item":
                pattern = ancestor.child_by_field_name("value")
                text = _short(_text(script, pattern, pattern)) if pattern is not None else "…"
                return f"the `{text})` case (line {line})"
        return None
    return None


def _text(script: "Script", first, last) -> str:
    return script.text(Span(first.start_byte, last.end_byte))


def _short(text: str) -> str:
    text = " ".join(text.split()).rstrip(";")
    return text if len(text) <= _CONDITION_LIMIT else text[: _CONDITION_LIMIT - 1] + "…"

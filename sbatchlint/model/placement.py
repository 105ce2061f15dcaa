"""Where a shell fix puts new text, in the script's own layout.

The shell counterpart of the Python side's edits (``python/rewrite.py``): fixes ask here where a
new line or a new option goes instead of working out offsets themselves, so every fix writes in
the style of the script it edits.

- :func:`after_header`: a new line right after the ``#SBATCH`` header (a new directive);
- :func:`after_line`: a new line right after a given line (a directive next to its partner);
- :func:`before_step`: a new line right before the statement that runs a step, indented like it;
- :func:`add_option` / :func:`add_step_options`: new words after ``srun`` (or after a launcher),
  in the command's layout. A command written one option per ``\\``-continued line (the line
  after ``srun``'s starts with an option) gets each new option as a continued line of its own,
  indented like that line; otherwise the options go inline, right after ``srun``. A new line ends like the line it follows (``\\n`` or
  ``\\r\\n``).

Every function returns an :class:`~sbatchlint.diagnostics.Edit` (or None when the place cannot
take new text without changing what runs); applying it changes no other byte.
"""
from __future__ import annotations


from ..diagnostics import Edit
from ..source import Span
from .steps import Step

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional, Sequence, Tuple

# Statements that hold a list of statements: a line inserted between two of them runs on its own.
BLOCK_PARENTS = frozenset(
    ("program", "compound_statement", "do_group", "else_clause", "case_item", "subshell", "if_statement", "elif_clause")
)


# -- lines -------------------------------------------------------------------------------------------
def _line_ending(data: bytes, newline_at: int) -> str:
    """The line ending at ``newline_at`` (the offset of a ``\\n``)."""
    return "\r\n" if newline_at > 0 and data[newline_at - 1 : newline_at] == b"\r" else "\n"


def after_header(script, text: str) -> Edit:
    """A new line holding ``text`` right after the header's last ``#SBATCH`` line (or after the
    shebang, or at the top, when there is no header)."""
    source = script.source
    data = script.data
    line = script.header.last_header_line
    if line <= 0:
        line = 1 if data.startswith(b"#!") else 0
    if line == 0:
        return Edit.insert(0, text + source.preferred_newline())
    span = source.line_span(line, with_newline=True)
    if span.end == len(data) and not data.endswith(b"\n"):
        return Edit.insert(span.end, source.preferred_newline() + text)
    newline = _line_ending(data, span.end - 1)
    return Edit.insert(span.end, text + newline)


def after_line(script, line: int, text: str) -> Edit:
    """A new line holding ``text`` right after line ``line`` (a directive next to the one it goes
    with), ending like that line."""
    source = script.source
    data = script.data
    span = source.line_span(line, with_newline=True)
    if span.end == len(data) and not data.endswith(b"\n"):
        return Edit.insert(span.end, source.preferred_newline() + text)
    return Edit.insert(span.end, text + _line_ending(data, span.end - 1))


def statement_start(script, step: Step) -> Optional[Tuple[int, str]]:
    """Where a new line can go right before the statement that runs a step, and its indentation.

    Only when the step is a statement of its own that starts its line (possibly piped or
    redirected): a line inserted before ``a && srun …`` or a continuation line would change
    what runs.
    """
    node = step.command.node
    while node.parent is not None and node.parent.type in ("redirected_statement", "pipeline", "negated_command"):
        if node.parent.children[0] != node:
            return None
        node = node.parent
    parent = node.parent
    if parent is None or parent.type not in BLOCK_PARENTS:
        return None
    if parent.type in ("if_statement", "elif_clause"):
        then = next((c for c in parent.children if c.type == "then"), None)
        if then is None or node.start_byte < then.end_byte:
            return None
    data = script.data
    line_start = data.rfind(b"\n", 0, node.start_byte) + 1
    before = data[line_start : node.start_byte]
    if before.strip(b" \t"):
        return None
    # the previous line must not continue into this one
    previous_end = line_start - 1
    if previous_end > 0:
        previous = data[data.rfind(b"\n", 0, previous_end) + 1 : previous_end].rstrip(b"\r")
        if previous.endswith(b"\\"):
            return None
    return line_start, before.decode("utf-8", "replace")


def before_step(script, step: Step, text: str) -> Optional[Edit]:
    """A new line holding ``text`` right before the statement that runs ``step``, indented like
    it; None when the step does not start a statement of its own."""
    place = statement_start(script, step)
    if place is None:
        return None
    offset, indent = place
    data = script.data
    newline_at = data.find(b"\n", offset)
    newline = _line_ending(data, newline_at) if newline_at >= 0 else script.source.preferred_newline()
    return Edit.insert(offset, indent + text + newline)


# -- options -----------------------------------------------------------------------------------------
def continuation_after(data: bytes, offset: int, limit: Optional[int] = None) -> Optional[Tuple[int, str, str]]:
    """When the line holding ``offset`` ends in a ``\\`` continuation before ``limit`` and the next
    line starts with an option (``-…``): the start of the next line, its indentation and the line
    ending. Otherwise None: the options are written on one line."""
    newline_at = data.find(b"\n", offset)
    if newline_at < 0 or (limit is not None and newline_at >= limit):
        return None
    ending = _line_ending(data, newline_at)
    line_end = newline_at - (len(ending) - 1)
    if data[offset:line_end].rstrip(b" \t")[-1:] != b"\\" or _escaped_backslash(data, offset, line_end):
        return None
    next_start = newline_at + 1
    end = next_start
    while end < len(data) and data[end] in b" \t":
        end += 1
    if end >= len(data) or data[end : end + 1] != b"-":
        return None  # the options are on one line; what follows is the command (or nothing)
    return next_start, data[next_start:end].decode("utf-8", "replace"), ending


def _escaped_backslash(data: bytes, start: int, line_end: int) -> bool:
    """The line's last ``\\`` is itself escaped (``\\\\``): no continuation."""
    text = data[start:line_end].rstrip(b" \t")
    count = len(text) - len(text.rstrip(b"\\"))
    return count % 2 == 0


def option_text(offset: int, quote: str, words: Sequence[str], data: bytes, task_start: Optional[int] = None) -> Edit:
    """Insert ``words`` after the word that ends at ``offset`` (``srun``, a launcher), in the
    command's layout: as continued lines when the words after it are one per continued line (the
    line ends in ``\\`` before the task command starts, ``task_start``), else inline."""
    if quote != "'":  # a continuation inside single quotes is two literal characters
        place = continuation_after(data, offset, task_start)
        if place is not None:
            start, indent, ending = place
            return Edit.insert(start, "".join(f"{indent}{word} \\{ending}" for word in words))
    return Edit.insert(offset, "".join(" " + word for word in words))


def add_option(script, offset: int, quote: str, words: Sequence[str], task_start: Optional[int] = None) -> Edit:
    """New words (options, each already quoted for ``quote``) after the word that ends at ``offset``."""
    return option_text(offset, quote, words, script.data, task_start)


def task_start(step: Step) -> Optional[int]:
    """Where the task command's first word is written, when it is written at the step."""
    if not step.task_argv:
        return None
    word = step.task_argv[0]
    if word.node is None:
        return None
    return word.span.start


def add_step_options(script, step: Step, words: Sequence[str], offset: Optional[int] = None, quote: str = "") -> Optional[Edit]:
    """New srun options for ``step`` right after ``srun`` (or at ``offset``, a place the caller
    chose after a word of the step, with its quoting), in the step's layout. None when the
    ``srun`` word is not written in one place of the script."""
    if offset is None:
        offset, quote = step.insertion_after_srun()
        if offset is None:
            return None
    limit = task_start(step)
    if limit is not None and limit < offset:
        limit = None  # srun comes from a variable written elsewhere
    return option_text(offset, quote, words, script.data, limit)


def add_launcher_options(script, launch, words: Sequence[str]) -> Optional[Edit]:
    """New launcher options (``--nnodes=2`` for torchrun) right after the launcher's words, in the
    command's layout: continued lines only when the launcher's options are written one per
    continued line before the entry point. None when the launcher is not written in one place."""
    offset, quote = launch.insertion_after_launcher()
    if offset is None:
        return None
    limit = offset  # no known entry point: inline
    if launch.entry is not None:
        spans = [p.span for p in launch.entry.words[0].pieces if p.span is not None]
        if spans and spans[0].start > offset:
            limit = spans[0].start
    return option_text(offset, quote, words, script.data, limit)


# -- suppression comments ----------------------------------------------------------------------------
# Nodes whose bytes are data rather than shell syntax: a comment cannot go inside them. A
# here-document's redirect runs from ``<<`` to its closing word, so nothing follows that word either.
_DATA_NODES = ("string", "raw_string", "ansi_c_string", "translated_string", "arithmetic_expansion")
_HEREDOC = "heredoc_redirect"


def _data_regions(script) -> List[Tuple[int, int, bool]]:
    """(start, end, closes_line) of every string and here-document of the script: an offset
    strictly inside one is data; one at the end of a here-document is on its closing line."""
    memo = getattr(script, "_comment_places", None)
    if memo is None:
        memo = [(n.start_byte, n.end_byte, False) for n in script.nodes_of_type(*_DATA_NODES)]
        memo += [(n.start_byte, n.end_byte, True) for n in script.nodes_of_type(_HEREDOC)]
        script._comment_places = memo
    return memo


def _in_data(script, offset: int) -> bool:
    return any(start < offset < end or (closes and offset == end) for start, end, closes in _data_regions(script))


def _ends_continued(data: bytes, line_start: int, line_end: int) -> bool:
    return data[line_start:line_end].rstrip(b" \t\r").endswith(b"\\")


def _comment_line(script, line_start: int, line_end: int) -> bool:
    """The line holds nothing but a comment (an ``#SBATCH`` line among them)."""
    data = script.data
    first = line_start
    while first < line_end and data[first] in b" \t":
        first += 1
    return first < line_end and data[first:first + 1] == b"#" and script.is_comment(first)


def end_of_line(script, line: int) -> Optional[int]:
    """Where a comment can end line ``line`` without changing what runs: the end of its text,
    when that is shell syntax (not inside a string or a here-document, not after a ``\\``
    continuation); None otherwise."""
    source = script.source
    span = source.line_span(line)
    data = script.data
    end = span.end
    while end > span.start and data[end - 1:end] == b"\r":
        end -= 1
    if _ends_continued(data, span.start, end) or _in_data(script, end) or _in_data(script, span.start):
        return None
    return end


def line_before(script, line: int) -> Optional[Tuple[int, str]]:
    """Where a new line can go right before line ``line`` and the indentation it takes: not before
    the first line (a ``#!`` stays first), not inside a string or a here-document, not after a
    line continued by ``\\``. None when no line can go there."""
    if line <= 1:
        return None
    source = script.source
    span = source.line_span(line)
    data = script.data
    if _in_data(script, span.start):
        return None
    previous = source.line_span(line - 1)
    if _ends_continued(data, previous.start, previous.end):
        return None
    indent = span.start
    while indent < span.end and data[indent] in b" \t":
        indent += 1
    return span.start, data[span.start:indent].decode("utf-8", "replace")


def comment_line_first(script, line: int) -> bool:
    """Whether line ``line`` is a comment line (``#SBATCH`` and the like): a suppression goes on
    a line of its own before it rather than into the comment, where sbatch would read it."""
    span = script.source.line_span(line)
    return _comment_line(script, span.start, span.end)


def file_comment_line(script) -> int:
    """The offset where a file-wide comment line goes: after the ``#!`` line, else at the top."""
    data = script.data
    if data.startswith(b"#!"):
        return script.source.line_span(1, with_newline=True).end
    return 0


# -- a task command run by the task's own shell ------------------------------------------------------
TASK_SHELL = "bash -c 'exec "


def wrap_in_task_shell(script, step: Step, site: Span, keep, same,
                       why: Optional[List[str]] = None) -> Optional[Tuple[List[Edit], List[str]]]:
    """Run a step's task command, written on srun's command line, through the task's own shell:
    ``srun … python t.py --data $DATA --rank $SLURM_PROCID`` becomes ``srun … bash -c 'exec python
    t.py --data "${1}" --rank $SLURM_PROCID' _ "$DATA"``, the words and the lines between them as
    they were written. ``exec`` makes the program the task itself, so signals, ``--kill-on-bad-exit``
    and the exit code reach it as before.

    ``keep(name)`` says, for each variable expanded in the command, whether the task's shell
    expands it (True: it stays inside the quotes), the batch shell must (False: its value is passed
    as a positional argument, the expansion written as at the step), or the command cannot be
    moved (None); ``same(name)``, whether its value is the same in the batch shell and every task
    (a job-wide value the batch shell put into another variable may go in as an argument; a
    per-task one may not). ``site``: the expansion the fix is for, which must lie in the task command.
    Returns the edits and the batch-shell expansions passed as arguments; None when the command
    is not written on srun's command line in one place, or carries a value the batch shell
    expanded from another variable that ``keep`` would not pass (``why``, when given, receives
    the reason). A single quote of the command is written ``'\\''`` inside the new quotes.

    A source word that expands to several words or none (``"${ARGS[@]}"``, an unquoted
    ``$FLAGS``) cannot become one argument: then the words from the first to the last that need
    the batch shell move, as written, behind the quotes and run as ``"$@"`` (``bash -c 'exec
    torchrun "$@" --node_rank=$SLURM_NODEID train.py' _ "${ARGS[@]}"``), so the batch shell
    expands them exactly as before; only when no word among them needs the task's shell.
    """
    words = step.task_argv
    command = step.command.node
    if not words or command is None:
        return _refused(why, "the task command is not written on srun's line")
    same_node = lambda node: (node.start_byte, node.end_byte) == (command.start_byte, command.end_byte)  # noqa: E731
    if any(w.node is None or w.node.parent is None or not same_node(w.node.parent) for w in words):
        return _refused(why, "the task command is not written on srun's line in one place (it comes from a variable)")
    data = script.data
    # the command's source words from the task's first one on: one may expand to several task
    # words (``"${ARGS[@]}"``, an unquoted ``$FLAGS``) or to none (an empty ``$FLAGS``)
    children = list(command.children)
    first = next((i for i, c in enumerate(children) if c == words[0].node), None)
    if first is None:
        return _refused(why, "the task command is not written on srun's line in one place")
    sources = children[first:]
    if any(c.type not in _WORD_NODES for c in sources):
        return _refused(why, "the task command holds more than words (a redirection or a substitution that cannot move)")
    produced: List[list] = [[w for w in words if w.node == c] for c in sources]
    if sum(len(p) for p in produced) != len(words):
        return _refused(why, "the task command's words are not all written on srun's line")
    # a source word's bytes: its node, and the pieces the parser cut off it (``$A/b_$C.d``, see shell.py)
    extents = []
    kept_sources, kept_produced = [], []
    for node, its in zip(sources, produced):
        if not its and extents and node.end_byte <= extents[-1][1]:
            continue  # the rest of a word the parser cut: its bytes belong to the word before
        spans = [p.span for w in its for p in w.pieces if p.span is not None and not p.via]
        extents.append((min([node.start_byte] + [sp.start for sp in spans]), max([node.end_byte] + [sp.end for sp in spans])))
        kept_sources.append(node)
        kept_produced.append(its)
    sources, produced = kept_sources, kept_produced
    for (_, before), (after, _) in zip(extents, extents[1:]):
        gap = data[before:after]
        if before > after or gap.replace(b"\\\r\n", b"").replace(b"\\\n", b"").strip(b" \t"):
            return _refused(why, "the task command's words are not written one after the other on srun's line")
    start, end = extents[0][0], extents[-1][1]
    if not (start <= site.start and site.end <= end):
        return _refused(why, "the expansion is not among the task command's words (it is in a variable's value, an assignment or srun's options)")
    # per source word: the expansions the batch shell must do (as written at the step), and
    # whether the task's shell expands one of its own
    batch: List[List[Tuple[Span, bool]]] = []
    task_side: List[bool] = []
    for node, its in zip(sources, produced):
        found_here: List[Tuple[Span, bool]] = []
        expands = False
        for word in its:
            for piece in word.pieces:
                if piece.via:
                    found = piece.via[-1]  # the expansion written at the step
                    if piece.name is not None and keep(piece.name) is not False and not same(piece.name):
                        outer = data[found.start : found.end].decode("utf-8", "replace")
                        return _refused(why, f"`{outer}` holds `${piece.name}` as the batch shell expanded it, "
                                             "a value no task's shell can give it again")
                elif piece.known or piece.span is None:
                    continue
                else:
                    decision = keep(piece.name) if piece.name else False
                    if decision is None:
                        return _refused(why, f"`${piece.name}` is a launcher's variable that no shell of the task has")
                    if decision:
                        expands = True
                        continue
                    found = piece.span
                if not (start <= found.start and found.end <= end):
                    return _refused(why, "a value of the command is expanded outside it")
                if all(found != s for s, _ in found_here):
                    found_here.append((found, _in_double_quotes(node, found)))
        if not its and node.type != "word":
            found_here.append((Span(node.start_byte, node.end_byte), False))  # expands to no word here
        batch.append(found_here)
        task_side.append(expands)
    one_word_each = all(len(its) == 1 for its in produced)
    if one_word_each:
        simple = _as_arguments(data, start, end, [s for found in batch for s in found])
        if simple is not None:
            return simple
    return _as_argument_run(data, start, end, extents, batch, task_side, site, why)


_WORD_NODES = frozenset((
    "word", "string", "raw_string", "ansi_c_string", "translated_string", "simple_expansion", "expansion",
    "concatenation", "command_substitution", "number", "arithmetic_expansion",
))


def _as_arguments(data: bytes, start: int, end: int, sites: List[Tuple[Span, bool]]) -> Optional[Tuple[List[Edit], List[str]]]:
    """Each batch-shell expansion passed as a positional argument of its own (``"${1}"``)."""
    edits = [Edit.insert(start, TASK_SHELL)]
    arguments: List[str] = []
    outer = [s for s in sites if not any(o is not s and o[0].contains(s[0]) and o[0] != s[0] for o in sites)]
    ordered = sorted(outer, key=lambda s: s[0].start)
    for index, (where, quoted) in enumerate(ordered, 1):
        written = data[where.start : where.end].decode("utf-8", "replace")
        if not written.startswith("$(") and ('"' in written or "\\" in written):
            return None  # it would need quoting of its own as an argument (the run of words may go)
        arguments.append(written)
        edits.append(Edit(where, f"${{{index}}}" if quoted else f'"${{{index}}}"'))
    edits += _quotes_inside(data, start, end, [where for where, _ in ordered])
    tail = "'" + "".join(f' "{a}"' if i else f' _ "{a}"' for i, a in enumerate(arguments))
    edits.append(Edit.insert(end, tail))
    return edits, arguments


def _refused(why: Optional[List[str]], reason: str) -> None:
    if why is not None:
        why.append(reason)
    return None


def _as_argument_run(data: bytes, start: int, end: int, extents, batch, task_side, site: Span, why=None):
    """The source words from the first to the last that need the batch shell, moved as they are
    written behind the new quotes and run as ``"$@"``: the batch shell expands them exactly as
    before (arrays, word splitting and all). Only when no word in that run needs the task's shell."""
    needing = [i for i, found in enumerate(batch) if found]
    if not needing:
        return _refused(why, "the task command's words cannot be passed one by one")
    low, high = needing[0], needing[-1]
    run = Span(extents[low][0], extents[high][1])
    if any(task_side[low : high + 1]) or run.start <= site.start < run.end:
        return _refused(why, "values only the batch shell has stand on both sides of one the task's shell must expand, "
                             "and one of them is a list of words (`\"${ARGS[@]}\"`, an unquoted `$FLAGS`)")
    moved = data[run.start : run.end].decode("utf-8", "replace")
    edits = [Edit.insert(start, TASK_SHELL), Edit(run, '"$@"')]
    edits += _quotes_inside(data, start, end, [run])
    edits.append(Edit.insert(end, "' _ " + moved))
    edits.sort(key=lambda e: (e.span.start, e.span.end))
    passed = [data[where.start : where.end].decode("utf-8", "replace") for found in batch[low : high + 1] for where, _ in found]
    return edits, passed


def _quotes_inside(data: bytes, start: int, end: int, skip: List[Span]) -> List[Edit]:
    """A single quote of the command, inside the new single quotes: close, escaped quote, reopen."""
    edits = []
    position = data.find(b"'", start, end)
    while position >= 0:
        if not any(where.start <= position < where.end for where in skip):
            edits.append(Edit(Span(position, position + 1), "'\\''"))
        position = data.find(b"'", position + 1, end)
    return edits


def _in_double_quotes(node, span: Span) -> bool:
    """The bytes of ``span`` lie inside a double-quoted string of the word ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "string" and current.start_byte < span.start and span.end < current.end_byte:
            return True
        stack.extend(current.children)
    return False

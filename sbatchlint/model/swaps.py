"""Alternative task strings that parse exactly as the step's own string.

A step inside ``for TP in 1 2 4; do srun bash -c "… --tp $TP"; done`` runs one string per
iteration. Its alternatives differ from the step's own string (the primary alternative) only in a
plain argument of the same length: ``--tp 1`` against ``--tp 4``. The shell reads such a string
with the same tree (the same nodes at the same bytes), so a question about the tree of the
alternative is answered by the tree of the step's string, which the model parsed already.

``swapped_words`` says when that holds, and which argument words the alternative rewrites. It is
strict: a rewritten word must be an argument of a command (not its name, not an assignment), a
``word`` or ``number`` of characters that start no token of their own, of the same kind in both
strings (``12`` is a number, ``ab`` a word), no reserved word, and ended by a blank or an
operator that no digit turns into a redirection (``12>x``). Anything else: None, and the caller
parses the alternative as before.
"""
from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate, compress, count as counter, islice
from _operator import is_not  # (operator's own: its Python module is not imported)

from ..lazyre import lazy
from ..stdlite import lru_cache  # (functools' own, without importing functools)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Sequence, Tuple

    from .values import Value

# Characters a rewritten argument may hold: none starts a token of its own or changes how the
# shell reads the word (no quote, expansion, glob, brace, tilde, comment, redirection or blank).
_INERT = lazy(r"^[A-Za-z0-9_./,:+=-]+$")
_INTEGER = lazy(r"^-?[0-9]+$")
# Bytes that may follow a rewritten argument: the word ends there whatever digits it holds.
_WORD_ENDS = frozenset(b" \t\n;|)")
_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in",
     "function", "time", "coproc", "!", "[[", "]]", "{", "}"}
)


def swapped_words(root, string: "Value", alternative: "Value") -> "Optional[List]":
    """The argument nodes of ``string``'s tree (``root``, the parse of ``string.text``) whose
    text ``alternative`` changes, in source order, when the alternative parses to the same tree;
    else None. An empty list: the two strings have the same text."""
    pieces = alternative.pieces
    own = string.pieces
    if len(pieces) != len(own):
        return None
    changed: List[int] = []
    for position, (piece, mine) in enumerate(zip(pieces, own)):
        if piece is mine:
            continue
        if not (piece.known and mine.known):
            if piece.render() != mine.render():
                return None
            continue
        if piece.text == mine.text:
            continue
        if len(piece.text) != len(mine.text) or not _INERT.match(piece.text) or not _INERT.match(mine.text):
            return None
        changed.append(position)
    if not changed:
        return []
    starts, ends, _raws = string._layout
    data = string.text.encode("utf-8")
    other = alternative.text.encode("utf-8")
    nodes: List = []
    for position in changed:
        start, end = starts[position], ends[position]
        if nodes and nodes[-1].end_byte >= end:
            continue  # in the word already checked
        node = root.descendant_for_byte_range(start, end - 1)
        while node is not None and not (node.start_byte <= start and end <= node.end_byte):
            node = node.parent
        if node is None or node.type not in ("word", "number") or node.child_count:
            return None
        parent = node.parent
        if parent is None or parent.type != "command":
            return None  # the command's name is a command_name; an assignment's value, a for list…
        mine = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        theirs = other[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if not _INERT.match(mine) or not _INERT.match(theirs) or mine in _RESERVED or theirs in _RESERVED:
            return None
        if _INTEGER.match(mine) and _INTEGER.match(theirs):
            if node.type != "number":
                return None
        elif node.type != "word" or _numeric_start(mine) or _numeric_start(theirs):
            return None
        after = data[node.end_byte : node.end_byte + 2]
        if after and after[0] not in _WORD_ENDS and after not in (b"\\\n", b"&&"):
            return None
        nodes.append(node)
    return nodes


def kept_swapped_words(values, root, string: "Value", alternative: "Value") -> "Optional[List]":
    """``swapped_words`` of ``root``, the tree of ``string``'s text that ``values`` (the batch
    script's) holds (``steps.task_tree``), kept there per pair of values: the launch model and the
    early-expansion judgement ask it of the same alternatives of a string. Shared: do not modify."""
    return _per_pair(values, "_swapped_words", string, alternative, lambda: swapped_words(root, string, alternative))


def _numeric_start(text: str) -> bool:
    """A word the shell's grammar may read as a number (``2``, ``-1``, ``64#z``)."""
    return text[:1].isdigit() or (text[:1] == "-" and text[1:2].isdigit())


# -- alternatives of another length ----------------------------------------------------------------
#
# ``srun bash -c "torchrun … --save ${WORKSPACE:-/workspace}/ckpt …"`` has two alternative strings:
# the default's (``/workspace/ckpt``, the step's own) and the environment's, where the batch shell
# leaves ``${WORKSPACE}`` to the task's shell. They differ in length, so the trees differ in their
# offsets, but not in their shape: the rewritten stretch stays inside one plain argument word,
# whose new text (inert characters and ``${NAME}`` of variables the string never assigns) reads as
# one argument again. Every other word reads the same text from the same pieces. ``shifted_words``
# says when that holds and where each rewritten word lies in the alternative.

_IDENTIFIER = lazy(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Commands whose arguments the task string's own values read (names they assign, ``set -a``).
_READ_BY_VALUES = frozenset({"read", "mapfile", "readarray", "set"})


def changed_regions(own: "Sequence", pieces: "Sequence", where: "Optional[Dict[int, int]]" = None) -> "Optional[List[Tuple[int, int, int, int]]]":
    """The stretches where ``pieces`` (an alternative's) differ from ``own`` (the step's string's):
    ``(i, k, j, l)`` for ``own[i:k]`` written as ``pieces[j:l]``, both non-empty, every piece
    outside them the same object in both, in the same order; None when the two do not line up so.
    ``where``: ``piece_places(own)``, when the caller keeps it (else made here if needed)."""
    count, total = len(own), len(pieces)
    regions: List[Tuple[int, int, int, int]] = []
    i = j = 0
    while True:
        # the stretch both hold (compared without a Python step per piece)
        step = next(compress(counter(), map(is_not, islice(own, i, None), islice(pieces, j, None))), None)
        if step is None:
            shared = min(count - i, total - j)
            if i + shared == count and j + shared == total:
                return regions
            return None  # pieces added or dropped at the end
        i += step
        j += step
        if where is None:
            where = piece_places(own)
        if len(where) != count:
            return None  # a piece twice: no single way to line them up
        l = j
        k = count
        while l < total:
            found = where.get(id(pieces[l]))
            if found is not None:
                if found < i:
                    return None
                k = found
                break
            l += 1
        if k == i or l == j:
            return None  # an insertion or a deletion
        regions.append((i, k, j, l))
        i, j = k, l


def piece_places(own: "Sequence") -> "Dict[int, int]":
    """Where each piece object of ``own`` stands in it, by id (fewer entries than pieces when
    one object stands twice)."""
    return dict(zip(map(id, own), counter()))


def shifted_words(root, inner, string: "Value", alternative: "Value") -> "Optional[Tuple[List[Tuple], List[Tuple[int, int]]]]":
    """``_shifted_words``, worked out once per string and alternative (the launch variants and
    the early-expansion check ask for the same ones), kept with the string's own values
    ``inner`` (which hold nothing that refers back to them: no reference cycle)."""
    return _per_pair(inner, "_shifted_words", string, alternative, lambda: _shifted_words(root, inner, string, alternative))


def _per_pair(holder, attribute: str, string: "Value", alternative: "Value", compute):
    """``compute()``, kept in ``holder``'s dict ``attribute`` per pair of values (by identity:
    both are kept with the answer, so their ids stay their own)."""
    memo = holder.__dict__.get(attribute)
    if memo is None:
        memo = holder.__dict__[attribute] = {}
    key = (id(string), id(alternative))
    kept = memo.get(key)
    if kept is not None and kept[0] is string and kept[1] is alternative:
        return kept[2]
    found = compute()
    memo[key] = (string, alternative, found)
    return found


def _shifted_words(root, inner, string: "Value", alternative: "Value") -> "Optional[Tuple[List[Tuple], List[Tuple[int, int]]]]":
    """The rewritten argument words when ``alternative`` reads as ``string`` (whose text parsed
    to ``root``, with values ``inner``) apart from them: ``(node, start, end, quoted, command)``
    for each, the node of ``string``'s tree, the word's bytes in the alternative's text, whether
    it is a single-quoted string there and the node of its command, and the rewritten stretches'
    bytes in ``string``'s text; else None.

    Each stretch the alternative rewrites lies inside an argument word (of a command the values
    do not read) between a blank and a byte that ends a word. A single-quoted string stays one,
    its quotes where they were and none between them: its text is literal. Any other word's new
    text is inert characters and ``${NAME}`` of variables the string never assigns, with no empty
    piece at or inside it, and reads as one argument word whose parts are one node each
    (``_reads_as_parts``): each part evaluates to one piece at its own bytes, which map onto the
    alternative's pieces there."""
    # (the step's string is compared with each of its alternatives: where its pieces stand is
    # worked out once per string, kept with the memo of ``shifted_words``)
    places = inner.__dict__.get("_piece_places")
    if places is None:
        places = inner.__dict__["_piece_places"] = {}
    found = places.get(id(string))
    if found is None or found[0] is not string:
        found = places[id(string)] = (string, piece_places(string.pieces))  # (kept alive with it)
    regions = changed_regions(string.pieces, alternative.pieces, found[1])
    if not regions:
        return None
    if "IFS" in inner.assignments:
        return None
    starts, ends, _raws = string._layout
    a_starts, a_ends, a_raws = layout_along(string, alternative, regions)
    data = string.text.encode("utf-8")
    words: Dict[int, list] = {}  # word start → [node, shift before it, change inside it, command]
    commands: Dict[Tuple[int, int], bool] = {}  # per command: whether the values read its words
    stretches: List[Tuple[int, int]] = []
    shift = 0
    for i, k, j, l in regions:
        start, end = starts[i], ends[k - 1]
        if start >= end or a_starts[j] >= a_ends[l - 1]:
            return None
        node = root.descendant_for_byte_range(start, end - 1)
        parent = node.parent if node is not None else None  # (each ``parent`` walks the tree)
        while node is not None and not (node.start_byte <= start and end <= node.end_byte):
            node, parent = parent, (parent.parent if parent is not None else None)
        while parent is not None and parent.type != "command":
            node, parent = parent, parent.parent
        if node is None or parent is None or (node.type not in _ARGUMENTS and node.type != "raw_string"):
            return None  # the command's name is a command_name; an assignment's value, a for list…
        key = (parent.start_byte, parent.end_byte)
        read = commands.get(key)
        if read is None:
            name = parent.child_by_field_name("name")
            read = commands[key] = name is None or data[name.start_byte : name.end_byte] in _READ_BY_VALUES_BYTES
        if read:
            return None
        stretches.append((start, end))
        delta = (a_ends[l - 1] - a_starts[j]) - (end - start)
        entry = words.get(node.start_byte)
        if entry is None:
            words[node.start_byte] = [node, shift, delta, parent]
        else:
            entry[2] += delta
        shift += delta
    out: List[Tuple] = []
    pieces = alternative.pieces
    other: Optional[bytes] = None
    for node, before, inside, command in words.values():
        ws, we = node.start_byte, node.end_byte
        if ws == 0 or data[ws - 1] not in _BLANKS:
            return None
        after = data[we : we + 2]
        if after and after[0] not in _WORD_ENDS and after not in (b"\\\n", b"&&"):
            return None
        start, end = ws + before, we + before + inside
        if node.type == "raw_string":
            # ``'…'``: whatever the alternative writes between the quotes is literal text
            if other is None:
                other = alternative.text.encode("utf-8")
            if end - start < 3 or other[start] != 39 or other[end - 1] != 39 or other.find(b"'", start + 1, end - 1) >= 0:
                return None
            out.append((node, start, end, True, command))
            continue
        # the alternative's pieces over the word: inert text, or a whole ``${NAME}``
        index = bisect_left(a_ends, start)
        parts: List[Tuple[bool, bytes]] = []
        while index < len(pieces) and a_starts[index] <= end:
            p_start, p_end = a_starts[index], a_ends[index]
            if p_end < start:
                index += 1
                continue
            piece = pieces[index]
            if p_start == p_end:
                return None  # an empty piece: the parse would keep it where slicing may not
            if p_end > start and p_start < end:
                if piece.known:
                    text = a_raws[index][max(start, p_start) - p_start : min(end, p_end) - p_start]
                    if parts and parts[-1][0]:
                        parts[-1] = (True, parts[-1][1] + text)
                    else:
                        parts.append((True, text))
                else:
                    if p_start < start or p_end > end or not piece.name or not _IDENTIFIER.match(piece.name):
                        return None
                    if piece.name in inner.assignments:
                        return None
                    parts.append((False, a_raws[index]))
            index += 1
        if not parts:
            return None
        for known, text in parts:
            if known and not _INERT.match(text.decode("utf-8", "replace")):
                return None
        if not _reads_as_parts(tuple(parts)):
            return None
        out.append((node, start, end, False, command))
    return out, stretches


def layout_along(string: "Value", alternative: "Value", regions: "List[Tuple[int, int, int, int]]") -> "Tuple[List[int], List[int], List[bytes]]":
    """``alternative._layout`` (each piece's bytes, where they start and end), made from the
    layout of ``string`` when the alternative has none yet: outside the ``regions`` of
    ``changed_regions`` its pieces are the string's own piece objects, in the same order, whose
    bytes are the string's bytes for them; only the pieces of the regions are rendered. An
    alternative of a long string differs from it in a few pieces, and rendering each of its
    hundreds of pieces was most of comparing them."""
    if alternative._layout_cache is None:
        own = string._layout[2]
        pieces = alternative.pieces
        raws: List[bytes] = []
        i = 0
        for start, end, first, last in regions:
            raws += own[i:start]
            raws += [(p.text if p.known else p.render()).encode("utf-8") for p in pieces[first:last]]
            i = end
        raws += own[i:]
        ends = list(accumulate(map(len, raws)))
        alternative._layout_cache = ([0] + ends[:-1] if ends else [], ends, raws)
    return alternative._layout


_BLANKS = frozenset(b" \t")
# The argument nodes a rewritten word may be in the step's string (whatever the alternative
# writes there is read on its own, below).
_ARGUMENTS = frozenset({"word", "number", "concatenation", "expansion", "simple_expansion"})
_READ_BY_VALUES_BYTES = frozenset(name.encode() for name in _READ_BY_VALUES)


@lru_cache(maxsize=512)
def _reads_as_parts(parts: "Tuple[Tuple[bool, bytes], ...]") -> bool:
    """Whether ``x WORD`` (WORD: the parts' text) parses to one argument made of one node per
    part: a literal part a ``word`` or ``number`` without children, an expansion part an
    ``expansion`` of its name alone (so each part evaluates to one piece at its own bytes, as
    the alternative's pieces lie)."""
    from ..shell import parse

    text = b"".join(t for _, t in parts)
    if len(parts) == 1 and parts[0][0]:
        word = text.decode("utf-8", "replace")
        if word in _RESERVED or _numeric_start(word) and not _INTEGER.match(word):
            return False
    root = parse(b"x " + text + b"\n").root_node
    if root.has_error or root.named_child_count != 1:
        return False
    command = root.named_children[0]
    if command.type != "command" or command.named_child_count != 2:
        return False
    argument = command.named_children[1]
    if argument.start_byte != 2 or argument.end_byte != 2 + len(text):
        return False
    nodes = list(argument.named_children) if argument.type == "concatenation" else [argument]
    if len(nodes) != len(parts) or (len(parts) > 1 and argument.type != "concatenation"):
        return False
    position = 2
    for node, (known, part) in zip(nodes, parts):
        if node.start_byte != position or node.end_byte != position + len(part):
            return False
        if known:
            if node.type not in ("word", "number") or node.child_count:
                return False
        elif node.type != "expansion" or [c.type for c in node.children] != ["${", "variable_name", "}"]:
            return False
        position = node.end_byte
    return True

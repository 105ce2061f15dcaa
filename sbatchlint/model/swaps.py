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

from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional

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


def _numeric_start(text: str) -> bool:
    """A word the shell's grammar may read as a number (``2``, ``-1``, ``64#z``)."""
    return text[:1].isdigit() or (text[:1] == "-" and text[1:2].isdigit())

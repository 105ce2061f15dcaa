"""Template placeholders left in a script: ``<YOUR_ACCOUNT>``, ``your_account_here``, ``CHANGE_ME``.

Where they are (an ``#SBATCH`` value, a word, a string, an unquoted ``<NAME>`` that bash reads as
two redirections) and whether the script mentions them on purpose (a comment, a here-document, a
message, a test that checks for one).
"""
from __future__ import annotations

import posixpath

from .. import options as option_table
from .. import shell
from ..lazyclass import dataclass
from ..source import Span
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Tuple

_ANGLE_ANY = lazy(r"<[^<>\s][^<>\n]*>")
_ANGLE_SHELL = lazy(r"<([A-Za-z][A-Za-z0-9_./:@-]*)>")
_WORD_PLACEHOLDERS = lazy(
    r"(?i)(?<![A-Za-z0-9$_{])(?:"
    r"your[_-][a-z0-9][a-z0-9_-]*"
    r"|change[_-]?me"
    r"|(?:replace|fill)[_-]?(?:me|in)"
    r"|[a-z0-9]+(?:_[a-z0-9]+)*_here"
    r"|(?:[a-z0-9]+[_-])?x{5,}"
    r")(?![A-Za-z0-9])"
)
# What every placeholder above starts with or contains, searched in the whole file first: only
# the nodes around a match are read (a superset of both patterns, so no placeholder is missed).
# Searched in the lowered bytes (ASCII lowering keeps every offset), which is faster than (?i);
# the word pattern only when one of its literals occurs at all (a substring test is far cheaper).
_ANGLE_CANDIDATE = lazy(rb"<[a-z_][a-z0-9_./:@ -]*>")
_UPPER_NAME = lazy(r"[A-Z][A-Z0-9_]+")
_NAME_PARTS = lazy(r"[_\-/ .:@]+")
_ANGLE_WORD = lazy(rb"<([A-Za-z_][A-Za-z0-9_./:@-]*)>")
_WORD_CANDIDATE = lazy(rb"your[_-]|change[_-]?me|(?:replace|fill)[_-]?(?:me|in)|_here|xxxxx")
_WORD_LITERALS = (b"your", b"change", b"replace", b"fill", b"_here", b"xxxxx")


def _candidate_ranges(data: bytes) -> List[Tuple[int, int]]:
    lowered = data.lower()
    ranges = [m.span() for m in _ANGLE_CANDIDATE.finditer(lowered)]
    ranges.extend(_word_spans(data, lowered))
    return ranges


_LAST_WORDS: list = [None, []]  # the file read last, and its word candidates (both readings ask)


def _word_spans(data: bytes, lowered: Optional[bytes] = None) -> List[Tuple[int, int]]:
    """``_word_candidates`` of ``data`` lowered, found once for the file being read."""
    if _LAST_WORDS[0] is not data:
        _LAST_WORDS[:] = [data, list(_word_candidates(data.lower() if lowered is None else lowered))]
    return _LAST_WORDS[1]


def _word_candidates(lowered: bytes) -> Iterator[Tuple[int, int]]:
    """The spans ``_WORD_CANDIDATE.finditer(lowered)`` gives, the pattern tried only where one
    of its literals begins (each of its branches begins with one): a search tries it at every
    byte, which cost as much as the rest of the rule."""
    starts = set()
    for literal in _WORD_LITERALS:
        at = lowered.find(literal)
        while at >= 0:
            starts.add(at)
            at = lowered.find(literal, at + 1)
    match = _WORD_CANDIDATE.match
    end = 0
    for at in sorted(starts):
        if at < end:
            continue  # inside the previous match: a search goes on after it
        found = match(lowered, at)
        if found is not None:
            end = found.end()
            yield found.span()
_SHELL_KINDS = frozenset({"<", "word", "string_content", "raw_string"})
_PLACEHOLDER_WORDS = frozenset(
    """your path dir directory folder account user username project partition email mail workspace
    shared fs filesystem cluster qos reservation nodes nnodes name""".split()
)
# Programs whose arguments mention placeholders on purpose: messages, tests, template fillers.
_QUOTING_PROGRAMS = frozenset(
    """echo printf [ test grep egrep fgrep rg sed awk gawk perl envsubst logger : read die fail error
    warn log info usage fatal abort""".split()
)


def _angle_is_placeholder(content: str) -> bool:
    if _UPPER_NAME.fullmatch(content):
        return True
    parts = [p.lower() for p in _NAME_PARTS.split(content) if p]
    return any(p in _PLACEHOLDER_WORDS or "your" in p for p in parts)


def _placeholders_in(text: str, header: bool) -> Iterator[Tuple[int, int]]:
    """(start, end) character ranges of placeholders in ``text``."""
    taken: List[Tuple[int, int]] = []
    if header:
        for match in _ANGLE_ANY.finditer(text):
            taken.append(match.span())
    else:
        for match in _ANGLE_SHELL.finditer(text):
            if _angle_is_placeholder(match.group(1)):
                taken.append(match.span())
    for match in _WORD_PLACEHOLDERS.finditer(text):
        start, end = match.span()
        if not any(a <= start < b for a, b in taken):
            taken.append((start, end))
    return iter(sorted(taken))


def _char_span(base: int, text: str, start: int, end: int) -> Span:
    before = len(text[:start].encode("utf-8"))
    length = len(text[start:end].encode("utf-8"))
    return Span(base + before, base + before + length)


def _mentioned_on_purpose(node, data: bytes) -> bool:
    """Inside a comment, a heredoc, a test, a case pattern, a `${X:?message}` or a message command."""
    child = node
    for parent in shell.ancestors(node):
        kind = parent.type
        if kind in ("heredoc_body", "heredoc_redirect", "test_command", "comment", "arithmetic_expansion"):
            return True
        if kind == "case_item":
            patterns = parent.children_by_field_name("value")
            if any(p.start_byte == child.start_byte and p.end_byte == child.end_byte for p in patterns):
                return True
        if kind == "expansion" and any(c.type in (":?", "?") for c in parent.children):
            return True
        if kind == "command":
            name = parent.child_by_field_name("name")
            if name is not None and posixpath.basename(shell.text(name, data)) in _QUOTING_PROGRAMS:
                return True
        child = parent
    return False


# Where a placeholder does no harm: a name for people (a job name, a comment), or the file name
# of a log (its directory must exist, its name is anything).
_NAME_OPTIONS = ("--job-name", "-J", "--comment")
_LOG_OPTIONS = ("--output", "-o", "--error", "-e")
_ASSIGNMENT_PREFIX = lazy(rb"[ \t]*(?:(?:export|local|readonly|declare(?:[ \t]+-\w+)*)[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=([^ \t\n;&|()<>]*)\Z")


@dataclass(frozen=True)
class GluedRedirection:
    """``X=/a/<name>/b``: bash reads ``<name`` and ``>/b`` as redirections of the assignment."""

    variable: str  # X
    kept: str  # what X holds: the value cut at the ``<`` ("/a/")
    source: str  # the file the input redirection reads ("name")
    target: str  # the file the output redirection creates or truncates ("/b"), or ""


def _harmless_in_directive(directive, offset: int) -> bool:
    spec = directive.spec
    if spec is None or directive.value_span is None:
        return False
    if spec.free_text:
        return True
    if spec.long in (option_table.OUTPUT, option_table.ERROR):
        value = directive.value or ""
        slash = value.rfind("/")
        if slash < 0:
            return True
        offsets = directive.value_offsets
        return slash < len(offsets) and offset > offsets[slash]
    return False


def _harmless_word(node, data: bytes, a: int, text: str) -> bool:
    """A placeholder in a job name or a log file name given to a command (``srun --output``)."""
    word = text
    option = None
    for name in _NAME_OPTIONS + _LOG_OPTIONS:
        if name.startswith("--") and word.startswith(name + "="):
            option = name
            break
    if option is None:
        argument = node.parent if node.parent is not None and node.parent.type == "concatenation" else node
        if argument is node and node.type != "word":
            return False
        if argument is not node and argument.children[0].start_byte != node.start_byte and "/" not in text[:a]:
            return False  # a later piece of the word: the directory may be in an earlier one
        sibling = argument.prev_named_sibling
        if sibling is None:
            return False
        option = shell.text(sibling, data)
        if option not in _NAME_OPTIONS + _LOG_OPTIONS:
            return False
    if option in _NAME_OPTIONS:
        return True
    return text.rfind("/") < a


def header_placeholders(script) -> Iterator[Tuple[Span, str]]:
    source = script.source
    data = script.data
    every = script.header.directives  # in source order, as their lines
    if not every:
        return
    words = None  # whether the file holds a word-style placeholder anywhere (asked once)
    # From the first directive to the end of the last one's line: every line below lies there,
    # so without an angle bracket in it (nor a placeholder word in the file) none has one.
    last = data.find(b"\n", every[-1].span.end)
    if data.find(b"<", every[0].span.start, len(data) if last < 0 else last) < 0:
        words = bool(_word_spans(data))
        if not words:
            return
    for line, directives in script.header.lines.items():
        if not directives:
            continue
        start = directives[0].span.start
        end = max(d.span.end for d in directives)
        if script.data.find(b"<", start, end) < 0:
            if words is None:
                words = bool(_word_spans(script.data))
            if not words:
                continue  # neither an angle bracket nor a placeholder word on this line
        text = source.text(Span(start, end))
        for a, b in _placeholders_in(text, header=True):
            span = _char_span(start, text, a, b)
            holder = next((d for d in directives if d.span.start <= span.start < d.span.end), None)
            if holder is not None and _harmless_in_directive(holder, span.start):
                continue
            yield span, text[a:b]

def shell_placeholders(script) -> Iterator[Tuple[Span, str, object]]:
    """(span, text, how bash reads it): ``True`` for an unquoted ``<NAME>`` read as two
    redirections, a :class:`GluedRedirection` for one glued into an assignment's value, ``False``
    for literal text."""
    data = script.data
    for node in _candidate_nodes(script):
        kind = node.type
        if kind == "<":
            # ``<NAME>`` unquoted: a redirection from NAME followed by one into the next word.
            match = _ANGLE_WORD.match(data[node.start_byte : node.start_byte + 200])
            if match is None:
                continue
            content = match.group(1).decode("utf-8", "replace")
            glued = _glued_assignment(data, node.start_byte, match)
            if glued is None and not _angle_is_placeholder(content):
                continue  # ``sort <in >out``: real redirections
            if not _mentioned_on_purpose(node, data):
                span = Span(node.start_byte, node.start_byte + match.end(1) + 1)
                yield span, "<" + content + ">", glued if glued is not None else True
            continue
        if kind not in ("word", "string_content", "raw_string"):
            continue
        text = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        hits = list(_placeholders_in(text, header=False))
        if not hits or _mentioned_on_purpose(node, data):
            continue
        for a, b in hits:
            if _harmless_word(node, data, a, text):
                continue
            yield _char_span(node.start_byte, text, a, b), text[a:b], False


def _glued_assignment(data: bytes, at: int, match) -> Optional[GluedRedirection]:
    """The assignment a ``<NAME>`` at ``at`` is glued into (``X=/a/<NAME>/b``), if any."""
    line_start = data.rfind(b"\n", 0, at) + 1
    prefix = _ASSIGNMENT_PREFIX.match(data, line_start, at)
    if prefix is None or not prefix.group(2):
        return None
    after = at + match.end(0)
    end = after
    while end < len(data) and data[end] not in b" \t\n;&|()<>":
        end += 1
    decode = lambda raw: raw.decode("utf-8", "replace")  # noqa: E731
    return GluedRedirection(
        decode(prefix.group(1)), decode(prefix.group(2)), decode(match.group(1)), decode(data[after:end])
    )


def _candidate_nodes(script) -> List:
    """The nodes SBL009 reads (``<``, words, string contents), in source order, of those that
    overlap a candidate match: the rest of the tree cannot hold a placeholder."""
    root = script.root
    found: Dict[Tuple[int, int, int], object] = {}
    for start, end in _candidate_ranges(script.data):
        inner = root.descendant_for_byte_range(start, end)
        if inner is None:
            continue
        parent = inner
        while parent is not None:  # nodes holding the whole match
            if parent.type in _SHELL_KINDS:
                found[(parent.start_byte, -parent.end_byte, parent.kind_id)] = parent
            parent = parent.parent
        for node in shell.walk(inner):  # nodes inside it that overlap the match
            if node.type in _SHELL_KINDS and node.start_byte < end and node.end_byte > start:
                found[(node.start_byte, -node.end_byte, node.kind_id)] = node
    return [found[key] for key in sorted(found)]

"""``#SBATCH`` directives, read the way sbatch reads them.

sbatch scans the script line by line: a line starting with ``#SBATCH`` (in column 1) carries
options, whatever follows the magic word (``#SBATCH--nodes=2`` sets the node count, and
``#SBATCHED …`` is refused: "Invalid directive found in batch script: ED"); a blank line or a
line whose first non-blank character is ``#`` is skipped; the first other line ends the scan. Directives after it are ignored ("late"). Within a directive, words are
separated by blanks, quotes group, and an unquoted ``#`` starts a comment that runs to the end
of the line; a backslash makes the next character literal (``\\#`` is a ``#``, also inside
quotes), except a blank outside quotes, which still ends the word. Several options may share one
line. A short option keeps everything after its letter as its value, as getopt does: ``-N=2``
gives ``--nodes`` the value ``=2``. (Each of these was checked against sbatch 22.05.)
"""
from __future__ import annotations

from bisect import bisect_right

from .. import options as sbatch_options
from ..lazyclass import dataclass, field
from ..source import Source, Span
from ..lazyre import IGNORECASE, lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

MAGIC = b"#SBATCH"
HET_SEPARATORS = ("hetjob", "packjob")
_BOM = b"\xef\xbb\xbf"
_MALFORMED = lazy(rb"^(?P<lead>[ \t]*)#[ \t]*(?P<word>sbatch)(?P<after>.?)", IGNORECASE)


@dataclass
class Token:
    text: str  # unquoted, escapes resolved
    span: Span  # source bytes of the token
    truncated_at: Optional[int] = None  # offset of an unescaped '#' glued to the token
    rest: Optional[Span] = None  # what sbatch drops after that '#'
    unclosed: Optional[int] = None  # offset of a quote that is never closed on the line
    offsets: Optional[List[int]] = None  # source offset of each byte of text; None: the span's own


@dataclass
class Directive:
    line: int
    line_span: Span
    option: str  # as written, without dashes: "ntasks-per-node", "N"
    dashes: str  # "--" or "-"
    spec: Optional["sbatch_options.OptionSpec"]
    value: Optional[str]
    span: Span  # the option and its value, as written
    option_span: Span  # the option word (up to '=' or the end of the token)
    value_span: Optional[Span]
    placement: str  # "header" or "late"
    truncated_at: Optional[int] = None
    dropped: Optional[Span] = None  # text sbatch ignores after an unescaped '#' in the value
    unclosed_quote: Optional[int] = None  # offset of a quote never closed: sbatch stops ("Unmatched")
    text: str = ""  # the option and its value as written in the source
    glued: bool = False  # the word follows ``#SBATCH`` with no blank (``#SBATCHED``, ``#SBATCH-N2``)
    quote_char: str = ""  # the quote that is never closed (see unclosed_quote)
    ignored_words: List[str] = field(default_factory=list)  # words sbatch drops after the '#'
    value_byte_offsets: Optional[List[int]] = None  # see value_offsets
    source: Optional[Source] = field(default=None, repr=False, compare=False)
    component: int = 0  # the component of a heterogeneous job (0 before the first ``hetjob``)

    @property
    def separator(self) -> bool:
        """``#SBATCH hetjob`` (or the older ``packjob``): the start of the next component of a
        heterogeneous job, not an option."""
        return self.dashes == "" and self.option in HET_SEPARATORS

    @property
    def name(self) -> Optional[str]:
        """The canonical long name, or None for an unknown option."""
        return self.spec.long if self.spec else None

    @property
    def written(self) -> str:
        return self.dashes + self.option

    @property
    def attached(self) -> bool:
        """A short option whose value is glued to the letter (``-N2``, ``-ntasks``)."""
        return (
            self.dashes == "-"
            and self.value is not None
            and self.value_span is not None
            and self.value_span.start == self.option_span.end
        )

    @property
    def value_offsets(self) -> List[int]:
        """The source offset of every byte of the value as sbatch reads it (quotes and escapes
        removed); empty without a value."""
        if self.value_span is None:
            return []
        if self.value_byte_offsets is not None:
            return self.value_byte_offsets
        return list(range(self.value_span.start, self.value_span.end))

    def source_offset_in_value(self, index: int, before: bool = False) -> Optional[int]:
        """Where in the source text inserted at character ``index`` of the value goes: after the
        character before it, or (``before``) at the character at ``index`` itself when there is
        one. None when quotes or escapes hide how the value's characters map to the source."""
        assert self.source is not None and self.value is not None
        offsets = self.value_offsets
        encoded_before = len(self.source.encode(self.value[:index]))
        if not offsets or len(offsets) != len(self.source.encode(self.value)):
            return None
        if before and encoded_before < len(offsets):
            return offsets[encoded_before]
        return offsets[encoded_before - 1] + 1 if encoded_before else offsets[0]

    @property
    def comment_span(self) -> Optional[Span]:
        """From the start of the option to the end of the word an unescaped ``#`` cuts, when one
        does."""
        if self.truncated_at is None:
            return None
        return Span(self.span.start, self.dropped.end if self.dropped else self.truncated_at + 1)

    @property
    def hash_span(self) -> Optional[Span]:
        """The ``#`` that cuts the value and the rest of its word."""
        if self.truncated_at is None:
            return None
        return Span(self.truncated_at, self.dropped.end if self.dropped else self.truncated_at + 1)

    @property
    def one_dash_long(self) -> Optional[str]:
        """The long option a one-dash word such as ``-ntasks-per-node=8`` was meant to be."""
        if not self.attached:
            return None
        assert self.value is not None
        if self.value.startswith("="):
            return None  # ``-N=2``: a short option with a stray '=' (SBL006)
        name, equals, _ = (self.option + self.value).partition("=")
        if len(name) < 3 or not _LONG_NAME.fullmatch(name):
            return None
        table = sbatch_options.SBATCH
        exact = sbatch_options.lookup_exact(table, name)
        if exact is not None:
            return sbatch_options.canonical(exact.long)
        if not equals:
            return None  # ``-Jtraining``, ``-pgpu``: a short option and its value, as intended
        spec = sbatch_options.lookup(table, name)
        if spec is not None:
            return sbatch_options.canonical(spec.long)
        return sbatch_options.suggest(table, name)

    def as_step_word(self, quote: str, value: Optional[str]) -> Optional[str]:
        """This option written for an ``srun`` line, at a place inside ``quote`` (``""`` when
        outside quotes), with ``value``; None when it cannot be written there unchanged (a ``$``
        that the shell would expand, a value that needs quotes inside quotes)."""
        assert self.name is not None
        flag = "--" + self.name
        if value is None:
            return flag
        if sbatch_options.has_expansion(value) or "$" in value:
            return None  # sbatch kept it literal; the shell would expand it
        if _PLAIN_VALUE.match(value):
            return f"{flag}={value}"
        if quote == "":
            import shlex  # only to move an option with an unusual value

            return f"{flag}={shlex.quote(value)}"
        return None

    @property
    def one_dash_name_span(self) -> Optional[Span]:
        """For a one-dash long option, the ``-name`` as written (what ``--name`` replaces); None
        when escapes or quotes make it differ from the source."""
        name = (self.option + (self.value or "")).partition("=")[0]
        written = "-" + name
        if self.text.startswith(written) and written.isascii():
            return Span(self.span.start, self.span.start + len(written))
        return None


_LONG_NAME = lazy(r"[A-Za-z][A-Za-z0-9_-]*")
_PLAIN_VALUE = lazy(r"[A-Za-z0-9_@%+=:,./#-]*\Z")


@dataclass
class MalformedDirective:
    line: int
    span: Span  # the line
    kind: str  # "indented", "spaced", "case"
    text: str
    fixed_line: Optional[str] = None  # what the line would be as a directive


@dataclass
class Header:
    directives: List[Directive] = field(default_factory=list)
    malformed: List[MalformedDirective] = field(default_factory=list)
    first_command_line: Optional[int] = None  # the line that ends sbatch's scan
    last_header_line: int = 0  # the last #SBATCH line before the first command
    lines: Dict[int, List[Directive]] = field(default_factory=dict)
    source: Optional[Source] = field(default=None, repr=False, compare=False)
    components: int = 0  # the number of ``hetjob`` separators: a heterogeneous job has more than 0
    table: Dict[str, "sbatch_options.OptionSpec"] = field(default_factory=lambda: sbatch_options.SBATCH, repr=False, compare=False)

    @property
    def effective(self) -> List[Directive]:
        """Directives sbatch applies (in the header block), in order. Shared: do not modify."""
        return self._indexes()[0]

    def get(self, name: str) -> Optional[Directive]:
        """The directive that wins for a long option name (the last one in the header)."""
        cache = self.__dict__.get("_cache")  # (``_indexes``, inlined as in ``winning``)
        if cache is None or cache[0] != len(self.directives):
            return self._indexes()[1].get(name)
        return cache[2].get(name)

    def winning(self, canonical_name: str) -> Optional[Directive]:
        """The directive that wins for an option by canonical name (``--tasks-per-node`` is
        ``ntasks-per-node``)."""
        cache = self.__dict__.get("_cache")  # (``_indexes``, inlined: asked for several times per step)
        if cache is None or cache[0] != len(self.directives):
            return self._indexes()[2].get(canonical_name)
        return cache[3].get(canonical_name)

    def _indexes(self) -> Tuple[List[Directive], Dict[str, Directive], Dict[str, Directive]]:
        """The effective directives, and the last of each name and of each canonical name: asked
        for many times per script, so kept until a directive is added (the header is built by
        appending, then only read)."""
        cache = self.__dict__.get("_cache")
        if cache is None or cache[0] != len(self.directives):
            effective = [d for d in self.directives if d.placement == "header"]
            by_name: Dict[str, Directive] = {}
            by_canonical: Dict[str, Directive] = {}
            for directive in effective:
                # the batch script and steps without --het-group run in the first component
                if directive.name is not None and directive.component == 0:
                    by_name[directive.name] = directive
                    by_canonical[sbatch_options.canonical(directive.name)] = directive
            cache = self.__dict__["_cache"] = (len(self.directives), effective, by_name, by_canonical)
        return cache[1], cache[2], cache[3]

    def value(self, name: str) -> Optional[str]:
        directive = self.get(name)
        return directive.value if directive else None

    def all(self, name: str) -> List[Directive]:
        return [d for d in self.effective if d.name == name]

    def has_later(self, directive: Directive) -> bool:
        """Whether any directive (in the header or not) follows this one."""
        return self.directives.index(directive) + 1 < len(self.directives)

    def previous_on_line(self, directive: Directive) -> Optional[Directive]:
        same_line = self.lines.get(directive.line, [])
        index = same_line.index(directive) if directive in same_line else -1
        return same_line[index - 1] if index > 0 else None

    def removal_spans(self, directives: Sequence[Directive]) -> List[Span]:
        """What to delete to take these directives out of the header: whole lines (with their
        line break) when nothing else is on them, else each option with the blanks before it."""
        source = self.source
        assert source is not None
        spans: List[Span] = []
        by_line: Dict[int, List[Directive]] = {}
        for directive in directives:
            by_line.setdefault(directive.line, []).append(directive)
        for line, removed in by_line.items():
            on_line = self.lines.get(line, [])
            if len(removed) == len(on_line):
                spans.append(source.line_span(line, with_newline=True))
                continue
            for directive in removed:
                start = directive.span.start
                while start > directive.line_span.start and source.data[start - 1 : start] in (b" ", b"\t"):
                    start -= 1
                spans.append(Span(start, directive.span.end))
        return spans

    @property
    def byte_order_mark(self) -> Optional[Span]:
        """The UTF-8 byte-order mark that starts the file, if any: sbatch then sees no ``#!``."""
        assert self.source is not None
        return Span(0, 3) if self.source.data.startswith(_BOM) else None

    @property
    def has_shebang(self) -> bool:
        """Line 1 starts with ``#!`` (with nothing before it: sbatch's test)."""
        assert self.source is not None
        return self.source.data.startswith(b"#!")

    @property
    def shebang_after_mark(self) -> bool:
        """A ``#!`` line that only a byte-order mark hides."""
        assert self.source is not None
        return self.source.data.startswith(_BOM + b"#!")

    @property
    def dos_line_breaks(self) -> List[int]:
        """The offset of every ``\\r\\n`` pair in the file (sbatch refuses any)."""
        assert self.source is not None
        data = self.source.data
        positions: List[int] = []
        at = data.find(b"\r\n")
        while at >= 0:
            positions.append(at)
            at = data.find(b"\r\n", at + 2)
        return positions

    def line_text(self, line: int) -> str:
        """The text of a line (without its line break)."""
        assert self.source is not None
        return self.source.text(self.source.line_span(line))


_PLAIN_TOKEN = lazy(rb"[^ \t\r\"'\\#]+")


def tokenize(source: Source, start: int, end: int) -> List[Token]:
    """Split a directive's option text the way sbatch does; stops at a comment."""
    data = source.data
    tokens: List[Token] = []
    i = start
    while i < end:
        while i < end and data[i] in b" \t\r":
            i += 1
        if i >= end or data[i] == 35:  # '#': comment
            break
        token_start = i
        plain = _PLAIN_TOKEN.match(data, i, end)
        if plain is not None and (plain.end() == end or data[plain.end()] in b" \t\r"):
            # the common token: no quote, backslash or '#' up to the next blank
            i = plain.end()
            raw = data[token_start:i]
            try:
                text = raw.decode(source.encoding)
            except UnicodeDecodeError:
                text = raw.decode(source.encoding, errors="replace")
            tokens.append(Token(text, Span(token_start, i), None))
            continue
        chars: List[str] = []
        offsets: List[int] = []
        quote = 0
        quote_at = 0
        truncated = None
        while i < end:
            byte = data[i]
            if byte == 92 and i + 1 >= end:  # a backslash at the end of the line is dropped
                i += 1
                continue
            if quote:
                if byte == 92:
                    chars.append(chr(data[i + 1]))
                    offsets.append(i + 1)
                    i += 2
                    continue
                if byte == quote:
                    quote = 0
                else:
                    chars.append(chr(byte))
                    offsets.append(i)
                i += 1
                continue
            if byte in (34, 39):
                quote = byte
                quote_at = i
                i += 1
                continue
            if byte in b" \t\r":
                break
            if byte == 92:  # a backslash makes the next byte literal (\#, \"), but not a blank:
                i += 1  # sbatch drops it and the word ends there (``a\ b`` is "a" and "b")
                if data[i] in b" \t\r":
                    break
                chars.append(chr(data[i]))
                offsets.append(i)
                i += 1
                continue
            if byte == 35:
                truncated = i
                break
            chars.append(chr(byte))
            offsets.append(i)
            i += 1
        raw = data[token_start:i]
        try:
            text = "".join(chars).encode("latin-1").decode(source.encoding)
        except (UnicodeEncodeError, UnicodeDecodeError):
            text = raw.decode(source.encoding, errors="replace")
        token = Token(text, Span(token_start, i), truncated, offsets=offsets)
        if quote:
            token.unclosed = quote_at
        if truncated is not None:
            # sbatch drops the rest of the word (up to the next blank).
            j = truncated
            while j < end and data[j] not in b" \t\r":
                j += 1
            token.rest = Span(truncated, j)
            tokens.append(token)
            break
        tokens.append(token)
    return tokens


def parse_header(source: Source, data_regions: Sequence[Span] = (), table=None) -> Header:
    """The header and every directive-like line of a script. ``data_regions`` are byte ranges
    that are data, not lines of the script (here-document bodies): no line starting in one is
    read. ``table`` is sbatch's option table, with the site's plugin options when it has any."""
    header = Header(source=source, table=table if table is not None else sbatch_options.SBATCH)
    data = source.data
    starts = source._line_starts  # (``line_span``, inlined: no Span made for a line that needs none)
    last_start = len(starts)
    size = len(data)
    in_header = True
    count = source.line_count
    number = 0
    while number < count:
        number += 1
        start = starts[number - 1]
        end = starts[number] if number < last_start else size
        if not in_header:
            # Below the first command only a line with a '#' can hold a directive (late or
            # malformed); every other line leaves the header as it is: go to the next '#'.
            found = data.find(b"#", start)
            if found < 0:
                break
            if found >= end:
                number = bisect_right(starts, found)  # (``line_of``)
                start = starts[number - 1]
                end = starts[number] if number < last_start else size
        if end > start and data[end - 1] == 10:  # "\n"
            end -= 1
        if end > start and data[end - 1] == 13:  # "\r"
            end -= 1
        if data_regions and _within_any(data_regions, start):
            continue
        raw = data[start:end]
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            start += 3
        if raw.startswith(MAGIC) and (in_header or raw[len(MAGIC) : len(MAGIC) + 1] in (b"", b" ", b"\t", b"\r", b"-")):
            # In the header sbatch reads whatever follows the magic word; below the first
            # command only a line that still reads as a directive (`#SBATCH --x`, `#SBATCH-N2`)
            # is one sbatch ignored, and `#SBATCHED …` there is just a comment.
            directives = _directives(source, number, Span(start, end), "header" if in_header else "late", header.table)
            if in_header:
                for directive in directives:
                    if directive.dashes == "" and directive.option in HET_SEPARATORS:  # (``separator``)
                        header.components += 1
                    directive.component = header.components
            header.directives.extend(directives)
            header.lines[number] = directives
            if in_header:
                header.last_header_line = number
            continue
        stripped = raw.lstrip(b" \t")
        # (a malformed directive is a comment: the pattern is tried on comment lines only)
        malformed = _malformed(source, number, start, end, raw) if stripped[:1] == b"#" else None
        if malformed is not None:
            header.malformed.append(malformed)
            continue
        if not stripped.strip() or stripped.startswith(b"#"):
            continue
        if in_header:
            in_header = False
            header.first_command_line = number
    return header


def _within_any(regions: Sequence[Span], offset: int) -> bool:
    for region in regions:
        if region.start <= offset < region.end:
            return True
    return False


def _malformed(source: Source, number: int, start: int, end: int, raw: bytes) -> Optional[MalformedDirective]:
    """The malformed directive on the line of bytes [start, end) (``raw``), or None."""
    match = _MALFORMED.match(raw)
    if not match:
        return None
    lead, word, after = match.group("lead"), match.group("word"), match.group("after")
    if after and after[0] not in b" \t\r-":  # (an int: see values._QUOTED_ESCAPABLE)
        return None  # "#SBATCHX" / "# sbatchlint: …" and the like are other comments
    if word == b"sbatch" and _names_a_script(source, start + match.end("word"), end):
        return None  # a usage comment: ``#   sbatch --nodes=4 train.sh``
    text = source.decode(raw)
    rest_start = match.end("word")
    rest = source.decode(raw[rest_start:])
    fixed = "#SBATCH" + (rest if rest[:1] in (" ", "\t") else " " + rest)
    between = raw[len(lead) + 1 : match.start("word")]
    if word == b"SBATCH" and not between:
        kind = "indented"  # (in column 1 it would be a directive, glued or not)
    elif between:
        kind = "spaced"
    else:
        kind = "case"
    return MalformedDirective(number, Span(start, end), kind, text, fixed)


def _names_a_script(source: Source, start: int, end: int) -> bool:
    """Whether the words after a lower-case ``sbatch`` hold a word that is no option nor an
    option's value (a script name, an argument): a command line shown as usage, not a
    directive."""
    table = sbatch_options.SBATCH
    tokens = tokenize(source, start, end)
    i = 0
    while i < len(tokens):
        text = tokens[i].text
        i += 1
        if not text.startswith("-") or text in ("-", "--"):
            return True
        if text.startswith("--"):
            if "=" in text:
                continue
            spec = sbatch_options.lookup(table, text[2:])
        elif len(text) == 2:
            spec = sbatch_options.lookup_exact(table, text[1])
        else:
            continue  # ``-N2``: the value is attached
        if spec is not None and spec.arg == "required":
            i += 1  # its value
    return False


def _directives(source: Source, number: int, span: Span, placement: str, table) -> List[Directive]:
    tokens = tokenize(source, span.start + len(MAGIC), span.end)
    out = _build_directives(source, number, span, placement, tokens, table)
    glued_at = span.start + len(MAGIC)
    data, encoding = source.data, source.encoding
    for directive in out:
        directive.source = source
        whole = directive.span
        directive.text = data[whole.start : whole.end].decode(encoding, errors="replace")  # (``source.text``)
        directive.glued = whole.start == glued_at
    for token in tokens:
        if token.unclosed is not None:
            for directive in out:
                if directive.span.contains(token.span):
                    directive.unclosed_quote = token.unclosed
                    directive.quote_char = chr(source.data[token.unclosed])
        if token.offsets is not None:
            for directive in out:
                value_span = directive.value_span
                if value_span is not None and token.span.contains(value_span):
                    directive.value_byte_offsets = [o for o in token.offsets if o >= value_span.start]
    for directive in out:
        if directive.truncated_at is not None:
            rest_start = directive.dropped.end if directive.dropped else directive.truncated_at + 1
            directive.ignored_words = [t.text for t in tokenize(source, rest_start, span.end)]
    return out


def _build_directives(source: Source, number: int, span: Span, placement: str, tokens: List[Token], table) -> List[Directive]:
    out: List[Directive] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        text = token.text
        i += 1
        if not text.startswith("-") or text == "-" or text == "--":
            # A stray word: sbatch's getopt would stop here; keep it as an unknown option.
            out.append(
                Directive(number, span, text, "", None, None, token.span, token.span, None, placement,
                          token.truncated_at, token.rest)
            )
            continue
        if text.startswith("--"):
            dashes = "--"
            body = text[2:]
            if "=" in body:
                name, value = body.split("=", 1)
                spec = sbatch_options.lookup(table, name)
                eq = source.data.find(b"=", token.span.start, token.span.end)
                if eq < 0:
                    eq = token.span.end
                option_span = Span(token.span.start, eq)
                value_span: Optional[Span] = Span(eq + 1, token.span.end)
                out.append(Directive(number, span, name, dashes, spec, value, token.span, option_span,
                                     value_span, placement, token.truncated_at, token.rest))
                continue
            name = body
            spec = sbatch_options.lookup(table, name)
            value = None
            value_span = None
            whole = token.span
            truncated, rest = token.truncated_at, token.rest
            if spec is not None and spec.arg == "required" and i < len(tokens):
                value_token = tokens[i]
                i += 1
                value, value_span = value_token.text, value_token.span
                whole = Span(token.span.start, value_token.span.end)
                truncated, rest = value_token.truncated_at, value_token.rest
            out.append(Directive(number, span, name, dashes, spec, value, whole, token.span, value_span,
                                 placement, truncated, rest))
            continue
        # short option: -N2, -N 2, -J name
        dashes = "-"
        letter = text[1]
        spec = sbatch_options.lookup_exact(table, letter) if hasattr(sbatch_options, "lookup_exact") else None
        if spec is None:
            spec = sbatch_options.lookup(table, letter)
        attached = text[2:]
        option_span = Span(token.span.start, token.span.start + 2)
        value = None
        value_span = None
        whole = token.span
        truncated, rest = token.truncated_at, token.rest
        if attached:
            # getopt keeps everything after the letter: ``-N=2`` gives --nodes the value "=2".
            value_span = Span(token.span.start + 2, token.span.end)
            value = attached
        elif spec is not None and spec.arg == "required" and i < len(tokens):
            value_token = tokens[i]
            i += 1
            value, value_span = value_token.text, value_token.span
            whole = Span(token.span.start, value_token.span.end)
            truncated, rest = value_token.truncated_at, value_token.rest
        out.append(Directive(number, span, letter, dashes, spec, value, whole, option_span, value_span,
                             placement, truncated, rest))
    return out

"""Secrets: where credential values sit in a shell script, which of them are live, and fixes.

``scan(script)`` (memoised on the script) finds every secret value with the model: literals
assigned to secret-named variables (plain, ``export``, ``declare -x``, ``local``, ``NAME=… cmd``
prefixes, ``env NAME=…``), ``NAME=VALUE`` items in arguments (``--export=``, ``--container-env=``,
``-e NAME=…``, Hydra-style ``wandb.api_key=…``), secret-named options (``--token VALUE``,
``--hf-token=VALUE``), ``wandb login [--relogin] KEY``, the same inside ``bash -c`` strings,
``#SBATCH --export=NAME=VALUE``, and known credential shapes anywhere. A secret is ``live`` when
bash or sbatch acts on it; one in an ordinary comment is not live (SBL401 does not report it) but
is still a secret: commented-out credentials are still credentials, so their values are redacted
too. Comments, heredoc bodies and regions the parser could not read are scanned as text.

``found_in(model)`` is every secret of the file a model was built from (what its outputs must
hide); ``find(source)`` builds a model to answer the same. What a credential looks like as text,
and the masking itself, live in ``sbatchlint.redaction``, which reporters use without a model.

Placeholders are not secrets: ``hf_your_token_here``, ``<YOUR_HF_TOKEN>``, ``changeme``,
``xxx…``, ``***``, empty values, and values the batch shell fills in (``$VAR``,
``${VAR:?…}``, ``$(cat file)``).
"""
from __future__ import annotations

import posixpath
from bisect import bisect_left, bisect_right

from . import options as option_table
from . import shell

from .diagnostics import Edit
from .lazyclass import dataclass
from .redaction import (
    byte_shapes,
    shape_matches,
    Secret,
    is_credential,
    is_placeholder,
    is_secret_name,
    kind_of,
    normalize_name,
    secret_name_kind,
    shape_of,
    line_bounded,
    name_hints,
    shape_hints,
    text_scan,
    text_secrets,
    whole_text_secrets,
    within,
)
from .shell import quoted_interior
from .source import Source, Span
from .lazyre import DOTALL, lazy
from .stdlite import lru_cache  # (functools' own, without importing functools)
# (the scan reads the model of every script: imported with it rather than at each call, where an
# import statement costs more than many a small scan)
from .model.steps import SHELLS, parse_task_string, remap, task_string_values
from .model.values import Piece, Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Set, Tuple
    from .model.script import Script
    from .model.steps import Command


# -- scanning with the model ---------------------------------------------------------------------


def reference(name: str) -> str:
    return "${%s:?set %s in the environment before sbatch}" % (name, name)


@dataclass
class TaskString:
    """A string some shell runs with ``-c``: an srun step's task command or a batch ``bash -c``."""

    value: "Value"
    commands: List["Command"]
    flags: str  # the shell's option letters (``-x`` traces)
    shell_word: Optional[Span] = None
    text: bytes = b""
    _tree: object = None

    def node_at(self, index: int):
        if self._tree is None:
            self._tree = shell.parse(self.text)
        return self._tree.root_node.descendant_for_byte_range(index, index)  # type: ignore[attr-defined]

    def quote_at(self, index: int) -> str:
        """How the task's shell quotes value byte ``index``: '', '"' or "'"."""
        node = self.node_at(index)
        while node is not None:
            if node.type == "raw_string":
                return "'"
            if node.type in ("string", "translated_string"):
                return '"'
            if node.type in ("heredoc_body", "ansi_c_string"):
                return "'"
            node = node.parent
        return ""

    def index_of(self, span: Span, data: bytes = b"") -> Optional[int]:
        """The value byte where source span ``span`` (a literal written as part of the string's
        text) lands in the string. A literal that reaches the string as the whole value of a
        secret variable (``$HF_TOKEN``) is that variable's value, not text of the string."""
        position = 0
        for piece in self.value.pieces:
            length = len(piece.render().encode("utf-8"))
            if piece.known and piece.exact and piece.span is not None and piece.span.contains(span):
                through_secret = any(
                    is_secret_name(expansion_name(data[via.start : via.end].decode("utf-8", "replace")) or "")
                    for via in piece.via
                )
                if not through_secret:
                    return position + span.start - piece.span.start
            position += length
        return None


_EXPANSION = lazy(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<rest>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))$", DOTALL)
_VARIABLE_NAME = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_UPPER_VARIABLE_NAME = lazy(r"[A-Z_][A-Z0-9_]*")


@lru_cache(maxsize=4096)
def expansion_name(text: str) -> Optional[str]:
    """The variable whose VALUE ``$X``/``${X…}`` yields (None for ``${#X}``, ``${X:+…}``, …)."""
    match = _EXPANSION.match(text)
    if not match:
        return None
    if match.group("plain"):
        return match.group("plain")
    rest = match.group("rest") or ""
    if rest.startswith((":+", "+")):
        return None
    return match.group("braced")


def task_strings(script: "Script") -> List[TaskString]:
    return script.secret_task_strings


def build_task_strings(script: "Script") -> List[TaskString]:
    out: List[TaskString] = []
    step_commands = {id(step.command) for step in script.steps}
    for step in script.steps:
        if step.task_string is None:
            continue
        flags = ""
        shell_word = None
        if step.shell_index is not None:
            shell_word = step.task_argv[step.shell_index].span
            for word in step.task_argv[step.shell_index + 1 :]:
                if not word.known or not word.text.startswith("-") or word.text.startswith("--"):
                    break
                flags += word.text[1:]
        value = step.task_string
        out.append(TaskString(value, step.task_commands, flags, shell_word, value.text.encode("utf-8")))
    for command in script.commands:
        if id(command) in step_commands:
            continue
        if not command.may_run(SHELLS):
            continue  # runs no shell (its argv is left unevaluated)
        argv = command.argv
        begin = command.begin
        if begin >= len(argv) or not argv[begin].known or posixpath.basename(argv[begin].text) not in SHELLS:
            continue
        flags = ""
        j = begin + 1
        while j < len(argv) and argv[j].known and argv[j].text.startswith("-") and not argv[j].text.startswith("--"):
            flags += argv[j].text[1:]
            j += 1
            if "c" in argv[j - 1].text[1:]:
                break
        if "c" not in flags or j >= len(argv):
            continue
        value = argv[j].value
        try:
            commands = parse_task_string(script.values, value)
        except RecursionError:  # pragma: no cover - absurd nesting
            continue
        out.append(TaskString(value, commands, flags, argv[begin].span, value.text.encode("utf-8")))
    return out


@dataclass
class _Context:
    """How the bytes of a literal are quoted, for writing a reference in their place."""

    quote: str  # batch-level: '', '"', "'", "$'", "heredoc", "comment"
    word: Optional[Span]  # the whole quoted string around it
    assignment: bool  # the value of an assignment (no word splitting)
    task: Optional[TaskString]
    task_quote: str = ""


def _context(script: "Script", span: Span) -> _Context:
    node = script.root.descendant_for_byte_range(span.start, max(span.start, span.end - 1))
    quote = ""
    word = None
    assignment = False
    current = node
    while current is not None:
        kind = current.type
        if not quote:
            if kind == "raw_string":
                quote, word = "'", Span(current.start_byte, current.end_byte)
            elif kind in ("string", "translated_string"):
                quote, word = '"', Span(current.start_byte, current.end_byte)
            elif kind == "ansi_c_string":
                quote = "$'"
            elif kind == "heredoc_body":
                quote = "heredoc"
            elif kind == "comment":
                quote = "comment"
        if kind == "variable_assignment":
            assignment = True
        if kind in ("command", "declaration_command"):
            break
        current = current.parent
    task = None
    task_quote = ""
    for candidate in task_strings(script):
        index = candidate.index_of(span, script.data)
        if index is not None:
            task = candidate
            task_quote = candidate.quote_at(index)
            break
    return _Context(quote, word, assignment, task, task_quote)


def _replacement(script: "Script", span: Span, env: str) -> Tuple[Tuple[Edit, ...], str]:
    """Edits that put a reference to ``env`` in place of the literal at ``span`` (or none)."""
    if not _VARIABLE_NAME.fullmatch(env or ""):
        return (), ""
    ctx = _context(script, span)
    ref = reference(env)
    how = f"read it from ${env} in the submission environment"
    if ctx.quote in ("$'", "heredoc", "comment"):
        return (), ""
    default = _same_variable_default(script, span, env)
    if default is not None and ctx.task is None:
        # ``${HF_TOKEN:-hf_…}``: the variable with a hardcoded fallback → the variable, required
        return (Edit(default, ref),), how
    if ctx.task is not None:
        if ctx.task_quote == "'":
            return (), ""
        if ctx.quote == '"':
            return (Edit(span, "\\" + ref),), how + " (the task's shell expands it)"
        if ctx.quote == "'":
            return (Edit(span, ref),), how + " (the task's shell expands it)"
        return (), ""
    if ctx.quote == '"':
        return (Edit(span, ref),), how
    if ctx.quote == "'":
        assert ctx.word is not None
        at_start = ctx.word.start + 1 == span.start
        at_end = ctx.word.end - 1 == span.end
        edit_span = Span(ctx.word.start if at_start else span.start, ctx.word.end if at_end else span.end)
        text = ("" if at_start else "'") + '"' + ref + '"' + ("" if at_end else "'")
        return (Edit(edit_span, text),), how
    # unquoted
    if ctx.assignment:
        return (Edit(span, ref),), how
    return (Edit(span, '"' + ref + '"'),), how


def _same_variable_default(script: "Script", span: Span, env: str) -> Optional[Span]:
    """The span of ``${ENV:-LITERAL}`` when the literal at ``span`` is exactly that default."""
    node = script.root.descendant_for_byte_range(span.start, max(span.start, span.end - 1))
    while node is not None and node.type not in ("expansion", "command", "program", "string"):
        node = node.parent
    if node is None or node.type != "expansion":
        return None
    data = script.data
    names = [c for c in node.children if c.type == "variable_name"]
    operators = [c for c in node.children if c.type in (":-", "-")]
    if not names or not operators or data[names[0].start_byte : names[0].end_byte].decode("utf-8", "replace") != env:
        return None
    if operators[0].end_byte != span.start or data[span.end : node.end_byte] != b"}":
        return None
    return Span(node.start_byte, node.end_byte)


def _literal(value: "Value", start: int, end: int) -> Optional[Tuple[str, Span, bool]]:
    """The literal text of value bytes [start, end), its source span, and whether the span is exactly it."""
    if end <= start:
        return None
    part = value.slice(start, end)
    pieces = [p for p in part.pieces if p.render()]
    if not pieces or not all(p.known and p.span is not None for p in pieces):
        return None
    spans = [p.span for p in pieces]
    whole = Span(min(s.start for s in spans), max(s.end for s in spans))  # type: ignore[union-attr]
    exact = all(p.exact for p in pieces) and all(a.span.end == b.span.start for a, b in zip(pieces, pieces[1:]))  # type: ignore[union-attr]
    exact = exact and len({p.quote for p in pieces}) == 1
    return part.text, whole, exact



def _env_for(name: str, value: str, own_variable: bool) -> str:
    """The environment variable a reference should name."""
    if own_variable and _VARIABLE_NAME.fullmatch(name):
        return name
    shape = shape_of(value)
    if shape is not None:
        return shape.env
    normalized = normalize_name(name)
    if normalized in ("TOKEN", "API_KEY", "KEY", "PASSWORD", "SECRET"):
        return ""
    return normalized if _UPPER_VARIABLE_NAME.fullmatch(normalized) else ""


class _Collector:
    def __init__(self, script: "Script") -> None:
        self.script = script
        self.found: Dict[Span, Secret] = {}

    def add(self, secret: Secret) -> None:
        existing = self.found.get(secret.span)
        if existing is None or (not existing.edits and secret.edits):
            self.found[secret.span] = secret

    def named(self, value: "Value", start: int, end: int, name: str, site: str, own_variable: bool) -> None:
        """A literal given to a secret-named variable, item or option."""
        literal = _literal(value, start, end)
        if literal is None:
            return
        text, span, exact = literal
        if not is_credential(text, secret_name_kind(name)) and shape_of(text) is None:
            return
        env = _env_for(name, text, own_variable)
        edits: Tuple[Edit, ...] = ()
        how = ""
        if exact and env:
            edits, how = _replacement(self.script, span, env)
        self.add(Secret(span, kind_of(text, name), name, text, True, site, env, edits, how,
                        _context(self.script, span).task is not None))

    def exported(self, value: "Value", name_start: int, start: int, end: int, name: str, option: str) -> None:
        """``--export=…,NAME=VALUE`` / ``--container-env=NAME=VALUE``: pass NAME from the environment instead."""
        literal = _literal(value, start, end)
        if literal is None:
            return
        text, span, exact = literal
        if not is_credential(text, secret_name_kind(name)) and shape_of(text) is None:
            return
        edits: Tuple[Edit, ...] = ()
        how = ""
        drop = _literal(value, start - 1, end)  # "=VALUE"
        if exact and drop is not None and drop[2]:
            edits = (Edit.delete(drop[1]),)
            how = f"pass {name} by name (`{option}=…,{name}`): it is taken from the environment"
        self.add(Secret(span, kind_of(text, name), name, text, True, "export", name, edits, how))


_ITEM = lazy(r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)=(?P<value>[^,]*)")
_EXPORT_OPTIONS = frozenset({option_table.EXPORT, option_table.CONTAINER_ENV})


_ITEM_NAME = lazy(r"[A-Za-z_][A-Za-z0-9_.\-]*=")


# What can put text into a word that its own bytes do not hold: an expansion or substitution
# (``$…``, backquotes) or an escape (``\t``, a line continuation). ``$NAME`` and ``${NAME}``
# of a variable the script never assigns are the exception (_ENVIRONMENT_NAME).
_BEYOND_ITS_BYTES = lazy(rb"[$`\\]")
_ENVIRONMENT_NAME = lazy(rb"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


def unevaluated_bytes(command: "Command") -> Optional[bytes]:
    """The bytes of a command whose argv is not evaluated yet (None once it is, or for one
    built from a task string): a question they answer saves evaluating it."""
    kept = command.__dict__
    if "argv" in kept or "_arguments" not in kept:
        return None
    node = command.node
    return kept["_values"].data[node.start_byte : node.end_byte]


def _may_name_a_secret(command: "Command") -> bool:
    """Whether a word of ``command`` may hold a secret-looking name or ``wandb`` (all that
    ``_scan_command`` looks for in the argv), answered from the command's bytes while its argv
    is not evaluated yet: without an expansion or an escape, each word's text is its own bytes
    without their quotes, so a hint in it is a hint in the command's bytes without quotes."""
    raw = unevaluated_bytes(command)
    if raw is None:
        return True
    if _BEYOND_ITS_BYTES.search(raw) is None or _environment_only(command, raw):
        lowered = raw.replace(b'"', b"").replace(b"'", b"").lower()
        if _NAME_HINT_BYTES.search(lowered) is None:
            return False
    return _HintFlow.of(command.__dict__["_values"]).may_hold_hint(command)


# What a name ``is_secret_name`` accepts holds (``redaction.secret_name_kind``): ``TOKEN`` or
# ``KEY`` where it ends (only characters ``normalize_name`` drops may follow them in the name:
# anything but a letter or a digit), or ``SECRET``/``PASSW`` anywhere; ``wandb`` is the program
# ``wandb login``. ``--tokenizer-model`` holds none of them.
_NAME_HINT_BYTES = lazy(rb"(?:token|key)(?![a-z0-9])|secret|passw|wandb")


# -- where the text of a command's words comes from ----------------------------------------------
#
# A command whose words expand the script's variables gets their text from the variables' values:
# a hint may be written whole in a value, or split between a value and the text beside it
# (``--${P}EN=…`` with ``P=TOK``). _HintFlow answers, from the tree alone, whether any text the
# model can build for the words holds a hint, by running a hint matcher over every way the words'
# parts can follow one another (a variable: any of its assignments' values, or its unknown form
# ``${NAME}``). The state between parts is the tail of the text so far that may begin a hint.
# Only the forms the model evaluates plainly are followed; any other makes the answer "maybe".

_HINT_STRINGS = tuple(hint.decode("ascii") for hint in (b"token", b"key", b"secret", b"passw", b"wandb"))
# ``token`` and ``key`` count only where a name may end: before a character that is no letter or
# digit, or at the end of the word (see _NAME_HINT_BYTES). One that ends the text so far is kept
# as a state of its own, until what follows it is known.
_AT_END = ("token", "key")
_ANYWHERE = ("secret", "passw", "wandb")
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_HINT_PREFIXES = frozenset(h[:k] for h in _HINT_STRINGS for k in range(1, len(h))) | frozenset(_AT_END)
_LONGEST_PREFIX = max(len(p) for p in _HINT_PREFIXES)
_START = frozenset({""})
_OPERATORS_WITH_DEFAULT = frozenset({":-", "-", ":=", "="})


class _Maybe(Exception):
    """A part whose text the flow does not follow: it may hold anything."""


def _tail(text: str) -> str:
    """The longest end of ``text`` that begins a hint ("" when none does)."""
    for size in range(min(len(text), _LONGEST_PREFIX), 0, -1):
        end = text[-size:]
        if end in _HINT_PREFIXES:
            return end
    return ""


def _through_literal(tails: "frozenset", text: str) -> "frozenset":
    out = set()
    for tail in tails:
        joined = tail + text
        for hint in _ANYWHERE:
            if hint in joined:
                raise _Maybe
        for hint in _AT_END:
            at = joined.find(hint)
            while at >= 0:
                after = at + len(hint)
                if after < len(joined) and joined[after] not in _NAME_CHARACTERS:
                    raise _Maybe
                at = joined.find(hint, at + 1)
        out.add(_tail(joined))
    return frozenset(out)


def _unescaped(raw: bytes, escapable: "Optional[bytes]") -> str:
    """Literal bytes as ``Values._literal_run`` reads them, lowercased: a backslash quotes the
    next character (any, or one of ``escapable``) and goes; before a newline both go."""
    if b"\\" not in raw:
        return raw.decode("utf-8", "replace").lower()
    out = bytearray()
    i = 0
    end = len(raw)
    while i < end:
        byte = raw[i]
        if byte == 92 and i + 1 < end and (escapable is None or raw[i + 1 : i + 2] in escapable):
            following = raw[i + 1 : i + 2]
            if following == b"\n":
                i += 2
                continue
            if following == b"\r" and raw[i + 2 : i + 3] == b"\n":
                i += 3
                continue
            out += following
            i += 2
            continue
        out.append(byte)
        i += 1
    return bytes(out).decode("utf-8", "replace").lower()


def _through_name(tails: "frozenset", name: Optional[str]) -> "frozenset":
    """An unknown value, which the model writes as ``${NAME}`` (``${?}`` without a name): the
    braces end whatever came before (a ``token`` there ends a name) and after, so only the name
    itself may hold a hint besides."""
    return _through_literal(tails, "${" + (name or "?").lower() + "}")


class _HintFlow:
    """The hint matcher over one script's values (kept with them: a variable's flow is worked
    out once however many commands expand it)."""

    def __init__(self, values) -> None:
        self.values = values
        self.data = values.data
        # Kept with the values (what a variable's flow is does not change): plain tuples and
        # sets, no reference back to them, so the model stays free of reference cycles.
        memo = values.__dict__.get("_hint_flow_memo")
        if memo is None:
            memo = values.__dict__["_hint_flow_memo"] = {}
        self.memo: Dict[tuple, Optional[frozenset]] = memo
        self.busy: Set[tuple] = set()

    @classmethod
    def of(cls, values) -> "_HintFlow":
        return cls(values)

    def may_hold_hint(self, command: "Command") -> bool:
        """Whether a word of ``command`` (not evaluated yet) may hold a hint once evaluated."""
        if self.values.outer is not None:
            return True  # a task string's values: names may come from the batch shell
        data = self.data
        try:
            for node in command.__dict__["_arguments"]:
                start = node.start_byte
                if start and data[start - 1] == 36:
                    return True  # it may continue a word cut at a bare ``$``
                ends = self.node(node, _START)  # each argument starts a word of its own
                if any(tail in _AT_END for tail in ends):
                    return True  # ``token`` at the end of the word: a name may end there
        except (_Maybe, RecursionError):
            return True
        return False

    def node(self, node, tails: "frozenset") -> "frozenset":
        kind = node.type
        data = self.data
        if kind in ("word", "number"):
            raw = data[node.start_byte : node.end_byte]
            if b"$" in raw or b"`" in raw:
                raise _Maybe
            return _through_literal(tails, _unescaped(raw, None))
        if kind == "raw_string":
            raw = data[node.start_byte : node.end_byte]
            if len(raw) < 2 or raw[:1] != b"'" or raw[-1:] != b"'":
                raise _Maybe
            return _through_literal(tails, raw[1:-1].decode("utf-8", "replace").lower())
        if kind == "string":
            return self.string(node, tails)
        if kind == "concatenation":
            if data[node.end_byte - 1] == 36:
                raise _Maybe  # a bare ``$`` may end it
            for child in node.children:
                if child.is_named:
                    tails = self.node(child, tails)
            return tails
        if kind == "simple_expansion":
            names = node.named_children
            if len(names) != 1 or names[0].type not in ("variable_name", "special_variable_name"):
                raise _Maybe
            return self.variable(self.text(names[0]), node.start_byte, tails)
        if kind == "expansion":
            return self.expansion(node, tails)
        if kind in ("command_substitution", "arithmetic_expansion", "process_substitution"):
            # an unknown value: ``${?}``, or ``${NAME}`` of the variable holding it (read there)
            return _through_name(tails, None)
        raise _Maybe

    def text(self, node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def string(self, node, tails: "frozenset") -> "frozenset":
        data = self.data
        raw = data[node.start_byte : node.end_byte]
        if len(raw) < 2 or raw[:1] != b'"' or raw[-1:] != b'"':
            raise _Maybe
        position = node.start_byte + 1
        end = node.end_byte - 1
        for child in node.named_children:
            if child.type == "string_content":
                continue
            if child.start_byte > position:
                tails = self.gap(position, child.start_byte, tails)
            tails = self.node(child, tails)
            position = child.end_byte
        if end > position:
            tails = self.gap(position, end, tails)
        return tails

    def gap(self, start: int, end: int, tails: "frozenset") -> "frozenset":
        raw = self.data[start:end]
        if b"`" in raw.replace(b"\\`", b""):
            raise _Maybe
        return _through_literal(tails, _unescaped(raw, b'$`"\\\n'))

    def expansion(self, node, tails: "frozenset") -> "frozenset":
        """``${…}`` as ``Values._braced_expansion`` evaluates it: a variable, with a default
        operand that may stand in for it; any other operation (trims, replacements, lengths,
        indirection, an element) gives an unknown value."""
        children = [c for c in node.children if c.type not in ("${", "}")]
        if not children:
            return _through_name(tails, None)
        first = children[0]
        if first.type == "subscript":
            base = first.child_by_field_name("name")
            index = first.child_by_field_name("index")
            if base is not None and index is not None and self.text(index) in ("@", "*"):
                return self.variable(self.text(base), node.start_byte, tails)  # the elements, or their unknown form
            return _through_name(tails, None)
        if first.type not in ("variable_name", "special_variable_name"):
            return _through_name(tails, None)
        name = self.text(first)
        rest = children[1:]
        if not rest:
            return self.variable(name, node.start_byte, tails)
        operator = rest[0].type
        if operator in (":+", "+"):
            return _through_name(tails, None)
        if operator in (":?", "?"):
            return self.variable(name, node.start_byte, tails)
        if operator not in _OPERATORS_WITH_DEFAULT:
            return _through_name(tails, name)
        out = set(self.variable(name, node.start_byte, tails))
        default = tails
        for operand in rest[1:]:
            if operand.is_named:
                default = self.node(operand, default)
        return frozenset(out | default)

    def elements(self, nodes, tails: "frozenset") -> "frozenset":
        """Words that each may be the value (a loop's list, an array's elements) or stand side
        by side with a space between (an array as one string)."""
        if any(tail in _AT_END for tail in tails):
            raise _Maybe  # a space may follow it
        out = set(tails) | _START
        for element in self.values.words_of(nodes):
            out |= self.node(element, tails)
            out |= self.node(element, _START)
        if any(tail in _AT_END for tail in out):
            raise _Maybe  # a space may follow it
        return frozenset(out)

    def variable(self, name: str, at: int, tails: "frozenset") -> "frozenset":
        """``$NAME`` used at byte ``at``: any value an assignment the model may follow there gives
        it (those before ``at``, as ``Values.lookup`` takes them), or its unknown form."""
        unknown = _through_name(tails, name)
        assignments = self.values.assignments.get(name)
        if not assignments:
            return unknown
        before = tuple(
            index for index, a in enumerate(assignments) if a.start < at and not a.span.start <= at < a.span.end
        )
        if not before:
            return unknown
        key = (name, before, tails)
        if key in self.memo:
            found = self.memo[key]
            if found is None:
                raise _Maybe
            return found
        if key in self.busy:
            raise _Maybe  # pragma: no cover - an assignment reads only those before it
        self.busy.add(key)
        try:
            out = set(unknown)
            for index in before:
                assignment = assignments[index]
                if assignment.in_string or assignment.sourced is not None:
                    raise _Maybe
                kind = assignment.kind
                value_node = assignment.value_node
                if kind == "unset" or (kind == "assign" and value_node is None):
                    out |= tails
                elif kind == "assign":
                    out |= self.node(value_node, tails)
                elif kind == "append" and value_node is not None:
                    out |= self.node(value_node, self.variable(name, assignment.start, tails))
                elif kind == "array" and value_node is not None:
                    out |= self.elements(value_node.named_children, tails)
                    if any(c.type == "+=" for c in assignment.node.children):
                        out |= self.variable(name, assignment.start, tails)
                elif kind == "for":
                    words = assignment.node.children_by_field_name("value")
                    out |= self.elements(words, tails) if words else tails
                else:
                    raise _Maybe  # read's values
            found = frozenset(out)
        except _Maybe:
            self.memo[key] = None
            raise
        finally:
            self.busy.discard(key)
        self.memo[key] = found
        return found


def _environment_only(command: "Command", raw: bytes) -> bool:
    """Whether every ``$`` of ``raw`` (a command's bytes, with no backquote or backslash)
    starts ``$NAME`` or ``${NAME}`` of a variable the script never assigns. The model gives each
    such expansion as one unknown piece that reads ``${NAME}``: a word's letters are then still
    its own bytes' (a name's are written there), with ``${`` and ``}`` between them."""
    if b"`" in raw or b"\\" in raw:
        return False
    values = command.__dict__["_values"]
    if values.outer is not None:
        return False  # a task string's values: names may come from the batch shell
    assigned = values.assignments
    count = 0
    for match in _ENVIRONMENT_NAME.finditer(raw):
        name = (match.group(1) or match.group(2)).decode("ascii")
        if name in assigned:
            return False
        if match.group(1) is not None and raw[match.end() : match.end() + 1] == b"[":
            return False  # ``$A[0]`` reads the same; keep to the plain forms
        count += 1
    return count == raw.count(b"$")


def _scan_command(collector: _Collector, command: "Command") -> None:
    for env in command.env:
        if is_secret_name(env.name):
            text = env.value.text
            collector.named(env.value, 0, len(text.encode("utf-8")), env.name, "env", True)
    if not _may_name_a_secret(command):
        return  # its argv is left unevaluated: most rules never need it
    argv = command.argv
    program = ""
    for index, word in enumerate(argv):
        if not word.pieces:
            continue
        text = word.text
        if index == 0:
            program = text[text.rfind("/") + 1 :] if word.known else ""  # basename
        if text.startswith("-") and len(text) > 1:
            option, eq, rest = text.partition("=")
            name = option.lstrip("-")
            if eq:
                offset = len(option.encode("utf-8")) + 1
                if is_secret_name(name):
                    collector.named(word.value, offset, len(text.encode("utf-8")), name, "option", False)
                elif name in _EXPORT_OPTIONS or (program in ("docker", "podman", "enroot") and name in ("env", "e")):
                    _scan_items(collector, word.value, rest, offset, "--" + name)
                continue
            if is_secret_name(name) and index + 1 < len(argv):
                following = argv[index + 1]
                if not following.text.startswith("-"):
                    collector.named(following.value, 0, len(following.text.encode("utf-8")), name, "option", False)
            continue
        if index == 0 or "=" not in text:
            continue  # no NAME=VALUE item here
        match = _ITEM_NAME.match(text)
        if match:
            name = text[: match.end() - 1]
            if is_secret_name(name) and not any(ch.isspace() for ch in text):
                collector.named(word.value, match.end(), len(text.encode("utf-8")), name, "item", False)
    # wandb login [--relogin] [--host URL] KEY
    begin = _unwrapped(command)
    if begin + 1 < len(argv) and argv[begin].known and argv[begin].text.rpartition("/")[2] == "wandb" and argv[begin + 1].text == "login":
        _scan_wandb_login(collector, argv, begin + 2)


def _unwrapped(command: "Command") -> int:
    argv = command.argv
    begin = command.begin
    if begin < len(argv) and argv[begin].known and argv[begin].text.endswith("srun"):
        return len(argv)  # a step: its task command is scanned on its own
    return begin


def _scan_wandb_login(collector: _Collector, argv, start: int) -> None:
    relogin: List = []
    i = start
    key = None
    while i < len(argv):
        word = argv[i]
        text = word.text
        if text in ("--host", "--base-url"):
            i += 2
            continue
        if text == "--relogin":
            relogin.append(word)
        elif not text.startswith("-") and key is None:
            key = word
        i += 1
    if key is None:
        return
    literal = _literal(key.value, 0, len(key.text.encode("utf-8")))
    if literal is None or is_placeholder(literal[0]):
        return
    text, span, exact = literal
    edits: List[Edit] = []
    how = ""
    source = collector.script.data
    if exact:
        for word in relogin + [key]:
            word_span = word.span
            if word is key:
                word_span = span
                ctx = _context(collector.script, span)
                if ctx.word is not None and ctx.word.start + 1 == span.start and ctx.word.end - 1 == span.end:
                    word_span = ctx.word  # the quotes go too
            start_offset = word_span.start
            while start_offset > 0 and source[start_offset - 1 : start_offset] in (b" ", b"\t"):
                start_offset -= 1
            edits.append(Edit.delete(Span(start_offset, word_span.end)))
        how = "drop the key: `wandb login` reads WANDB_API_KEY from the environment"
        if relogin:
            how += " (and drop --relogin, which would ignore it)"
    kind = shape_of(text).kind if shape_of(text) else "W&B API key"
    collector.add(Secret(span, kind, "WANDB_API_KEY", text, True, "wandb", "WANDB_API_KEY", tuple(edits), how))


def _scan_items(collector: _Collector, value: "Value", rest: str, offset: int, option: str) -> None:
    position = offset
    for item in rest.split(","):
        item_bytes = len(item.encode("utf-8"))
        match = _ITEM.fullmatch(item)
        if match and is_secret_name(match.group("name")):
            name = match.group("name")
            value_start = position + len(name.encode("utf-8")) + 1
            collector.exported(value, position, value_start, position + item_bytes, name, option)
        position += item_bytes + 1


def _scan_assignments(collector: _Collector, script: "Script", values) -> None:
    for name, assignments in values.assignments.items():
        if not is_secret_name(name):
            continue
        for assignment in assignments:
            if assignment.kind not in ("assign", "append") or assignment.value_node is None:
                continue
            for alternative in values.evaluate(assignment.value_node):
                text = alternative.text
                if alternative.known:
                    collector.named(alternative, 0, len(text.encode("utf-8")), name, "assignment", True)
                    continue
            # ``${HF_TOKEN:-hf_…}`` and the like: a fallback literal the value may take
            for node in shell.walk(assignment.value_node):
                if node.type != "expansion":
                    continue
                operators = [c for c in node.children if c.type in (":-", "-", ":=", "=")]
                if not operators:
                    continue
                operands = [c for c in node.children if c.is_named and c.start_byte >= operators[0].end_byte]
                if len(operands) != 1:
                    continue
                for default in values.evaluate(operands[0]):
                    text = default.text
                    if default.known:
                        collector.named(default, 0, len(text.encode("utf-8")), name, "assignment", True)


def _scan_fallbacks(collector: _Collector, script: "Script") -> None:
    """``${HF_TOKEN:-hf_…}`` anywhere: a hardcoded fallback for a secret variable."""
    data = script.data
    for node in script.nodes_of_type("expansion"):
        # a secret name holds a hint a byte test finds (_NAME_HINT_BYTES; a name is followed by a
        # character no name holds): an expansion without one needs no look at its children
        if _NAME_HINT_BYTES.search(data[node.start_byte : node.end_byte].lower()) is None:
            continue
        children = node.children
        names = [c for c in children if c.type == "variable_name"]
        operators = [c for c in children if c.type in (":-", "-", ":=", "=")]
        if not names or not operators:
            continue
        name = script.data[names[0].start_byte : names[0].end_byte].decode("utf-8", "replace")
        if not is_secret_name(name):
            continue
        operands = [c for c in children if c.is_named and c.start_byte >= operators[0].end_byte]
        if len(operands) != 1:
            continue
        for default in script.values.evaluate(operands[0]):
            if default.known:
                collector.named(default, 0, len(default.text.encode("utf-8")), name, "assignment", True)


def _scan_task_assignments(collector: _Collector, task: TaskString) -> None:
    """``bash -c "export HF_TOKEN=…; …"``: assignments made by the task's shell."""
    inner = task_string_values(collector.script.values, task.text)  # shared with the steps' parse
    for name, assignments in inner.assignments.items():
        if not is_secret_name(name):
            continue
        for assignment in assignments:
            if assignment.kind != "assign" or assignment.value_node is None:
                continue
            alternatives = inner.evaluate(assignment.value_node)
            if not alternatives:
                continue
            value = remap(alternatives[-1], task.value)
            text = value.text
            if value.known:
                collector.named(value, 0, len(text.encode("utf-8")), name, "assignment", True)


def scan(script: "Script") -> List[Secret]:
    """Every secret in the script, live or not, in source order (memoised)."""
    return script.secrets


# What a name must contain for ``is_secret_name`` (TOKEN, …KEY, SECRET, PASSWORD/PASSWD), and the
# program ``_scan_command`` reads by name: a command holds nothing it looks for without one.
_COMMAND_HINTS = (b"token", b"key", b"secret", b"passw", b"wandb")


def mentions(hints: Tuple[bytes, ...], script: "Script") -> bool:
    """Whether one of ``hints`` (lowercase) occurs in the script or in a string a task's shell
    runs, case-insensitively: every character of a command word comes from one of them."""
    for text in [script.data] + [task.text for task in task_strings(script)]:
        lowered = text.lower()
        if any(hint in lowered for hint in hints):
            return True
    return False


def build_scan(script: "Script") -> List[Secret]:
    collector = _Collector(script)
    data = script.data
    _scan_assignments(collector, script, script.values)
    _scan_fallbacks(collector, script)
    by_name = mentions(_COMMAND_HINTS, script)  # else no command has a secret-named part
    for command in script.commands if by_name else ():
        _scan_command(collector, command)
    for step in script.steps:
        for task_command in step.task_commands if by_name else ():
            _scan_command(collector, task_command)
        for option in step.options:
            if option.name in _EXPORT_OPTIONS and option.value and option.words:
                word = option.words[-1]
                text = word.text
                raw = text.encode("utf-8")
                offset = 0
                if len(option.words) == 1:
                    offset = len(text.partition("=")[0].encode("utf-8")) + 1
                _scan_items(collector, word.value, raw[offset:].decode("utf-8", "replace"), offset, "--" + option.name)
    for task in task_strings(script):
        if by_name and not any(c.step is not None for c in task.commands):
            for command in task.commands:
                _scan_command(collector, command)
        try:
            _scan_task_assignments(collector, task)
        except (RecursionError, ValueError):  # pragma: no cover
            pass
    _scan_directives(collector, script)

    # Text: comments (not live), heredoc bodies and unparsed regions (live, no fix). A file
    # without anything a text search looks for has no secret in any of them (nor a shape below).
    shaped = shape_hints(data)
    hinted = shaped or name_hints(data)  # text_hints(data)
    source = script.source

    # (a comment on a line of a ``#SBATCH`` directive is the directive's, not a comment: asked
    # only of a comment where something is found)
    directive_lines: List[Set[int]] = []

    def on_directive_line(start: int) -> bool:
        if not directive_lines:
            directive_lines.append({d.line for d in script.header.directives})
        return source.line_of(start) in directive_lines[0]

    # A region bounded by lines (most comments, every here-document body) holds what the
    # whole file's text scan finds there (``redaction.within``): that scan is the one
    # ``found_in`` makes of the file anyway (``text_scan``), so no region is read twice. Another
    # region is scanned on its own (``text_secrets`` looks no further into one without a hint).
    whole = whole_text_secrets(source) if hinted else ((), [])
    found_in_whole = bool(whole[0])  # (most files: nothing is found in the whole of them)
    size = len(data)

    def scan_region(start: int, end: int, live: bool, site: str) -> None:
        if line_bounded(data, start, end):
            if not found_in_whole:
                return
            found = within(whole, Span(start, end), live, site)
        else:
            found = text_secrets(source, Span(start, end), live, site)
        for secret in found:
            if not live and on_directive_line(start):
                break
            if not any(s.span.overlaps(secret.span) for s in collector.found.values()):
                collector.add(secret)

    comments: List[Tuple[int, int]] = []  # (kept for the shapes below)
    for node in script.nodes_of_type("comment", "heredoc_body") if hinted else ():
        start, end = node.start_byte, node.end_byte
        if node.type == "comment":
            if shaped:
                comments.append((start, end))
            elif not found_in_whole and (start == 0 or data[start - 1] == 10) and (end == size or data[end] == 10):
                continue  # bounded by lines (most comments), and nothing found in the whole file
            scan_region(start, end, False, "comment")
        elif node.type == "heredoc_body":
            scan_region(start, end, True, "text")
    for region in script.errors if hinted else ():
        scan_region(region.start, region.end, True, "unparsed")

    # Known shapes anywhere else in the code (not in a comment: found above, not live).
    comments.sort()
    comment_starts = [start for start, _ in comments]
    for shape, pattern, hints in byte_shapes() if shaped else ():
        if not any(hint in data for hint in hints):
            continue
        for match in pattern.finditer(data):
            if not shape_matches(shape, match):
                continue
            span = Span(match.start(), match.end())
            if any(s.span.contains(span) or s.span.overlaps(span) for s in collector.found.values()):
                continue
            at = bisect_right(comment_starts, span.start) - 1  # comments do not overlap
            if at >= 0 and span.end <= comments[at][1] and not on_directive_line(comments[at][0]):
                continue  # within a comment
            value = match.group(0).decode("ascii")
            edits, how = _replacement(script, span, shape.env)
            ctx_task = _context(script, span).task is not None
            collector.add(Secret(span, shape.kind, "", value, True, "token", shape.env, edits, how, ctx_task))
    return sorted(collector.found.values(), key=lambda s: (s.span.start, s.span.end))


def _scan_directives(collector: _Collector, script: "Script") -> None:
    for directive in script.header.directives:
        if directive.name not in _EXPORT_OPTIONS or directive.value_span is None or directive.value is None:
            continue
        raw = script.data[directive.value_span.start : directive.value_span.end]
        if b"\\" in raw or b'"' in raw or b"'" in raw:
            continue
        text = raw.decode("utf-8", "replace")
        value = Value((Piece(text, directive.value_span),))
        position = 0
        for item in text.split(","):
            item_bytes = len(item.encode("utf-8"))
            match = _ITEM.fullmatch(item)
            if match and is_secret_name(match.group("name")):
                name = match.group("name")
                start = position + len(name.encode("utf-8")) + 1
                literal = _literal(value, start, position + item_bytes)
                if literal is not None and (is_credential(literal[0], secret_name_kind(name)) or shape_of(literal[0])):
                    drop = _literal(value, start - 1, position + item_bytes)
                    edits = (Edit.delete(drop[1]),) if drop is not None else ()
                    how = f"pass {name} by name: sbatch takes it from the submission environment"
                    collector.add(Secret(literal[1], kind_of(literal[0], name), name, literal[0], True, "directive",
                                         name, edits, how))
            position += item_bytes + 1


# -- secret variables (SBL402/SBL403) ------------------------------------------------------------


def secret_variables(script: "Script") -> Set[str]:
    """Variables of the script that hold a credential: secret-named ones, and any variable
    assigned a credential-shaped literal."""
    return script.secret_variables


def build_secret_variables(script: "Script") -> Set[str]:
    names = {name for name in script.values.assignments if is_secret_name(name)}
    spans = {secret.span for secret in scan(script) if secret.live}
    for name, assignments in script.values.assignments.items() if spans else ():
        for assignment in assignments:
            node = assignment.value_node
            if node is None:
                continue
            span = quoted_interior(node, script.data) if node.type in ("string", "raw_string") else Span(node.start_byte, node.end_byte)
            if span in spans:  # the whole value is a credential
                names.add(name)
    return names


_EXPANDED_NAME = lazy(rb"\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)")


def expands_a_secret_variable(script: "Script") -> bool:
    """Whether a ``$NAME`` of a secret variable is written anywhere in the script or in a string a
    task's shell runs (where the expansions SBL402 and SBL403 look for are; memoised)."""
    return script.secret_expansions


def build_secret_expansions(script: "Script") -> bool:
    texts = [script.data] + [task.text for task in task_strings(script)]
    names = {name for text in texts for name in _EXPANDED_NAME.findall(text)}
    return any(is_secret_variable(script, name.decode("ascii")) for name in names)


def is_secret_variable(script: "Script", name: Optional[str]) -> bool:
    return bool(name) and (is_secret_name(name) or name in secret_variables(script))  # type: ignore[arg-type]

# -- every secret of a file --------------------------------------------------------------------------


def found_in(model) -> List[Secret]:
    """Every secret span of the file ``model`` was built from (live or in comments): what outputs
    about that file must never show. A Python module is read as text."""
    script = model
    source = script.source
    if not hasattr(script, "values"):  # a Python module
        return text_scan(source)
    try:
        found = scan(script)
    except Exception:  # the analysis failed on a strange file: read it as text
        return text_scan(source)
    extra = [s for s in text_scan(source) if not any(f.span.overlaps(s.span) for f in found)]
    return sorted(list(found) + extra, key=lambda s: s.span)


def find(source: Source) -> List[Secret]:
    """Every secret span in a file, building its model (the runner asks ``found_in`` with the
    model it lints instead)."""
    if source.path.endswith(".py"):
        return text_scan(source)
    try:
        from .model.script import Script

        script = Script(source)
    except Exception:  # the model failed on a strange file: read it as text
        return text_scan(source)
    return found_in(script)
